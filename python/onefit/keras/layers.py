"""Layers as plain descriptions (Keras's constructor arguments); the model lowers them. Every kind's
arguments, defaults and checks are declared once, in its C++ op file: the classes here check through
that declaration, reach the native model through one call (`_add_to`) and come back from a loaded
model's layer list (`_from_info`) generically, and a kind declared there without a class here still
gets one (Keras's name, its declared arguments)."""
import struct

from onefit import _onefit
from onefit.keras import regularizers as _regularizers
from onefit.nn import activation_name

# Every layer kind as its C++ op file declares it: {"Dense": {"type", "keras_class", "arguments", "required"}}.
_KINDS = {kind["keras_class"]: kind for kind in _onefit.layer_kinds()}


class Input:
    """keras.Input(shape): the shape of one sample, e.g. Input(shape=(4,)): the first entry of a
    Sequential, or the input tensor of a Functional model (layers are called on it)."""

    def __init__(self, shape=None, batch_size=None, name=None, dtype=None, batch_shape=None):
        if shape is None and batch_shape is not None:
            shape = tuple(batch_shape)[1:]
        if shape is None:
            raise ValueError("Input needs shape=, e.g. Input(shape=(4,))")
        self.shape = (None,) + _shape_tuple(shape, "Input shape")
        self.name = name

    def __repr__(self):
        return f"<KerasTensor shape={self.shape}, name={self.name or 'input'}>"


class KerasTensor:
    """A layer's output in a Functional model: `layer(tensor)` or, for a merge, `Add()([a, b])`."""

    def __init__(self, layer, inputs):
        self._layer, self._inputs = layer, tuple(inputs)

    @property
    def shape(self):
        """(None, ...) as Keras's: worked out by onefit's own shape rules, once per tensor (the graph
        behind a tensor never changes, so asking again costs nothing)."""
        if getattr(self, "_shape", None) is None:
            sources, layers, edges = functional_graph(self)
            native = native_model([s.shape[1:] for s in sources], 0)
            add_calls(native, layers, edges)
            self._shape = (None,) + tuple(native.output_shape())
        return self._shape

    def __repr__(self):
        return f"<KerasTensor from {type(self._layer).__name__} {self._layer.name or ''}>".replace(" >", ">")


def add_calls(native, layers, edges):
    """Each layer call, in order, to the native model: a layer met again (the same object, Keras's
    shared layer) is its first call's arguments and weights on its own inputs."""
    first = {}
    for i, (layer, inputs) in enumerate(zip(layers, edges)):
        if id(layer) in first:
            native.share_layer(first[id(layer)], list(inputs))
        else:
            first[id(layer)] = i
            layer._add_to(native, inputs)


def native_model(input_shapes, seed):
    """The native model (no layers yet) of one input shape, or of several (a Functional model's)."""
    if len(input_shapes) == 1:
        return _onefit.Sequential(list(input_shapes[0]), seed)
    return _onefit.Sequential.with_inputs([list(s) for s in input_shapes], seed)


