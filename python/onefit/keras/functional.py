"""keras.Model(inputs, outputs): the Functional API over onefit's compiled training programs, and
the inputs of a model of several as the native model takes them (each row's values side by side)."""
import math

from onefit import data as _data
from onefit._arrays import float32 as _float32
from onefit.keras import layers as _layers
from onefit.keras.models import Sequential


class Model(Sequential):
    """keras.Model(inputs, outputs): the Functional API. `inputs` is a keras.Input, or a list (or a
    dict) of them, `outputs` a layer's output tensor; the model holds every layer between them
    (residual Add, Concatenate, Subtract, Multiply, Average, branches) and trains as one compiled
    program, as a Sequential does. A model of several inputs takes x as a list of arrays in the
    inputs' order (or a dict by input name), as Keras's. A layer called on several tensors is one
    layer (shared weights, listed once in `layers`), as Keras's. One output; subclassed models with
    call() are refused by name."""

    def __init__(self, inputs=None, outputs=None, name=None, seed=None, **kwargs):
        if kwargs or inputs is None or outputs is None:
            raise TypeError("onefit.keras.Model takes inputs= and outputs= (the Functional API); subclassing "
                            "Model with call() is not supported by onefit")
        outputs = _one(outputs, "outputs")
        names = list(inputs) if isinstance(inputs, dict) else None
        inputs = list(inputs.values()) if isinstance(inputs, dict) else (
            list(inputs) if isinstance(inputs, (list, tuple)) else [inputs])
        if not inputs:
            raise ValueError("Model: inputs is empty; give the keras.Input tensors its layers are called on")
        for tensor in inputs:
            if not isinstance(tensor, _layers.Input):
                raise TypeError(f"Model: inputs must be keras.Input tensors, not {tensor!r}")
        if len({id(t) for t in inputs}) != len(inputs):
            raise ValueError("Model: an Input is given twice in inputs")
        _, layers, edges = _layers.functional_graph(outputs, inputs)
        used = {i for e in edges for i in e} | ({-1} if edges and not edges[0] else set())
        for k, tensor in enumerate(inputs):
            if -1 - k not in used:
                raise ValueError(f"Model: input {k} ({tensor.name or 'unnamed'}, shape {tensor.shape}) is read by "
                                 "no layer on the way to the outputs; leave it out of inputs")
        super().__init__(name=name or "functional", seed=seed)
        shapes = [tuple(t.shape[1:]) for t in inputs]
        self._input_names = names or [t.name for t in inputs]
        given = [n for n in self._input_names if n]
        if len(set(given)) != len(given):
            raise ValueError(f"Model: the inputs' names {self._input_names} repeat; Keras needs unique names")
        if len(shapes) > 1:
            self._input_shapes = shapes
            self._input_shape = (sum(math.prod(s) for s in shapes),)
        else:
            self._input_shape = shapes[0]
        for layer in {id(layer): layer for layer in layers}.values():  # (a shared layer once)
            super().add(layer)
        self._calls = list(layers)
        self._edges = [tuple(e) for e in edges]

    def add(self, layer):
        raise TypeError("Model.add: a Functional model's layers come from its inputs and outputs; build a "
                        "keras.Sequential to add layers one by one")

    def _layer_inputs(self):
        return self._edges

    def _call_layers(self):
        return self._calls

    def _x(self, x, what):
        if not self._input_shapes:
            if isinstance(x, dict) and len(x) == 1:
                x = list(x.values())
            if isinstance(x, (list, tuple)) and len(x) == 1 and hasattr(x[0], "shape"):
                x = x[0]  # (one input's array in a list or a dict, as Keras takes it)
            return _float32(x, what)
        return _joined_inputs(x, self._input_shapes, getattr(self, "_input_names", None), what)

    @property
    def input_shape(self):
        if not self._input_shapes:
            return super().input_shape
        return [(None,) + tuple(s) for s in self._input_shapes]

    def __repr__(self):
        return f"<onefit.keras.Model {self.name!r}: {len(self.layers)} layers>"


def _joined_inputs(x, shapes, names, what):
    """A model of several inputs' x (a list or tuple of arrays in the inputs' order, or a dict by
    input name, as Keras takes them) as one float32 array whose rows hold each input's values
    flattened, side by side: what the native model takes. One array of those rows passes as it is."""

    width = sum(math.prod(s) for s in shapes)
    if isinstance(x, dict):
        if not names or any(n is None for n in names):
            raise ValueError(f"{what}: a dict of inputs needs named inputs (keras.Input(shape, name=...)); give a "
                             "list in the inputs' order instead")
        missing = [n for n in names if n not in x]
        if missing or len(x) != len(names):
            raise ValueError(f"{what}: the dict has the keys {sorted(x)}, but the model's inputs are {names}")
        x = [x[n] for n in names]
    if not isinstance(x, (list, tuple)):
        array = _float32(x, what)
        if array.ndim == 2 and array.shape[1] == width:
            return array
        raise ValueError(f"{what}: the model has {len(shapes)} inputs {[(None,) + tuple(s) for s in shapes]}; give "
                         f"a list of {len(shapes)} arrays, one per input, in that order")
    if len(x) != len(shapes):
        raise ValueError(f"{what}: got {len(x)} arrays, but the model has {len(shapes)} inputs "
                         f"{[(None,) + tuple(s) for s in shapes]}")
    arrays = [_float32(a, f"{what}[{k}]") for k, a in enumerate(x)]
    rows = len(arrays[0]) if arrays[0].ndim else 0
    for k, (a, shape) in enumerate(zip(arrays, shapes)):
        if a.ndim < 1 or len(a) != rows:
            raise ValueError(f"{what}[{k}] has {len(a) if a.ndim else 0} rows, but {what}[0] has {rows}")
        if tuple(a.shape[1:]) != tuple(shape) and not (a.ndim == 2 and a.shape[1] == math.prod(shape)) \
                and not (len(shape) == 1 and shape[0] == 1 and a.ndim == 1):
            raise ValueError(f"{what}[{k}] has shape {a.shape}, but input {k} takes {(None,) + tuple(shape)}")
    return _data.joined_rows(arrays)


def _one(tensors, what):
    if isinstance(tensors, dict):
        tensors = list(tensors.values())
    if isinstance(tensors, (list, tuple)):
        if len(tensors) != 1:
            raise ValueError(f"Model: {len(tensors)} {what}; onefit's models give one output (several outputs, "
                             "each with its own loss, are not supported yet)")
        return tensors[0]
    return tensors
