"""Layers as plain descriptions (Keras's constructor arguments); the model lowers them. Each class
knows its one native call (`_add_to`) and how to come back from a loaded model's layer list
(`_from_info`), so a new layer is a class here plus its binding."""
import numbers
import struct

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
    """What every layer has: a name (Keras's default when None) and an optional input shape.
    `trainable` is Keras's attribute; onefit trains every layer, so compile and fit refuse a model
    with a layer set to trainable = False rather than train it."""

    trainable = True

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
        if isinstance(units, bool) or not isinstance(units, numbers.Integral) or units <= 0:
            raise ValueError(f"Dense units must be a positive integer, not {units!r}")
        self.units = int(units)  # (NumPy's integers too, as Keras)
        self.activation = activation_name(activation)
        self.use_bias = bool(use_bias)
        self.kernel_initializer = _initializer_name(kernel_initializer)
        self.bias_initializer = _initializer_name(bias_initializer)

    def _add_to(self, native):
        native.add_dense(self.units, self.activation, self.use_bias, self.kernel_initializer, self.bias_initializer,
                         self.name or "")

    @classmethod
    def _from_info(cls, info):
        return cls(info["units"], activation=info["activation"], use_bias=info["use_bias"], name=info["name"] or None)

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

    def _add_to(self, native):
        native.add_dropout(self.rate, self.name or "")

    @classmethod
    def _from_info(cls, info):
        return cls(_float32_shortest(info["rate"]), name=info["name"] or None)

    def __repr__(self):
        return f"Dropout({self.rate})"


# Image layers: samples are channels last (height, width, channels), as Keras's default
# data_format; a Conv2D kernel is Keras's (kh, kw, in, filters).

# Keras arguments of a Conv2D that onefit has not, with the value that means "none".
_CONV_OFF = {"dilation_rate": (1, 1), "groups": 1, "kernel_regularizer": None, "bias_regularizer": None,
             "activity_regularizer": None, "kernel_constraint": None, "bias_constraint": None, "lora_rank": None}


class Conv2D(Layer):
    """keras.layers.Conv2D(filters, kernel_size, strides=(1, 1), padding="valid", data_format=None,
    activation=None, use_bias=True, kernel_initializer="glorot_uniform", bias_initializer="zeros",
    name=None): an int kernel_size or strides means a square; the kernel is (kh, kw, in, filters)."""

    def __init__(self, filters, kernel_size, strides=(1, 1), padding="valid", data_format=None, activation=None,
                 use_bias=True, kernel_initializer="glorot_uniform", bias_initializer="zeros", name=None,
                 input_shape=None, **kwargs):
        _keras_off(kwargs, _CONV_OFF, "Conv2D")
        _no_unsupported(kwargs, "Conv2D")
        super().__init__(name, input_shape)
        _channels_last(data_format, "Conv2D")
        if isinstance(filters, bool) or not isinstance(filters, numbers.Integral) or filters <= 0:
            raise ValueError(f"Conv2D filters must be a positive integer, not {filters!r}")
        self.filters = int(filters)
        self.kernel_size = _pair(kernel_size, "Conv2D", "kernel_size")
        self.strides = _pair(strides, "Conv2D", "strides")
        self.padding = _padding(padding, "Conv2D")
        self.activation = activation_name(activation)
        self.use_bias = bool(use_bias)
        self.kernel_initializer = _initializer_name(kernel_initializer)
        self.bias_initializer = _initializer_name(bias_initializer)

    def _add_to(self, native):
        native.add_conv2d(self.filters, self.kernel_size, self.strides, self.padding, self.activation, self.use_bias,
                          self.kernel_initializer, self.bias_initializer, self.name or "")

    @classmethod
    def _from_info(cls, info):
        return cls(info["filters"], tuple(info["kernel_size"]), strides=tuple(info["strides"]), padding=info["padding"],
                   activation=info["activation"], use_bias=info["use_bias"], name=info["name"] or None)

    def __repr__(self):
        return f"Conv2D({self.filters}, {self.kernel_size}, activation={self.activation!r})"


class _Pooling2D(Layer):
    _kind = ""  # the native add_pooling2d's kind: "max" or "average"

    def __init__(self, pool_size=(2, 2), strides=None, padding="valid", data_format=None, name=None,
                 input_shape=None, **kwargs):
        what = type(self).__name__
        _no_unsupported(kwargs, what)
        super().__init__(name, input_shape)
        _channels_last(data_format, what)
        self.pool_size = _pair(pool_size, what, "pool_size")
        # As Keras: strides=None is the pool size.
        self.strides = self.pool_size if strides is None else _pair(strides, what, "strides")
        self.padding = _padding(padding, what)

    def _add_to(self, native):
        native.add_pooling2d(self._kind, self.pool_size, self.strides, self.padding, self.name or "")

    @classmethod
    def _from_info(cls, info):
        return cls(tuple(info["pool_size"]), strides=tuple(info["strides"]), padding=info["padding"],
                   name=info["name"] or None)

    def __repr__(self):
        return f"{type(self).__name__}({self.pool_size}, strides={self.strides})"