def functional_graph(output, inputs=None):
    """The Inputs `output` depends on (`inputs`, in their order, when given; else as found), and
    every layer between them in an order where each comes after its inputs (depth first, inputs in
    call order), with each layer's inputs as indices into that list (-1 - k: Input k; empty: the
    previous layer, a chain's link)."""
    index, layers, edges = {}, [], []
    found = list(inputs) if inputs is not None else []

    def place(tensor):
        if isinstance(tensor, Input):
            for k, source in enumerate(found):
                if source is tensor:
                    return -1 - k
            if inputs is not None:
                raise ValueError(f"Model: the outputs depend on an Input of shape {tensor.shape} that is not among "
                                 "its inputs; add it to inputs=")
            found.append(tensor)
            return -len(found)
        if id(tensor) in index:
            return index[id(tensor)]
        sources = [place(t) for t in tensor._inputs]
        index[id(tensor)] = len(layers)
        edges.append([] if sources == [len(layers) - 1] else sources)
        layers.append(tensor._layer)
        return index[id(tensor)]

    if not isinstance(output, KerasTensor):
        raise TypeError(f"Model: outputs must be a layer's output tensor, not {output!r}")
    place(output)
    return found, layers, edges


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
    with a layer set to trainable = False rather than train it.

    A kind's arguments are declared once, in its C++ op file: `_declare` checks them there (the CLI's
    and C++'s rules and messages) and keeps what it read as attributes, and `_add_to`/`_from_info`
    pass them through one native call. A class here adds only Keras's spelling on top (callables
    for activations, initializer objects, data_format, arguments onefit lacks)."""

    trainable = True
    _type = None  # the kind's word ("dense"), from its declaration; set for every class named as a kind

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        if cls.__name__ in _KINDS:
            cls._type = _KINDS[cls.__name__]["type"]

    def __init__(self, name=None, input_shape=None, input_dim=None):
        self.name = name
        if input_shape is None and input_dim is not None:
            input_shape = (int(input_dim),)
        self.input_shape = None if input_shape is None else _shape_tuple(input_shape, "input_shape")

    def _declare(self, **arguments):
        what = type(self).__name__
        try:
            checked = _onefit.check_layer(self._type, arguments)
        except TypeError as e:  # a value of no type the declaration takes
            raise ValueError(f"{what}: {e}") from None
        for key, value in checked.items():
            setattr(self, key, _python_value(value))

    def _arguments(self):
        """The declared arguments' values (tuples as lists, for the native side)."""
        values = {key: getattr(self, key) for key in _declared(self._type)["arguments"]}
        return {key: list(v) if isinstance(v, tuple) else v for key, v in values.items()}

    def _add_to(self, native, inputs=()):
        native.add_layer(self._type, self._arguments(), self.name or "", list(inputs))

    def __call__(self, inputs, *args, **kwargs):
        """The Functional API: this layer's output tensor on `inputs` (a tensor, or a list of them
        for a merge layer). onefit's layers compute inside a compiled model only, never eagerly."""
        if args or kwargs:
            raise TypeError(f"{type(self).__name__}: onefit's layers take their input tensors only "
                            f"(got {', '.join([*map(repr, args), *kwargs])})")
        tensors = list(inputs) if isinstance(inputs, (list, tuple)) else [inputs]
        if not tensors or not all(isinstance(t, (Input, KerasTensor)) for t in tensors):
            raise TypeError(f"{type(self).__name__}: onefit's layers are called on keras.Input tensors and "
                            f"other layers' outputs (the Functional API), not {inputs!r}; to compute on arrays, "
                            "build a model and call predict")
        return KerasTensor(self, tensors)  # (called again: the same layer, its weights shared)

    @classmethod
    def _from_info(cls, info):
        """The layer from a native model's layer list ({"kind", "type", "name", "arguments"})."""
        arguments = {key: _python_value(value) for key, value in info["arguments"].items()}
        return cls(**arguments, name=info["name"] or None)

    def __repr__(self):
        shown = ", ".join(f"{k}={getattr(self, k)!r}" for k in _declared(self._type)["arguments"])
        return f"{type(self).__name__}({shown})"


def _declared(layer_type):
    for kind in _KINDS.values():
        if kind["type"] == layer_type:
            return kind
    raise TypeError(f"{layer_type!r} is not a layer kind onefit declares")


def _python_value(value):
    """A native argument as Keras's constructors show it: tuples for pairs and shapes, float32s as
    their shortest decimal (0.99, not 0.9900000095)."""
    if isinstance(value, list):
        return tuple(value)
    if isinstance(value, float):
        return _float32_shortest(value)
    return value


