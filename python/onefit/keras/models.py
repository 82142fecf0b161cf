"""keras.Sequential and keras.models.load_model over onefit's compiled training programs."""
import math
import numbers
import re
import sys
import warnings
import weakref

from onefit import _onefit
from onefit import data as _data
from onefit import warnings as _warnings
from onefit._arrays import float32 as _float32
from onefit._seeds import next_seed as _next_seed
from onefit._seeds import set_random_seed  # noqa: F401  (keras.utils.set_random_seed)
from onefit.keras import callbacks as _callbacks
from onefit.keras import layers as _layers
from onefit.keras import losses as _losses
from onefit.keras import metrics as _metrics
from onefit.keras import optimizers as _optimizers
from onefit.keras import saving as _saving
from onefit.keras.saving import load_model  # noqa: F401  (keras.models.load_model)


class Sequential(_saving.FileMethods):
    """keras.Sequential([layers]): Dense, Dropout and the image layers (Conv2D, MaxPooling2D,
    AveragePooling2D, GlobalAveragePooling2D, Flatten, Reshape), compiled into one training program."""

    def __init__(self, layers=None, name=None, seed=None):
        self.name = name or "sequential"
        self.layers = []
        self._input_shape = None
        self._input_shapes = None  # a Functional model's inputs, each one's shape (None: one input)
        self._seed = _next_seed() if seed is None else int(seed)
        self._native = None
        self._compiled = None  # (optimizer, native loss, metric names)
        self._compiled_learning_rate = None  # what the native program has
        self.optimizer = None
        self.loss = None
        self.history = None
        for layer in layers or []:
            self.add(layer)

    # ---- building ----
    def add(self, layer):
        if isinstance(layer, _layers.Input):
            if self.layers:
                raise ValueError("Input must come before the first layer")
            self._input_shape = layer.shape[1:]
            return
        if not isinstance(layer, _layers.Layer) or layer._type is None:
            raise TypeError(f"onefit.keras.Sequential takes the layers {', '.join(_layers.LAYERS)}, not {layer!r}")
        if self._native is not None:
            raise ValueError("layers cannot be added after the model is built (compile or fit built it)")
        if not self.layers and self._input_shape is None and layer.input_shape is not None:
            self._input_shape = layer.input_shape
        if layer.name is None:  # Keras's default: the class in snake case, numbered within the model
            base = re.sub("([a-z])([A-Z])", r"\1_\2", re.sub("(.)([A-Z][a-z]+)", r"\1_\2", type(layer).__name__)).lower()
            taken = {other.name for other in self.layers}
            layer.name = next(name for name in (f"{base}_{n}" if n else base for n in range(len(taken) + 1))
                              if name not in taken)
        self.layers.append(layer)

    def _layer_inputs(self):
        """Each layer call's inputs (a Functional model's; a Sequential's are each the previous layer)."""
        return [()] * len(self.layers)

    def _call_layers(self):
        """The layer of each call, in the native model's order: self.layers, where a Functional
        model's shared layer (called twice) is listed once."""
        return self.layers

    def _dataset_for_model(self, dataset, what):
        """A dataset of several inputs ((x1, x2), y) fits a model of those inputs only; a dict's
        inputs are put in the model's order by name."""
        if dataset._names is not None:
            mine = getattr(self, "_input_names", None) or []
            if sorted(dataset._names) != sorted(n for n in mine if n):
                raise ValueError(f"{what}: the dataset yields the inputs {dataset._names}, but the model's inputs are "
                                 f"{mine or 'unnamed'} (name them with keras.Input(name=...))")
            if dataset._names != mine:
                dataset = dataset._reordered([dataset._names.index(n) for n in mine])
        mine = [tuple(s) for s in self._input_shapes] if self._input_shapes else None
        theirs = [tuple(s) for s in dataset._parts] if dataset._parts is not None else None
        if theirs is not None and theirs != mine:
            raise ValueError(f"{what}: the dataset yields {len(theirs)} inputs of shapes {theirs}, but the model takes "
                             f"{mine if mine else [tuple(self._input_shape or ())]}")
        return dataset

    def _x(self, x, what):
        """The features as the native model takes them: float32 rows (a Functional model of several
        inputs: each row holds the inputs' values side by side, _joined_inputs)."""
        return _float32(x, what)

    def build(self, input_shape):
        """Builds the model for samples of `input_shape` (with or without the batch axis)."""
        shape = tuple(input_shape)
        if shape and shape[0] is None:
            shape = shape[1:]
        self._build(shape)

    def _build_for(self, x_shape):
        """Builds the model, unless built, for samples shaped as the data's rows (x_shape includes
        the batch axis) when no input shape was given. As the onefit CLI: grayscale images (N, H, W)
        before an image layer are (H, W, 1), which fit, evaluate and predict then take as they are."""
        shape = tuple(x_shape[1:])
        if len(shape) == 2 and self.layers and isinstance(self.layers[0], _layers.IMAGE_LAYERS):
            shape += (1,)
        self._build(self._input_shape or shape)

    def _build(self, shape):
        if self._native is not None:
            return
        if not self.layers:
            raise ValueError("the model has no layers; add Dense layers first")
        for layer in self._call_layers():  # (Keras's models would share its weights; onefit's cannot)
            other = layer._built_by() if getattr(layer, "_built_by", None) else None
            if other is not None and other is not self:
                raise ValueError(f"layer {layer.name!r} is in another model already ({other.name!r}); onefit's models do "
                                 "not share weights, so a layer belongs to one model: make a new layer for this one")
        native = _layers.native_model(self._input_shapes or [shape], self._seed)
        native.name = self.name
        names = getattr(self, "_input_names", None)
        if names and any(names):  # (unnamed ones take Keras's defaults by position)
            native.input_names = [n or "" for n in names]  # (the native model names an empty one)
        _layers.add_calls(native, self._call_layers(), self._layer_inputs())
        for layer, name in zip(self._call_layers(), native.layer_names()):
            layer.name = layer.name or name  # Keras's default names, as summary() shows them
        for layer in self._call_layers():
            layer._built_by = weakref.ref(self)
        self._native = native
        self._input_shape = tuple(shape)
        self._compile_native()

    @property
    def built(self):
        return self._native is not None

    def _require_built(self, what):
        if self._native is None:
            if self._input_shape is None:
                raise ValueError(f"{what}: the model is not built yet; give input_shape= to the first layer, "
                                 "start with keras.Input(shape), or fit it first")
            self._build(self._input_shape)
        return self._native

    # ---- compile ----
    def compile(self, optimizer="rmsprop", loss=None, metrics=None, **kwargs):
        unsupported = {k for k, v in kwargs.items() if v is not None and k not in ("run_eagerly", "jit_compile",
                                                                                   "steps_per_execution")}
        if unsupported:
            raise TypeError(f"compile: onefit does not support {', '.join(sorted(unsupported))}")
        if loss is None:
            raise ValueError("compile needs a loss, e.g. loss='mse'")
        self._refuse_frozen_layers("compile")
        # As Keras: a compile that fails leaves the model as it was.
        previous = (self.optimizer, self.loss, self._compiled, self._native)
        optimizer = _optimizers.get(optimizer)
        compiled = (optimizer, _losses.get(loss), _metrics.compiled_names(metrics))
        self.optimizer, self.loss, self._compiled = optimizer, loss, compiled
        try:
            if self._native is None and self._input_shape is not None:
                self._build(self._input_shape)
            else:
                self._compile_native()
        except BaseException:
            self.optimizer, self.loss, self._compiled, self._native = previous
            raise

    def _refuse_frozen_layers(self, what):
        """A layer set to trainable = False (Keras's freezing, for fine-tuning) would still train in
        onefit's program: refused, naming the layer, rather than trained silently."""
        for layer in self.layers:
            if layer.trainable is not True:
                raise ValueError(f"{what}: layer {layer.name!r} has trainable=False, but onefit trains every layer "
                                 "(it cannot freeze layers yet); set it back to True, or fine-tune the model in Keras "
                                 "(model.to_keras())")

    def _compile_native(self):
        if self._native is not None and self._compiled is not None:
            optimizer, loss, metrics = self._compiled
            self._native.compile(optimizer._native(), loss, metrics)
            self._compiled_learning_rate = optimizer.learning_rate
            _warnings.emit(self._native.warnings(), stacklevel=4)

    # ---- training ----
    def fit(self, x=None, y=None, batch_size=None, epochs=1, verbose="auto", callbacks=None, validation_split=0.0,
            validation_data=None, shuffle=True, class_weight=None, sample_weight=None, initial_epoch=0,
            steps_per_epoch=None, validation_steps=None, validation_batch_size=None, validation_freq=1,
            device="cpu", seed=None):
        if self._compiled is None:
            raise RuntimeError("you must compile the model before training it: model.compile(optimizer, loss)")
        self._refuse_frozen_layers("fit")
        if validation_steps is not None:
            raise ValueError("fit: validation_steps is not supported by onefit")
        if validation_freq != 1:
            raise ValueError("fit: onefit validates after every epoch (validation_freq=1)")
        dataset = isinstance(x, _data.Dataset)
        if dataset:
            # As Keras: a dataset brings its own labels and batches.
            if y is not None:
                raise ValueError("fit: y must not be given with a Dataset (it yields (x, y) pairs)")
            if batch_size is not None:
                raise ValueError("fit: batch_size must not be given with a Dataset; batch the dataset instead")
            if validation_split:
                raise ValueError("fit: validation_split is not supported with a Dataset; pass validation_data")
            self._build_for(x._x.shape)
            x = self._dataset_for_model(x, "fit")
        else:
            x, y = self._x(x, "x"), _float32(y, "y")
            self._build_for(x.shape)
        if isinstance(validation_data, _data.Dataset):
            validation_data = self._dataset_for_model(validation_data, "fit: validation_data")
        if isinstance(validation_data, (tuple, list)) and validation_data:
            validation_data = (self._x(validation_data[0], "validation x"),) + tuple(validation_data[1:])
        level = _verbosity(verbose)
        options = _fit_options(batch_size, epochs, initial_epoch, level, validation_data, validation_split,
                               validation_batch_size, shuffle, steps_per_epoch, seed, device)
        if dataset:
            if sample_weight is not None:
                raise ValueError("fit: sample_weight must not be given with a Dataset; it yields (x, y, sample_weight) "
                                 "(Dataset.from_tensor_slices((x, y, w)))")
            if class_weight is not None:  # as Keras: the dataset's labels give each row's weight
                if x._w is not None:
                    raise ValueError("You cannot `class_weight` and `sample_weight` at the same time.")
                x = x._with_sample_weight(_sample_weights(None, class_weight, x._y, "fit"))
        else:
            weights = _sample_weights(sample_weight, class_weight, y, "fit")
            if weights is not None:
                options.set_sample_weight(weights)
        params = {"verbose": level, "epochs": int(epochs),
                  "steps": _steps_per_epoch(x, options)}
        if options.initial_epoch >= options.epochs:  # Keras runs no epoch and returns an empty History
            self.history = _callbacks.History({}, [], params, self)
            return self.history
        callbacks = list(callbacks or [])
        native = [c._native for c in callbacks if isinstance(c, _callbacks._Native)]
        python = [c for c in callbacks if not isinstance(c, _callbacks._Native)]
        _callbacks.refuse_uncalled_hooks(python)
        hooks = _callbacks._PythonHooks(python, self, params)
        if not python and _short_fit(x, options, self._native):
            hooks = None  # one program call for the whole fit; see _short_fit
        self._sync_optimizer()
        self._live_learning_rate = options.device == "cpu"
        if dataset:
            history, epoch = self._native.fit_dataset(x._native, options, native, hooks, _python_stdout())
        else:
            history, epoch = self._native.fit(x, y, options, native, hooks, _python_stdout())
        _warnings.emit(self._native.warnings(), stacklevel=3)
        if self.optimizer.learning_rate != self._compiled_learning_rate:
            warnings.warn("optimizer.learning_rate was changed during a CUDA fit; onefit applies it from the next "
                          "fit (the CUDA fit reads it when it starts; the CPU fit applies it from its next step)",
                          _warnings.OnefitWarning, stacklevel=2)
        history = dict(history)
        for key, values in (hooks.added if hooks else {}).items():
            history.setdefault(key, values)
        self.history = _callbacks.History(history, list(epoch), params, self)
        return self.history

    def _sync_optimizer(self):
        """What Keras users change on model.optimizer after compile reaches the compiled program:
        another optimizer assigned to it starts with fresh state (as a new Keras optimizer does),
        a new learning_rate keeps the state. Returns the learning rate the fit starts with."""
        if self.optimizer is not self._compiled[0]:
            self.optimizer = _optimizers.get(self.optimizer)
            self._compiled = (self.optimizer,) + self._compiled[1:]
            self._compile_native()
        learning_rate = self.optimizer.learning_rate
        if learning_rate != self._compiled_learning_rate:
            self._native.set_learning_rate(float(learning_rate))
            self._compiled_learning_rate = learning_rate
        return learning_rate

    def _apply_learning_rate_now(self):
        """Called after each epoch's callbacks: a learning rate they set on model.optimizer reaches
        the running CPU fit from its next step, as in Keras (the CPU step reads the compiled
        optimizer's rate at every step; the CUDA fit copies it when it starts)."""
        if not getattr(self, "_live_learning_rate", False) or self.optimizer is not self._compiled[0]:
            return
        learning_rate = self.optimizer.learning_rate
        if learning_rate != self._compiled_learning_rate:
            self._native.set_learning_rate(float(learning_rate))
            self._compiled_learning_rate = learning_rate

    @property
    def stop_training(self):
        return self._native.stop_training if self._native is not None else False

    @stop_training.setter
    def stop_training(self, value):
        self._require_built("stop_training").stop_training = bool(value)

    def evaluate(self, x=None, y=None, batch_size=None, verbose="auto", sample_weight=None, steps=None,
                 callbacks=None, return_dict=False):
        if self._compiled is None:
            raise RuntimeError("you must compile the model before evaluating it")
        if callbacks:
            raise ValueError("evaluate: callbacks are not supported by onefit (it evaluates in one call)")
        if isinstance(x, _data.Dataset):
            if y is not None or batch_size is not None:
                raise ValueError("evaluate: y and batch_size must not be given with a Dataset (it yields batches)")
            if sample_weight is not None:
                raise ValueError("evaluate: sample_weight must not be given with a Dataset; it yields (x, y, "
                                 "sample_weight)")
            x = self._dataset_for_model(x, "evaluate")
            x, y, sample_weight, batch_size = _dataset_arrays(x, steps, "evaluate")
        elif steps is not None:
            raise ValueError("evaluate: steps is for a Dataset; with arrays all rows are evaluated")
        y = _float32(y, "y")
        logs = self._require_built("evaluate").evaluate(self._x(x, "x"), y, 32 if batch_size is None else int(batch_size),
                                                        _sample_weights(sample_weight, None, y, "evaluate"))
        return self._keras_result(logs, return_dict)

    def _keras_result(self, logs, return_dict):
        """Logs as Keras's evaluate and *_on_batch return them: a dict, the loss alone, or the loss
        then the compiled metrics in order."""
        if return_dict:
            return dict(logs)
        names = ["loss"] + [k for k in self._compiled[2] if k in logs]
        names += sorted(k for k in logs if k not in names)
        return logs["loss"] if len(names) == 1 else [logs[k] for k in names]

    # ---- Keras's one-batch calls: each one program call on exactly the rows given ----
    def train_on_batch(self, x, y=None, sample_weight=None, class_weight=None, return_dict=False):
        """One optimizer step on exactly this batch, as Keras's train_on_batch: the loss and metrics
        returned are those of the step's forward pass (before its update), as Keras reports them;
        model.history is left as the last fit left it."""
        if isinstance(x, _data.Dataset):
            raise ValueError("train_on_batch takes arrays x and y, not a Dataset (use fit)")
        x = self._x(x, "x")
        if len(x) == 0:
            raise ValueError("train_on_batch: x has no rows")
        history = getattr(self, "history", None)
        try:
            logs = self.fit(x, y, batch_size=len(x), epochs=1, verbose=0, shuffle=False, sample_weight=sample_weight,
                            class_weight=class_weight).history
        finally:
            self.history = history
        return self._keras_result({key: values[-1] for key, values in logs.items()}, return_dict)

    def test_on_batch(self, x, y=None, sample_weight=None, return_dict=False):
        """The loss and metrics on exactly this batch, as Keras's test_on_batch."""
        x = self._x(x, "x")
        return self.evaluate(x, y, batch_size=max(len(x), 1), sample_weight=sample_weight, return_dict=return_dict)

    def predict_on_batch(self, x):
        """The model's outputs for exactly this batch, as Keras's predict_on_batch."""
        x = self._x(x, "x")
        return self.predict(x, batch_size=max(len(x), 1))

    def predict(self, x, batch_size=None, verbose="auto", steps=None, callbacks=None):
        if callbacks:
            raise ValueError("predict: callbacks are not supported by onefit (it predicts in one call)")
        if isinstance(x, _data.Dataset):
            if batch_size is not None:
                raise ValueError("predict: batch_size must not be given with a Dataset (it yields batches)")
            x = self._dataset_for_model(x, "predict")
            x, _, _, batch_size = _dataset_arrays(x, steps, "predict")
        elif steps is not None:
            raise ValueError("predict: steps is for a Dataset; with arrays all rows are predicted")
        return self._require_built("predict").predict(self._x(x, "x"), 32 if batch_size is None else int(batch_size))

    def __call__(self, x):
        return self.predict(x)

    # ---- weights and saving ----
    def get_weights(self):
        return self._require_built("get_weights").get_weights()

    def set_weights(self, weights):
        # Copied, as Keras assigns values: changing the arrays afterwards does not change the model.
        self._require_built("set_weights").set_weights([_float32(w, "weights").copy() for w in weights])

    def get_layer(self, name=None, index=None):
        """The layer with this name (or at this index), as Keras's get_layer."""
        if index is not None:
            return self.layers[index]
        for layer in self.layers:
            if layer.name == name:
                return layer
        raise ValueError(f"No such layer: {name}. Existing layers are: {[layer.name for layer in self.layers]}")

    def count_params(self):
        return self._require_built("count_params").count_params()

    def summary(self, print_fn=None):
        text = self._require_built("summary").summary()
        (print_fn or print)(text)

    @property
    def input_shape(self):
        return None if self._input_shape is None else (None,) + tuple(self._input_shape)

    @property
    def output_shape(self):
        return (None,) + tuple(self._require_built("output_shape").output_shape())

    def to_keras(self):
        """This model as a Keras 3 Sequential (onefit.keras.to_keras); needs Keras installed."""
        from onefit.keras.interop import to_keras

        return to_keras(self)

    def __repr__(self):
        return f"<onefit.keras.Sequential {self.name!r}: {', '.join(map(repr, self.layers))}>"


