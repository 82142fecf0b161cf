"""The epoch-level ratio metrics (Precision, Recall, AUC over ROC and PR, R2Score) against Keras 3
itself (JAX backend): by name and as metric objects (Keras's and onefit's), from the same weights,
the same per-epoch training and validation values and evaluate's (values worked by hand are in
tests/nn/metrics_test.cpp); what
onefit cannot compute is refused by name."""
import os

import numpy as np
import pytest

os.environ.setdefault("KERAS_BACKEND", "jax")
import keras as real_keras  # noqa: E402  (after choosing its backend)

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")  # Keras 3.15 under NumPy 2 (its own code)

import onefit.keras as keras  # noqa: E402
from onefit.keras import layers  # noqa: E402


def twins(make, shape, loss, keras_metrics, our_metrics):
    real_keras.utils.set_random_seed(3)
    k = real_keras.Sequential([real_keras.Input(shape)] + make(real_keras.layers))
    k.compile(real_keras.optimizers.Adam(0.01), loss, metrics=keras_metrics)
    m = keras.Sequential([keras.Input(shape=shape)] + make(layers))
    m.set_weights(k.get_weights())
    m.compile(keras.optimizers.Adam(0.01), loss, metrics=our_metrics)
    return k, m


def binary_data(n=64, seed=2):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n, 6)).astype(np.float32)
    y = ((x[:, 0] + 0.5 * x[:, 1] + 0.7 * rng.normal(size=n)) > 0).astype(np.float32)
    return x, y


def compare(k, m, x, y, keys, atol=1e-6):
    theirs = k.fit(x, y, batch_size=16, epochs=3, shuffle=False, validation_split=0.25, verbose=0).history
    ours = m.fit(x, y, batch_size=16, epochs=3, shuffle=False, validation_split=0.25, verbose=0).history
    for key in keys:
        for prefix in ("", "val_"):
            np.testing.assert_allclose(ours[prefix + key], theirs[prefix + key], rtol=0, atol=atol,
                                       err_msg=prefix + key)
    ours_eval = m.evaluate(x, y, verbose=0, return_dict=True)
    theirs_eval = k.evaluate(x, y, verbose=0, return_dict=True)
    for key in keys:
        np.testing.assert_allclose(ours_eval[key], theirs_eval[key], rtol=0, atol=atol, err_msg=key)
    return ours


def test_precision_recall_and_both_aucs_as_keras():
    x, y = binary_data()
    make = lambda k: [k.Dense(8, activation="tanh"), k.Dense(1, activation="sigmoid")]  # noqa: E731
    k, m = twins(make, (6,), "binary_crossentropy",
                 [real_keras.metrics.Precision(), real_keras.metrics.Recall(), real_keras.metrics.AUC(),
                  real_keras.metrics.AUC(curve="PR", name="pr")],
                 [real_keras.metrics.Precision(name="precision"), "recall", keras.metrics.AUC(),
                  keras.metrics.AUC(curve="PR", name="pr")])
    ours = compare(k, m, x, y, ["precision", "recall", "auc", "pr"])
    assert 0.5 < ours["auc"][-1] < 1 and 0 < ours["precision"][-1] < 1, "degenerate values: a weak comparison"


def test_r2_score_over_several_outputs_as_keras():
    rng = np.random.default_rng(4)
    x = rng.normal(size=(48, 5)).astype(np.float32)
    y = np.stack([x[:, 0] - x[:, 1], 0.5 * x[:, 2] + 0.1 * rng.normal(size=48)], axis=1).astype(np.float32)
    make = lambda k: [k.Dense(8, activation="tanh"), k.Dense(2)]  # noqa: E731
    k, m = twins(make, (5,), "mse", [real_keras.metrics.R2Score()], ["r2_score"])
    # Keras sums R2Score's squares in float32, onefit in double: they differ by ~1e-6 of the sums.
    compare(k, m, x, y, ["r2_score"], atol=1e-5)


