"""The behaviour a Python user relies on: errors and warnings as Python ones, callbacks, output
to sys.stdout, the GIL released during fit, Ctrl-C, and save/load."""
import _thread
import threading
import time
import warnings

import numpy as np
import pytest

import onefit
import onefit.keras as keras
from onefit.keras.layers import Dense, Dropout


def small_model(seed=0, loss="categorical_crossentropy", metrics=None):
    model = keras.Sequential([keras.Input(shape=(4,)), Dense(16, activation="relu"), Dense(3, activation="softmax")],
                             seed=seed)
    model.compile(optimizer="adam", loss=loss, metrics=metrics)
    return model


def test_bad_input_raises_python_errors_with_onefits_message(iris_like):
    x, y, _ = iris_like
    model = small_model()
    with pytest.raises(ValueError, match="5"):
        model.fit(np.zeros((150, 5), np.float32), y, verbose=0)  # the model takes 4 features
    with pytest.raises(ValueError):
        model.fit(x, y[:100], verbose=0)  # rows disagree
    with pytest.raises(ValueError, match="loss"):
        model.compile(optimizer="adam", loss="no_such_loss")
    with pytest.raises(ValueError, match="optimizer"):
        model.compile(optimizer="nope", loss="mse")
    with pytest.raises(TypeError):
        model.fit([["a", "b", "c", "d"]], [[1, 0, 0]], verbose=0)
    with pytest.raises(FileNotFoundError):
        keras.models.load_model("/nonexistent/onefit-model")
    with pytest.raises(RuntimeError, match="compile"):
        keras.Sequential([Dense(3, input_shape=(4,))]).fit(x, y)
    with pytest.raises(ValueError, match="units"):
        Dense(0)


def test_onefits_warnings_arrive_as_filterable_python_warnings(iris_like):
    x, y, labels = iris_like
    with pytest.warns(onefit.warnings.UnshuffledSplitWarning, match="without shuffling"):
        # Class indices sorted by class: the last 20 % are all class 2.
        small_model(loss="sparse_categorical_crossentropy").fit(x, labels, validation_split=0.2, epochs=1, verbose=0)
    with warnings.catch_warnings():
        warnings.filterwarnings("error", category=onefit.warnings.OnefitWarning)
        small_model().fit(x, y, epochs=1, verbose=0)  # nothing to warn about
    with pytest.warns(DeprecationWarning, match="learning_rate"):
        opt = keras.optimizers.Adam(lr=0.5)
    assert opt.learning_rate == 0.5


def test_epoch_lines_go_to_sys_stdout(iris_like, capsys):
    x, y, _ = iris_like
    small_model().fit(x, y, epochs=2, verbose=2)
    out = capsys.readouterr().out
    assert "Epoch 1/2" in out and "Epoch 2/2" in out and "loss:" in out
    small_model().fit(x, y, epochs=2, verbose=0)
    assert capsys.readouterr().out == ""


def test_python_callbacks_see_every_epoch_and_can_stop_training(iris_like):
    x, y, _ = iris_like

    class Recorder(keras.callbacks.Callback):
        def __init__(self):
            super().__init__()
            self.seen = []

        def on_epoch_end(self, epoch, logs=None):
            self.seen.append((epoch, logs["loss"], logs["accuracy"]))
            if epoch == 2:
                self.model.stop_training = True

    recorder = Recorder()
    model = small_model(metrics=["accuracy"])
    history = model.fit(x, y, epochs=10, verbose=0, callbacks=[recorder])
    assert [e for e, _, _ in recorder.seen] == [0, 1, 2] == history.epoch
    assert [l for _, l, _ in recorder.seen] == history.history["loss"]
    assert recorder.model is model


def test_native_callbacks_follow_keras(iris_like, tmp_path):
    x, y, _ = iris_like
    stop = keras.callbacks.EarlyStopping(monitor="loss", patience=0, min_delta=10.0)  # never improves by 10
    log = tmp_path / "log.csv"
    history = small_model().fit(x, y, epochs=10, verbose=0,
                                callbacks=[stop, keras.callbacks.CSVLogger(log)])
    assert len(history.epoch) == 2 and stop.stopped_epoch == 1  # Keras: the first epoch sets the best
    rows = log.read_text().splitlines()
    assert rows[0] == "epoch,loss" and len(rows) == 3


