"""Writes tests/nn/keras_image_layers/*.npy: Keras 3's own numbers for two small image models, which
tests/nn/keras_image_layers_test.cpp compares onefit with: the predictions for x from the initial
weights, and the weights after one SGD(0.1) step on the whole batch (so every layer's gradient is
Keras's). Needs Keras and TensorFlow (`make peers`):
    PEER_PYTHON tests/nn/keras_image_layers.py"""
import os
import pathlib

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
import keras  # noqa: E402
import numpy as np  # noqa: E402

out = pathlib.Path(__file__).resolve().parent / "keras_image_layers"
out.mkdir(exist_ok=True)
rng = np.random.default_rng(7)
L = keras.layers
models = {
    # "same" with strides (2, 1) on odd and even sizes, max and average windows that overhang.
    "m1": ([L.Conv2D(4, (3, 2), strides=(2, 1), padding="same", activation="tanh"),
            L.MaxPooling2D(2, strides=1, padding="same"), L.AveragePooling2D(2, padding="same"),
            L.Flatten(), L.Dense(3, activation="softmax")], (7, 6, 2), "sparse_categorical_crossentropy"),
    # "valid", a 1x1 convolution, the global average.
    "m2": ([L.Conv2D(3, 3, activation="relu"), L.Conv2D(5, 1, activation="elu"), L.GlobalAveragePooling2D(),
            L.Dense(2)], (6, 6, 3), "mse"),
}
for name, (layers, shape, loss) in models.items():
    keras.utils.set_random_seed(1)
    model = keras.Sequential([keras.Input(shape)] + layers)
    model.compile(keras.optimizers.SGD(0.1), loss)
    x = rng.uniform(-1, 1, (6,) + shape).astype(np.float32)
    y = (np.arange(6) % 3).astype(np.float32) if loss != "mse" else rng.uniform(-1, 1, (6, 2)).astype(np.float32)
    np.save(out / f"{name}_x.npy", x)
    np.save(out / f"{name}_y.npy", y)
    for i, w in enumerate(model.get_weights()):
        np.save(out / f"{name}_w{i}.npy", w.astype(np.float32))
    np.save(out / f"{name}_pred.npy", model.predict(x, verbose=0).astype(np.float32))
    model.train_on_batch(x, y)
    for i, w in enumerate(model.get_weights()):
        np.save(out / f"{name}_after{i}.npy", w.astype(np.float32))
print("keras", keras.__version__, "->", out)