def _verbosity(verbose):
    # "auto" is 1, as in Keras. The live progress bar is for terminals; elsewhere (a notebook, a
    # file) 1 becomes one line per epoch.
    level = 1 if verbose == "auto" else int(verbose)
    if level == 1 and not _isatty(sys.stdout):
        level = 2
    return level


def _fit_options(batch_size, epochs, initial_epoch=0, verbose=0, validation_data=None, validation_split=0.0,
                 validation_batch_size=None, shuffle=True, steps_per_epoch=None, seed=None, device="cpu"):
    """fit's arguments as the C++ fit's options (also what onefit.explain runs)."""
    o = _onefit.FitOptions()
    if batch_size is not None:
        o.batch_size = _whole(batch_size, "batch_size", 1)
    o.epochs, o.initial_epoch = _whole(epochs, "epochs", 0), _whole(initial_epoch, "initial_epoch", 0)
    o.verbose, o.shuffle = int(verbose), bool(shuffle)
    if isinstance(validation_data, _data.Dataset):
        o.validation_dataset = validation_data._native
    elif validation_data is not None:
        if not isinstance(validation_data, (tuple, list)) or len(validation_data) not in (2, 3):
            raise ValueError("validation_data must be (x_val, y_val), [x_val, y_val] or a Dataset")
        if len(validation_data[0]) == 0:
            raise ValueError("validation_data has no rows; give some, or leave validation_data out")
        o.set_validation_data(_float32(validation_data[0], "validation x"),
                              _float32(validation_data[1], "validation y"))
        if len(validation_data) == 3 and validation_data[2] is not None:  # (x_val, y_val, val_sample_weight)
            o.set_validation_sample_weight(_sample_weights(validation_data[2], None, None, "validation_data"))
    elif validation_split:
        o.validation_split = float(validation_split)  # as Keras, validation_data overrides it
    if validation_batch_size is not None:
        o.validation_batch_size = _whole(validation_batch_size, "validation_batch_size", 1)
    if steps_per_epoch is not None:
        o.steps_per_epoch = _whole(steps_per_epoch, "steps_per_epoch", 1)
    if seed is not None:
        o.seed = _whole(seed, "seed", 0, 2**64 - 1)
    o.device = ("cuda" if _onefit.cuda_available() else "cpu") if device == "auto" else device
    return o