def test_an_exception_in_a_callback_propagates_and_the_model_stays_usable(iris_like):
    x, y, _ = iris_like

    class Fails(keras.callbacks.Callback):
        def on_epoch_end(self, epoch, logs=None):
            if epoch == 1:
                raise ArithmeticError("from the callback")

    model = small_model()
    with pytest.raises(ArithmeticError, match="from the callback"):
        model.fit(x, y, epochs=10, verbose=0, callbacks=[Fails()])
    assert np.isfinite(model.evaluate(x, y))


def test_fit_releases_the_gil(iris_like):
    # One epoch, so the host never stops the program mid-fit (an epoch end would take the GIL and
    # let the thread run even if the computation held it); the data grow until that epoch takes
    # 0.2 s on this machine, however fast it is.
    rng = np.random.default_rng(1)
    x0 = rng.normal(size=(50000, 64)).astype(np.float32)
    y0 = np.eye(10, dtype=np.float32)[rng.integers(0, 10, 50000)]
    for reps in (1, 4, 16):
        x, y = np.tile(x0, (reps, 1)), np.tile(y0, (reps, 1))
        model = keras.Sequential([Dense(1024, activation="relu", input_shape=(64,)), Dense(10, activation="softmax")])
        model.compile(optimizer="adam", loss="categorical_crossentropy")
        ticks, running = [], [True]

        def count():
            while running[0]:
                ticks.append(time.perf_counter())
                time.sleep(0.001)

        worker = threading.Thread(target=count)
        worker.start()
        start = time.perf_counter()
        model.fit(x, y, epochs=1, batch_size=64, verbose=0)
        end = time.perf_counter()
        running[0] = False
        worker.join()
        if end - start >= 0.2:
            break
    assert end - start >= 0.2, f"even {len(x)} rows took only {end - start:.3f} s"
    middle = [t for t in ticks if start + 0.2 * (end - start) < t < end - 0.2 * (end - start)]
    assert len(middle) >= 3, f"the thread ran {len(middle)} times in the middle of a {end - start:.2f} s fit"


def test_ctrl_c_stops_the_fit_at_an_epoch_end_and_keeps_the_weights(iris_like):
    x, y, _ = iris_like
    x = np.repeat(x, 200, axis=0)
    y = np.repeat(y, 200, axis=0)
    model = small_model()
    before = model.get_weights()[0].copy()
    timer = threading.Timer(0.3, _thread.interrupt_main)
    timer.start()
    with pytest.raises(KeyboardInterrupt):
        model.fit(x, y, epochs=100000, verbose=0)
    timer.cancel()
    assert not np.array_equal(model.get_weights()[0], before)  # epochs ran and were kept
    assert np.isfinite(model.evaluate(x[:50], y[:50]))


def test_save_and_load_keep_predictions_and_training_state(iris_like, tmp_path):
    x, y, _ = iris_like
    model = small_model(metrics=["accuracy"])
    model.fit(x, y, epochs=3, verbose=0, shuffle=False)
    model.save(tmp_path / "m")
    loaded = keras.models.load_model(tmp_path / "m")
    np.testing.assert_array_equal(loaded.predict(x), model.predict(x))
    assert [type(l).__name__ for l in loaded.layers] == ["Dense", "Dense"]
    a = model.fit(x, y, epochs=2, verbose=0, shuffle=False).history["loss"]
    b = loaded.fit(x, y, epochs=2, verbose=0, shuffle=False).history["loss"]
    assert a == b  # optimizer state and step came back too


def test_dropout_layers_and_evaluate_return_shapes(iris_like):
    x, y, _ = iris_like
    model = keras.Sequential([Dense(16, activation="relu", input_shape=(4,)), Dropout(0.5),
                              Dense(3, activation="softmax")])
    model.compile(optimizer=keras.optimizers.SGD(learning_rate=0.1), loss="categorical_crossentropy",
                  metrics=["accuracy"])
    model.fit(x, y, epochs=2, verbose=0)
    loss, accuracy = model.evaluate(x, y)
    assert 0 <= accuracy <= 1 and loss > 0
    assert model.evaluate(x, y, return_dict=True) == {"loss": loss, "accuracy": accuracy}
    assert model.predict(x).shape == (150, 3)
    assert model.count_params() == 4 * 16 + 16 + 16 * 3 + 3


