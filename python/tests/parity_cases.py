"""The Keras parity grid: every optimizer onefit has (and its variants) with every loss, on small
deterministic data, 4 epochs, unshuffled, from onefit's initial weights. keras_reference.py
stores Keras 3's per-epoch losses for each case; test_keras_parity.py checks onefit's against them."""
import numpy as np

OPTIMIZERS = {
    "sgd": ("SGD", {"learning_rate": 0.05}),
    "sgd_nesterov": ("SGD", {"learning_rate": 0.05, "momentum": 0.9, "nesterov": True}),
    "adam": ("Adam", {"learning_rate": 0.01}),
    "adam_amsgrad": ("Adam", {"learning_rate": 0.01, "amsgrad": True}),
    "adamw": ("AdamW", {"learning_rate": 0.01, "weight_decay": 0.05}),
    "rmsprop": ("RMSprop", {"learning_rate": 0.005}),
    "rmsprop_centered_momentum": ("RMSprop", {"learning_rate": 0.005, "momentum": 0.5, "centered": True}),
    "adagrad": ("Adagrad", {"learning_rate": 0.05}),
}

# loss name -> (output units, output activation, labels kind, loss kwargs)
LOSSES = {
    "mean_squared_error": (2, "linear", "values", {}),
    "mean_absolute_error": (2, "linear", "values", {}),
    "huber": (2, "linear", "values", {}),
    "log_cosh": (2, "linear", "values", {}),
    "binary_crossentropy": (1, "sigmoid", "binary", {}),
    "binary_crossentropy_logits": (1, "linear", "binary", {"from_logits": True}),
    "categorical_crossentropy": (3, "softmax", "onehot", {}),
    "sparse_categorical_crossentropy": (3, "softmax", "classes", {}),
    "sparse_categorical_crossentropy_logits": (3, "linear", "classes", {"from_logits": True}),
}

EPOCHS, BATCH = 4, 16


def data(kind):
    i = np.arange(96, dtype=np.float64)
    x = np.stack([np.sin(i * 0.7 + c) + 0.1 * c for c in range(5)], axis=1).astype(np.float32)
    k = (i * 7 % 3).astype(np.int64)
    if kind == "values":
        y = np.stack([np.cos(i * 0.3), 0.5 * np.sin(i * 0.11)], axis=1).astype(np.float32)
    elif kind == "binary":
        y = (k == 1).astype(np.float32)[:, None]
    elif kind == "onehot":
        y = np.eye(3, dtype=np.float32)[k]
    else:
        y = k
    x[:, 0] += k  # something to learn
    return x, y


def loss_name(case):
    return case.replace("_logits", "")


_LOSS_CLASSES = {"mean_squared_error": "MeanSquaredError", "mean_absolute_error": "MeanAbsoluteError",
                 "huber": "Huber", "log_cosh": "LogCosh", "binary_crossentropy": "BinaryCrossentropy",
                 "categorical_crossentropy": "CategoricalCrossentropy",
                 "sparse_categorical_crossentropy": "SparseCategoricalCrossentropy"}


def loss_object(keras_module, case):
    """The case's loss as `keras_module` (Keras itself or onefit.keras) spells it."""
    return getattr(keras_module.losses, _LOSS_CLASSES[loss_name(case)])(**LOSSES[case][3])


def optimizer_object(keras_module, case):
    name, args = OPTIMIZERS[case]
    return getattr(keras_module.optimizers, name)(**args)
