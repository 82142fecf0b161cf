"""keras.optimizers: SGD, Adam, AdamW, RMSprop, Adagrad with Keras 3's defaults and update
rules (onefit's tests check each against the published rule and against Keras)."""
import warnings

from onefit import _onefit
from onefit.keras import schedules  # noqa: F401  (keras.optimizers.schedules)


class LearningRate(float):
    """An optimizer's learning rate: a float that also answers what Keras users ask of Keras's
    learning-rate variable: .numpy() (its value, float32 as Keras keeps it) and .assign(value)
    (the same as setting optimizer.learning_rate)."""

    def __new__(cls, value, optimizer=None):
        rate = super().__new__(cls, value)
        rate._optimizer = optimizer
        return rate

    def numpy(self):
        import numpy as np

        return np.float32(self)

    def assign(self, value):
        if self._optimizer is None:
            raise ValueError("this learning rate belongs to no optimizer")
        self._optimizer.learning_rate = value
        return self._optimizer.learning_rate

    def __repr__(self):
        return repr(float(self))


_CLIPS = ("clipnorm", "clipvalue", "global_clipnorm")


class Optimizer:
    _name = None
    clipnorm = clipvalue = global_clipnorm = None
    _defaults = {}
    _schedule = None  # a learning-rate schedule given as learning_rate (schedules.py)

    @property
    def learning_rate(self):
        """The rate (with a schedule: its rate at step 0; the fit follows the schedule step by step)."""
        return self._learning_rate

    @learning_rate.setter
    def learning_rate(self, value):
        schedule = schedules.get(value)
        if schedule is not None:
            self._schedule = schedule
            self._learning_rate = LearningRate(schedule(0), self)
            return
        if self._schedule is not None:  # as Keras refuses it
            raise TypeError("This optimizer was created with a `LearningRateSchedule` object as its `learning_rate` "
                            "constructor argument, hence its learning rate is not settable. If you need the learning "
                            "rate to be settable, you should instantiate the optimizer with a float `learning_rate` "
                            "argument.")
        if hasattr(value, "numpy") and not isinstance(value, float):  # a Keras or NumPy scalar
            value = value.numpy()
        self._learning_rate = LearningRate(float(value), self)

    def __init__(self, learning_rate=None, lr=None, **kwargs):
        if lr is not None:
            warnings.warn("the `lr` argument is deprecated, use `learning_rate` instead", DeprecationWarning,
                          stacklevel=3)
            if learning_rate is None:
                learning_rate = lr
        # Every Keras 3 optimizer takes weight_decay (None: off; AdamW's default 0.004 is in its _defaults).
        if "weight_decay" not in self._defaults:
            decay = kwargs.pop("weight_decay", None)
            if decay is not None and not (isinstance(decay, (int, float)) and not isinstance(decay, bool) and decay >= 0):
                raise ValueError(f"{type(self).__name__}: weight_decay must be a non-negative number or None, not {decay!r}")
            self.weight_decay = None if decay is None else float(decay)
        unknown = set(kwargs) - set(self._defaults) - {"name", "clipnorm", "clipvalue", "global_clipnorm"}
        if unknown:
            raise TypeError(f"{type(self).__name__}: unknown argument(s) {', '.join(sorted(unknown))}")
        # Keras's gradient clipping: None is off; at most one (checked here, as Keras does).
        for clip in _CLIPS:
            value = kwargs.get(clip)
            if value is not None and not (isinstance(value, (int, float)) and not isinstance(value, bool) and value > 0):
                raise ValueError(f"{type(self).__name__}: {clip} must be a positive number or None, not {value!r}")
            setattr(self, clip, None if value is None else float(value))
        if sum(getattr(self, clip) is not None for clip in _CLIPS) > 1:
            raise ValueError("Only one of `clipnorm`, `clipvalue` and `global_clipnorm` can be set. Received: "
                             + ", ".join(f"{clip}={kwargs.get(clip)}" for clip in _CLIPS))
        self.learning_rate = self._default_lr if learning_rate is None else learning_rate
        for key, default in self._defaults.items():
            setattr(self, key, kwargs.get(key, default))

    def _native(self):
        o = _onefit.Optimizer(self._name)
        o.learning_rate = float(self.learning_rate)
        if self._schedule is not None:
            o.set_schedule(type(self._schedule).__name__, self._schedule._config())
        for key in self._defaults:
            setattr(o, key, getattr(self, key))
        for clip in _CLIPS:
            setattr(o, clip, getattr(self, clip) or 0.0)
        o.weight_decay = float(self.weight_decay or 0.0)
        return o

    weight_decay = None

    def get_config(self):
        learning_rate = float(self.learning_rate)
        if self._schedule is not None:  # as Keras serialises one
            learning_rate = {"module": "keras.optimizers.schedules", "class_name": type(self._schedule).__name__,
                             "config": self._schedule.get_config(), "registered_name": None}
        return {"name": self._name, "learning_rate": learning_rate, "weight_decay": self.weight_decay,
                **{k: getattr(self, k) for k in self._defaults}, **{c: getattr(self, c) for c in _CLIPS}}

    def __repr__(self):
        return f"{type(self).__name__}(learning_rate={self._schedule or float(self.learning_rate)})"