class Dense(Layer):
    """keras.layers.Dense(units, activation=None, use_bias=True, kernel_initializer="glorot_uniform",
    bias_initializer="zeros", name=None, input_shape=None)."""

    def __init__(self, units, activation=None, use_bias=True, kernel_initializer="glorot_uniform",
                 bias_initializer="zeros", kernel_regularizer=None, bias_regularizer=None, activity_regularizer=None,
                 name=None, input_shape=None, input_dim=None, **kwargs):
        _no_unsupported(kwargs, "Dense")
        super().__init__(name, input_shape, input_dim)
        self._declare(units=units, **_product_arguments(activation, use_bias, kernel_initializer, bias_initializer,
                                                        kernel_regularizer, bias_regularizer, activity_regularizer))

    def __repr__(self):
        return f"Dense({self.units}, activation={self.activation!r})"


class Dropout(Layer):
    """keras.layers.Dropout(rate): zeroes a fraction `rate` of inputs in training (scaled by 1/(1-rate))."""

    def __init__(self, rate, noise_shape=None, seed=None, name=None, input_shape=None, **kwargs):
        _no_unsupported(kwargs, "Dropout")
        super().__init__(name, input_shape)
        if noise_shape is not None:
            raise ValueError("Dropout noise_shape is not supported by onefit")
        self._declare(rate=rate)

    def __repr__(self):
        return f"Dropout({self.rate})"


# Image layers: samples are channels last (height, width, channels), as Keras's default
# data_format; a Conv2D kernel is Keras's (kh, kw, in, filters).

# Keras arguments of a Conv2D that onefit has not, with the value that means "none".
_CONV_OFF = {"dilation_rate": (1, 1), "groups": 1, "kernel_constraint": None, "bias_constraint": None, "lora_rank": None}


def _product_arguments(activation, use_bias, kernel_initializer, bias_initializer, kernel_regularizer,
                       bias_regularizer, activity_regularizer):
    """The arguments Dense, Conv2D and Conv1D share, in their declared spelling."""
    return dict(activation=activation_name(activation), use_bias=use_bias,
                kernel_initializer=_initializer_name(kernel_initializer),
                bias_initializer=_initializer_name(bias_initializer),
                kernel_regularizer=_regularizers._text(kernel_regularizer),
                bias_regularizer=_regularizers._text(bias_regularizer),
                activity_regularizer=_regularizers._text(activity_regularizer))


class Conv2D(Layer):
    """keras.layers.Conv2D(filters, kernel_size, strides=(1, 1), padding="valid", data_format=None,
    activation=None, use_bias=True, kernel_initializer="glorot_uniform", bias_initializer="zeros",
    name=None): an int kernel_size or strides means a square; the kernel is (kh, kw, in, filters)."""

    def __init__(self, filters, kernel_size, strides=(1, 1), padding="valid", data_format=None, activation=None,
                 use_bias=True, kernel_initializer="glorot_uniform", bias_initializer="zeros", kernel_regularizer=None,
                 bias_regularizer=None, activity_regularizer=None, name=None, input_shape=None, **kwargs):
        _keras_off(kwargs, _CONV_OFF, "Conv2D")
        _no_unsupported(kwargs, "Conv2D")
        super().__init__(name, input_shape)
        _channels_last(data_format, "Conv2D")
        self._declare(filters=filters, kernel_size=kernel_size, strides=strides, padding=_padding(padding),
                      **_product_arguments(activation, use_bias, kernel_initializer, bias_initializer,
                                           kernel_regularizer, bias_regularizer, activity_regularizer))

    def __repr__(self):
        return f"Conv2D({self.filters}, {self.kernel_size}, activation={self.activation!r})"


class _Pooling2D(Layer):
    def __init__(self, pool_size=(2, 2), strides=None, padding="valid", data_format=None, name=None,
                 input_shape=None, **kwargs):
        what = type(self).__name__
        _no_unsupported(kwargs, what)
        super().__init__(name, input_shape)
        _channels_last(data_format, what)
        # strides=None is the pool size, as Keras (the declaration says so).
        self._declare(pool_size=pool_size, strides=strides, padding=_padding(padding))

    def __repr__(self):
        return f"{type(self).__name__}({self.pool_size}, strides={self.strides})"


