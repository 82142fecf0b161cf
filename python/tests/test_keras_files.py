"""Keras 3's own files (.keras archives and .weights.h5) against Keras 3 itself: a model either side
saves, the other loads with the same predictions (1e-6) and, from the optimizer state the file
holds, trains on with the same per-epoch losses (1e-5)."""
import os

import numpy as np
import pytest

os.environ.setdefault("KERAS_BACKEND", "jax")
import keras as real_keras  # noqa: E402  (after choosing its backend)

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")  # Keras 3.15 under NumPy 2 (its own code)

import onefit.keras as keras  # noqa: E402


def fit_losses(model, x, y, epochs=3):
    return model.fit(x, y, batch_size=30, epochs=epochs, shuffle=False, verbose=0).history["loss"]


def onefit_mlp(optimizer):
    keras.utils.set_random_seed(5)
    model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(16, activation="relu"),
                              keras.layers.Dense(8, activation="tanh", kernel_regularizer=keras.regularizers.L2(1e-3)),
                              keras.layers.Dense(3, activation="softmax")])
    model.compile(optimizer=optimizer, loss="categorical_crossentropy", metrics=["accuracy"])
    return model


@pytest.mark.parametrize("optimizer", [
    lambda k: k.optimizers.Adam(0.01, amsgrad=True),
    lambda k: k.optimizers.SGD(0.05, momentum=0.9, nesterov=True),
    lambda k: k.optimizers.RMSprop(0.005, momentum=0.5, centered=True),
    lambda k: k.optimizers.Adagrad(0.1),
    lambda k: k.optimizers.AdamW(0.01, weight_decay=0.01),
], ids=["adam", "sgd", "rmsprop", "adagrad", "adamw"])
def test_onefit_saves_a_keras_file_that_keras_loads_and_trains_on_alike(iris_like, tmp_path, optimizer):
    x, y, _ = iris_like
    model = onefit_mlp(optimizer(keras))
    fit_losses(model, x, y, epochs=2)
    model.save(tmp_path / "m.keras")
    k = real_keras.saving.load_model(tmp_path / "m.keras")
    assert [type(l).__name__ for l in k.layers] == ["Dense", "Dense", "Dense"]
    np.testing.assert_allclose(k.predict(x, verbose=0), model.predict(x, verbose=0), rtol=1e-6, atol=1e-7)
    assert int(k.optimizer.iterations) == 2 * 5  # 150 rows in batches of 30, two epochs
    np.testing.assert_allclose(fit_losses(k, x, y), fit_losses(model, x, y), rtol=1e-5)


def keras_mlp():
    real_keras.utils.set_random_seed(7)
    k = real_keras.Sequential([real_keras.Input((4,)), real_keras.layers.Dense(12, activation="relu"),
                               real_keras.layers.Dropout(0.0),
                               real_keras.layers.Dense(3, activation="softmax")])
    k.compile(optimizer=real_keras.optimizers.Adam(0.01), loss="categorical_crossentropy", metrics=["accuracy"])
    return k


def test_keras_saves_a_keras_file_that_onefit_loads_and_trains_on_alike(iris_like, tmp_path):
    x, y, _ = iris_like
    k = keras_mlp()
    fit_losses(k, x, y, epochs=2)
    k.save(tmp_path / "k.keras")
    m = keras.models.load_model(tmp_path / "k.keras")
    assert isinstance(m.optimizer, keras.optimizers.Adam) and m.optimizer.learning_rate == pytest.approx(0.01)
    np.testing.assert_allclose(m.predict(x, verbose=0), k.predict(x, verbose=0), rtol=1e-6, atol=1e-7)
    loss, accuracy = m.evaluate(x, y, verbose=0)
    k_loss, k_accuracy = k.evaluate(x, y, verbose=0)
    assert loss == pytest.approx(k_loss, rel=1e-5) and accuracy == pytest.approx(k_accuracy)
    # Adam's moments and step came with the file: a fresh optimizer would take other steps.
    np.testing.assert_allclose(fit_losses(m, x, y), fit_losses(k, x, y), rtol=1e-5)
    # And back: onefit's save of the loaded model is Keras's model again.
    m.save(tmp_path / "again.keras")
    again = real_keras.saving.load_model(tmp_path / "again.keras")
    np.testing.assert_allclose(again.predict(x, verbose=0), m.predict(x, verbose=0), rtol=1e-6, atol=1e-7)


