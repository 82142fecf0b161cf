"""keras.callbacks: a Callback base for your own epoch-end hooks, and EarlyStopping,
ModelCheckpoint and CSVLogger (onefit's C++ ones, with Keras 3's defaults and semantics)."""
from onefit import _onefit


class Callback:
    """Subclass and override on_train_begin / on_epoch_begin / on_epoch_end / on_train_end.
    self.model is the model being fitted; set self.model.stop_training = True to stop after
    this epoch, or self.model.optimizer.learning_rate to train on at another rate from the next
    step. (onefit calls callbacks at epoch boundaries only: a per-batch hook would stop the
    compiled program at every step, so fit refuses a callback that defines one.)"""

    def __init__(self):
        self.model = None
        self.params = {}

    def set_model(self, model):
        self.model = model

    def set_params(self, params):
        self.params = params

    def on_train_begin(self, logs=None):
        pass

    def on_epoch_begin(self, epoch, logs=None):
        pass

    def on_epoch_end(self, epoch, logs=None):
        pass

    def on_train_end(self, logs=None):
        pass


# Keras's hooks that onefit's fit never calls: it runs each epoch's batches and its validation pass
# as one compiled program, and calls Python only between epochs.
_UNCALLED_HOOKS = ("on_train_batch_begin", "on_train_batch_end", "on_batch_begin", "on_batch_end",
                   "on_test_begin", "on_test_end", "on_test_batch_begin", "on_test_batch_end")


def refuse_uncalled_hooks(callbacks):
    """A callback that defines a hook fit would not call is refused, naming the hook, rather than
    left uncalled without a word. Hooks defined by onefit's or Keras's own base classes (no-ops)
    do not count."""
    for c in callbacks:
        for cls in type(c).__mro__:
            if cls in (Callback, object) or cls.__module__.split(".")[0] == "keras":
                continue
            hook = next((h for h in _UNCALLED_HOOKS if h in vars(cls)), None)
            if hook:
                raise ValueError(f"fit: callback {type(c).__name__} defines {hook}, which onefit never calls: it runs "
                                 "each epoch as one compiled program and calls callbacks between epochs only "
                                 "(on_train_begin, on_epoch_begin, on_epoch_end, on_train_end); do the work in "
                                 "on_epoch_end")


class _Native(Callback):
    """A callback that runs inside onefit's C++ fit."""

    _native = None


class EarlyStopping(_Native):
    def __init__(self, monitor="val_loss", min_delta=0, patience=0, verbose=0, mode="auto", baseline=None,
                 restore_best_weights=False, start_from_epoch=0):
        super().__init__()
        self._native = _onefit.EarlyStopping(monitor, float(min_delta), int(patience), mode,
                                             bool(restore_best_weights), int(start_from_epoch), baseline)
        self._native.verbose = int(verbose)

    @property
    def stopped_epoch(self):
        return self._native.stopped_epoch

    @property
    def best_epoch(self):
        return self._native.best_epoch

    @property
    def wait(self):
        return self._native.wait


class ModelCheckpoint(_Native):
    """Saves the model as a folder (onefit's format, read by load_model) after each epoch, or
    when `monitor` improved with save_best_only. "{epoch}" / "{epoch:02d}" in filepath become the epoch."""

    def __init__(self, filepath, monitor="val_loss", verbose=0, save_best_only=False, save_weights_only=False,
                 mode="auto", save_freq="epoch"):
        super().__init__()
        if save_weights_only:
            raise ValueError("ModelCheckpoint: save_weights_only is not supported; onefit saves the whole model folder")
        if save_freq != "epoch":
            raise ValueError("ModelCheckpoint: onefit saves at epoch ends only (save_freq='epoch')")
        self._native = _onefit.ModelCheckpoint(str(filepath), monitor, bool(save_best_only), mode, int(verbose))


class CSVLogger(_Native):
    def __init__(self, filename, separator=",", append=False):
        super().__init__()
        self._native = _onefit.CSVLogger(str(filename), separator, bool(append))


class History(Callback):
    """What fit returns: .history (dict of per-epoch lists), .epoch, .params, .model."""

    def __init__(self, history=None, epoch=None, params=None, model=None):
        super().__init__()
        self.history = history or {}
        self.epoch = epoch or []
        self.params = params or {}
        self.model = model

    def __repr__(self):
        return f"History(epochs={len(self.epoch)}, keys={sorted(self.history)})"


class _PythonHooks:
    """The Python callbacks of one fit, called by the C++ fit (with the GIL) at epoch ends."""

    def __init__(self, callbacks, model, params):
        self.callbacks = callbacks
        self.model = model
        self.added = {}  # logs the callbacks added, per key: History keeps them, as Keras's (called last)
        for c in callbacks:
            c.set_model(model)
            c.set_params(params)

    def on_train_begin(self):
        for c in self.callbacks:
            c.on_train_begin({})

    def on_epoch_begin(self, epoch):
        for c in self.callbacks:
            c.on_epoch_begin(epoch, {})
        self.model._apply_learning_rate_now()

    def on_epoch_end(self, epoch, logs):
        given = set(logs)
        for c in self.callbacks:
            c.on_epoch_end(epoch, logs)
        self.model._apply_learning_rate_now()
        for key, value in logs.items():
            if key not in given:
                self.added.setdefault(key, []).append(value)

    def on_train_end(self, logs):
        for c in self.callbacks:
            c.on_train_end(logs)
