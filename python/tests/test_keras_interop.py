"""from_keras / to_keras against Keras 3 itself (the JAX backend; scripts/python-env.sh installs
both): the same predictions from the same weights, the compiled settings carried across, the
per-epoch losses of a fit continued on either side within 1e-5, and what cannot be carried
refused with the layer's name."""
import os

import numpy as np
import pytest

os.environ.setdefault("KERAS_BACKEND", "jax")
import keras as real_keras  # noqa: E402  (after choosing its backend)

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")  # Keras 3.15 under NumPy 2 (its own code)

import onefit.keras as keras  # noqa: E402


def keras_model(dropout=True):
    layers = [real_keras.Input((4,)), real_keras.layers.Dense(16, activation="relu", name="hidden")]
    if dropout:
        layers.append(real_keras.layers.Dropout(0.25, name="drop"))
    layers.append(real_keras.layers.Dense(3, activation="softmax", name="out"))
    real_keras.utils.set_random_seed(3)
    return real_keras.Sequential(layers, name="k")


def test_from_keras_keeps_layers_weights_and_compiled_settings(iris_like):
    x, y, _ = iris_like
    k = keras_model()
    k.compile(optimizer=real_keras.optimizers.Adam(0.01, beta_1=0.8, amsgrad=True),
              loss=real_keras.losses.CategoricalCrossentropy(), metrics=["accuracy"])
    m = keras.from_keras(k)
    assert [type(l).__name__ for l in m.layers] == ["Dense", "Dropout", "Dense"]
    assert [l.name for l in m.layers] == ["hidden", "drop", "out"] and m.layers[1].rate == 0.25
    np.testing.assert_allclose(m.predict(x, verbose=0), k.predict(x, verbose=0), rtol=1e-6, atol=1e-7)
    assert isinstance(m.optimizer, keras.optimizers.Adam)
    assert m.optimizer.learning_rate == pytest.approx(0.01) and m.optimizer.beta_1 == pytest.approx(0.8)
    assert m.optimizer.amsgrad
    assert m.loss is k.loss
    loss, accuracy = m.evaluate(x, y, verbose=0)
    k_loss, k_accuracy = k.evaluate(x, y, verbose=0)
    assert loss == pytest.approx(k_loss, rel=1e-5) and accuracy == pytest.approx(k_accuracy)
    uncompiled = keras.from_keras(keras_model())
    assert uncompiled.optimizer is None
    np.testing.assert_allclose(uncompiled.predict(x, verbose=0), keras_model().predict(x, verbose=0), rtol=1e-6)


def test_a_fit_continues_the_same_on_either_side(iris_like):
    # Same weights, same optimizer, unshuffled: per-epoch losses within 1e-5 (Keras parity).
    x, y, _ = iris_like
    k = keras_model(dropout=False)
    k.compile(optimizer=real_keras.optimizers.RMSprop(0.01), loss="categorical_crossentropy")
    m = keras.from_keras(k)
    k_history = k.fit(x, y, batch_size=30, epochs=4, shuffle=False, verbose=0).history["loss"]
    m_history = m.fit(x, y, batch_size=30, epochs=4, shuffle=False, verbose=0).history["loss"]
    np.testing.assert_allclose(m_history, k_history, rtol=1e-5)


def test_to_keras_gives_the_same_model_and_the_round_trip_the_same_weights(iris_like, tmp_path):
    x, y, _ = iris_like
    m = keras.Sequential([keras.Input(shape=(4,)), keras.layers.Dense(8, activation="tanh", name="h"),
                          keras.layers.Dropout(0.1), keras.layers.Dense(3, activation="softmax")], seed=4)
    m.compile(optimizer=keras.optimizers.SGD(0.05, momentum=0.9, nesterov=True),
              loss=keras.losses.CategoricalCrossentropy(from_logits=False), metrics=["mae"])
    m.fit(x, y, epochs=2, verbose=0)
    k = m.to_keras()
    np.testing.assert_allclose(k.predict(x, verbose=0), m.predict(x, verbose=0), rtol=1e-6, atol=1e-7)
    assert isinstance(k.optimizer, real_keras.optimizers.SGD)
    assert k.optimizer.get_config()["momentum"] == pytest.approx(0.9) and k.optimizer.get_config()["nesterov"]
    assert type(k.loss).__name__ == "CategoricalCrossentropy"
    back = keras.from_keras(k)
    for a, b in zip(back.get_weights(), m.get_weights()):
        np.testing.assert_array_equal(a, b)
    assert back.evaluate(x, y, verbose=0) == pytest.approx(m.evaluate(x, y, verbose=0), rel=1e-6)  # loss, mae