def test_explain_returns_the_report_as_a_dict_and_writes_html(iris_like, tmp_path):
    x, y, labels = iris_like
    model = small_model(loss="logcosh")
    result = onefit.explain(model, x, labels, batch_size=20, epochs=3, validation_split=0.3, shuffle=False,
                            report=tmp_path / "report.html")
    assert result["pick"]["device"] == "cpu"
    assert len(result["history"]["loss"]) == 3
    assert any(l["id"] == "label_broadcast" for l in result["lints"])  # class indices against 3 outputs
    assert "<svg" in (tmp_path / "report.html").read_text() and result._repr_html_() == result.html
    assert "Where the time went" in str(result) or "phase" in str(result).lower()


def test_layer_arguments_are_kept_or_refused_never_ignored():
    assert keras.Sequential([Dropout(0.2, input_shape=(3,)), Dense(1)]).input_shape == (None, 3)
    assert keras.Sequential([Dense(2, input_dim=5)]).input_shape == (None, 5)
    assert Dense(2, dtype="float32", trainable=True).units == 2
    for bad in ({"trainable": False}, {"dtype": "float16"}, {"kernel_constraint": "non_neg"}):
        with pytest.raises(ValueError, match=f"does not support the argument\\(s\\) {next(iter(bad))}="):
            Dense(2, **bad)
    assert Dense(2, kernel_regularizer=None).units == 2  # Keras's default, accepted
    with pytest.raises(TypeError, match="unrecognized keyword argument"):
        Dense(2, kernel_regulariser="l2")  # a name Keras does not know either


def test_an_error_in_on_epoch_begin_with_epoch_lines_to_a_python_stdout_is_raised(iris_like, capsys):
    """The epoch line after a failed callback is still written through sys.stdout (here pytest's
    capture, in a notebook ipykernel's stream); the error is held and raised when fit returns."""
    x, y, _ = iris_like

    class FailsAtBegin(keras.callbacks.Callback):
        def on_epoch_begin(self, epoch, logs=None):
            if epoch == 1:
                raise LookupError("at the start of epoch 2")

    model = small_model()
    with pytest.raises(LookupError, match="epoch 2"):
        model.fit(x, y, epochs=5, verbose=2, callbacks=[FailsAtBegin()])
    out = capsys.readouterr().out
    assert "Epoch 2/5" in out and "Epoch 3/5" not in out  # it stopped after that epoch
    assert np.isfinite(model.evaluate(x, y, verbose=0))


def test_arrays_with_a_validation_dataset_validate_on_it(iris_like):
    x, y, _ = iris_like

    def model():
        m = keras.Sequential([Dense(8, activation="relu", input_shape=(4,)), Dense(3, activation="softmax")], seed=2)
        m.compile(optimizer="adam", loss="categorical_crossentropy")
        return m

    as_arrays = model().fit(x[:100], y[:100], batch_size=20, epochs=2, shuffle=False, verbose=0,
                            validation_data=(x[100:], y[100:]))
    as_dataset = model().fit(x[:100], y[:100], batch_size=20, epochs=2, shuffle=False, verbose=0,
                             validation_data=onefit.data.Dataset.from_tensor_slices((x[100:], y[100:])).batch(32))
    assert as_dataset.history == as_arrays.history and "val_loss" in as_dataset.history


def test_a_compile_that_fails_leaves_the_model_as_it_was():
    rng = np.random.default_rng(0)
    x, y = rng.normal(size=(32, 6)).astype("float32"), rng.normal(size=(32, 2)).astype("float32")
    model = keras.Sequential([keras.Input((6,)), Dense(2)], seed=0)
    model.compile(keras.optimizers.Adam(0.01), "mse", metrics=["mae"])
    model.fit(x, y, verbose=0)
    twin = keras.Sequential([keras.Input((6,)), Dense(2)], seed=0)
    twin.compile(keras.optimizers.Adam(0.01), "mse", metrics=["mae"])
    twin.fit(x, y, verbose=0)
    for bad in (dict(optimizer="sgd", loss="msee"), dict(optimizer="sgd", loss="mae", metrics=["foo"])):
        with pytest.raises(ValueError):
            model.compile(**bad)
        assert type(model.optimizer).__name__ == "Adam" and model.loss == "mse"
    # Training continues with Adam and mse, bit for bit as the model never asked to change.
    assert model.fit(x, y, verbose=0).history == twin.fit(x, y, verbose=0).history


