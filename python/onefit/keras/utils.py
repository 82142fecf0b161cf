"""keras.utils: set_random_seed, to_categorical."""
import numpy as np

from onefit._seeds import set_random_seed  # noqa: F401


def to_categorical(x, num_classes=None):
    """keras.utils.to_categorical: integer class labels as one-hot rows (float64, as Keras's), a
    trailing axis of 1 dropped. Where Keras wraps a negative label to the last class or truncates
    2.5 to 2 without a word, this raises ValueError naming the label."""
    values = np.asarray(x)
    if values.dtype == object or not (np.issubdtype(values.dtype, np.integer) or np.issubdtype(values.dtype, np.floating)
                                      or values.dtype == bool):
        raise ValueError(f"to_categorical takes integer class labels, not an array of {values.dtype}")
    labels = values.astype(np.int64)
    if values.size and not np.array_equal(labels, values):
        bad = values.reshape(-1)[np.flatnonzero(labels.reshape(-1) != values.reshape(-1))[0]]
        raise ValueError(f"to_categorical takes integer class labels; got {bad.item()!r}")
    shape = labels.shape
    if len(shape) > 1 and shape[-1] == 1:
        shape = shape[:-1]
    labels = labels.reshape(-1)
    if num_classes is None:
        num_classes = int(labels.max()) + 1 if labels.size else 0
    num_classes = int(num_classes)
    if labels.size and (labels.min() < 0 or labels.max() >= num_classes):
        bad = labels[(labels < 0) | (labels >= num_classes)][0]
        raise ValueError(f"to_categorical: label {bad} is outside 0..{num_classes - 1} (num_classes={num_classes})")
    categorical = np.zeros((labels.size, num_classes))
    categorical[np.arange(labels.size), labels] = 1
    return categorical.reshape(shape + (num_classes,))