class MaxPooling2D(_Pooling2D):
    """keras.layers.MaxPooling2D(pool_size=(2, 2), strides=None, padding="valid", data_format=None,
    name=None): the largest value of each window (strides=None: the pool size); padding never wins."""

    _kind = "max"


class AveragePooling2D(_Pooling2D):
    """keras.layers.AveragePooling2D(pool_size=(2, 2), strides=None, padding="valid", data_format=None,
    name=None): the mean of each window; a window overhanging a "same" border divides by the pixels inside."""

    _kind = "average"


class GlobalAveragePooling2D(Layer):
    """keras.layers.GlobalAveragePooling2D(data_format=None, keepdims=False, name=None): each channel's
    mean over height and width, (H, W, C) -> (C,)."""

    def __init__(self, data_format=None, keepdims=False, name=None, input_shape=None, **kwargs):
        _no_unsupported(kwargs, "GlobalAveragePooling2D")
        super().__init__(name, input_shape)
        _channels_last(data_format, "GlobalAveragePooling2D")
        if keepdims:
            raise ValueError("GlobalAveragePooling2D keepdims=True is not supported by onefit (its output is (C,))")

    def _add_to(self, native):
        native.add_global_average_pooling2d(self.name or "")

    @classmethod
    def _from_info(cls, info):
        return cls(name=info["name"] or None)

    def __repr__(self):
        return "GlobalAveragePooling2D()"


class Flatten(Layer):
    """keras.layers.Flatten(data_format=None, name=None): one sample's values as one axis."""

    def __init__(self, data_format=None, name=None, input_shape=None, **kwargs):
        _no_unsupported(kwargs, "Flatten")
        super().__init__(name, input_shape)
        _channels_last(data_format, "Flatten")

    def _add_to(self, native):
        native.add_flatten(self.name or "")

    @classmethod
    def _from_info(cls, info):
        return cls(name=info["name"] or None)

    def __repr__(self):
        return "Flatten()"


class Reshape(Layer):
    """keras.layers.Reshape(target_shape, name=None): one sample's values in a new shape (without the
    batch axis); one entry may be -1, inferred from the others."""

    def __init__(self, target_shape, name=None, input_shape=None, **kwargs):
        _no_unsupported(kwargs, "Reshape")
        super().__init__(name, input_shape)
        if isinstance(target_shape, int):
            target_shape = (target_shape,)
        try:
            shape = tuple(_int(d) for d in target_shape)
        except (TypeError, ValueError):
            raise ValueError(f"Reshape target_shape must be a tuple of integers, not {target_shape!r}") from None
        if not shape or any(d < 1 and d != -1 for d in shape) or shape.count(-1) > 1:
            raise ValueError(f"Reshape target_shape must be positive integers with at most one -1, "
                             f"not {target_shape!r}")
        self.target_shape = shape

    def _add_to(self, native):
        native.add_reshape(list(self.target_shape), self.name or "")

    @classmethod
    def _from_info(cls, info):
        return cls(tuple(info["target_shape"]), name=info["name"] or None)

    def __repr__(self):
        return f"Reshape({self.target_shape})"


class BatchNormalization(Layer):
    """keras.layers.BatchNormalization(axis=-1, momentum=0.99, epsilon=0.001, center=True, scale=True,
    name=None): normalises the last axis by the batch's mean and variance in training, by their
    moving averages in evaluate/predict. Weights: gamma, beta, moving_mean, moving_variance."""

    # Keras arguments onefit has not, with the value that means "none".
    _OFF = {"beta_initializer": "zeros", "gamma_initializer": "ones", "moving_mean_initializer": "zeros",
            "moving_variance_initializer": "ones", "beta_regularizer": None, "gamma_regularizer": None,
            "beta_constraint": None, "gamma_constraint": None, "synchronized": False, "renorm": False}

    def __init__(self, axis=-1, momentum=0.99, epsilon=0.001, center=True, scale=True, name=None, input_shape=None,
                 **kwargs):
        _keras_off(kwargs, self._OFF, "BatchNormalization")
        _no_unsupported(kwargs, "BatchNormalization")
        super().__init__(name, input_shape)
        if axis not in (-1, [-1], (-1,)):
            raise ValueError(f"BatchNormalization axis={axis!r} is not supported by onefit: it normalises the last "
                             "axis (channels last)")
        if not 0 <= float(momentum) <= 1:
            raise ValueError(f"BatchNormalization momentum must be in [0, 1], not {momentum!r}")
        if not float(epsilon) > 0:
            raise ValueError(f"BatchNormalization epsilon must be positive, not {epsilon!r}")
        self.momentum = float(momentum)
        self.epsilon = float(epsilon)
        self.center = bool(center)
        self.scale = bool(scale)

    def _add_to(self, native):
        native.add_batch_normalization(self.momentum, self.epsilon, self.center, self.scale, self.name or "")

    @classmethod
    def _from_info(cls, info):
        return cls(momentum=_float32_shortest(info["momentum"]), epsilon=_float32_shortest(info["epsilon"]),
                   center=info["center"], scale=info["scale"], name=info["name"] or None)

    def __repr__(self):
        return f"BatchNormalization(momentum={self.momentum}, epsilon={self.epsilon})"


