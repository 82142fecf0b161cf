"""Shared layers (a layer called on several tensors, its weights used by every call), against Keras
3 itself (JAX backend): a siamese encoder on two inputs and a layer called twice in a chain. From
the same weights, the same predictions and per-epoch losses within 1e-5; the layer listed once;
the model's .keras file read both ways; ONNX; to_keras."""
import os

import numpy as np
import pytest

os.environ.setdefault("KERAS_BACKEND", "jax")
import keras as real_keras  # noqa: E402  (after choosing its backend)

import onefit.keras as keras  # noqa: E402
from onefit.keras import layers  # noqa: E402
from functional_twins import functional_twins  # noqa: E402


def siamese(k, left, right):
    encoder = k.Dense(5, activation="tanh", name="encoder")
    norm = k.LayerNormalization(name="norm")
    a, b = norm(encoder(left)), norm(encoder(right))
    again = encoder(k.Dense(4, name="back")(a))  # a third call, on a layer Keras lists after it
    joined = k.Concatenate(name="cat")([a, b, k.Subtract(name="diff")([a, b]), again])
    return k.Dense(2, activation="softmax", name="out")(joined)


def data(n, seed):
    rng = np.random.default_rng(seed)
    left = rng.uniform(-1, 1, (n, 4)).astype(np.float32)
    right = rng.uniform(-1, 1, (n, 4)).astype(np.float32)
    return left, right, (left.sum(1) > right.sum(1)).astype(np.float32)


def twins():
    return functional_twins(siamese, [((4,), "left"), ((4,), "right")], 5, 0.02, "sparse_categorical_crossentropy")


def test_a_shared_encoder_predicts_and_trains_as_keras():
    left, right, y = data(48, 1)
    k, m = twins()
    assert sorted(layer.name for layer in m.layers) == sorted(layer.name for layer in k.layers
                                                              if layer.name not in ("left", "right"))
    assert m.count_params() == k.count_params()
    assert len(m.get_weights()) == len(k.get_weights())
    np.testing.assert_allclose(m.predict([left, right], verbose=0), k.predict([left, right], verbose=0),
                               rtol=1e-5, atol=1e-6)
    theirs = k.fit([left, right], y, batch_size=8, epochs=3, shuffle=False, verbose=0).history
    ours = m.fit([left, right], y, batch_size=8, epochs=3, shuffle=False, verbose=0).history
    np.testing.assert_allclose(ours["loss"], theirs["loss"], rtol=1e-5)
    for a, b in zip(m.get_weights(), k.get_weights()):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-5)


def test_a_layer_called_twice_in_a_chain():
    real_keras.utils.set_random_seed(2)
    x = np.random.default_rng(0).uniform(-1, 1, (16, 3)).astype(np.float32)
    y = (x[:, 0] > 0).astype(np.float32)[:, None]

    def net(k, source):
        twice = k.Dense(3, activation="tanh", name="twice")
        return k.Dense(1, activation="sigmoid", name="out")(twice(twice(source)))

    k = real_keras.Model(s := real_keras.Input((3,)), net(real_keras.layers, s))
    m = keras.Model(t := keras.Input(shape=(3,)), net(layers, t))
    m.set_weights(k.get_weights())
    for model in (k, m):
        model.compile(real_keras.optimizers.SGD(0.1) if model is k else keras.optimizers.SGD(0.1), "binary_crossentropy")
    theirs = k.fit(x, y, batch_size=4, epochs=2, shuffle=False, verbose=0).history["loss"]
    ours = m.fit(x, y, batch_size=4, epochs=2, shuffle=False, verbose=0).history["loss"]
    np.testing.assert_allclose(ours, theirs, rtol=1e-5)