class SGD(Optimizer):
    _name, _default_lr = "sgd", 0.01
    _defaults = {"momentum": 0.0, "nesterov": False}

    def __init__(self, learning_rate=None, momentum=0.0, nesterov=False, **kwargs):
        super().__init__(learning_rate, momentum=momentum, nesterov=nesterov, **kwargs)


class Adam(Optimizer):
    _name, _default_lr = "adam", 0.001
    _defaults = {"beta_1": 0.9, "beta_2": 0.999, "epsilon": 1e-7, "amsgrad": False}

    def __init__(self, learning_rate=None, beta_1=0.9, beta_2=0.999, epsilon=1e-7, amsgrad=False, **kwargs):
        super().__init__(learning_rate, beta_1=beta_1, beta_2=beta_2, epsilon=epsilon, amsgrad=amsgrad, **kwargs)


class AdamW(Optimizer):
    _name, _default_lr = "adamw", 0.001
    _defaults = {"weight_decay": 0.004, "beta_1": 0.9, "beta_2": 0.999, "epsilon": 1e-7, "amsgrad": False}

    def __init__(self, learning_rate=None, weight_decay=0.004, beta_1=0.9, beta_2=0.999, epsilon=1e-7,
                 amsgrad=False, **kwargs):
        super().__init__(learning_rate, weight_decay=weight_decay, beta_1=beta_1, beta_2=beta_2, epsilon=epsilon,
                         amsgrad=amsgrad, **kwargs)


class RMSprop(Optimizer):
    _name, _default_lr = "rmsprop", 0.001
    _defaults = {"rho": 0.9, "momentum": 0.0, "epsilon": 1e-7, "centered": False}

    def __init__(self, learning_rate=None, rho=0.9, momentum=0.0, epsilon=1e-7, centered=False, **kwargs):
        super().__init__(learning_rate, rho=rho, momentum=momentum, epsilon=epsilon, centered=centered, **kwargs)


class Adagrad(Optimizer):
    _name, _default_lr = "adagrad", 0.001
    _defaults = {"initial_accumulator_value": 0.1, "epsilon": 1e-7}

    def __init__(self, learning_rate=None, initial_accumulator_value=0.1, epsilon=1e-7, **kwargs):
        super().__init__(learning_rate, initial_accumulator_value=initial_accumulator_value, epsilon=epsilon, **kwargs)


_BY_NAME = {"sgd": SGD, "adam": Adam, "adamw": AdamW, "rmsprop": RMSprop, "adagrad": Adagrad}


def get(identifier):
    """An optimizer from a name ("adam"), an optimizer object, or a Keras optimizer object (read
    from its get_config(); a setting onefit lacks is refused unless it is Keras's default)."""
    if isinstance(identifier, Optimizer):
        return identifier
    if isinstance(identifier, str) and identifier.lower() in _BY_NAME:
        return _BY_NAME[identifier.lower()]()
    if not isinstance(identifier, type) and callable(getattr(identifier, "get_config", None)):
        return _from_keras_config(type(identifier).__name__, identifier.get_config())
    raise ValueError(f"unknown optimizer {identifier!r} (known: {', '.join(_BY_NAME)})")


# Keras 3's optimizer settings onefit does not have, with the values that mean "off".
_KERAS_OFF = {"use_ema": False,
              "loss_scale_factor": None, "gradient_accumulation_steps": None}


def _from_keras_config(class_name, config):
    cls = _BY_NAME.get(class_name.lower())
    if cls is None:
        raise ValueError(f"optimizer {class_name} is not one onefit has (known: {', '.join(_BY_NAME)})")
    learning_rate = config.get("learning_rate")  # a number, or a serialised schedule (schedules.get reads it)
    for key, off in _KERAS_OFF.items():
        if config.get(key, off) != off:
            raise ValueError(f"{class_name}: {key}={config[key]!r} is not supported by onefit")
    extra = {} if "weight_decay" in cls._defaults else {"weight_decay": config.get("weight_decay")}
    return cls(learning_rate, **{k: config[k] for k in cls._defaults if k in config},
               **{c: config.get(c) for c in _CLIPS}, **extra)
