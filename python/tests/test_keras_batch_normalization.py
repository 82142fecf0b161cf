"""onefit.keras.layers.BatchNormalization against Keras 3 itself (the JAX backend): given Keras's
weights (gamma, beta and moving statistics set away from their initial values), the same
predictions (moving statistics); after training steps on batches, the same gamma, beta and moving
statistics (Keras moves them by momentum with the batch's biased variance); the same counts of
trainable and non-trainable parameters; save/load, from_keras/to_keras; Keras's argument errors."""
import os

import numpy as np
import pytest

os.environ.setdefault("KERAS_BACKEND", "jax")
import keras as real_keras  # noqa: E402  (after choosing its backend)

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")  # Keras 3.15 under NumPy 2 (its own code)

import onefit.keras as keras  # noqa: E402
from onefit.keras import layers  # noqa: E402


def features_net(k):
    return [k.Dense(6, activation="tanh"), k.BatchNormalization(momentum=0.8), k.Dense(3, activation="softmax")]


def image_net(k):
    return [k.Conv2D(4, 3, padding="same", activation="tanh"), k.BatchNormalization(epsilon=0.01), k.MaxPooling2D(),
            k.Flatten(), k.Dense(5, activation="tanh"), k.BatchNormalization(center=False),
            k.Dense(3, activation="softmax")]


def data(shape, n, seed):
    rng = np.random.default_rng(seed)
    return rng.uniform(-1, 2, (n,) + shape).astype(np.float32), (np.arange(n) % 3).astype(np.float32)


def twins(make_layers, shape):
    real_keras.utils.set_random_seed(1)
    k = real_keras.Sequential([real_keras.Input(shape)] + make_layers(real_keras.layers))
    k.compile(real_keras.optimizers.SGD(0.1), "sparse_categorical_crossentropy")
    # Statistics and gamma/beta away from ones and zeros, so predict's use of each shows.
    rng = np.random.default_rng(3)
    k.set_weights([w + rng.uniform(0.1, 0.5, w.shape).astype(np.float32) for w in k.get_weights()])
    m = keras.Sequential([keras.Input(shape=shape)] + make_layers(layers))
    m.set_weights(k.get_weights())
    m.compile(keras.optimizers.SGD(0.1), "sparse_categorical_crossentropy")
    return k, m


@pytest.mark.parametrize("make_layers, shape", [(features_net, (5,)), (image_net, (6, 6, 2))])
def test_predicts_and_trains_as_keras_moving_statistics_included(make_layers, shape):
    x, y = data(shape, 12, 5)
    k, m = twins(make_layers, shape)
    np.testing.assert_allclose(m.predict(x, verbose=0), k.predict(x, verbose=0), rtol=1e-5, atol=1e-6)
    before = m.get_weights()
    k.fit(x, y, batch_size=4, epochs=2, shuffle=False, verbose=0)
    m.fit(x, y, batch_size=4, epochs=2, shuffle=False, verbose=0)
    after = m.get_weights()
    assert [w.shape for w in after] == [w.shape for w in k.get_weights()]
    for i, (ours, theirs) in enumerate(zip(after, k.get_weights())):
        assert not np.array_equal(ours, before[i]), f"array {i} did not move: the comparison would be vacuous"
        np.testing.assert_allclose(ours, theirs, rtol=1e-4, atol=1e-5, err_msg=f"weight array {i}")
    np.testing.assert_allclose(m.predict(x, verbose=0), k.predict(x, verbose=0), rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(m.evaluate(x, y, verbose=0), k.evaluate(x, y, verbose=0), rtol=1e-4)


def test_counts_and_the_summary_split_trainable_from_non_trainable():
    k, m = twins(image_net, (6, 6, 2))
    assert m.count_params() == k.count_params()
    text = []
    m.summary(print_fn=text.append)
    text = "\n".join(text)
    trainable = sum(int(np.prod(w.shape)) for w in k.trainable_weights)
    assert f"Trainable params: {trainable}" in text, text
    assert f"Non-trainable params: {k.count_params() - trainable}" in text, text


def test_save_load_keeps_the_moving_statistics(tmp_path):
    x, y = data((5,), 12, 6)
    _, m = twins(features_net, (5,))
    m.fit(x, y, batch_size=4, epochs=1, shuffle=False, verbose=0)
    path = str(tmp_path / "bn_model")
    m.save(path)
    loaded = keras.load_model(path)
    for a, b in zip(m.get_weights(), loaded.get_weights()):
        np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(m.predict(x, verbose=0), loaded.predict(x, verbose=0))
    assert isinstance(loaded.layers[1], layers.BatchNormalization)
    assert (loaded.layers[1].momentum, loaded.layers[1].epsilon) == (0.8, 0.001)  # float32's shortest, as Keras shows


def test_from_keras_and_to_keras_carry_it():
    x, _ = data((6, 6, 2), 4, 7)
    k, _ = twins(image_net, (6, 6, 2))
    ours = keras.from_keras(k)
    np.testing.assert_allclose(ours.predict(x, verbose=0), k.predict(x, verbose=0), rtol=1e-5, atol=1e-6)
    back = ours.to_keras()
    np.testing.assert_allclose(back.predict(x, verbose=0), k.predict(x, verbose=0), rtol=1e-5, atol=1e-6)
    assert back.layers[5].get_config()["center"] is False


@pytest.mark.parametrize("kwargs, named", [({"momentum": 1.5}, "momentum"), ({"epsilon": 0}, "epsilon"),
                                           ({"axis": 1}, "axis"), ({"renorm": True}, "renorm"),
                                           ({"gamma_regularizer": "l2"}, "gamma_regularizer")])
def test_arguments_onefit_has_not_are_value_errors_naming_them(kwargs, named):
    with pytest.raises(ValueError, match=named):
        layers.BatchNormalization(**kwargs)
