"""Layers as plain descriptions (Keras's constructor arguments); the model lowers them."""
from onefit.nn import activation_name


class Input:
    """keras.Input(shape): the shape of one sample, e.g. Input(shape=(4,))."""

    def __init__(self, shape=None, batch_size=None, name=None, dtype=None, batch_shape=None):
        if shape is None and batch_shape is not None:
            shape = tuple(batch_shape)[1:]
        if shape is None:
            raise ValueError("Input needs shape=, e.g. Input(shape=(4,))")
        self.shape = (None,) + _shape_tuple(shape, "Input shape")
        self.name = name


def _shape_tuple(shape, what):
    if isinstance(shape, int):
        shape = (shape,)
    try:
        shape = tuple(int(d) for d in shape)
    except (TypeError, ValueError):
        raise TypeError(f"{what} must be a tuple of positive integers, not {shape!r}") from None
    if not shape or any(d <= 0 for d in shape):
        raise ValueError(f"{what} must be a tuple of positive integers, not {shape!r}")
    return shape


class Layer:
    """What every layer has: a name (Keras's default when None) and an optional input shape."""

    def __init__(self, name=None, input_shape=None, input_dim=None):
        self.name = name
        if input_shape is None and input_dim is not None:
            input_shape = (int(input_dim),)
        self.input_shape = None if input_shape is None else _shape_tuple(input_shape, "input_shape")


class Dense(Layer):
    """keras.layers.Dense(units, activation=None, use_bias=True, kernel_initializer="glorot_uniform",
    bias_initializer="zeros", name=None, input_shape=None)."""

    def __init__(self, units, activation=None, use_bias=True, kernel_initializer="glorot_uniform",
                 bias_initializer="zeros", name=None, input_shape=None, input_dim=None, **kwargs):
        _no_unsupported(kwargs, "Dense")
        super().__init__(name, input_shape, input_dim)
        if isinstance(units, bool) or not isinstance(units, int) or units <= 0:
            raise ValueError(f"Dense units must be a positive integer, not {units!r}")
        self.units = units
        self.activation = activation_name(activation)
        self.use_bias = bool(use_bias)
        self.kernel_initializer = _initializer_name(kernel_initializer)
        self.bias_initializer = _initializer_name(bias_initializer)

    def __repr__(self):
        return f"Dense({self.units}, activation={self.activation!r})"


class Dropout(Layer):
    """keras.layers.Dropout(rate): zeroes a fraction `rate` of inputs in training (scaled by 1/(1-rate))."""

    def __init__(self, rate, noise_shape=None, seed=None, name=None, input_shape=None, **kwargs):
        _no_unsupported(kwargs, "Dropout")
        super().__init__(name, input_shape)
        if noise_shape is not None:
            raise ValueError("Dropout noise_shape is not supported by onefit")
        if not 0 <= float(rate) < 1:
            raise ValueError(f"Dropout rate must be in [0, 1), not {rate!r}")
        self.rate = float(rate)

    def __repr__(self):
        return f"Dropout({self.rate})"


def _initializer_name(init):
    if isinstance(init, str):
        return init
    name = getattr(type(init), "__name__", "")
    snake = "".join("_" + c.lower() if c.isupper() else c for c in name).lstrip("_")
    if snake:
        return snake
    raise TypeError(f"initializers are given by name, e.g. 'glorot_uniform', not {init!r}")


def _no_unsupported(kwargs, layer):
    """Keras arguments onefit accepts without effect (float32 is its only dtype; every layer trains)
    are dropped; any other is an error rather than silently ignored."""
    if kwargs.get("dtype") in (None, "float32"):
        kwargs.pop("dtype", None)
    if kwargs.get("trainable", True) is True:
        kwargs.pop("trainable", None)
    if kwargs:
        raise TypeError(f"{layer}: onefit does not support the argument(s) {', '.join(sorted(kwargs))}")
