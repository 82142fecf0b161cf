"""model.export("m.onnx"): onnxruntime runs the exported model with onefit's predictions, and a
Keras 3 model brought in through its .keras file exports with Keras's own predictions."""
import os

import numpy as np
import onnxruntime as ort
import pytest

os.environ.setdefault("KERAS_BACKEND", "jax")
import keras as real_keras  # noqa: E402  (after choosing its backend)

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")  # Keras 3.15 under NumPy 2 (its own code)

import onefit.keras as keras  # noqa: E402


def run_onnx(path, x):
    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    assert [i.name for i in session.get_inputs()] == ["input"]
    return session.run(None, {"input": x})[0]


def test_an_exported_model_runs_in_onnxruntime_with_onefits_predictions(iris_like, tmp_path):
    x, y, _ = iris_like
    keras.utils.set_random_seed(2)
    inputs = keras.Input((4,))
    h = keras.layers.Dense(16, activation="gelu")(inputs)
    h = keras.layers.Add()([h, keras.layers.Dense(16, activation="tanh")(inputs)])
    h = keras.layers.LayerNormalization()(keras.layers.Dropout(0.3)(h))
    model = keras.Model(inputs, keras.layers.Dense(3, activation="softmax")(h))
    model.compile(optimizer="adam", loss="categorical_crossentropy")
    model.fit(x, y, epochs=3, batch_size=16, verbose=0)
    model.export(tmp_path / "m.onnx")
    np.testing.assert_allclose(run_onnx(tmp_path / "m.onnx", x), model.predict(x, verbose=0), rtol=1e-5, atol=1e-6)


def test_a_keras_image_model_exports_with_keras_predictions(tmp_path):
    real_keras.utils.set_random_seed(4)
    k = real_keras.Sequential([real_keras.Input((8, 8, 3)),
                               real_keras.layers.Conv2D(6, 3, strides=2, padding="same", activation="relu"),
                               real_keras.layers.BatchNormalization(),
                               real_keras.layers.MaxPooling2D(2, padding="same"),
                               real_keras.layers.Flatten(),
                               real_keras.layers.Dense(4, activation="softmax")])
    x = np.random.default_rng(0).normal(size=(10, 8, 8, 3)).astype(np.float32)
    k.compile(optimizer="sgd", loss="categorical_crossentropy")
    k.fit(x, np.eye(4, dtype=np.float32)[np.arange(10) % 4], epochs=2, verbose=0)  # moving statistics move
    k.save(tmp_path / "k.keras")
    m = keras.models.load_model(tmp_path / "k.keras")
    m.export(tmp_path / "k.onnx", format="onnx")
    np.testing.assert_allclose(run_onnx(tmp_path / "k.onnx", x), k.predict(x, verbose=0), rtol=1e-5, atol=1e-6)


def test_other_export_formats_are_refused_by_name(iris_like, tmp_path):
    model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(3)])
    model.build((None, 4))
    with pytest.raises(ValueError, match="tf_saved_model"):
        model.export(tmp_path / "saved", format="tf_saved_model")
    with pytest.raises(ValueError, match="format='onnx'"):
        model.export(tmp_path / "saved")
    assert not os.listdir(tmp_path)