def _sample_weights(sample_weight, class_weight, y, what):
    """Keras's sample_weight (one per row), or the weights class_weight gives each row's class (its
    label, or the argmax of a one-hot row, rounded, as Keras's class_weight_to_sample_weights; a class
    not in the dict weighs 1); None for neither. Both at once is Keras's error."""
    import numpy as np

    if sample_weight is not None and class_weight is not None:
        raise ValueError("You cannot `class_weight` and `sample_weight` at the same time.")
    if class_weight is not None:
        if not isinstance(class_weight, dict):
            raise ValueError(f"{what}: class_weight must be a dict {{class index: weight}}, not {class_weight!r}")
        labels = np.asarray(y)
        if labels.ndim > 1:
            labels = np.argmax(labels, axis=-1) if labels.shape[-1] != 1 else labels[..., 0]
        labels = np.round(labels).astype(np.int64)
        sample_weight = np.array([float(class_weight.get(int(c), 1.0)) for c in labels], dtype=np.float32)
    if sample_weight is None:
        return None
    return _data._weights(sample_weight, "sample_weight")


def _whole(value, what, least, most=2**63 - 1):
    """An integer argument (Python's or NumPy's) in [least, most]; TypeError or ValueError naming it."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{what} must be an integer, got {value!r}")
    if not least <= value <= most:
        raise ValueError(f"{what} must be in [{least}, {most}], got {value}")
    return int(value)


def _steps_per_epoch(x, options):
    """History.params["steps"] as Keras reports it: batches per epoch (None when unknown)."""
    if options.steps_per_epoch > 0:
        return options.steps_per_epoch
    if isinstance(x, _data.Dataset):
        n = x.cardinality()
        return n if n >= 0 and x._native.is_batched() else None
    rows = int(len(x) * (1 - options.validation_split)) if options.validation_split else len(x)
    return math.ceil(rows / options.batch_size)


def _dataset_arrays(dataset, steps, what):
    """The rows of one pass over a batched dataset (the first `steps` batches): x, y, their sample
    weights (None: unweighted) and the batch size, for evaluate and predict."""
    if not dataset._native.is_batched():
        raise ValueError(f"{what}: batch the dataset first (dataset.batch(n)), as Keras needs")
    if steps is None and dataset.cardinality() < 0:
        raise ValueError(f"{what}: the dataset is infinite (repeat()); give steps=")
    index, sizes = dataset._rows(-1 if steps is None else int(steps))
    weights = None if dataset._w is None else dataset._w[index]
    return dataset._x[index], dataset._y[index], weights, max(sizes) if sizes else 1


def _short_fit(x, options, native):
    """True for a fit of at most ~20 M multiply-adds (milliseconds): with no Python callbacks it runs
    as one program call, and a Ctrl-C during it is raised as soon as it returns. Longer fits stop
    at every epoch end to look for Ctrl-C (~1 us each). A dataset's batches count as 1k rows.
    A convolution reuses its parameters at every output pixel, so its multiply-adds are not the
    parameter count: a model with one always stops at epoch ends."""
    if any(info["kind"] == "Conv2D" for info in native.layers):
        return False
    dataset = isinstance(x, _data.Dataset)
    rows_per_batch = (1024 if x._native.is_batched() else 1) if dataset else options.batch_size
    if options.steps_per_epoch > 0:
        rows = options.steps_per_epoch * rows_per_batch
    elif dataset:
        if x.cardinality() < 0:
            return False
        rows = x.cardinality() * rows_per_batch
    else:
        rows = len(x)
    epochs = max(options.epochs - options.initial_epoch, 1)
    return rows * epochs * native.count_params() <= 20_000_000


def _python_stdout():
    """True: fit writes through sys.stdout (a notebook, a file, a capture). False on a terminal,
    where fit writes to the terminal itself so that its progress bar can redraw in place."""
    if _isatty(sys.stdout) and getattr(sys.stdout, "fileno", None) is not None:
        try:
            if sys.stdout.fileno() == 1:
                sys.stdout.flush()
                return False
        except (OSError, ValueError):
            pass
    return True


def _isatty(stream):
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


from onefit.keras.functional import Model  # noqa: E402,F401  (keras.models.Model; it builds on Sequential)
