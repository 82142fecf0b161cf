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


def test_an_axis_onefit_cannot_sweep_is_refused(iris_like):
    x, y, _ = iris_like
    with pytest.raises(ValueError, match="units"):
        onefit.sweep(base(0), x, y, grid={"units": [8, 16]})
    with pytest.raises(RuntimeError, match="compile"):
        onefit.sweep(keras.Sequential([Dense(3, input_shape=(4,))]), x, y)
