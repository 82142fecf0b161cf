"""The layers added from their declarations alone (an op file and a registry line each): Activation,
ReLU, LeakyReLU, Softmax, LayerNormalization, Embedding, Conv1D, MaxPooling1D, AveragePooling1D and
the global poolings, against Keras 3 itself (JAX backend): from the same weights, the same predictions
and per-epoch losses within 1e-5 and the same trained weights; from_keras/to_keras and save/load of
every one; Keras's argument errors; an Embedding's indices checked before the fit."""
import os

import numpy as np
import pytest

os.environ.setdefault("KERAS_BACKEND", "jax")
import keras as real_keras  # noqa: E402  (after choosing its backend)

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")  # Keras 3.15 under NumPy 2 (its own code)

import onefit.keras as keras  # noqa: E402
from onefit.keras import layers  # noqa: E402


def activations_net(k):
    return [k.Dense(8), k.ReLU(max_value=0.8, negative_slope=0.1, threshold=0.05), k.Dense(6), k.LeakyReLU(),
            k.Dense(5), k.Activation("tanh"), k.LayerNormalization(), k.Dense(3), k.Softmax()]


def sequence_net(k):
    return [k.Conv1D(4, 3, activation="relu"), k.MaxPooling1D(2, strides=1),
            k.Conv1D(3, 2, strides=2, padding="same", activation="tanh"), k.AveragePooling1D(2, padding="same"),
            k.LayerNormalization(epsilon=0.01), k.GlobalMaxPooling1D(), k.Dense(3, activation="softmax")]


def embedding_net(k):
    return [k.Embedding(12, 4), k.Conv1D(3, 2, activation="relu"), k.GlobalAveragePooling1D(),
            k.Dense(3, activation="softmax")]


def image_net(k):
    return [k.Conv2D(3, 2, activation="relu"), k.Activation("softmax"), k.GlobalMaxPooling2D(), k.Dense(3),
            k.Activation("softmax")]


CASES = [(activations_net, (5,), False), (sequence_net, (10, 2), False), (embedding_net, (6,), True),
         (image_net, (5, 5, 2), False)]


def data(shape, n, seed, indices=False):
    rng = np.random.default_rng(seed)
    x = rng.integers(0, 12, (n,) + shape) if indices else rng.uniform(-1, 2, (n,) + shape)
    return x.astype(np.float32), (np.arange(n) % 3).astype(np.float32)


def twins(make_layers, shape):
    real_keras.utils.set_random_seed(1)
    k = real_keras.Sequential([real_keras.Input(shape)] + make_layers(real_keras.layers))
    k.compile(real_keras.optimizers.Adam(0.02), "sparse_categorical_crossentropy")
    m = keras.Sequential([keras.Input(shape=shape)] + make_layers(layers))
    m.set_weights(k.get_weights())
    m.compile(keras.optimizers.Adam(0.02), "sparse_categorical_crossentropy")
    return k, m


