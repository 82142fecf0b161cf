"""Keras peer of bench_iris_fit: the seed's own Keras code, model.fit timed alone.

  keras_iris_fit_us       median of FITS re-fits of one compiled model, after a warm-up fit that
                          traces the train/validation functions (Keras's best case)
  keras_iris_cold_fit_us  the first fit of a fresh model: tracing included (what one run of the
                          seed's script pays)
  keras_cnn_mnist_samples_per_s  `keras_peer.py cnn`: one epoch of Keras's MNIST convnet (as
                          bench/cnn_mnist.cpp) on CNN_SAMPLES synthetic images, after a warm-up epoch
Run: python3 bench/peers/keras_peer.py [cnn]
"""
import math
import os
import statistics
import sys
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")  # no start-up chatter on stderr
os.environ.setdefault("KERAS_BACKEND", "tensorflow")

import numpy as np
import tensorflow as tf
import keras
from sklearn.datasets import load_iris
from sklearn.model_selection import train_test_split

FITS = 5


def seed_model():
    model = keras.Sequential([
        keras.Input(shape=(4,)),  # the seed's Dense(..., input_shape=(4,)), as Keras 3 spells it
        keras.layers.Dense(32, activation="relu"),
        keras.layers.Dense(3, activation="softmax"),
    ])
    # The seed's loss='logcosh'; Keras 3 knows it only as 'log_cosh' (same function).
    model.compile(optimizer=keras.optimizers.Adam(learning_rate=0.1), loss="log_cosh")
    return model


def main():
    iris = load_iris()
    x_train, x_val, y_train, y_val = train_test_split(
        iris.data.astype(np.float32), iris.target.astype(np.float32), test_size=0.3, shuffle=False)
    # tf.keras 2 expanded (N,) labels to (N, 1) before logcosh, which then broadcast against the
    # (N, 3) softmax; Keras 3 leaves them (N,) and fails to broadcast, so we reshape by hand.
    y_train, y_val = y_train.reshape(-1, 1), y_val.reshape(-1, 1)

    def fit(model):
        t0 = time.perf_counter()
        h = model.fit(x_train, y_train, batch_size=20, epochs=20, validation_data=(x_val, y_val),
                      verbose=0, shuffle=False)
        return (time.perf_counter() - t0) * 1e6, h.history["val_loss"][-1]

    keras.utils.set_random_seed(0)
    cold_us, _ = fit(seed_model())
    model = seed_model()
    fit(model)  # warm-up: traces train_function and test_function once
    runs = [fit(model) for _ in range(FITS)]

    print(f"tensorflow_version: {tf.__version__}")
    print(f"keras_version: {keras.__version__}")
    print(f"# keras iris: the seed's Sequential Dense(32, relu) -> Dense(3, softmax), Adam(0.1), 'logcosh' "
          f"('log_cosh'), batch 20, 20 epochs, validation_data, shuffle=False, verbose 0, {len(x_train)}/{len(x_val)} rows, "
          f"labels (N,1); backend {keras.backend.backend()}, jit_compile {model.jit_compile}, "
          f"{tf.config.threading.get_intra_op_parallelism_threads() or os.cpu_count()} intra-op threads; "
          f"median of {FITS} re-fits of one model after a warm-up fit (last val_loss {runs[-1][1]:.4f})")
    print(f"keras_iris_fit_us: {statistics.median(r[0] for r in runs):.1f} us")
    print(f"keras_iris_cold_fit_us: {cold_us:.1f} us")


def cnn():
    import synthetic
    samples = int(os.environ.get("CNN_SAMPLES", "60000"))
    x, y = synthetic.mnist(samples)
    x = x.reshape(samples, 28, 28, 1)
    keras.utils.set_random_seed(0)
    model = keras.Sequential([keras.Input((28, 28, 1)),
                              keras.layers.Conv2D(32, 3, activation="relu"), keras.layers.MaxPooling2D(2),
                              keras.layers.Conv2D(64, 3, activation="relu"), keras.layers.MaxPooling2D(2),
                              keras.layers.Flatten(), keras.layers.Dropout(0.5),
                              keras.layers.Dense(10, activation="softmax")])
    model.compile(keras.optimizers.Adam(1e-3), "sparse_categorical_crossentropy")
    model.fit(x, y, batch_size=128, epochs=1, verbose=0)  # warm-up: traces the train function
    t0 = time.perf_counter()
    model.fit(x, y, batch_size=128, epochs=1, verbose=0)
    s = time.perf_counter() - t0
    print(f"# keras cnn_mnist: {samples} synthetic 28x28x1 images, the Keras convnet, Adam(1e-3), batch 128, "
          f"shuffle; backend {keras.backend.backend()} {tf.__version__}; one epoch after a warm-up epoch")
    print(f"keras_cnn_mnist_epoch_s: {s:.4f} s")
    print(f"keras_cnn_mnist_samples_per_s: {samples / s:.0f} samples/s")


if __name__ == "__main__":
    if sys.argv[1:] == ["cnn"]:
        cnn()
    else:
        main()