# The layers a model holds, by Keras class name (what the native model's layer list reports).
LAYERS = {cls.__name__: cls for cls in (Dense, Dropout, Conv2D, MaxPooling2D, AveragePooling2D,
                                        GlobalAveragePooling2D, Flatten, Reshape, BatchNormalization)}
IMAGE_LAYERS = (Conv2D, MaxPooling2D, AveragePooling2D, GlobalAveragePooling2D)


def _float32_shortest(value):
    """A float32 the native side holds (widened to a Python float: 0.99 reads 0.9900000095...) as the
    shortest decimal that is the same float32 (0.99), as Keras's config shows it."""
    as_f32 = struct.unpack("f", struct.pack("f", value))[0]
    for digits in range(6, 10):
        short = float(f"{as_f32:.{digits}g}")
        if struct.unpack("f", struct.pack("f", short))[0] == as_f32:
            return short
    return as_f32


def _int(value):
    if isinstance(value, bool) or int(value) != value:
        raise ValueError(value)
    return int(value)


def _pair(value, layer, what):
    """Keras's int-or-pair argument (kernel_size, strides, pool_size) as a pair of positive ints."""
    try:
        pair = (value, value) if isinstance(value, numbers.Integral) else value
        pair = tuple(_int(d) for d in pair)
    except (TypeError, ValueError):
        pair = None
    if pair is None or len(pair) != 2 or min(pair) < 1:
        raise ValueError(f"{layer} {what} must be a positive integer or a pair of them, not {value!r}")
    return pair


def _padding(padding, layer):
    name = padding.lower() if isinstance(padding, str) else padding
    if name not in ("valid", "same"):
        raise ValueError(f"{layer} padding must be 'valid' or 'same', not {padding!r}")
    return name


def _channels_last(data_format, layer):
    if data_format not in (None, "channels_last"):
        raise ValueError(f"{layer} data_format={data_format!r} is not supported by onefit: images are channels last "
                         "(N, height, width, channels); transpose channels_first arrays with x.transpose(0, 2, 3, 1)")


def _keras_off(kwargs, off, layer):
    """Keras arguments onefit has not, given their "none" value, are dropped; any other value is a
    ValueError naming the argument rather than silently ignored."""
    for key, none in off.items():
        if key not in kwargs:
            continue
        value = kwargs.pop(key)
        if key == "dilation_rate" and isinstance(value, int) and not isinstance(value, bool):
            value = (value, value)
        if value != none and not (isinstance(value, list) and tuple(value) == none):
            raise ValueError(f"{layer} {key}={value!r} is not supported by onefit (only {none!r})")


def _initializer_name(init):
    if isinstance(init, str):
        return init
    name = getattr(type(init), "__name__", "")
    snake = "".join("_" + c.lower() if c.isupper() else c for c in name).lstrip("_")
    if snake:
        return snake
    raise TypeError(f"initializers are given by name, e.g. 'glorot_uniform', not {init!r}")


# Arguments every Keras layer takes that onefit has no counterpart for (beyond their defaults):
# a ValueError naming them, as for any Keras argument onefit lacks. A name Keras does not know either
# (a typo) is a TypeError, as Keras raises.
_KERAS_LAYER_ARGUMENTS = {"dtype", "trainable", "kernel_regularizer", "bias_regularizer", "activity_regularizer",
                          "kernel_constraint", "bias_constraint", "lora_rank", "lora_alpha", "autocast",
                          "input_length", "batch_input_shape", "batch_size", "weights"}


def _no_unsupported(kwargs, layer):
    """Keras arguments onefit accepts without effect (float32 is its only dtype; every layer trains)
    are dropped; any other is an error rather than silently ignored."""
    if kwargs.get("dtype") in (None, "float32"):
        kwargs.pop("dtype", None)
    if kwargs.get("trainable", True) is True:
        kwargs.pop("trainable", None)
    for key in ("kernel_regularizer", "bias_regularizer", "activity_regularizer", "kernel_constraint",
                "bias_constraint"):
        if key in kwargs and kwargs[key] is None:
            kwargs.pop(key)
    unknown = sorted(k for k in kwargs if k not in _KERAS_LAYER_ARGUMENTS)
    if unknown:
        raise TypeError(f"{layer}: unrecognized keyword argument(s) {', '.join(unknown)}")
    if kwargs:
        raise ValueError(f"{layer}: onefit does not support the argument(s) "
                         f"{', '.join(f'{k}={v!r}' for k, v in sorted(kwargs.items()))}")
