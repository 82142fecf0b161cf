"""keras.utils: set_random_seed."""
from onefit.keras.models import set_random_seed  # noqa: F401
