"""keras.optimizers.schedules: ExponentialDecay, PiecewiseConstantDecay, PolynomialDecay,
InverseTimeDecay, CosineDecay (with warmup) and CosineDecayRestarts with Keras 3's arguments and
formulas. Given as an optimizer's learning_rate, the fit evaluates the schedule at every optimizer
step inside the compiled program (onefit's C++ formula, which __call__ uses too)."""
from onefit import _onefit


class LearningRateSchedule:
    """What every schedule has: Keras's get_config() (its arguments and name) and __call__(step), the
    rate at optimizer step `step` (0 for the first update)."""

    _arguments = ()

    def __init__(self, name=None, **arguments):
        self.name = name or type(self).__name__
        for key, value in arguments.items():
            setattr(self, key, value)
        _onefit.scheduled_learning_rate(type(self).__name__, self._config(), 0)  # Keras's checks, made now

    def _config(self):
        return {key: getattr(self, key) for key in self._arguments}

    def get_config(self):
        return {**self._config(), "name": self.name}

    @classmethod
    def from_config(cls, config):
        return cls(**config)

    def __call__(self, step):
        return _onefit.scheduled_learning_rate(type(self).__name__, self._config(), int(step))

    def __repr__(self):
        shown = ", ".join(f"{k}={getattr(self, k)!r}" for k in self._arguments)
        return f"{type(self).__name__}({shown})"


class ExponentialDecay(LearningRateSchedule):
    """initial_learning_rate * decay_rate ** (step / decay_steps) (the exponent floored when staircase)."""

    _arguments = ("initial_learning_rate", "decay_steps", "decay_rate", "staircase")

    def __init__(self, initial_learning_rate, decay_steps, decay_rate, staircase=False, name="ExponentialDecay"):
        super().__init__(name, initial_learning_rate=initial_learning_rate, decay_steps=decay_steps,
                         decay_rate=decay_rate, staircase=staircase)


class InverseTimeDecay(LearningRateSchedule):
    """initial_learning_rate / (1 + decay_rate * step / decay_steps) (floored when staircase)."""

    _arguments = ("initial_learning_rate", "decay_steps", "decay_rate", "staircase")

    def __init__(self, initial_learning_rate, decay_steps, decay_rate, staircase=False, name="InverseTimeDecay"):
        super().__init__(name, initial_learning_rate=initial_learning_rate, decay_steps=decay_steps,
                         decay_rate=decay_rate, staircase=staircase)


class PiecewiseConstantDecay(LearningRateSchedule):
    """values[0] up to step boundaries[0], values[i + 1] for steps in (boundaries[i], boundaries[i + 1]]."""

    _arguments = ("boundaries", "values")

    def __init__(self, boundaries, values, name="PiecewiseConstant"):
        if len(boundaries) != len(values) - 1:
            raise ValueError("The length of boundaries should be 1 less than the length of values. Received: "
                             f"boundaries={boundaries} of length {len(boundaries)}, and values={values} of length "
                             f"{len(values)}.")
        super().__init__(name, boundaries=list(boundaries), values=list(values))


class PolynomialDecay(LearningRateSchedule):
    """(initial - end) * (1 - step / decay_steps) ** power + end, held at end after decay_steps (cycle:
    decay_steps stretched to the next multiple past the step)."""

    _arguments = ("initial_learning_rate", "decay_steps", "end_learning_rate", "power", "cycle")

    def __init__(self, initial_learning_rate, decay_steps, end_learning_rate=0.0001, power=1.0, cycle=False,
                 name="PolynomialDecay"):
        super().__init__(name, initial_learning_rate=initial_learning_rate, decay_steps=decay_steps,
                         end_learning_rate=end_learning_rate, power=power, cycle=cycle)


class CosineDecay(LearningRateSchedule):
    """With warmup_target: linear from initial_learning_rate to it over warmup_steps, then a cosine from
    it down to alpha of it over decay_steps; without, the cosine from initial_learning_rate."""

    _arguments = ("initial_learning_rate", "decay_steps", "alpha", "warmup_target", "warmup_steps")

    def __init__(self, initial_learning_rate, decay_steps, alpha=0.0, name="CosineDecay", warmup_target=None,
                 warmup_steps=0):
        super().__init__(name, initial_learning_rate=initial_learning_rate, decay_steps=decay_steps, alpha=alpha,
                         warmup_target=warmup_target, warmup_steps=warmup_steps)


class CosineDecayRestarts(LearningRateSchedule):
    """SGDR: cosines of first_decay_steps steps, each next one t_mul times longer and m_mul times higher."""

    _arguments = ("initial_learning_rate", "first_decay_steps", "t_mul", "m_mul", "alpha")

    def __init__(self, initial_learning_rate, first_decay_steps, t_mul=2.0, m_mul=1.0, alpha=0.0, name="SGDRDecay"):
        super().__init__(name, initial_learning_rate=initial_learning_rate, first_decay_steps=first_decay_steps,
                         t_mul=t_mul, m_mul=m_mul, alpha=alpha)


_CLASSES = {cls.__name__: cls for cls in (ExponentialDecay, InverseTimeDecay, PiecewiseConstantDecay, PolynomialDecay,
                                          CosineDecay, CosineDecayRestarts)}


def get(identifier):
    """Ours from one of ours, a Keras schedule object or its serialised dict ({"class_name", "config"});
    None when `identifier` is no schedule (a number). A schedule onefit has not is a ValueError."""
    if isinstance(identifier, LearningRateSchedule):
        return identifier
    if isinstance(identifier, dict) and "class_name" in identifier:
        class_name, config = identifier["class_name"], dict(identifier.get("config") or {})
    elif not isinstance(identifier, type) and callable(identifier) and callable(getattr(identifier, "get_config", None)):
        class_name, config = type(identifier).__name__, dict(identifier.get_config())
    else:
        return None
    if class_name not in _CLASSES:
        raise ValueError(f"learning-rate schedule {class_name} is not one onefit has (known: {', '.join(_CLASSES)})")
    return _CLASSES[class_name].from_config(config)
