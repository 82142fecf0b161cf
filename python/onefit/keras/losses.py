"""keras.losses by name or object: the loss classes and functions Keras has, for the losses
onefit implements (mean over the last axis, summed over the batch / batch size)."""
from onefit import _onefit


class Loss:
    _name = None

    def __init__(self, from_logits=False, delta=1.0, name=None, reduction="sum_over_batch_size"):
        if reduction not in ("sum_over_batch_size", "auto", None):
            raise ValueError(f"{type(self).__name__}: onefit supports reduction='sum_over_batch_size' only")
        self.from_logits = bool(from_logits)
        self.delta = float(delta)

    def _native(self):
        return _onefit.Loss(self._name, self.from_logits, self.delta)

    def __repr__(self):
        return f"{type(self).__name__}()"


def _loss_class(class_name, native_name, takes_logits=False, takes_delta=False):
    def __init__(self, from_logits=False, delta=1.0, **kwargs):
        Loss.__init__(self, from_logits if takes_logits else False, delta if takes_delta else 1.0, **kwargs)

    return type(class_name, (Loss,), {"_name": native_name, "__init__": __init__})


MeanSquaredError = _loss_class("MeanSquaredError", "mean_squared_error")
MeanAbsoluteError = _loss_class("MeanAbsoluteError", "mean_absolute_error")
LogCosh = _loss_class("LogCosh", "log_cosh")
Huber = _loss_class("Huber", "huber", takes_delta=True)
BinaryCrossentropy = _loss_class("BinaryCrossentropy", "binary_crossentropy", takes_logits=True)
CategoricalCrossentropy = _loss_class("CategoricalCrossentropy", "categorical_crossentropy", takes_logits=True)
SparseCategoricalCrossentropy = _loss_class("SparseCategoricalCrossentropy", "sparse_categorical_crossentropy",
                                            takes_logits=True)


def _loss_function(name):
    def loss(y_true, y_pred):  # only its name is used: onefit compiles the loss
        raise NotImplementedError(f"onefit.keras.losses.{name} names a loss for compile(); it is not evaluated")

    loss.__name__ = name
    return loss


mean_squared_error = mse = _loss_function("mean_squared_error")
mean_absolute_error = mae = _loss_function("mean_absolute_error")
log_cosh = logcosh = _loss_function("log_cosh")
huber = _loss_function("huber")
binary_crossentropy = _loss_function("binary_crossentropy")
categorical_crossentropy = _loss_function("categorical_crossentropy")
sparse_categorical_crossentropy = _loss_function("sparse_categorical_crossentropy")


def get(identifier):
    """The native loss for a name ("logcosh", "mse"), a loss object or function (onefit's, or
    Keras's own: a keras.losses object is read from its get_config())."""
    if isinstance(identifier, Loss):
        return identifier._native()
    if not isinstance(identifier, type) and callable(getattr(identifier, "get_config", None)):
        return _from_keras_config(identifier.get_config())
    if callable(identifier) and hasattr(identifier, "__name__"):
        identifier = identifier.__name__
    if isinstance(identifier, str):
        return _onefit.Loss(identifier, False, 1.0)
    raise ValueError(f"loss must be a name such as 'mse', a keras loss object or function, not {identifier!r}")


def _from_keras_config(config):
    """A Keras loss object's settings: those onefit has are kept, any other that is not Keras's
    default is refused rather than ignored."""
    name = config.get("name")
    if config.get("reduction") not in (None, "sum_over_batch_size", "auto"):
        raise ValueError(f"loss {name}: onefit supports reduction='sum_over_batch_size' only")
    if config.get("label_smoothing"):
        raise ValueError(f"loss {name}: label_smoothing is not supported by onefit")
    if config.get("axis", -1) != -1:
        raise ValueError(f"loss {name}: onefit reduces over the last axis only")
    return _onefit.Loss(name, bool(config.get("from_logits", False)), float(config.get("delta", 1.0)))