def test_f1_scores_as_keras():
    rng = np.random.default_rng(6)
    x = rng.normal(size=(60, 5)).astype(np.float32)
    y = np.eye(3, dtype=np.float32)[(x[:, 0] > 0).astype(int) + (x[:, 1] > 0.5).astype(int)]
    make = lambda k: [k.Dense(8, activation="tanh"), k.Dense(3, activation="softmax")]  # noqa: E731
    k, m = twins(make, (5,), "categorical_crossentropy",
                 [real_keras.metrics.F1Score(average="macro", name="macro"),
                  real_keras.metrics.F1Score(average="weighted", name="weighted"),
                  real_keras.metrics.F1Score(average="micro", threshold=0.4, name="micro")],
                 [keras.metrics.F1Score(average="macro", name="macro"),
                  real_keras.metrics.F1Score(average="weighted", name="weighted"),
                  keras.metrics.F1Score(average="micro", threshold=0.4, name="micro")])
    compare(k, m, x, y, ["macro", "weighted", "micro"])


def test_fbeta_scores_as_keras():
    rng = np.random.default_rng(7)
    x = rng.normal(size=(60, 5)).astype(np.float32)
    y = np.eye(3, dtype=np.float32)[(x[:, 0] > 0).astype(int) + (x[:, 2] > 0.3).astype(int)]
    make = lambda k: [k.Dense(8, activation="tanh"), k.Dense(3, activation="softmax")]  # noqa: E731
    k, m = twins(make, (5,), "categorical_crossentropy",
                 [real_keras.metrics.FBetaScore(average="macro", beta=2.0, name="f2"),
                  real_keras.metrics.FBetaScore(average="weighted", beta=0.5, name="fhalf"),
                  real_keras.metrics.FBetaScore(average="micro", beta=3.0, threshold=0.4, name="f3")],
                 [keras.metrics.FBetaScore(average="macro", beta=2.0, name="f2"),
                  real_keras.metrics.FBetaScore(average="weighted", beta=0.5, name="fhalf"),
                  keras.metrics.FBetaScore(average="micro", beta=3.0, threshold=0.4, name="f3")])
    compare(k, m, x, y, ["f2", "fhalf", "f3"])


def test_what_onefit_cannot_compute_is_refused_by_name():
    with pytest.raises(ValueError, match="one value per class"):
        keras.metrics.FBetaScore(beta=2.0)
    for beta in (0.0, 2):  # (Keras refuses an int beta too)
        with pytest.raises(ValueError, match="beta must be a positive float"):
            keras.metrics.FBetaScore(average="macro", beta=beta)
    with pytest.raises(ValueError, match="one value per class"):
        keras.metrics.F1Score()
    m = keras.Sequential([keras.Input(shape=(3,)), layers.Dense(1, activation="sigmoid")])
    with pytest.raises(ValueError, match="thresholds"):
        m.compile("adam", "binary_crossentropy", metrics=[real_keras.metrics.Precision(thresholds=0.7)])
    with pytest.raises(ValueError, match="num_thresholds"):
        m.compile("adam", "binary_crossentropy", metrics=[keras.metrics.AUC(num_thresholds=50)])
    with pytest.raises(ValueError, match="class_aggregation"):
        m.compile("adam", "mse", metrics=[real_keras.metrics.R2Score(class_aggregation="variance_weighted_average")])


def test_to_keras_and_save_load_keep_the_metrics(tmp_path):
    x, y = binary_data(24, 5)
    m = keras.Sequential([keras.Input(shape=(6,)), layers.Dense(1, activation="sigmoid")])
    m.compile("adam", "binary_crossentropy", metrics=[keras.metrics.AUC(curve="PR", name="pr"), "AUC", "precision"])
    m.save(tmp_path / "m")
    loaded = keras.models.load_model(tmp_path / "m")
    assert loaded.evaluate(x, y, verbose=0, return_dict=True) == m.evaluate(x, y, verbose=0, return_dict=True)
    converted = m.to_keras()
    theirs = converted.evaluate(x, y, verbose=0, return_dict=True)
    ours = m.evaluate(x, y, verbose=0, return_dict=True)
    assert set(ours) == set(theirs) == {"loss", "pr", "auc", "precision"}
    for key in ours:
        assert ours[key] == pytest.approx(theirs[key], rel=1e-5, abs=1e-6), key
