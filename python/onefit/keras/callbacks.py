"""keras.callbacks: a Callback base for your own epoch-end hooks, EarlyStopping, ModelCheckpoint
and CSVLogger (onefit's C++ ones, with Keras 3's defaults and semantics), LearningRateScheduler
and ReduceLROnPlateau (Keras 3's rules, between epochs; the rate they set reaches the running CPU
fit from its next step), and TensorBoard (epoch scalars, event files written without TensorFlow)."""
import os
import sys
import warnings

import numpy as np

from onefit import _onefit
from onefit.keras import event_files as _event_files


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
    """Saves the model after each epoch, or when `monitor` improved with save_best_only: a Keras 3
    archive for a filepath ending in .keras (keras.saving.load_model reads it), else onefit's folder;
    with save_weights_only, the weights alone as Keras 3's .weights.h5 (the filepath must end in it).
    "{epoch}" / "{epoch:02d}" in filepath become the epoch."""

    def __init__(self, filepath, monitor="val_loss", verbose=0, save_best_only=False, save_weights_only=False,
                 mode="auto", save_freq="epoch"):
        super().__init__()
        if save_freq != "epoch":
            raise ValueError("ModelCheckpoint: onefit saves at epoch ends only (save_freq='epoch')")
        self._native = _onefit.ModelCheckpoint(str(filepath), monitor, bool(save_best_only), mode, int(verbose),
                                               bool(save_weights_only))


class CSVLogger(_Native):
    def __init__(self, filename, separator=",", append=False):
        super().__init__()
        self._native = _onefit.CSVLogger(str(filename), separator, bool(append))


class LearningRateScheduler(Callback):
    """keras.callbacks.LearningRateScheduler(schedule, verbose=0): at each epoch's start the rate is
    schedule(epoch, learning_rate) (or schedule(epoch), Keras's old form), a float; each epoch's logs
    get the rate it trained at as "learning_rate"."""

    def __init__(self, schedule, verbose=0):
        super().__init__()
        self.schedule = schedule
        self.verbose = verbose

    def on_epoch_begin(self, epoch, logs=None):
        optimizer = self.model.optimizer
        try:  # Keras's order: the two-argument form, then the old one-argument form on a TypeError
            learning_rate = self.schedule(epoch, float(optimizer.learning_rate))
        except TypeError:
            learning_rate = self.schedule(epoch)
        if not isinstance(learning_rate, (float, np.float32, np.float64)):
            raise ValueError(f"The output of the `schedule` function should be a float. Got: {learning_rate}")
        optimizer.learning_rate = float(learning_rate)
        if self.verbose > 0:
            print(f"\nEpoch {epoch + 1}: LearningRateScheduler setting learning rate to {learning_rate}.",
                  file=sys.stdout)

    def on_epoch_end(self, epoch, logs=None):
        if logs is not None:
            logs["learning_rate"] = _float32_value(self.model.optimizer.learning_rate)