def test_shared_layer_files_both_ways(tmp_path):
    left, right, _ = data(10, 3)
    k, m = twins()
    expected = k.predict([left, right], verbose=0)
    theirs, ours = str(tmp_path / "keras.keras"), str(tmp_path / "onefit.keras")
    k.save(theirs)
    m.save(ours)
    loaded = keras.models.load_model(theirs)
    assert sorted(layer.name for layer in loaded.layers) == sorted(layer.name for layer in m.layers)
    np.testing.assert_allclose(loaded.predict([left, right], verbose=0), expected, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(real_keras.models.load_model(ours).predict([left, right], verbose=0), expected,
                               rtol=1e-5, atol=1e-6)
    folder = str(tmp_path / "folder")
    m.save(folder)
    np.testing.assert_allclose(keras.models.load_model(folder).predict([left, right], verbose=0), expected,
                               rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(keras.to_keras(m).predict([left, right], verbose=0), expected, rtol=1e-5, atol=1e-6)
    back = keras.from_keras(k)
    assert len(back._call_layers()) == 9 and len(back.layers) == 6  # (encoder thrice, norm twice)
    np.testing.assert_allclose(back.predict([left, right], verbose=0), expected, rtol=1e-5, atol=1e-6)


def test_shared_layer_onnx(tmp_path):
    import onnxruntime as ort
    left, right, _ = data(7, 4)
    _, m = twins()
    path = str(tmp_path / "m.onnx")
    m.export(path)
    session = ort.InferenceSession(path)
    got = session.run(None, {"input": left, "input_1": right})[0]
    np.testing.assert_allclose(got, m.predict([left, right], verbose=0), rtol=1e-5, atol=1e-6)


def test_a_shared_layer_on_an_input_of_another_shape_is_named():
    a, b = keras.Input(shape=(4,)), keras.Input(shape=(5,))
    encoder = layers.Dense(3, name="encoder")
    with pytest.raises(ValueError, match="a layer called again takes inputs of the same shape"):
        keras.Model([a, b], layers.Add()([encoder(a), encoder(b)])).predict([np.zeros((1, 4)), np.zeros((1, 5))])


def test_a_shared_batch_normalization_updates_its_statistics_once_per_call_as_keras():
    def net(k, a, b):
        norm = k.BatchNormalization(name="bn")
        return k.Dense(1, name="out")(k.Concatenate(name="cat")([norm(a), norm(b)]))

    rng = np.random.default_rng(0)
    a, b = rng.normal(1, 2, (16, 3)).astype(np.float32), rng.normal(-1, 1, (16, 3)).astype(np.float32)
    y = rng.normal(0, 1, (16, 1)).astype(np.float32)
    k, m = functional_twins(net, [((3,), "a"), ((3,), "b")], 1, 0.01, "mse")
    theirs = k.fit([a, b], y, batch_size=8, epochs=2, shuffle=False, verbose=0).history["loss"]
    ours = m.fit([a, b], y, batch_size=8, epochs=2, shuffle=False, verbose=0).history["loss"]
    np.testing.assert_allclose(ours, theirs, rtol=1e-5)
    for mine, keras_weights in zip(m.get_weights(), k.get_weights()):  # gamma, beta, moving mean and variance
        np.testing.assert_allclose(mine, keras_weights, rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(m.predict([a, b], verbose=0), k.predict([a, b], verbose=0), rtol=1e-5, atol=1e-6)


def test_a_shared_layer_whose_calls_sit_at_other_depths_keeps_keras_weight_order(tmp_path):
    # Keras orders a Functional model's layers (and so its file's weight groups dense, dense_1, ...)
    # by depth, a shared layer's shallow call making its inputs deeper: "e" comes before "shared".
    def net(k, x, y):
        shared = k.Dense(4, name="shared")
        a = k.Dense(4, name="d2")(k.Dense(4, name="d1")(shared(x)))
        return k.Dense(1, name="out")(k.Add(name="add")([shared(k.Dense(4, name="e")(y)), a]))

    rng = np.random.default_rng(0)
    xs, ys = rng.normal(size=(5, 4)).astype(np.float32), rng.normal(size=(5, 4)).astype(np.float32)
    k, m = functional_twins(net, [((4,), "x"), ((4,), "y")], 4, 0.01, "mse")
    expected = k.predict([xs, ys], verbose=0)
    theirs, ours = str(tmp_path / "keras.keras"), str(tmp_path / "onefit.keras")
    k.save(theirs)
    m.save(ours)
    np.testing.assert_allclose(keras.models.load_model(theirs).predict([xs, ys], verbose=0), expected, rtol=1e-5,
                               atol=1e-6)
    np.testing.assert_allclose(real_keras.models.load_model(ours).predict([xs, ys], verbose=0), expected, rtol=1e-5,
                               atol=1e-6)


def test_a_layer_in_two_models_is_refused_by_name():
    # Keras's two models would share the layer's weights; onefit's models cannot, so the second is
    # refused rather than trained apart silently.
    encoder = layers.Dense(3, name="encoder")
    x = keras.Input(shape=(4,))
    code = encoder(x)
    first = keras.Model(x, code)
    first.predict(np.zeros((2, 4), np.float32), verbose=0)
    second = keras.Model(x, layers.Dense(1)(code))
    with pytest.raises(ValueError, match="layer 'encoder' is in another model already"):
        second.predict(np.zeros((2, 4), np.float32), verbose=0)
