"""onefit.sweep: each member equals the same model built with its seed, compiled at its learning
rate and fitted alone, with shuffling, dropout and a validation split on."""
import numpy as np
import pytest

import onefit
import onefit.keras as keras
from onefit.keras.layers import Dense, Dropout


def base(seed, learning_rate=0.01):
    m = keras.Sequential([keras.Input(shape=(4,)), Dense(16, activation="relu"), Dropout(0.2),
                          Dense(3, activation="softmax")], seed=seed)
    m.compile(optimizer=keras.optimizers.RMSprop(learning_rate), loss="categorical_crossentropy",
              metrics=["accuracy"])
    return m


def test_every_member_equals_its_configuration_fitted_alone(iris_like):
    x, y, _ = iris_like
    args = dict(batch_size=16, epochs=3, validation_split=0.2)
    members = onefit.sweep(base(0), x, y, grid={"learning_rate": [0.001, 0.05], "seed": [1, 2]}, **args)
    assert [(m["learning_rate"], m["seed"]) for m in members] == [
        (pytest.approx(0.001), 1), (pytest.approx(0.001), 2), (pytest.approx(0.05), 1), (pytest.approx(0.05), 2)]
    for m in members:
        alone = base(m["seed"], m["learning_rate"])
        history = alone.fit(x, y, verbose=0, **args).history
        assert m["history"] == history
        assert m["val_loss"] == history["val_loss"][-1] and "val_accuracy" in m
        for a, b in zip(m["weights"], alone.get_weights()):
            np.testing.assert_array_equal(a, b)
    assert members[0]["history"] != members[1]["history"]


def test_every_axis_multiplies_and_each_member_is_that_model_fitted_alone(iris_like):
    x, y, _ = iris_like
    grid = {"learning_rate": [0.01], "seed": [3], "optimizer": ["adam", keras.optimizers.SGD()], "units": [8, 12],
            "dropout": [0.1], "batch_size": [16, 50], "epochs": [2]}
    members = onefit.sweep(base(0), x, y, grid=grid, validation_split=0.2)
    assert [(m["optimizer"], m["units"], m["batch_size"]) for m in members] == [
        (o, u, b) for o in ("adam", "sgd") for u in (8, 12) for b in (16, 50)]
    assert all(m["dropout"] == pytest.approx(0.1) and m["epochs"] == 2 for m in members)
    for m in members:
        alone = keras.Sequential([keras.Input(shape=(4,)), Dense(m["units"], activation="relu"), Dropout(m["dropout"]),
                                  Dense(3, activation="softmax")], seed=m["seed"])
        optimizer = keras.optimizers.Adam(0.01) if m["optimizer"] == "adam" else keras.optimizers.SGD(0.01)
        alone.compile(optimizer=optimizer, loss="categorical_crossentropy", metrics=["accuracy"])
        history = alone.fit(x, y, batch_size=m["batch_size"], epochs=2, validation_split=0.2, verbose=0).history
        assert m["history"] == history
        for a, b in zip(m["weights"], alone.get_weights()):
            np.testing.assert_array_equal(a, b)


def test_an_axis_onefit_cannot_sweep_is_refused(iris_like):
    x, y, _ = iris_like
    with pytest.raises(ValueError, match="width"):
        onefit.sweep(base(0), x, y, grid={"width": [8, 16]})
    with pytest.raises(RuntimeError, match="compile"):
        onefit.sweep(keras.Sequential([Dense(3, input_shape=(4,))]), x, y)


def test_kfold_members_are_their_folds_fitted_alone_with_scikit_learns_stratified_folds(iris_like):
    # The folds are StratifiedKFold's (shuffle=False) for these class labels, and each member is
    # the model fitted alone on its fold's training rows, validated on the fold.
    from sklearn.model_selection import StratifiedKFold

    x, y, labels = iris_like
    keep = np.r_[0:50, 50:83, 100:140]  # uneven classes (50, 33, 40): folds of unequal size
    x, y, labels = x[keep], y[keep], labels[keep]
    args = dict(batch_size=16, epochs=2)
    members = onefit.sweep(base(0), x, y, grid={"learning_rate": [0.01], "seed": [1, 2]}, kfold=4, **args)
    assert [(m["seed"], m["fold"]) for m in members] == [(s, f) for s in (1, 2) for f in range(4)]
    folds = list(StratifiedKFold(4).split(x, labels))
    for m in members:
        train, test = folds[m["fold"]]
        alone = base(m["seed"], m["learning_rate"])
        history = alone.fit(x[train], y[train], validation_data=(x[test], y[test]), verbose=0, **args).history
        assert m["history"] == history
        for a, b in zip(m["weights"], alone.get_weights()):
            np.testing.assert_array_equal(a, b)
    with pytest.raises(ValueError, match="kfold"):
        onefit.sweep(base(0), x, y, kfold=1)
    with pytest.raises(ValueError, match="validate each member on what its sample left out"):
        onefit.sweep(base(0), x, y, kfold=3, validation_split=0.2)


