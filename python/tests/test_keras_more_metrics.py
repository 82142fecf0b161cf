"""The metrics added to onefit (mape, msle, top_k_categorical_accuracy and its sparse form, any k)
against Keras 3 itself from the same weights: the same values in evaluate and in every epoch of a
fit, within 1e-6; a Keras metric object's k is its own, kept through a .keras file."""
import os

import numpy as np
import pytest

os.environ.setdefault("KERAS_BACKEND", "jax")
import keras as real_keras  # noqa: E402  (after choosing its backend)

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")  # Keras 3.15 under NumPy 2 (its own code)

import onefit.keras as keras  # noqa: E402


def twins(units, activation, loss, metrics):
    real_keras.utils.set_random_seed(3)
    k = real_keras.Sequential([real_keras.Input((5,)), real_keras.layers.Dense(8, activation="tanh"),
                               real_keras.layers.Dense(units, activation=activation)])
    k.compile(real_keras.optimizers.Adam(0.01), loss, metrics=metrics)
    m = keras.Sequential([keras.Input(shape=(5,)), keras.layers.Dense(8, activation="tanh"),
                          keras.layers.Dense(units, activation=activation)])
    m.compile(keras.optimizers.Adam(0.01), loss, metrics=metrics)
    m.set_weights(k.get_weights())
    return k, m


@pytest.mark.parametrize("labels", ["sparse", "one_hot"])
def test_top_k_accuracy_is_kerass(labels):
    rng = np.random.default_rng(1)
    x = rng.normal(size=(40, 5)).astype(np.float32)
    classes = rng.integers(0, 9, 40)
    y = classes.astype(np.float32) if labels == "sparse" else np.eye(9, dtype=np.float32)[classes]
    metric = "sparse_top_k_categorical_accuracy" if labels == "sparse" else "top_k_categorical_accuracy"
    loss = "sparse_categorical_crossentropy" if labels == "sparse" else "categorical_crossentropy"
    k, m = twins(9, "softmax", loss, [metric])
    np.testing.assert_allclose(m.evaluate(x, y, verbose=0), k.evaluate(x, y, verbose=0), rtol=1e-6)
    theirs = k.fit(x, y, batch_size=8, epochs=3, shuffle=False, verbose=0).history
    ours = m.fit(x, y, batch_size=8, epochs=3, shuffle=False, verbose=0).history
    np.testing.assert_allclose(ours[metric], theirs[metric], rtol=1e-6)
    assert 0 < ours[metric][-1] < 1  # neither all nor none: the comparison shows the ranking


def test_mape_and_msle_are_kerass():
    rng = np.random.default_rng(2)
    x = rng.normal(size=(30, 5)).astype(np.float32)
    y = np.abs(rng.normal(size=(30, 2))).astype(np.float32) + 0.1
    k, m = twins(2, "relu", "mse", ["mape", "msle"])
    np.testing.assert_allclose(m.evaluate(x, y, verbose=0), k.evaluate(x, y, verbose=0), rtol=1e-6)
    theirs = k.fit(x, y, batch_size=8, epochs=2, shuffle=False, verbose=0).history
    ours = m.fit(x, y, batch_size=8, epochs=2, shuffle=False, verbose=0).history
    for key in ("mape", "msle"):
        np.testing.assert_allclose(ours[key], theirs[key], rtol=1e-5)


@pytest.mark.parametrize("labels", ["sparse", "one_hot"])
def test_a_top_k_metric_with_another_k_is_kerass(labels, tmp_path):
    rng = np.random.default_rng(5)
    x = rng.normal(size=(40, 5)).astype(np.float32)
    classes = rng.integers(0, 9, 40)
    y = classes.astype(np.float32) if labels == "sparse" else np.eye(9, dtype=np.float32)[classes]
    cls = real_keras.metrics.SparseTopKCategoricalAccuracy if labels == "sparse" else real_keras.metrics.TopKCategoricalAccuracy
    loss = "sparse_categorical_crossentropy" if labels == "sparse" else "categorical_crossentropy"
    k, m = twins(9, "softmax", loss, [cls(k=3, name="top3"), cls(k=2)])
    default = "sparse_top_k_categorical_accuracy" if labels == "sparse" else "top_k_categorical_accuracy"
    theirs = k.fit(x, y, batch_size=8, epochs=3, shuffle=False, verbose=0).history
    ours = m.fit(x, y, batch_size=8, epochs=3, shuffle=False, verbose=0).history
    for key in ("top3", default):
        np.testing.assert_allclose(ours[key], theirs[key], rtol=1e-6)
        assert 0 < ours[key][-1] < 1  # neither all nor none: the comparison shows the ranking
    assert ours["top3"] != ours[default]  # two k's, two values
    # Its k survives a .keras file both ways.
    m.save(tmp_path / "m.keras")
    back = real_keras.saving.load_model(tmp_path / "m.keras")
    theirs, ours = back.evaluate(x, y, verbose=0, return_dict=True), m.evaluate(x, y, verbose=0, return_dict=True)
    assert sorted(theirs) == sorted(ours)
    for key in ours:
        assert ours[key] == pytest.approx(theirs[key], rel=1e-5), key
