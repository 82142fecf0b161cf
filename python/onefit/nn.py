"""Activations as callables, for code that passes functions (`activation=tf.nn.relu` in the
seed becomes `activation=onefit.nn.relu`). onefit compiles them by name; calling one applies it
to a NumPy array, so they also work where a plain function is expected. NumPy is imported at the first call, so
that `import onefit` stays fast."""
import importlib


class _LazyNumpy:
    def __getattr__(self, name):
        return getattr(importlib.import_module("numpy"), name)


_np = _LazyNumpy()


def _activation(name, fn):
    fn.__name__ = name
    fn.__qualname__ = name
    fn.onefit_name = name
    return fn


relu = _activation("relu", lambda x: _np.maximum(x, 0))
sigmoid = _activation("sigmoid", lambda x: 1 / (1 + _np.exp(-_np.asarray(x))))
tanh = _activation("tanh", lambda x: _np.tanh(x))
linear = _activation("linear", lambda x: _np.asarray(x))
elu = _activation("elu", lambda x: _np.where(_np.asarray(x) > 0, x, _np.expm1(_np.minimum(x, 0))))
leaky_relu = _activation("leaky_relu", lambda x: _np.where(_np.asarray(x) > 0, x, 0.2 * _np.asarray(x)))
swish = _activation("swish", lambda x: _np.asarray(x) / (1 + _np.exp(-_np.asarray(x))))
silu = swish


def _softmax(x, axis=-1):
    x = _np.asarray(x)
    e = _np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


softmax = _activation("softmax", _softmax)


def _gelu(x):
    from math import erf, sqrt

    v = _np.vectorize(lambda t: 0.5 * t * (1 + erf(t / sqrt(2))))
    return v(_np.asarray(x, dtype=float))


gelu = _activation("gelu", _gelu)


def activation_name(activation):
    """The name onefit compiles for `activation`: None, a Keras name, or one of the callables
    here (or any callable named like one, e.g. tf.nn.relu or keras.activations.relu)."""
    if activation is None:
        return "linear"
    if isinstance(activation, str):
        return activation
    name = getattr(activation, "onefit_name", None) or getattr(activation, "__name__", None)
    name = {"silu": "swish", "softmax_v2": "softmax"}.get(name, name)  # TF 2 names tf.nn.softmax softmax_v2
    if not isinstance(name, str):
        raise TypeError(f"activation must be a name or a function such as onefit.nn.relu, not {activation!r}")
    return name
