import numpy as np
import pytest


@pytest.fixture
def iris_like():
    """150 rows of 4 features in 3 separable classes (one-hot labels), in class order like Iris."""
    rng = np.random.default_rng(0)
    labels = np.repeat(np.arange(3), 50)
    x = (rng.normal(size=(150, 4)) * 0.4 + labels[:, None]).astype(np.float32)
    y = np.eye(3, dtype=np.float32)[labels]
    return x, y, labels


@pytest.fixture(autouse=True)
def fresh_seed_sequence():
    """Each test starts without set_random_seed's sequence, whatever the previous test set."""
    from onefit import _seeds

    _seeds._next["seed"] = None
    yield
    _seeds._next["seed"] = None
