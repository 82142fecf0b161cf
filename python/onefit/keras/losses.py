"""keras.losses by name or object: the loss classes and functions Keras has, for the losses
onefit implements (mean over the last axis, summed over the batch / batch size)."""
from onefit import _onefit


class Loss:
    _name = None

    def __init__(self, from_logits=False, delta=1.0, name=None, reduction="sum_over_batch_size", label_smoothing=0.0,
                 axis=-1):
        if reduction not in ("sum_over_batch_size", "auto", None):
            raise ValueError(f"{type(self).__name__}: onefit supports reduction='sum_over_batch_size' only")
        if axis != -1:
            raise ValueError(f"{type(self).__name__}: onefit reduces over the last axis only (axis=-1)")
        if not (isinstance(label_smoothing, (int, float)) and 0 <= label_smoothing <= 1):
            raise ValueError(f"{type(self).__name__}: label_smoothing must be a number in [0, 1], not {label_smoothing!r}")
        self.from_logits = bool(from_logits)
        self.delta = float(delta)
        self.label_smoothing = float(label_smoothing)

    def _native(self):
        return _onefit.Loss(self._name, self.from_logits, self.delta, self.label_smoothing)

    def __repr__(self):
        return f"{type(self).__name__}()"


def _loss_class(class_name, native_name, takes_logits=False, takes_delta=False, takes_smoothing=False):
    """Keras's loss class: the arguments it takes (from_logits for the crossentropies, delta for
    Huber, label_smoothing for the categorical and binary crossentropies); another is a TypeError."""
    def __init__(self, *args, **kwargs):
        names = (["from_logits"] if takes_logits else []) + (["label_smoothing"] if takes_smoothing else [])
        names += ["delta"] if takes_delta else []
        given = dict(zip(names, args))
        for key in kwargs:
            if key == "ignore_class" and native_name == "sparse_categorical_crossentropy":
                if kwargs[key] is not None:
                    raise ValueError(f"{class_name}: ignore_class is not supported by onefit")
                continue
            if key not in names + ["name", "reduction", "axis", "dtype"] or key in given:
                raise TypeError(f"{class_name}: unexpected argument {key!r}")
        given.update({k: v for k, v in kwargs.items() if k != "ignore_class"})
        given.pop("dtype", None)
        Loss.__init__(self, **given)

    return type(class_name, (Loss,), {"_name": native_name, "__init__": __init__})


MeanSquaredError = _loss_class("MeanSquaredError", "mean_squared_error")
MeanAbsoluteError = _loss_class("MeanAbsoluteError", "mean_absolute_error")
LogCosh = _loss_class("LogCosh", "log_cosh")
Huber = _loss_class("Huber", "huber", takes_delta=True)
BinaryCrossentropy = _loss_class("BinaryCrossentropy", "binary_crossentropy", takes_logits=True, takes_smoothing=True)
CategoricalCrossentropy = _loss_class("CategoricalCrossentropy", "categorical_crossentropy", takes_logits=True,
                                      takes_smoothing=True)
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
    if config.get("axis", -1) != -1:
        raise ValueError(f"loss {name}: onefit reduces over the last axis only")
    return _onefit.Loss(name, bool(config.get("from_logits", False)), float(config.get("delta", 1.0)),
                        float(config.get("label_smoothing") or 0.0))