class MaxPooling2D(_Pooling2D):
    """keras.layers.MaxPooling2D(pool_size=(2, 2), strides=None, padding="valid", data_format=None,
    name=None): the largest value of each window (strides=None: the pool size); padding never wins."""


class AveragePooling2D(_Pooling2D):
    """keras.layers.AveragePooling2D(pool_size=(2, 2), strides=None, padding="valid", data_format=None,
    name=None): the mean of each window; a window overhanging a "same" border divides by the pixels inside."""


class GlobalAveragePooling2D(Layer):
    """keras.layers.GlobalAveragePooling2D(data_format=None, keepdims=False, name=None): each channel's
    mean over height and width, (H, W, C) -> (C,)."""

    def __init__(self, data_format=None, keepdims=False, name=None, input_shape=None, **kwargs):
        _no_unsupported(kwargs, "GlobalAveragePooling2D")
        super().__init__(name, input_shape)
        _channels_last(data_format, "GlobalAveragePooling2D")
        if keepdims:
            raise ValueError("GlobalAveragePooling2D keepdims=True is not supported by onefit (its output is (C,))")
        self._declare()


class Flatten(Layer):
    """keras.layers.Flatten(data_format=None, name=None): one sample's values as one axis."""

    def __init__(self, data_format=None, name=None, input_shape=None, **kwargs):
        _no_unsupported(kwargs, "Flatten")
        super().__init__(name, input_shape)
        _channels_last(data_format, "Flatten")
        self._declare()


class Reshape(Layer):
    """keras.layers.Reshape(target_shape, name=None): one sample's values in a new shape (without the
    batch axis); one entry may be -1, inferred from the others."""

    def __init__(self, target_shape, name=None, input_shape=None, **kwargs):
        _no_unsupported(kwargs, "Reshape")
        super().__init__(name, input_shape)
        self._declare(target_shape=(target_shape,) if isinstance(target_shape, int) else target_shape)

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
        self._declare(momentum=momentum, epsilon=epsilon, center=center, scale=scale)

    def __repr__(self):
        return f"BatchNormalization(momentum={self.momentum}, epsilon={self.epsilon})"


# Activation layers and the 1-D layers: sequences are (steps, channels), as Keras's default data_format.

class Activation(Layer):
    """keras.layers.Activation(activation, name=None): one of Keras's activations as a layer (softmax
    over the last axis)."""

    def __init__(self, activation, name=None, input_shape=None, **kwargs):
        _no_unsupported(kwargs, "Activation")
        super().__init__(name, input_shape)
        self._declare(activation=activation_name(activation))


class LayerNormalization(Layer):
    """keras.layers.LayerNormalization(axis=-1, epsilon=0.001, center=True, scale=True, name=None): each
    sample's last axis normalised by its own mean and variance. Weights: gamma, beta."""

    _OFF = {"beta_initializer": "zeros", "gamma_initializer": "ones", "beta_regularizer": None,
            "gamma_regularizer": None, "beta_constraint": None, "gamma_constraint": None, "rms_scaling": False}

    def __init__(self, axis=-1, epsilon=0.001, center=True, scale=True, name=None, input_shape=None, **kwargs):
        _initializers_by_name(kwargs, ("beta_initializer", "gamma_initializer"))
        _keras_off(kwargs, self._OFF, "LayerNormalization")
        _no_unsupported(kwargs, "LayerNormalization")
        super().__init__(name, input_shape)
        if isinstance(axis, (list, tuple)):
            if len(axis) != 1:
                raise ValueError(f"LayerNormalization axis={axis!r} is not supported by onefit: it normalises the "
                                 "last axis (axis=-1)")
            axis = axis[0]
        self._declare(axis=axis, epsilon=epsilon, center=center, scale=scale)