def test_a_keras_functional_file_loads_with_its_graph(iris_like, tmp_path):
    x, y, _ = iris_like
    real_keras.utils.set_random_seed(9)
    inputs = real_keras.Input((4,))
    a = real_keras.layers.Dense(8, activation="relu")(inputs)
    b = real_keras.layers.Dense(8, activation="tanh")(inputs)
    merged = real_keras.layers.Concatenate()([real_keras.layers.Add()([a, b]), a])
    outputs = real_keras.layers.Dense(3, activation="softmax")(real_keras.layers.LayerNormalization()(merged))
    k = real_keras.Model(inputs, outputs)
    k.compile(optimizer=real_keras.optimizers.RMSprop(0.01), loss="categorical_crossentropy")
    fit_losses(k, x, y, epochs=1)
    k.save(tmp_path / "f.keras")
    m = keras.models.load_model(tmp_path / "f.keras")
    np.testing.assert_allclose(m.predict(x, verbose=0), k.predict(x, verbose=0), rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(fit_losses(m, x, y), fit_losses(k, x, y), rtol=1e-5)


def test_compile_false_loads_the_model_uncompiled(iris_like, tmp_path):
    x, y, _ = iris_like
    k = keras_mlp()
    k.save(tmp_path / "k.keras")
    m = keras.models.load_model(tmp_path / "k.keras", compile=False)
    assert m.optimizer is None
    np.testing.assert_allclose(m.predict(x, verbose=0), k.predict(x, verbose=0), rtol=1e-6, atol=1e-7)
    m.compile(optimizer="sgd", loss="categorical_crossentropy")
    assert np.isfinite(fit_losses(m, x, y, epochs=1)).all()


def test_weights_h5_moves_weights_both_ways(iris_like, tmp_path):
    x, y, _ = iris_like
    k = keras_mlp()
    fit_losses(k, x, y, epochs=1)
    k.save_weights(tmp_path / "k.weights.h5")
    keras.utils.set_random_seed(1)
    m = keras.Sequential([keras.Input((4,)), keras.layers.Dense(12, activation="relu"), keras.layers.Dropout(0.0),
                          keras.layers.Dense(3, activation="softmax")])
    m.build((None, 4))
    m.load_weights(tmp_path / "k.weights.h5")
    np.testing.assert_allclose(m.predict(x, verbose=0), k.predict(x, verbose=0), rtol=1e-6, atol=1e-7)
    # onefit's weights into a fresh Keras model.
    m.set_weights([w * 0.5 for w in m.get_weights()])
    m.save_weights(tmp_path / "m.weights.h5")
    fresh = keras_mlp()
    fresh.load_weights(tmp_path / "m.weights.h5")
    for a, b in zip(fresh.get_weights(), m.get_weights()):
        np.testing.assert_array_equal(a, b)
    # Weights from a .keras file, and a file whose layers do not match refused naming it.
    k.save(tmp_path / "k.keras")
    m.load_weights(tmp_path / "k.keras")
    np.testing.assert_allclose(m.predict(x, verbose=0), k.predict(x, verbose=0), rtol=1e-6, atol=1e-7)
    other = keras.Sequential([keras.Input((4,)), keras.layers.Dense(5), keras.layers.Dense(3)])
    other.build((None, 4))
    with pytest.raises(ValueError, match="k.weights.h5"):
        other.load_weights(tmp_path / "k.weights.h5")


def test_metric_objects_survive_a_keras_file_both_ways(iris_like, tmp_path):
    x, y, _ = iris_like
    model = onefit_mlp(keras.optimizers.Adam(0.01))
    model.compile(optimizer="adam", loss="categorical_crossentropy",
                  metrics=["accuracy", keras.metrics.FBetaScore(average="macro", beta=2.0, name="f2"),
                           keras.metrics.F1Score(average="micro", threshold=0.4), keras.metrics.AUC(curve="PR", name="pr")])
    fit_losses(model, x, y, epochs=1)
    model.save(tmp_path / "m.keras")
    k = real_keras.saving.load_model(tmp_path / "m.keras")
    k_logs = k.evaluate(x, y, verbose=0, return_dict=True)
    logs = model.evaluate(x, y, verbose=0, return_dict=True)
    for key in ("f2", "f1_score", "pr", "accuracy"):
        assert logs[key] == pytest.approx(k_logs[key], abs=1e-6), key
    again = keras.models.load_model(tmp_path / "m.keras")
    assert again.evaluate(x, y, verbose=0, return_dict=True) == pytest.approx(logs, abs=1e-7)


def test_the_models_name_goes_both_ways_and_keras_saving_names_work(iris_like, tmp_path):
    x, y, _ = iris_like
    keras.utils.set_random_seed(3)
    model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(3, activation="softmax")], name="iris_model")
    model.compile(optimizer="adam", loss="categorical_crossentropy")
    keras.saving.save_model(model, tmp_path / "m.keras")
    assert real_keras.saving.load_model(tmp_path / "m.keras").name == "iris_model"
    assert keras.saving.load_model(tmp_path / "m.keras").name == "iris_model"
    inputs = real_keras.Input((4,))
    named = real_keras.Model(inputs, real_keras.layers.Dense(3)(inputs), name="scorer")
    named.save(tmp_path / "k.keras")
    loaded = keras.models.load_model(tmp_path / "k.keras")
    assert loaded.name == "scorer"
    np.testing.assert_allclose(loaded.predict(x, verbose=0), named.predict(x, verbose=0), rtol=1e-6, atol=1e-7)
    assert loaded.optimizer is None  # Keras saved it uncompiled (an empty compile_config)


def test_model_checkpoint_save_weights_only_writes_weights_files_keras_loads(iris_like, tmp_path):
    x, y, _ = iris_like
    model = onefit_mlp(keras.optimizers.Adam(0.01))
    path = str(tmp_path / "w{epoch:02d}.weights.h5")
    model.fit(x, y, batch_size=30, epochs=2, shuffle=False, verbose=0,
              callbacks=[keras.callbacks.ModelCheckpoint(path, monitor="loss", save_weights_only=True)])
    assert sorted(os.listdir(tmp_path)) == ["w01.weights.h5", "w02.weights.h5"]
    real_keras.utils.set_random_seed(2)
    k = real_keras.Sequential([real_keras.Input((4,)), real_keras.layers.Dense(16, activation="relu"),
                               real_keras.layers.Dense(8, activation="tanh"),
                               real_keras.layers.Dense(3, activation="softmax")])
    k.load_weights(tmp_path / "w02.weights.h5")
    np.testing.assert_allclose(k.predict(x, verbose=0), model.predict(x, verbose=0), rtol=1e-6, atol=1e-7)
    with pytest.raises(ValueError, match=r"must end in \.weights\.h5"):
        keras.callbacks.ModelCheckpoint(str(tmp_path / "m.keras"), save_weights_only=True)