class ReduceLROnPlateau(Callback):
    """keras.callbacks.ReduceLROnPlateau(monitor="val_loss", factor=0.1, patience=10, verbose=0,
    mode="auto", min_delta=1e-4, cooldown=0, min_lr=0.0): the rate times `factor` (not below min_lr)
    after `patience` epochs without an improvement of more than min_delta, then `cooldown` epochs
    of rest; Keras 3's rules, and each epoch's logs get "learning_rate"."""

    def __init__(self, monitor="val_loss", factor=0.1, patience=10, verbose=0, mode="auto", min_delta=1e-4,
                 cooldown=0, min_lr=0.0, **kwargs):
        super().__init__()
        if kwargs:
            raise TypeError(f"ReduceLROnPlateau: unrecognized keyword argument(s) {', '.join(sorted(kwargs))}")
        if factor >= 1.0:
            raise ValueError(f"ReduceLROnPlateau does not support a factor >= 1.0. Received factor={factor}")
        if mode not in ("auto", "min", "max"):
            warnings.warn(f"ReduceLROnPlateau mode '{mode}' is unknown, fallback to auto mode.", stacklevel=2)
            mode = "auto"
        self.monitor, self.mode, self.min_delta = monitor, mode, abs(min_delta)
        self.factor, self.min_lr, self.patience, self.verbose, self.cooldown = factor, min_lr, patience, verbose, cooldown
        self._reset()

    def _reset(self):
        self.best = None
        self.cooldown_counter = 0
        self.wait = 0

    def _lower_is_better(self):
        if self.mode != "auto":
            return self.mode == "min"
        name = self.monitor.removeprefix("val_")
        if name in ("loss", "mae", "mse", "mean_absolute_error", "mean_squared_error"):
            return True
        if name in ("accuracy", "acc", "binary_accuracy", "categorical_accuracy", "sparse_categorical_accuracy"):
            return False
        raise ValueError(f"ReduceLROnPlateau callback received monitor={self.monitor}, but Keras isn't able to "
                         "automatically determine whether that metric should be maximized or minimized. Pass "
                         "`mode='max'` in order to monitor based on the highest metric value, or pass `mode='min'` "
                         "in order to use the lowest value.")

    def on_train_begin(self, logs=None):
        self._reset()
        self._lower = self._lower_is_better()

    def on_epoch_end(self, epoch, logs=None):
        logs = {} if logs is None else logs
        optimizer = self.model.optimizer
        logs["learning_rate"] = _float32_value(optimizer.learning_rate)
        current = logs.get(self.monitor)
        if current is None:
            warnings.warn(f"Learning rate reduction is conditioned on metric `{self.monitor}` which is not "
                          f"available. Available metrics are: {','.join(logs)}.", stacklevel=2)
            return
        if self.cooldown_counter > 0:
            self.cooldown_counter -= 1
            self.wait = 0
        delta = -self.min_delta if self._lower else self.min_delta
        improved = self.best is None or (current - delta < self.best if self._lower else current - delta > self.best)
        if improved:
            self.best = current
            self.wait = 0
        elif self.cooldown_counter <= 0:
            self.wait += 1
            if self.wait >= self.patience:
                old = float(optimizer.learning_rate)
                if old > np.float32(self.min_lr):
                    new = max(old * self.factor, self.min_lr)
                    optimizer.learning_rate = new
                    if self.verbose > 0:
                        print(f"\nEpoch {epoch + 1}: ReduceLROnPlateau reducing learning rate to {new}.",
                              file=sys.stdout)
                    self.cooldown_counter = self.cooldown
                    self.wait = 0


class TensorBoard(Callback):
    """keras.callbacks.TensorBoard(log_dir="logs", update_freq="epoch"): each epoch's logs as scalar
    curves TensorBoard reads, as Keras 3 writes them: log_dir/train gets "epoch_<name>" for the
    training logs and the learning rate ("epoch_learning_rate"), log_dir/validation "epoch_<name>"
    for the "val_" ones, at step = epoch. Written by onefit itself (no TensorFlow needed). What it
    cannot do is refused by name: per-batch curves (update_freq), weight histograms, images,
    embeddings and profiling; write_graph is accepted and writes no graph (onefit's program is not a
    TensorFlow graph)."""

    def __init__(self, log_dir="logs", histogram_freq=0, write_graph=True, write_images=False,
                 write_steps_per_second=False, update_freq="epoch", profile_batch=0, embeddings_freq=0,
                 embeddings_metadata=None):
        super().__init__()
        for name, value, off in (("histogram_freq", histogram_freq, 0), ("write_images", write_images, False),
                                 ("write_steps_per_second", write_steps_per_second, False),
                                 ("update_freq", update_freq, "epoch"), ("profile_batch", profile_batch, 0),
                                 ("embeddings_freq", embeddings_freq, 0), ("embeddings_metadata", embeddings_metadata, None)):
            if value != off:
                raise ValueError(f"TensorBoard {name}={value!r} is not supported by onefit (only {off!r}): it calls "
                                 "callbacks between epochs and writes epoch scalars")
        self.log_dir = os.fspath(log_dir)
        self.write_graph = write_graph
        self._writers = {}

    def _writer(self, which):
        if which not in self._writers:
            self._writers[which] = _event_files.EventFileWriter(os.path.join(self.log_dir, which))
        return self._writers[which]

    def on_epoch_end(self, epoch, logs=None):
        logs = dict(logs or {})
        optimizer = getattr(self.model, "optimizer", None)
        if optimizer is not None and "learning_rate" not in logs:
            logs["learning_rate"] = float(optimizer.learning_rate)
        for name, value in logs.items():
            which, tag = ("validation", name[4:]) if name.startswith("val_") else ("train", name)
            self._writer(which).scalar("epoch_" + tag, value, epoch)
        for writer in self._writers.values():
            writer.flush()

    def on_train_end(self, logs=None):
        for writer in self._writers.values():
            writer.close()
        self._writers = {}


def _float32_value(learning_rate):
    """The rate as Keras logs it: its float32 variable's value, widened."""
    return float(np.float32(float(learning_rate)))


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
