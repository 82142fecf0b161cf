"""Files: model.save / save_weights / load_weights / export and load_model, for onefit's folder format,
Keras 3's .keras archive and .weights.h5, and ONNX (keras.saving's names)."""
import os

from onefit import _onefit
from onefit.keras import layers as _layers
from onefit.keras import optimizers as _optimizers

# Keras 2's legacy HDF5 suffixes, refused both ways with the way to a .keras file.
_LEGACY_H5_SUFFIXES = (".h5", ".hdf5")


class FileMethods:
    """The model's file methods (a base of keras.Sequential and keras.Model)."""

    def save(self, filepath, overwrite=True):
        """model.save("m.keras") writes Keras 3's native archive (keras.saving.load_model reads it, with
        the optimizer's state); any other name without a Keras suffix is a folder in onefit's own format
        (weights as safetensors). Both keep the optimizer's state and load with load_model or the CLI."""
        path = os.fspath(filepath)
        if path.lower().endswith(_LEGACY_H5_SUFFIXES):
            raise ValueError(f"save: {path!r} names Keras's legacy HDF5 format, which onefit does not write; "
                             "save as .keras (Keras 3's format) instead")
        if not overwrite and os.path.exists(path):
            raise FileExistsError(f"{path} exists and overwrite=False")
        self._require_built("save").save(path)

    def save_weights(self, filepath, overwrite=True):
        """Keras 3's .weights.h5: the layers' weights only, which Keras's load_weights reads."""
        path = os.fspath(filepath)
        if not path.endswith(".weights.h5"):
            raise ValueError(f"save_weights: the filename must end in `.weights.h5`, not {path!r}")
        if not overwrite and os.path.exists(path):
            raise FileExistsError(f"{path} exists and overwrite=False")
        self._require_built("save_weights").save_weights_h5(path)

    def load_weights(self, filepath):
        """Weights from a .weights.h5 (save_weights, Keras's or onefit's) or a .keras file, into this
        model, whose layers must match the file's."""
        path = os.fspath(filepath)
        native = self._require_built("load_weights")
        if path.endswith(".weights.h5"):
            native.load_weights_h5(path)
        elif path.endswith(".keras"):
            self.set_weights(_onefit.load_keras(path, False).get_weights())
        else:
            raise ValueError(f"load_weights: {path!r} must end in .weights.h5 or .keras")

    def export(self, filepath, format=None, verbose=None, **kwargs):
        """model.export("m.onnx") (or format="onnx"): the model's predict as ONNX (opset 17), which
        onnxruntime runs with onefit's predictions. Keras's other formats (tf_saved_model, openvino,
        litert) are refused by name."""
        path = os.fspath(filepath)
        if format is None and path.lower().endswith(".onnx"):
            format = "onnx"
        if format != "onnx":
            raise ValueError(f"export: format={format!r} is not one onefit writes; it exports format='onnx' "
                             "(or a path ending in .onnx)")
        if kwargs:
            raise ValueError(f"export: {', '.join(sorted(kwargs))} not supported for ONNX export")
        self._require_built("export").export_onnx(path)
        if verbose:
            print(f"Saved artifact at '{path}'.")


def load_model(filepath, compile=True):
    """A model that model.save (or `onefit fit --save`) wrote, or a Keras 3 .keras file, with its
    optimizer state; compile=False leaves it uncompiled, as Keras's."""
    from onefit.keras.models import Model, Sequential  # (models builds on this module)

    path = os.fspath(filepath)
    is_file = not os.path.isdir(path)
    if is_file and path.lower().endswith(_LEGACY_H5_SUFFIXES):
        raise ValueError(f"load_model: {path!r} is Keras's legacy HDF5 format, which onefit does not read; load "
                         "it with Keras and save it as .keras, or convert it with onefit.keras.from_keras(model)")
    if is_file and path.lower().endswith(".keras"):
        native = _onefit.load_keras(path, compile)
    else:
        native = _onefit.load_model(path)
    infos = native.layers
    functional = any(info["inputs"] or info["shares"] >= 0 for info in infos)
    model = Model.__new__(Model) if functional else Sequential(name=native.name or None, seed=native.seed)
    if functional:  # (its graph is the native model's; no tensors to call layers on)
        Sequential.__init__(model, name=native.name or "functional", seed=native.seed)
        model._edges = [tuple(info["inputs"]) for info in infos]
        model._calls = []
    for info in infos:
        if info["shares"] >= 0:  # a shared layer's later call: the layer of its first call
            model._calls.append(model._calls[info["shares"]])
            continue
        if info["kind"] not in _layers.LAYERS:
            raise ValueError(f"{os.fspath(filepath)}: layer {info['name']!r} is a {info['kind']}, which onefit.keras "
                             "does not build yet (the onefit command line and the C++ API train it)")
        model.layers.append(_layers.LAYERS[info["kind"]]._from_info(info))
        if functional:
            model._calls.append(model.layers[-1])
    model._input_shape = tuple(native.input_shape)
    if len(native.input_shapes) > 1:
        model._input_shapes = [tuple(shape) for shape in native.input_shapes]
    if functional:
        model._input_names = list(native.input_names) or [None] * len(native.input_shapes)
    model._native = native
    if not compile:
        return model
    try:
        native_loss, native_optimizer = native.loss, native.optimizer
    except ValueError:  # saved before compile
        return model
    model.loss = native_loss.name
    model.optimizer = _optimizers.get(native_optimizer.name)
    schedule = native_optimizer.schedule()
    model.optimizer.learning_rate = (native_optimizer.learning_rate if schedule is None else
                                     _optimizers.schedules._CLASSES[schedule[0]].from_config(schedule[1]))
    for key in model.optimizer._defaults:
        setattr(model.optimizer, key, getattr(native_optimizer, key))
    if "weight_decay" not in model.optimizer._defaults:  # every optimizer's (0 natively is None, off)
        model.optimizer.weight_decay = _layers._float32_shortest(native_optimizer.weight_decay) or None
    for clip in _optimizers._CLIPS:  # 0 natively is None (off) in Keras
        setattr(model.optimizer, clip, _layers._float32_shortest(getattr(native_optimizer, clip)) or None)
    model._compiled = (model.optimizer, native_loss, list(native.metrics))
    model._compiled_learning_rate = native_optimizer.learning_rate
    return model


def save_model(model, filepath, overwrite=True):
    """keras.saving.save_model(model, path): model.save(path)."""
    model.save(filepath, overwrite=overwrite)