def test_output_shape_is_the_last_layers():
    from onefit.keras import layers

    assert keras.Sequential([keras.Input((6, 6, 1)), layers.Conv2D(2, 3)]).output_shape == (None, 4, 4, 2)
    assert keras.Sequential([keras.Input((6,)), Dense(10), layers.Reshape((2, 5))]).output_shape == (None, 2, 5)
    assert keras.Sequential([keras.Input((6,)), Dense(3)]).output_shape == (None, 3)


def test_fit_arguments_are_checked_as_keras_users_pass_them():
    rng = np.random.default_rng(1)
    x, y = rng.normal(size=(16, 4)).astype("float32"), rng.normal(size=(16, 2)).astype("float32")
    model = keras.Sequential([keras.Input((4,)), Dense(np.int64(3)), Dense(np.int32(2))], seed=0)  # NumPy integers
    assert model.output_shape == (None, 2)
    model.compile("sgd", "mse")
    with pytest.raises(ValueError, match="batch_size must be in"):
        model.fit(x, y, batch_size=0, verbose=0)
    with pytest.raises(TypeError, match="epochs must be an integer, got 2.5"):
        model.fit(x, y, epochs=2.5, verbose=0)
    with pytest.raises(ValueError, match="seed must be in"):
        model.fit(x, y, seed=-1, verbose=0)
    with pytest.raises(ValueError, match="validation_data has no rows"):
        model.fit(x, y, validation_data=(x[:0], y[:0]), verbose=0)
    assert len(model.fit(x, y, epochs=np.int64(2), batch_size=np.int64(8), verbose=0).history["loss"]) == 2


def test_layers_have_keras_default_names_and_a_name_given_twice_is_refused():
    from onefit.keras import layers

    model = keras.Sequential([keras.Input((8, 8, 1)), layers.Conv2D(2, 3), layers.MaxPooling2D(), layers.Flatten(),
                              Dense(3, name="dense"), Dropout(0.1), Dense(2)])
    assert [layer.name for layer in model.layers] == ["conv2d", "max_pooling2d", "flatten", "dense", "dropout", "dense_1"]
    twice = keras.Sequential([Dense(3, name="a", input_shape=(8,)), Dense(2, name="a")])
    with pytest.raises(ValueError, match="layer names must be unique"):
        twice.compile("sgd", "mse")


def test_logs_a_callback_adds_are_in_the_history_as_in_keras():
    class LogRate(keras.callbacks.Callback):
        def on_epoch_end(self, epoch, logs=None):
            logs["lr"] = 0.5 * epoch

    rng = np.random.default_rng(2)
    x, y = rng.normal(size=(16, 4)).astype("float32"), rng.normal(size=(16, 2)).astype("float32")
    model = keras.Sequential([keras.Input((4,)), Dense(2)], seed=0)
    model.compile("sgd", "mse")
    history = model.fit(x, y, epochs=3, verbose=0, callbacks=[LogRate()]).history
    assert history["lr"] == [0.0, 0.5, 1.0]
    assert len(history["loss"]) == 3


def test_a_layer_frozen_after_construction_is_refused_not_trained(iris_like):
    """Keras users freeze a layer with layer.trainable = False; onefit cannot freeze yet, so compile
    and fit say so, naming the layer, instead of training it."""
    x, y, _ = iris_like
    model = small_model()
    model.fit(x, y, epochs=1, verbose=0)
    before = model.get_weights()
    model.layers[0].trainable = False
    with pytest.raises(ValueError, match="'dense' has trainable=False"):
        model.fit(x, y, epochs=1, verbose=0)
    with pytest.raises(ValueError, match="'dense' has trainable=False"):
        model.compile(optimizer="adam", loss="categorical_crossentropy")
    for a, b in zip(before, model.get_weights()):
        np.testing.assert_array_equal(a, b)
    model.layers[0].trainable = True
    model.fit(x, y, epochs=1, verbose=0)