class Embedding(Layer):
    """keras.layers.Embedding(input_dim, output_dim, embeddings_initializer="uniform", mask_zero=False,
    name=None): each integer index of a sample (the model's input, values in [0, input_dim)) becomes
    its row of the (input_dim, output_dim) table. The model's first layer."""

    _OFF = {"embeddings_constraint": None, "quantization_config": None, "lora_rank": None, "lora_alpha": None}

    def __init__(self, input_dim, output_dim, embeddings_initializer="uniform", embeddings_regularizer=None,
                 mask_zero=False, name=None, input_shape=None, **kwargs):
        _keras_off(kwargs, self._OFF, "Embedding")
        _no_unsupported(kwargs, "Embedding")
        super().__init__(name, input_shape)
        self._declare(input_dim=input_dim, output_dim=output_dim,
                      embeddings_initializer=_initializer_name(embeddings_initializer),
                      embeddings_regularizer=_regularizers._text(embeddings_regularizer), mask_zero=mask_zero)


def _one(value):
    """A 1-D layer's size: Keras takes an int or a 1-tuple."""
    return value[0] if isinstance(value, (list, tuple)) and len(value) == 1 else value


class Conv1D(Layer):
    """keras.layers.Conv1D(filters, kernel_size, strides=1, padding="valid", data_format=None, activation=None,
    use_bias=True, kernel_initializer="glorot_uniform", bias_initializer="zeros", name=None) over
    (steps, channels); the kernel is (kernel_size, in, filters)."""

    _OFF = dict(_CONV_OFF, dilation_rate=(1,))

    def __init__(self, filters, kernel_size, strides=1, padding="valid", data_format=None, activation=None,
                 use_bias=True, kernel_initializer="glorot_uniform", bias_initializer="zeros", kernel_regularizer=None,
                 bias_regularizer=None, activity_regularizer=None, name=None, input_shape=None, **kwargs):
        _keras_off(kwargs, self._OFF, "Conv1D")
        _no_unsupported(kwargs, "Conv1D")
        super().__init__(name, input_shape)
        _channels_last(data_format, "Conv1D")
        self._declare(filters=filters, kernel_size=_one(kernel_size), strides=_one(strides), padding=_padding(padding),
                      **_product_arguments(activation, use_bias, kernel_initializer, bias_initializer,
                                           kernel_regularizer, bias_regularizer, activity_regularizer))


class _Pooling1D(Layer):
    def __init__(self, pool_size=2, strides=None, padding="valid", data_format=None, name=None, input_shape=None,
                 **kwargs):
        what = type(self).__name__
        _no_unsupported(kwargs, what)
        super().__init__(name, input_shape)
        _channels_last(data_format, what)
        self._declare(pool_size=_one(pool_size), strides=_one(strides), padding=_padding(padding))


class MaxPooling1D(_Pooling1D):
    """keras.layers.MaxPooling1D(pool_size=2, strides=None, padding="valid", data_format=None, name=None)."""


class AveragePooling1D(_Pooling1D):
    """keras.layers.AveragePooling1D(pool_size=2, strides=None, padding="valid", data_format=None, name=None)."""


class _GlobalPooling(Layer):
    def __init__(self, data_format=None, keepdims=False, name=None, input_shape=None, **kwargs):
        what = type(self).__name__
        _no_unsupported(kwargs, what)
        super().__init__(name, input_shape)
        _channels_last(data_format, what)
        if keepdims:
            raise ValueError(f"{what} keepdims=True is not supported by onefit (its output is (C,))")
        self._declare()


class GlobalAveragePooling1D(_GlobalPooling):
    """keras.layers.GlobalAveragePooling1D(data_format=None, keepdims=False): each channel's mean over the steps."""


class GlobalMaxPooling1D(_GlobalPooling):
    """keras.layers.GlobalMaxPooling1D(data_format=None, keepdims=False): each channel's largest value."""


