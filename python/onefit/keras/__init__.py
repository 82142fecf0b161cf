"""A Keras 3-shaped front end: the names, defaults and semantics Keras users type, training
on onefit's compiled programs. `import onefit.keras as keras` in place of
`from tensorflow import keras`."""
from onefit.keras import callbacks, layers, losses, metrics, models, optimizers, regularizers, saving, utils  # noqa: F401
from onefit.keras.layers import Input  # noqa: F401
from onefit.keras.interop import from_keras, to_keras  # noqa: F401
from onefit.keras.models import Model, Sequential, load_model  # noqa: F401

__all__ = ["Model", "Sequential", "Input", "load_model", "from_keras", "to_keras", "layers", "optimizers", "losses",
           "callbacks", "metrics", "models", "regularizers", "saving", "utils"]