def test_what_onefit_cannot_carry_is_refused_by_name():
    with pytest.raises(TypeError, match="'act'.*PReLU"):  # a kind onefit has not
        keras.from_keras(real_keras.Sequential([real_keras.Input((4,)), real_keras.layers.PReLU(name="act")]))
    with pytest.raises(TypeError, match="'norm'.*LayerNormalization.*rms_scaling"):  # a setting it has not
        keras.from_keras(real_keras.Sequential([real_keras.Input((4,)),
                                                real_keras.layers.LayerNormalization(name="norm", rms_scaling=True)]))
    with pytest.raises(TypeError, match="kernel_constraint"):
        keras.from_keras(real_keras.Sequential([real_keras.Input((4,)),
                                                real_keras.layers.Dense(2, kernel_constraint="non_neg")]))
    with pytest.raises(ValueError, match="not built"):
        keras.from_keras(real_keras.Sequential([real_keras.layers.Dense(2)]))
    k = keras_model()
    k.compile(optimizer=real_keras.optimizers.Adam(use_ema=True), loss="mse")  # (clipnorm is carried now)
    with pytest.raises(ValueError, match="use_ema"):
        keras.from_keras(k)
    for setting in (dict(loss_weights=[2.0]), dict(weighted_metrics=["mae"])):
        k = keras_model()
        k.compile(optimizer="sgd", loss="mse", **setting)
        with pytest.raises(ValueError, match=next(iter(setting))):
            keras.from_keras(k)
    with pytest.raises(TypeError, match="onefit.keras.Sequential|Keras Sequential"):
        keras.from_keras(object())


def test_from_keras_of_a_functional_model_names_the_real_limits():
    # A chain built with the Functional API converts (a Model), and so does a shared layer (one layer,
    # its weights used twice); two outputs and a subclassed model are refused by name; two inputs convert.
    inputs = real_keras.Input((4,))
    outputs = real_keras.layers.Dense(3, name="out")(real_keras.layers.Dense(8, name="hidden")(inputs))
    assert isinstance(keras.from_keras(real_keras.Model(inputs, outputs, name="graph")), keras.Model)
    shared = real_keras.layers.Dense(4, name="shared")
    twice = real_keras.Model(inputs, shared(shared(inputs)))
    ours = keras.from_keras(twice)
    assert [layer.name for layer in ours.layers] == ["shared"] and len(ours.get_weights()) == 2
    x = np.linspace(-1, 1, 8, dtype=np.float32).reshape(2, 4)
    np.testing.assert_allclose(ours.predict(x, verbose=0), twice.predict(x, verbose=0), rtol=1e-5, atol=1e-6)
    a, b = real_keras.Input((4,)), real_keras.Input((4,))
    two_inputs = keras.from_keras(real_keras.Model([a, b], real_keras.layers.Add()([a, b])))
    np.testing.assert_array_equal(two_inputs.predict([np.ones((2, 4)), np.full((2, 4), 2.0)], verbose=0),
                                  np.full((2, 4), 3.0))
    with pytest.raises(ValueError, match="has 2 outputs"):
        keras.from_keras(real_keras.Model(a, [real_keras.layers.Dense(2)(a), real_keras.layers.Dense(3)(a)]))

    class Subclassed(real_keras.Model):
        def call(self, x):
            return x

    with pytest.raises(TypeError, match="not subclassed ones"):
        keras.from_keras(Subclassed())


def test_train_test_and_predict_on_batch_match_keras(iris_like):
    # Keras's one-batch calls, against Keras 3 from the same weights and optimizer: each
    # train_on_batch is one step on exactly those rows, returning that step's loss and metrics.
    x, y, _ = iris_like
    k = keras_model(dropout=False)
    k.compile(optimizer=real_keras.optimizers.Adam(0.01), loss="categorical_crossentropy", metrics=["mae"])
    m = keras.from_keras(k)
    for rows in (slice(0, 20), slice(20, 45), slice(45, 150)):
        got = m.train_on_batch(x[rows], y[rows])
        want = k.train_on_batch(x[rows], y[rows])
        np.testing.assert_allclose(got, want, rtol=1e-5)
    for a, b in zip(m.get_weights(), k.get_weights()):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
    assert m.history is None  # no fit ran as far as the user is concerned
    np.testing.assert_allclose(m.test_on_batch(x[:30], y[:30]), k.test_on_batch(x[:30], y[:30]), rtol=1e-5)
    logs = m.train_on_batch(x[:10], y[:10], return_dict=True)
    assert set(logs) == set(k.train_on_batch(x[:10], y[:10], return_dict=True))
    np.testing.assert_allclose(m.predict_on_batch(x[:7]), k.predict_on_batch(x[:7]), rtol=1e-5, atol=1e-6)


