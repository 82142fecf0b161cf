"""Keras semantics beyond a plain fit: what fit, evaluate, predict, load_model, set_weights and
set_random_seed do with the arguments and states Keras users rely on, each checked against
what Keras 3 does (its documented behaviour, restated in each test)."""
import warnings

import numpy as np
import pytest

import onefit
import onefit.keras as keras
from onefit.keras.layers import Dense


def model(seed=0, optimizer="adam", metrics=None):
    m = keras.Sequential([keras.Input(shape=(4,)), Dense(8, activation="relu"), Dense(3, activation="softmax")],
                         seed=seed)
    m.compile(optimizer=optimizer, loss="categorical_crossentropy", metrics=metrics)
    return m


def same(a, b):
    return all(np.array_equal(p, q) for p, q in zip(a.get_weights(), b.get_weights()))


def test_a_callback_cannot_recompile_the_model_it_is_fitting(iris_like):
    x, y, _ = iris_like
    m = model()

    class Recompile(keras.callbacks.Callback):
        def on_epoch_end(self, epoch, logs=None):
            self.model.compile(optimizer="sgd", loss="mse")

    with pytest.raises(ValueError, match="not while the model is fitting"):
        m.fit(x, y, epochs=3, verbose=0, callbacks=[Recompile()])
    m.compile(optimizer="sgd", loss="mse")  # after fit returned: allowed
    assert len(m.fit(x, y, epochs=1, verbose=0).epoch) == 1


def test_a_learning_rate_set_after_compile_applies_to_the_next_fit(iris_like):
    # Keras: model.optimizer.learning_rate = v changes the rate the next steps use. SGD without
    # momentum has no state, so it must equal recompiling with the new rate.
    x, y, _ = iris_like
    changed, recompiled, unchanged = (model(optimizer=keras.optimizers.SGD(0.1)) for _ in range(3))
    for m in (changed, recompiled, unchanged):
        m.fit(x, y, epochs=1, shuffle=False, verbose=0)
    changed.optimizer.learning_rate = 0.01
    recompiled.compile(optimizer=keras.optimizers.SGD(0.01), loss="categorical_crossentropy")
    for m in (changed, recompiled, unchanged):
        m.fit(x, y, epochs=1, shuffle=False, verbose=0)
    assert same(changed, recompiled)
    assert not same(changed, unchanged)


def test_an_optimizer_assigned_after_compile_trains_the_next_fit(iris_like):
    # Keras 3's train step applies model.optimizer, whatever was assigned to it: a new optimizer,
    # with fresh state. The same as recompiling with it (which keeps the weights).
    x, y, _ = iris_like
    assigned, recompiled = model(), model()
    for m in (assigned, recompiled):
        m.fit(x, y, epochs=1, shuffle=False, verbose=0)
    assigned.optimizer = keras.optimizers.SGD(0.05)
    recompiled.compile(optimizer=keras.optimizers.SGD(0.05), loss="categorical_crossentropy")
    for m in (assigned, recompiled):
        m.fit(x, y, epochs=1, shuffle=False, verbose=0)
    assert same(assigned, recompiled)
    assert assigned._native.optimizer.name == "sgd"


def test_a_learning_rate_set_by_a_callback_applies_from_the_next_epoch(iris_like):
    """Keras: a rate a callback sets on model.optimizer is the one the next epoch trains with
    (LearningRateScheduler's idiom). Two epochs with the rate changed after the first equal one
    epoch, then the rate changed, then one more (shuffle=False: the same batches)."""
    x, y, _ = iris_like

    class Schedule(keras.callbacks.Callback):
        def on_epoch_end(self, epoch, logs=None):
            self.model.optimizer.learning_rate = 0.0001
            logs["lr"] = self.model.optimizer.learning_rate

    scheduled = model()
    with warnings.catch_warnings():
        warnings.simplefilter("error", onefit.warnings.OnefitWarning)  # applied, so nothing to warn of
        history = scheduled.fit(x, y, epochs=2, shuffle=False, verbose=0, callbacks=[Schedule()])
    by_hand = model()
    by_hand.fit(x, y, epochs=1, shuffle=False, verbose=0)
    by_hand.optimizer.learning_rate = 0.0001
    by_hand.fit(x, y, epochs=1, shuffle=False, verbose=0)
    unchanged = model()
    unchanged.fit(x, y, epochs=2, shuffle=False, verbose=0)
    for a, b in zip(scheduled.get_weights(), by_hand.get_weights()):
        np.testing.assert_array_equal(a, b)
    assert any((a != b).any() for a, b in zip(scheduled.get_weights(), unchanged.get_weights()))
    assert history.history["lr"] == [0.0001, 0.0001]


def test_validation_data_overrides_validation_split(iris_like):
    # Keras: "validation_data will override validation_split".
    x, y, _ = iris_like
    val = (x[::7], y[::7])
    both = model().fit(x, y, epochs=2, verbose=0, validation_data=val, validation_split=0.5)
    only = model().fit(x, y, epochs=2, verbose=0, validation_data=val)
    assert both.history == only.history


def test_initial_epoch_at_or_past_epochs_runs_nothing(iris_like):
    # Keras: range(initial_epoch, epochs) is empty: an empty History, the weights unchanged.
    x, y, _ = iris_like
    m, fresh = model(), model()
    history = m.fit(x, y, epochs=3, initial_epoch=3, verbose=0)
    assert history.history == {} and history.epoch == []
    assert same(m, fresh)