class GlobalMaxPooling2D(_GlobalPooling):
    """keras.layers.GlobalMaxPooling2D(data_format=None, keepdims=False): each channel's largest value."""


def _declared_class(kind):
    """A class for a kind declared natively without one written here: Keras's name, its declared
    arguments by position or name, and the arguments every layer takes."""

    def __init__(self, *args, name=None, input_shape=None, **kwargs):
        names = kind["arguments"]
        if len(args) > len(names):
            raise TypeError(f"{kind['keras_class']} takes at most {len(names)} positional arguments")
        given = dict(zip(names, args))
        for key in [k for k in kwargs if k in names]:
            if key in given:
                raise TypeError(f"{kind['keras_class']} got {key} twice")
            given[key] = kwargs.pop(key)
        _no_unsupported(kwargs, kind["keras_class"])
        Layer.__init__(self, name, input_shape)
        self._declare(**given)

    return type(kind["keras_class"], (Layer,), {"__init__": __init__, "__module__": __name__,
                                                 "__doc__": f"keras.layers.{kind['keras_class']}"
                                                            f"({', '.join(kind['arguments'])}, name=None)"})


for _kind in list(_KINDS.values()):
    if _kind["keras_class"] not in globals():
        globals()[_kind["keras_class"]] = _declared_class(_kind)

# The layers a model holds, by Keras class name (what the native model's layer list reports).
LAYERS = {name: globals()[name] for name in _KINDS}
IMAGE_LAYERS = (Conv2D, MaxPooling2D, AveragePooling2D, GlobalAveragePooling2D, GlobalMaxPooling2D)


def _float32_shortest(value):
    """A float32 the native side holds (widened to a Python float: 0.99 reads 0.9900000095...) as the
    shortest decimal that is the same float32 (0.99), as Keras's config shows it."""
    as_f32 = struct.unpack("f", struct.pack("f", value))[0]
    for digits in range(6, 10):
        short = float(f"{as_f32:.{digits}g}")
        if struct.unpack("f", struct.pack("f", short))[0] == as_f32:
            return short
    return as_f32


def _padding(padding):
    return padding.lower() if isinstance(padding, str) else padding  # Keras takes "SAME" too


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
        given = value = kwargs.pop(key)
        if isinstance(none, tuple) and isinstance(value, int) and not isinstance(value, bool):
            value = (value,) * len(none)  # dilation_rate=1: (1, 1)
        if value != none and not (isinstance(value, list) and tuple(value) == none):
            raise ValueError(f"{layer} {key}={given!r} is not supported by onefit (only {none!r})")


def _initializer_name(init):
    """An initializer's name from a name, a Keras initializer object or its config dict. RandomUniform
    is onefit's "uniform" only with Keras's default bounds (-0.05, 0.05); others are refused."""
    if isinstance(init, str):
        return init
    if isinstance(init, dict):  # a Keras config: {"class_name": "GlorotUniform", "config": {...}}
        name, config = init.get("class_name", ""), init.get("config") or {}
    else:
        name, config = getattr(type(init), "__name__", ""), (init.get_config() if hasattr(init, "get_config") else {})
    snake = "".join("_" + c.lower() if c.isupper() else c for c in name).lstrip("_")
    if snake in ("random_uniform", "uniform") and (config.get("minval", -0.05), config.get("maxval", 0.05)) != (-0.05, 0.05):
        raise ValueError(f"RandomUniform(minval={config.get('minval')}, maxval={config.get('maxval')}) is not "
                         "supported by onefit: only Keras's default bounds (-0.05, 0.05), its 'uniform'")
    if snake:
        return snake
    raise TypeError(f"initializers are given by name, e.g. 'glorot_uniform', not {init!r}")


def _initializers_by_name(kwargs, keys):
    """Initializer arguments compared with their "none" value by name (a Keras config holds dicts)."""
    for key in keys:
        if key in kwargs:
            kwargs[key] = _initializer_name(kwargs[key])


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
