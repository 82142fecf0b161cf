"""Array conversion at the Python boundary: C-contiguous float32 is passed on without a copy."""
import numpy as np


def float32(array, what):
    """C-contiguous float32 without a copy where it already is; anything else converted once."""
    if array is None:
        raise ValueError(f"{what} is missing")
    try:
        out = np.ascontiguousarray(array, dtype=np.float32)
    except (TypeError, ValueError) as e:
        raise TypeError(f"{what} must be numbers (a NumPy array, list or DataFrame): {e}") from None
    if out.ndim == 0:
        raise ValueError(f"{what} must have at least one dimension, got a scalar")
    return out
