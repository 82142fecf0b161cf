"""The seed sequence behind keras.utils.set_random_seed: each model, and each dataset shuffle
without a seed, takes the next seed in turn, so a program's fits repeat exactly."""
import random

_next = {"seed": None}


def set_random_seed(seed):
    """As keras.utils.set_random_seed: seeds Python's `random` and NumPy's global generator (as
    Keras does), and makes models made afterwards get reproducible weights (each model its own
    seed in turn) and their fits reproducible shuffling and dropout."""
    import numpy as np

    seed = int(seed)
    random.seed(seed)
    np.random.seed(seed % (1 << 32))
    _next["seed"] = seed


def next_seed():
    # Without set_random_seed every model draws fresh weights, as in Keras.
    if _next["seed"] is None:
        return random.SystemRandom().getrandbits(63)
    seed = _next["seed"]
    _next["seed"] = (seed * 6364136223846793005 + 1442695040888963407) % (1 << 63)
    return seed
