"""onefit.data.Dataset: tf.data's semantics for what the seed uses, and fit on a dataset equals
fit on the arrays it holds."""
import numpy as np
import pytest

import onefit
import onefit.keras as keras
from onefit.data import Dataset
from onefit.keras.layers import Dense


def rows_of(dataset):
    return [np.asarray(x)[..., 0].astype(int).tolist() for x, _ in dataset]


def numbered(n):
    x = np.arange(n, dtype=np.float32)[:, None].repeat(2, axis=1)
    return x, np.arange(n) % 3


def test_batch_repeat_take_follow_tf_data():
    x, y = numbered(10)
    assert rows_of(Dataset.from_tensor_slices((x, y)).batch(4)) == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9]]
    assert rows_of(Dataset.from_tensor_slices((x, y)).batch(4, drop_remainder=True)) == [[0, 1, 2, 3], [4, 5, 6, 7]]
    # repeat before batch: batches run across the copies, as tf.data's
    assert rows_of(Dataset.from_tensor_slices((x, y)).repeat(2).batch(4))[2] == [8, 9, 0, 1]
    assert len(Dataset.from_tensor_slices((x, y)).repeat(2).batch(4)) == 5
    assert rows_of(Dataset.from_tensor_slices((x, y)).batch(4).take(2)) == [[0, 1, 2, 3], [4, 5, 6, 7]]
    assert Dataset.from_tensor_slices((x, y)).repeat().cardinality() == onefit.data.INFINITE_CARDINALITY
    single = list(Dataset.from_tensor_slices((x, y)).take(2))
    assert single[1][0].shape == (2,) and single[1][1] == 1  # unbatched: one row at a time


def test_shuffle_is_a_seeded_permutation_reshuffled_each_pass():
    x, y = numbered(50)
    ds = Dataset.from_tensor_slices((x, y)).shuffle(50, seed=3).batch(50)
    first, second = rows_of(ds)[0], rows_of(ds)[0]
    assert sorted(first) == list(range(50)) and first != list(range(50))
    assert first != second  # reshuffle_each_iteration=True
    again = Dataset.from_tensor_slices((x, y)).shuffle(50, seed=3).batch(50)
    assert rows_of(again)[0] == first  # the seed fixes the sequence of passes
    fixed = Dataset.from_tensor_slices((x, y)).shuffle(50, seed=3, reshuffle_each_iteration=False).batch(50)
    assert rows_of(fixed)[0] == rows_of(fixed)[0]
    assert rows_of(Dataset.from_tensor_slices((x, y)).shuffle(1, seed=3).batch(50))[0] == list(range(50))


def test_fit_on_a_dataset_equals_fit_on_its_arrays(iris_like):
    x, y, _ = iris_like

    def model():
        m = keras.Sequential([Dense(16, activation="relu", input_shape=(4,)), Dense(3, activation="softmax")], seed=5)
        m.compile(optimizer="adam", loss="categorical_crossentropy", metrics=["accuracy"])
        return m

    on_arrays = model().fit(x[:100], y[:100], batch_size=20, epochs=3, shuffle=False, verbose=0,
                            validation_data=(x[100:], y[100:]))
    on_dataset = model().fit(Dataset.from_tensor_slices((x[:100], y[:100])).batch(20), epochs=3, verbose=0,
                             validation_data=Dataset.from_tensor_slices((x[100:], y[100:])).batch(20))
    assert on_dataset.history == on_arrays.history
    with pytest.raises(ValueError, match="batch_size"):
        model().fit(Dataset.from_tensor_slices((x, y)).batch(20), batch_size=20, verbose=0)
    with pytest.raises(ValueError, match="y must not"):
        model().fit(Dataset.from_tensor_slices((x, y)).batch(20), y, verbose=0)
