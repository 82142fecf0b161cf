"""onefit.data.Dataset: tf.data's in-memory pipeline (from_tensor_slices, shuffle, batch, repeat,
take), which fit and validation_data accept. Its ops run inside the compiled fit: no Python
runs per batch. Iterating it in Python yields NumPy batches, as tf.data's as_numpy_iterator."""
from onefit import _onefit

INFINITE_CARDINALITY = -1
AUTOTUNE = -1


class Dataset:
    def __init__(self, native, x, y, w=None, parts=None, names=None, recipe=(None, ())):
        self._native = native
        self._x, self._y, self._w = x, y, w  # the arrays, for iterating in Python (w: None, unweighted)
        self._parts = parts  # several inputs: each one's per-row shape (x holds them side by side)
        self._names = names  # ... given as a dict: their names, in x's order
        # How the native dataset was made: from_tensor_slices's weights and the ops after it, each
        # (method, arguments), so that a dict's inputs can be put in a model's order (_reordered).
        self._recipe = recipe
        self._iterations = 0

    @staticmethod
    def from_tensor_slices(tensors):
        """A dataset of the rows of (x, y) or (x, y, sample_weight), as tf.data's: arrays (or
        array-likes) with the same first dimension; fit and evaluate weight each row's loss by its
        sample_weight, as Keras does with a dataset of 3-tuples. x may be a tuple of arrays, one per
        input of a Functional model of several, ((x1, x2), y), or a dict of them by input name, as
        tf.data's from a DataFrame's columns (fit puts them in the model's order); it yields such
        tuples (dicts) too."""
        if not isinstance(tensors, (tuple, list)) or len(tensors) not in (2, 3):
            raise ValueError("from_tensor_slices takes (features, labels) or (features, labels, sample_weight)")
        from onefit._arrays import float32

        # Copied, as tf.data copies: changing the arrays afterwards does not change the dataset.
        x, parts, names = _features(tensors[0])
        y = float32(tensors[1], "dataset y").copy()
        w = _weights(tensors[2]) if len(tensors) == 3 else None
        return Dataset(_made(x, y, w), x, y, w, parts=parts, names=names, recipe=(w, ()))

    def _with_sample_weight(self, weights):
        """This dataset, its ops kept, weighting row i by weights[i] (class_weight's rows)."""
        w = _weights(weights)
        return self._then("with_sample_weight", (w,), w)

    def _then(self, method, arguments, w=None):
        """This dataset with one more native op (its method and arguments)."""
        native = getattr(self._native, method)(*arguments)
        recipe = (self._recipe[0], self._recipe[1] + ((method, arguments),))
        return Dataset(native, self._x, self._y, self._w if w is None else w, parts=self._parts, names=self._names,
                       recipe=recipe)

    def _reordered(self, order):
        """This dataset with its inputs in `order` (indices into its own): the same rows, batches and
        shuffles (its ops made again on the reordered features)."""
        import math

        import numpy as np

        starts = [0]
        for shape in self._parts:
            starts.append(starts[-1] + math.prod(shape))
        x = np.ascontiguousarray(np.concatenate([self._x[:, starts[k]:starts[k + 1]] for k in order], axis=1))
        w0, ops = self._recipe
        native = _made(x, self._y, w0)
        for method, arguments in ops:
            native = getattr(native, method)(*arguments)
        out = Dataset(native, x, self._y, self._w, parts=[self._parts[k] for k in order],
                      names=[self._names[k] for k in order] if self._names else None, recipe=self._recipe)
        out._iterations = self._iterations
        return out

    def shuffle(self, buffer_size, seed=None, reshuffle_each_iteration=True):
        if seed is None:
            from onefit._seeds import next_seed

            seed = next_seed()
        return self._then("shuffle", (int(buffer_size), int(seed), bool(reshuffle_each_iteration)))

    def batch(self, batch_size, drop_remainder=False, **kwargs):
        return self._then("batch", (int(batch_size), bool(drop_remainder)))

    def repeat(self, count=None):
        return self._then("repeat", (-1 if count is None else int(count),))

    def take(self, count):
        return self._then("take", (int(count),))

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
            x = self._x[at] if self._parts is None else self._split(self._x[at])
            if self._names is not None:
                x = dict(zip(self._names, x))
            if self._w is None:
                yield x, self._y[at]
            else:
                yield x, self._y[at], self._w[at]

    def _split(self, rows):
        """A dataset of several inputs' rows (their values side by side) as one array per input."""
        import math

        out, at = [], 0
        lead = rows.shape[:-1]
        for shape in self._parts:
            n = math.prod(shape)
            out.append(rows[..., at:at + n].reshape(lead + tuple(shape)))
            at += n
        return tuple(out)

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


def _made(x, y, w):
    """The native dataset of these rows (w: None, unweighted)."""
    return _onefit.Dataset.from_tensor_slices(x, y) if w is None else _onefit.Dataset.from_tensor_slices(x, y, w)


def _features(x):
    """A dataset's features as float32 rows and, for several inputs (a tuple or list of arrays, or
    a dict of them by input name: a Functional model's), each one's per-row shape and (a dict) the
    names: their values side by side in each row, as the native model of several inputs takes them."""
    import numpy as np
    from onefit._arrays import float32

    names = None
    if isinstance(x, dict):
        names, x = [str(k) for k in x], list(x.values())
        if len(names) == 1:  # (one input by name: as its array)
            x = x[0]
    if not isinstance(x, (tuple, list)):
        return float32(x, "dataset x").copy(), None, None
    arrays = [float32(a, f"dataset x[{k}]") for k, a in enumerate(x)]
    if not arrays or any(a.ndim == 0 or len(a) != len(arrays[0]) for a in arrays):
        raise ValueError(f"from_tensor_slices: the inputs have {[len(a) if a.ndim else 0 for a in arrays]} rows; "
                         "each needs the same number")
    parts = [tuple(a.shape[1:]) or (1,) for a in arrays]
    rows = len(arrays[0])
    return joined_rows(arrays), parts, names


def joined_rows(arrays):
    """Several inputs' arrays (the same rows) as one float32 array whose rows hold each input's
    values flattened, side by side: what the native model of several inputs takes."""
    import numpy as np

    rows = len(arrays[0])
    return np.ascontiguousarray(np.concatenate([a.reshape(rows, -1) for a in arrays], axis=1), dtype=np.float32)


def _weights(values, what="dataset sample_weight"):
    """Per-row weights as a contiguous float32 copy (N,): an (N, 1) column is taken as (N,), as Keras's
    (fit's and evaluate's sample_weight too)."""
    import numpy as np
    from onefit._arrays import float32

    w = float32(values, what)
    return np.array(w[:, 0] if w.ndim == 2 and w.shape[1] == 1 else w, dtype=np.float32, order="C")