def test_to_categorical_is_keras_and_refuses_labels_keras_would_wrap():
    for labels, classes in (([0, 2, 1, 2], None), ([[1], [0], [3]], None), (np.array([1, 0]), 4),
                            (np.array([[0, 1], [2, 0]]), 3), (np.array([2.0, 0.0]), None)):
        want = real_keras.utils.to_categorical(labels, classes)
        got = keras.utils.to_categorical(labels, classes)
        assert got.dtype == want.dtype and got.shape == want.shape
        np.testing.assert_array_equal(got, want)
    with pytest.raises(ValueError, match="label -1 is outside 0..2"):
        keras.utils.to_categorical([0, -1, 2])  # Keras gives -1 the last class
    with pytest.raises(ValueError, match="label 3 is outside 0..2"):
        keras.utils.to_categorical([0, 3], num_classes=3)
    with pytest.raises(ValueError, match="integer class labels; got 2.5"):
        keras.utils.to_categorical([0, 2.5])  # Keras truncates it to 2


def test_learning_rate_callbacks_follow_keras_epoch_by_epoch(iris_like):
    # LearningRateScheduler and ReduceLROnPlateau against Keras 3 from the same weights: the same
    # rates (logged as "learning_rate") and the same per-epoch losses, so each rate took effect
    # from the step Keras's did.
    x, y, _ = iris_like

    def histories(callback):
        k = keras_model(dropout=False)
        k.compile(optimizer=real_keras.optimizers.SGD(0.2), loss="categorical_crossentropy")
        m = keras.from_keras(k)
        kh = k.fit(x, y, batch_size=30, epochs=8, shuffle=False, verbose=0, callbacks=[callback(real_keras)]).history
        mh = m.fit(x, y, batch_size=30, epochs=8, shuffle=False, verbose=0, callbacks=[callback(keras)]).history
        return kh, mh

    for callback in (lambda k: k.callbacks.LearningRateScheduler(lambda epoch, lr: lr if epoch < 2 else lr * 0.5),
                     lambda k: k.callbacks.LearningRateScheduler(lambda epoch: 0.2 / (1 + epoch)),
                     lambda k: k.callbacks.ReduceLROnPlateau(monitor="loss", factor=0.5, patience=1, min_delta=0.05,
                                                             cooldown=1)):
        kh, mh = histories(callback)
        np.testing.assert_allclose(mh["learning_rate"], kh["learning_rate"], rtol=1e-7)
        np.testing.assert_allclose(mh["loss"], kh["loss"], rtol=1e-5)
    assert len(set(mh["learning_rate"])) > 1  # the plateau rule did lower the rate
    with pytest.raises(ValueError, match="factor >= 1.0"):
        keras.callbacks.ReduceLROnPlateau(factor=2)
    m = keras.Sequential([keras.Input((4,)), keras.layers.Dense(3)])
    m.compile("sgd", "mse")
    with pytest.raises(ValueError, match="should be a float"):
        m.fit(x, y, epochs=1, verbose=0, callbacks=[keras.callbacks.LearningRateScheduler(lambda e, lr: "fast")])


@pytest.mark.parametrize("clip", [{"clipnorm": 0.05}, {"global_clipnorm": 0.08}, {"clipvalue": 0.01}])
def test_gradient_clipping_follows_keras(iris_like, tmp_path, clip):
    # Keras's clipnorm (each array), global_clipnorm (all arrays) and clipvalue, small enough to
    # clip every step: the same per-epoch losses and weights as Keras 3 from the same start, and the
    # setting kept by save/load and to_keras.
    x, y, _ = iris_like
    k = keras_model(dropout=False)
    k.compile(optimizer=real_keras.optimizers.Adam(0.01, **clip), loss="categorical_crossentropy")
    m = keras.from_keras(k)
    assert {c: getattr(m.optimizer, c) for c in clip} == clip
    k_loss = k.fit(x, y, batch_size=30, epochs=3, shuffle=False, verbose=0).history["loss"]
    m_loss = m.fit(x, y, batch_size=30, epochs=3, shuffle=False, verbose=0).history["loss"]
    np.testing.assert_allclose(m_loss, k_loss, rtol=1e-5)
    for a, b in zip(m.get_weights(), k.get_weights()):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-6)
    unclipped = keras.from_keras(keras_model(dropout=False))
    unclipped.compile(optimizer=keras.optimizers.Adam(0.01), loss="categorical_crossentropy")
    free_loss = unclipped.fit(x, y, batch_size=30, epochs=3, shuffle=False, verbose=0).history["loss"]
    assert not np.allclose(free_loss, m_loss, rtol=1e-3)  # the clip did change the fit
    m.save(str(tmp_path / "clipped"))
    loaded = keras.models.load_model(str(tmp_path / "clipped"))
    assert {c: getattr(loaded.optimizer, c) for c in clip} == clip
    assert {c: getattr(m.to_keras().optimizer, c) for c in clip} == clip


def test_clipping_settings_are_checked_as_keras_checks_them():
    with pytest.raises(ValueError, match="Only one of `clipnorm`, `clipvalue` and `global_clipnorm`"):
        keras.optimizers.Adam(clipnorm=1.0, clipvalue=0.5)
    with pytest.raises(ValueError, match="clipnorm must be a positive number or None"):
        keras.optimizers.SGD(clipnorm=-1)