def test_random_points_and_a_table(iris_like):
    # random_points draws log-uniform rates; a list of points is swept in order; as_frame gives
    # a pandas DataFrame of the same rows.
    x, y, _ = iris_like
    points = onefit.random_points(3, 1e-3, 1e-1, first_seed=5, draw_seed=2)
    assert [p["seed"] for p in points] == [5, 6, 7]
    assert all(1e-3 <= p["learning_rate"] <= 1e-1 for p in points)
    assert points == onefit.random_points(3, 1e-3, 1e-1, first_seed=5, draw_seed=2)
    table = onefit.sweep(base(0), x, y, grid=points, epochs=2, validation_split=0.2, as_frame=True)
    assert list(table["seed"]) == [5, 6, 7]
    assert list(table["learning_rate"]) == pytest.approx([p["learning_rate"] for p in points])
    assert {"loss", "val_loss", "accuracy", "history", "weights"} <= set(table.columns)
    assert table["val_loss"].iloc[1] == table["history"].iloc[1]["val_loss"][-1]
    with pytest.raises(ValueError, match="learning_rate"):
        onefit.sweep(base(0), x, y, grid=[{"seed": 1}])


def test_bootstrap_and_shuffle_splits_give_each_configuration_one_member_per_sample(iris_like):
    x, y, _ = iris_like
    members = onefit.sweep(base(0), x, y, grid={"seed": [1]}, bootstrap=3, epochs=1)
    assert [m["fold"] for m in members] == [0, 1, 2]
    assert len({m["val_loss"] for m in members}) == 3  # three different samples
    splits = onefit.sweep(base(0), x, y, grid={"seed": [1]}, shuffle_splits=2, split_size=0.3, epochs=1)
    assert [m["fold"] for m in splits] == [0, 1]
    with pytest.raises(ValueError, match="bootstrap"):
        onefit.sweep(base(0), x, y, bootstrap=0)


def test_a_loss_axis_compiles_each_member_with_its_loss(iris_like):
    x, y, _ = iris_like
    members = onefit.sweep(base(0), x, y, grid={"seed": [2], "loss": ["categorical_crossentropy", "mse"]}, epochs=1)
    assert [m["loss_function"] for m in members] == ["categorical_crossentropy", "mean_squared_error"]
    alone = base(2)
    alone.compile(optimizer=keras.optimizers.RMSprop(0.01), loss="mse", metrics=["accuracy"])
    assert members[1]["history"] == alone.fit(x, y, epochs=1, verbose=0).history


def test_rows_give_float32_values_as_they_were_asked_for():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(32, 4)).astype("float32")
    model = keras.Sequential([keras.Input((4,)), Dense(8), Dropout(0.1), Dense(2)], seed=0)
    model.compile("sgd", "mse")
    rows = onefit.sweep(model, x, x[:, :2].copy(), grid={"learning_rate": [0.01, 0.1], "dropout": [0.1, 0.3]}, epochs=1)
    assert [(r["learning_rate"], r["dropout"]) for r in rows] == [(0.01, 0.1), (0.1, 0.1), (0.01, 0.3), (0.1, 0.3)]
    with pytest.raises(ValueError, match="the dropout axis sets the rate of every Dropout layer, and the model has none"):
        bare = keras.Sequential([keras.Input((4,)), Dense(2)], seed=0)
        bare.compile("sgd", "mse")
        onefit.sweep(bare, x, x[:, :2].copy(), grid={"dropout": [0.1, 0.5]}, epochs=1)
