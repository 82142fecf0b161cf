"""onefit.data.Dataset: tf.data's in-memory pipeline (from_tensor_slices, shuffle, batch, repeat,
take), which fit and validation_data accept. Its ops run inside the compiled fit: no Python
runs per batch. Iterating it in Python yields NumPy batches, as tf.data's as_numpy_iterator."""
from onefit import _onefit

INFINITE_CARDINALITY = -1
AUTOTUNE = -1


class Dataset:
    def __init__(self, native, x, y, w=None):
        self._native = native
        self._x, self._y, self._w = x, y, w  # the arrays, for iterating in Python (w: None, unweighted)
        self._iterations = 0

    @staticmethod
    def from_tensor_slices(tensors):
        """A dataset of the rows of (x, y) or (x, y, sample_weight), as tf.data's: arrays (or
        array-likes) with the same first dimension; fit and evaluate weight each row's loss by its
        sample_weight, as Keras does with a dataset of 3-tuples."""
        if not isinstance(tensors, (tuple, list)) or len(tensors) not in (2, 3):
            raise ValueError("from_tensor_slices takes (features, labels) or (features, labels, sample_weight)")
        from onefit._arrays import float32

        # Copied, as tf.data copies: changing the arrays afterwards does not change the dataset.
        x, y = float32(tensors[0], "dataset x").copy(), float32(tensors[1], "dataset y").copy()
        if len(tensors) == 2:
            return Dataset(_onefit.Dataset.from_tensor_slices(x, y), x, y)
        w = _weights(tensors[2])
        return Dataset(_onefit.Dataset.from_tensor_slices(x, y, w), x, y, w)

    def _with_sample_weight(self, weights):
        """This dataset, its ops kept, weighting row i by weights[i] (class_weight's rows)."""
        w = _weights(weights)
        return Dataset(self._native.with_sample_weight(w), self._x, self._y, w)

    def _then(self, native):
        return Dataset(native, self._x, self._y, self._w)

    def shuffle(self, buffer_size, seed=None, reshuffle_each_iteration=True):
        if seed is None:
            from onefit._seeds import next_seed

            seed = next_seed()
        return self._then(self._native.shuffle(int(buffer_size), int(seed), bool(reshuffle_each_iteration)))

    def batch(self, batch_size, drop_remainder=False, **kwargs):
        return self._then(self._native.batch(int(batch_size), bool(drop_remainder)))

    def repeat(self, count=None):
        return self._then(self._native.repeat(-1 if count is None else int(count)))

    def take(self, count):
        return self._then(self._native.take(int(count)))

    def prefetch(self, buffer_size=None):
        return self  # the data are in memory already

    def cache(self, filename=""):
        return self

    def cardinality(self):
        return self._native.cardinality()

    def __len__(self):
        n = self.cardinality()
        if n < 0:
            raise TypeError("the dataset is infinite")
        return n

    def __iter__(self):
        # Each iteration is a new pass, reshuffled as tf.data reshuffles.
        if self.cardinality() < 0:
            raise TypeError("iterating an infinite dataset in Python: take(n) first")
        rows, sizes = self._rows(-1)
        batched = self._native.is_batched()
        start = 0
        for size in sizes:
            index = rows[start:start + size]
            start += size
            at = index if batched else index[0]
            if self._w is None:
                yield self._x[at], self._y[at]
            else:
                yield self._x[at], self._y[at], self._w[at]

    def _rows(self, steps):
        """The row indices (an int64 array) and batch sizes of the next pass, its first `steps`
        batches (-1: all); each call is a new pass, reshuffled as tf.data reshuffles."""
        import numpy as np  # here, so that `import onefit` does not import NumPy

        rows, sizes = self._native.plan(self._iterations, steps)
        self._iterations += 1
        return np.asarray(rows, dtype=np.int64), sizes

    def as_numpy_iterator(self):
        return iter(self)

    def __repr__(self):
        return f"<onefit.data.Dataset cardinality={self.cardinality()}>"


def _weights(values):
    """Per-row weights as float32 (N,): an (N, 1) column is taken as (N,), as Keras's."""
    from onefit._arrays import float32

    w = float32(values, "dataset sample_weight").copy()
    return w[:, 0].copy() if w.ndim == 2 and w.shape[1] == 1 else w