def test_history_params_count_the_batches_of_an_epoch(iris_like):
    x, y, _ = iris_like
    assert model().fit(x, y, epochs=1, batch_size=32, verbose=0).params["steps"] == 5  # ceil(150 / 32)
    assert model().fit(x, y, epochs=1, batch_size=32, validation_split=0.2, verbose=0).params["steps"] == 4  # 120 rows
    assert model().fit(x, y, epochs=1, batch_size=16, steps_per_epoch=2, verbose=0).params["steps"] == 2
    ds = onefit.data.Dataset.from_tensor_slices((x, y)).batch(50)
    assert model().fit(ds, epochs=1, verbose=0).params["steps"] == 3


def test_validation_batch_size_only_changes_the_validation_batches(iris_like):
    x, y, _ = iris_like
    val = (x[::3], y[::3])
    a = model().fit(x, y, epochs=2, verbose=0, validation_data=val)
    b = model().fit(x, y, epochs=2, verbose=0, validation_data=val, validation_batch_size=7)
    assert a.history["loss"] == b.history["loss"]
    np.testing.assert_allclose(a.history["val_loss"], b.history["val_loss"], rtol=1e-5)


def test_evaluate_and_predict_take_a_dataset_and_refuse_unknown_arguments(iris_like):
    x, y, _ = iris_like
    m = model(metrics=["accuracy"])
    m.fit(x, y, epochs=2, verbose=0)
    ds = onefit.data.Dataset.from_tensor_slices((x, y)).batch(25)
    np.testing.assert_allclose(m.evaluate(ds, verbose=0), m.evaluate(x, y, batch_size=25, verbose=0), rtol=1e-6)
    np.testing.assert_array_equal(m.predict(ds, verbose=0), m.predict(x, batch_size=25, verbose=0))
    first_two = m.evaluate(ds.repeat(), steps=2, verbose=0)
    np.testing.assert_allclose(first_two, m.evaluate(x[:50], y[:50], batch_size=25, verbose=0), rtol=1e-6)
    with pytest.raises(ValueError, match="infinite"):
        m.evaluate(ds.repeat(), verbose=0)
    with pytest.raises(TypeError):
        m.evaluate(x, y, no_such_argument=1)
    with pytest.raises(TypeError):
        m.predict(x, no_such_argument=1)


def test_load_model_restores_the_optimizers_settings_and_the_metrics(iris_like, tmp_path):
    x, y, _ = iris_like
    m = model(optimizer=keras.optimizers.Adam(0.005, beta_1=0.8, amsgrad=True), metrics=["accuracy"])
    m.fit(x, y, epochs=2, verbose=0)
    m.save(tmp_path / "m")
    loaded = keras.models.load_model(tmp_path / "m")
    assert isinstance(loaded.optimizer, keras.optimizers.Adam)
    assert loaded.optimizer.learning_rate == pytest.approx(0.005)
    assert loaded.optimizer.beta_1 == pytest.approx(0.8) and loaded.optimizer.amsgrad
    assert loaded.evaluate(x, y, verbose=0) == pytest.approx(m.evaluate(x, y, verbose=0))  # [loss, accuracy]


def test_set_weights_and_from_tensor_slices_copy_the_arrays(iris_like):
    # Keras assigns values and tf.data copies: changing the arrays afterwards changes nothing.
    x, y, _ = iris_like
    m = model()
    weights = [w.copy() for w in m.get_weights()]
    m.set_weights(weights)
    weights[0][:] = 7.0
    assert not np.any(m.get_weights()[0] == 7.0)
    xs = x.copy()
    ds = onefit.data.Dataset.from_tensor_slices((xs, y)).batch(150)
    xs[:] = 0.0
    np.testing.assert_array_equal(next(iter(ds))[0], x)


def test_set_random_seed_seeds_numpy_and_models(iris_like):
    keras.utils.set_random_seed(5)
    a, wa = np.random.rand(3), model(seed=None).get_weights()
    keras.utils.set_random_seed(5)
    b, wb = np.random.rand(3), model(seed=None).get_weights()
    np.testing.assert_array_equal(a, b)
    for p, q in zip(wa, wb):
        np.testing.assert_array_equal(p, q)


def test_tensorflows_softmax_v2_is_softmax():
    # TF 2 names tf.nn.softmax "softmax_v2"; code passing it as an activation means softmax.
    def softmax_v2(x):
        return x

    assert Dense(3, activation=softmax_v2).activation == "softmax"


def test_a_native_callbacks_messages_reach_sys_stdout(iris_like, capsys):
    # EarlyStopping(verbose=1)'s lines appear where a notebook shows the epoch lines.
    x, y, _ = iris_like
    stop = keras.callbacks.EarlyStopping(monitor="loss", min_delta=100, patience=0, verbose=1)
    model().fit(x, y, epochs=5, verbose=0, callbacks=[stop])
    assert "Epoch 2: early stopping" in capsys.readouterr().out


def test_a_fit_counts_as_short_by_the_batches_it_runs(iris_like):
    # Short fits (one program call, Ctrl-C raised when it returns) are judged by the steps they
    # run: steps_per_epoch decides, also for an infinite dataset.
    from onefit.keras.models import _fit_options, _short_fit

    x, y, _ = iris_like
    m = model()
    m.fit(x, y, epochs=1, verbose=0)
    infinite = onefit.data.Dataset.from_tensor_slices((x, y)).batch(20).repeat()
    assert _short_fit(infinite, _fit_options(None, 20, steps_per_epoch=2), m._native)
    assert not _short_fit(infinite, _fit_options(None, 20), m._native)
    assert _short_fit(x, _fit_options(32, 20), m._native)
    assert not _short_fit(x, _fit_options(32, 20, steps_per_epoch=100_000), m._native)
