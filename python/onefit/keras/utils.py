"""keras.utils: set_random_seed."""
from onefit._seeds import set_random_seed  # noqa: F401