@pytest.mark.parametrize("hook", ["on_train_batch_begin", "on_train_batch_end", "on_batch_end", "on_test_begin"])
def test_a_callback_with_a_batch_level_hook_is_refused_naming_it(iris_like, hook):
    x, y, _ = iris_like
    called = []
    Hooked = type("Hooked", (keras.callbacks.Callback,), {hook: lambda self, *a, **k: called.append(hook)})
    with pytest.raises(ValueError, match=f"Hooked defines {hook}, which onefit never calls"):
        small_model().fit(x, y, epochs=1, verbose=0, callbacks=[Hooked()])
    with pytest.raises(ValueError, match="callbacks are not supported"):
        small_model().evaluate(x, y, callbacks=[keras.callbacks.Callback()])
    with pytest.raises(ValueError, match="callbacks are not supported"):
        small_model().predict(x, callbacks=[keras.callbacks.Callback()])
    # The epoch-level hooks of the same base still run.
    seen = []

    class EpochOnly(keras.callbacks.Callback):
        def on_epoch_end(self, epoch, logs=None):
            seen.append(epoch)

    small_model().fit(x, y, epochs=2, verbose=0, callbacks=[EpochOnly()])
    assert seen == [0, 1] and not called


def test_explain_leaves_a_fitted_model_as_it_was(iris_like):
    x, y, _ = iris_like
    explained, untouched = small_model(), small_model()
    for m in (explained, untouched):
        m.fit(x, y, epochs=2, batch_size=16, shuffle=False, verbose=0)
    before = explained.get_weights()
    onefit.explain(explained, x, y, batch_size=16, epochs=2)
    for a, b in zip(before, explained.get_weights()):
        np.testing.assert_array_equal(a, b)
    # The optimizer's state and step count too: both train on alike.
    for m in (explained, untouched):
        m.fit(x, y, epochs=1, batch_size=16, shuffle=False, verbose=0)
    for a, b in zip(explained.get_weights(), untouched.get_weights()):
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("name", ["m.h5", "M.HDF5"])
def test_keras_legacy_h5_names_are_refused_with_the_way_to_get_one(iris_like, tmp_path, name):
    model = small_model()
    model.fit(iris_like[0], iris_like[1], epochs=1, verbose=0)
    with pytest.raises(ValueError, match=r"legacy HDF5.*\.keras"):
        model.save(tmp_path / name)
    assert not (tmp_path / name).exists()
    (tmp_path / name).write_bytes(b"\x89HDF\r\n\x1a\n a legacy Keras file")
    with pytest.raises(ValueError, match="legacy HDF5"):
        keras.models.load_model(tmp_path / name)


def test_a_cut_keras_file_is_refused_naming_it(iris_like, tmp_path):
    model = small_model()
    model.fit(iris_like[0], iris_like[1], epochs=1, verbose=0)
    model.save(tmp_path / "m.keras")
    data = (tmp_path / "m.keras").read_bytes()
    (tmp_path / "cut.keras").write_bytes(data[: len(data) // 2])
    with pytest.raises(ValueError, match="cut.keras"):
        keras.models.load_model(tmp_path / "cut.keras")
    (tmp_path / "junk.keras").write_bytes(b"PK\x03\x04 not a zip")
    with pytest.raises(ValueError, match="junk.keras"):
        keras.models.load_model(tmp_path / "junk.keras")
    with pytest.raises(ValueError, match=r"\.weights\.h5"):
        model.save_weights(tmp_path / "w.h5")


def test_an_optimizers_learning_rate_answers_as_keras_variable_does(iris_like):
    opt = keras.optimizers.Adam(learning_rate=0.01)
    assert opt.learning_rate.numpy() == np.float32(0.01) and opt.learning_rate.numpy().dtype == np.float32
    assert float(opt.learning_rate) == 0.01 and opt.learning_rate * 2 == 0.02
    opt.learning_rate.assign(0.001)
    assert opt.learning_rate == 0.001
    opt.learning_rate = np.float32(0.5)
    assert opt.learning_rate == 0.5 and isinstance(opt.learning_rate, float)
    model = small_model()
    model.optimizer.learning_rate.assign(0.002)
    assert model.optimizer.get_config()["learning_rate"] == 0.002