@pytest.mark.parametrize("make_layers, shape, indices", CASES, ids=["activations", "sequence", "embedding", "image"])
def test_predicts_and_trains_as_keras(make_layers, shape, indices):
    x, y = data(shape, 24, 5, indices)
    k, m = twins(make_layers, shape)
    assert [w.shape for w in m.get_weights()] == [w.shape for w in k.get_weights()]
    np.testing.assert_allclose(m.predict(x, verbose=0), k.predict(x, verbose=0), rtol=1e-5, atol=1e-6)
    before = m.get_weights()
    theirs = k.fit(x, y, batch_size=8, epochs=3, shuffle=False, verbose=0).history["loss"]
    ours = m.fit(x, y, batch_size=8, epochs=3, shuffle=False, verbose=0).history["loss"]
    np.testing.assert_allclose(ours, theirs, rtol=1e-5)
    assert theirs[-1] < theirs[0], "the fit did not learn: the comparison would be weak"
    for i, (a, b) in enumerate(zip(m.get_weights(), k.get_weights())):
        assert not np.array_equal(a, before[i]), f"array {i} did not move: the comparison would be vacuous"
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-5, err_msg=f"weight array {i}")
    np.testing.assert_allclose(m.predict(x, verbose=0), k.predict(x, verbose=0), rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("make_layers, shape, indices", CASES, ids=["activations", "sequence", "embedding", "image"])
def test_from_keras_to_keras_and_save_load_keep_every_layer(make_layers, shape, indices, tmp_path):
    x, _ = data(shape, 6, 7, indices)
    k, _ = twins(make_layers, shape)
    m = keras.from_keras(k)
    assert [type(a).__name__ for a in m.layers] == [type(b).__name__ for b in k.layers]
    np.testing.assert_allclose(m.predict(x, verbose=0), k.predict(x, verbose=0), rtol=1e-5, atol=1e-6)
    back = keras.to_keras(m)
    assert [b.get_config() | {"name": None} for b in back.layers] == [b.get_config() | {"name": None} for b in k.layers]
    np.testing.assert_allclose(back.predict(x, verbose=0), k.predict(x, verbose=0), rtol=1e-6, atol=1e-7)
    m.save(str(tmp_path / "m"))
    loaded = keras.models.load_model(str(tmp_path / "m"))
    for a, b in zip(m.layers, loaded.layers):
        assert type(a) is type(b) and a._arguments() == b._arguments(), type(a).__name__
    np.testing.assert_array_equal(loaded.predict(x, verbose=0), m.predict(x, verbose=0))


def test_keras_defaults_and_spellings():
    assert layers.LeakyReLU().negative_slope == 0.3
    assert layers.ReLU().max_value is None
    assert layers.Conv1D(2, (3,), strides=(2,)).kernel_size == 3
    assert layers.MaxPooling1D(3).strides == 3  # strides=None: the pool size
    assert layers.Embedding(5, 2).embeddings_initializer == "uniform"
    assert layers.Embedding(5, 2, embeddings_initializer=real_keras.initializers.RandomUniform()).embeddings_initializer \
        == "random_uniform"
    assert layers.Activation(real_keras.activations.relu).activation == "relu"


def test_what_keras_refuses_or_onefit_lacks_is_an_error_naming_it():
    cases = [(lambda: layers.ReLU(max_value=-1.0), ValueError, "ReLU: max_value cannot be negative"),
             (lambda: layers.LeakyReLU(negative_slope=-0.1), ValueError, "LeakyReLU: negative_slope cannot be negative"),
             (lambda: layers.Embedding(5, 2, mask_zero=True), ValueError, "mask_zero=True is not supported"),
             (lambda: layers.Embedding(5, 2, embeddings_initializer=real_keras.initializers.RandomUniform(-1, 1)),
              ValueError, "only Keras's default bounds"),
             (lambda: layers.Conv1D(2, 3, dilation_rate=2), ValueError, "dilation_rate=2 is not supported"),
             (lambda: layers.Conv1D(2, 3, padding="causal"), ValueError, "padding"),
             (lambda: layers.GlobalMaxPooling1D(keepdims=True), ValueError, "keepdims=True is not supported"),
             (lambda: layers.LayerNormalization(axis=(1, 2)), ValueError, "axis"),
             (lambda: layers.LayerNormalization(rms_scaling=True), ValueError, "rms_scaling")]
    for make, error, message in cases:
        with pytest.raises(error, match=message):
            make()
    model = keras.Sequential([keras.Input((4, 3)), layers.Softmax(axis=1), layers.Flatten(), layers.Dense(2)])
    with pytest.raises(ValueError, match="axis 1 is not supported"):
        model.compile("adam", "mse")


def test_an_embeddings_indices_are_checked_before_anything_runs():
    model = keras.Sequential([keras.Input((3,)), layers.Embedding(4, 2), layers.Flatten(), layers.Dense(2)])
    model.compile("adam", "mse")
    x, y = np.array([[0, 1, 3], [2, 4, 1]], np.float32), np.zeros((2, 2), np.float32)
    weights = model.get_weights()
    with pytest.raises(ValueError, match=r"x row 1, column 1 holds 4; an Embedding takes integer indices in \[0, 4\)"):
        model.fit(x, y, verbose=0)
    with pytest.raises(ValueError, match="holds 0.5"):
        model.predict(np.array([[0, 0.5, 1]], np.float32), verbose=0)
    for a, b in zip(model.get_weights(), weights):
        np.testing.assert_array_equal(a, b)
    model2 = keras.Sequential([keras.Input((3,)), layers.Dense(3), layers.Embedding(4, 2), layers.Flatten(),
                               layers.Dense(2)])
    with pytest.raises(ValueError, match="must read a model input directly"):
        model2.compile("adam", "mse")
