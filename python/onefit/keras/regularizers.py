"""keras.regularizers: L1, L2 and L1L2 (and l1, l2, l1_l2), as a layer's kernel_regularizer,
bias_regularizer or an Embedding's embeddings_regularizer. The compiled fit adds l1 * sum(|w|) +
l2 * sum(w^2) to every batch's loss (loss and val_loss show it, as Keras's do) and its gradient to
the weights'."""


class Regularizer:
    l1 = l2 = 0.0

    def __call__(self, x):
        import numpy as np

        x = np.asarray(x, dtype=np.float64)
        return float(self.l1 * np.abs(x).sum() + self.l2 * np.square(x).sum())

    def get_config(self):
        return {"l1": self.l1, "l2": self.l2}

    @classmethod
    def from_config(cls, config):
        return cls(**config)

    def __repr__(self):
        return f"{type(self).__name__}({', '.join(f'{k}={v}' for k, v in self.get_config().items())})"


def _factor(value, what):
    if value is None:
        return 0.0
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not value >= 0:
        raise ValueError(f"{what} must be a non-negative number, not {value!r}")
    return float(value)


class L1(Regularizer):
    def __init__(self, l1=0.01):
        self.l1 = _factor(l1, "L1: l1")

    def get_config(self):
        return {"l1": self.l1}


class L2(Regularizer):
    def __init__(self, l2=0.01):
        self.l2 = _factor(l2, "L2: l2")

    def get_config(self):
        return {"l2": self.l2}


class L1L2(Regularizer):
    def __init__(self, l1=0.0, l2=0.0):
        self.l1, self.l2 = _factor(l1, "L1L2: l1"), _factor(l2, "L1L2: l2")


l1, l2 = L1, L2


def l1_l2(l1=0.01, l2=0.01):  # Keras's function: both 0.01 by default (its class: both 0)
    return L1L2(l1=l1, l2=l2)


_NAMES = {"l1": L1, "l2": L2, "l1_l2": l1_l2, "L1": L1, "L2": L2, "L1L2": L1L2}


def get(identifier):
    """Ours from None, a name ("l2"), one of ours, a Keras regularizer object or its serialised dict;
    a regularizer onefit has not (a custom one, OrthogonalRegularizer) is a ValueError."""
    if identifier is None or isinstance(identifier, Regularizer):
        return identifier
    if isinstance(identifier, str):
        if "(" in identifier:  # the native form: "l2(0.0001)", "l1_l2(l1=..., l2=...)"
            return _from_text(identifier)
        if identifier not in _NAMES:
            raise ValueError(f"unknown regularizer {identifier!r} (onefit has l1, l2 and l1_l2)")
        return _NAMES[identifier]()
    if isinstance(identifier, dict) and "class_name" in identifier:
        name, config = identifier["class_name"], identifier.get("config") or {}
    elif callable(getattr(identifier, "get_config", None)):
        name, config = type(identifier).__name__, identifier.get_config()
    else:
        raise ValueError(f"a regularizer is l1, l2, l1_l2, a keras.regularizers object or None, not {identifier!r}")
    if name not in ("L1", "L2", "L1L2"):
        raise ValueError(f"regularizer {name} is not supported by onefit (it has L1, L2 and L1L2)")
    return _NAMES[name](**{k: v for k, v in config.items() if k in ("l1", "l2")})


def _text(identifier):
    """The native form of a regularizer argument ("l1_l2(l1=..., l2=...)"), or None."""
    r = get(identifier)
    if r is None or (r.l1 == 0 and r.l2 == 0):
        return None
    return f"l1_l2(l1={r.l1!r}, l2={r.l2!r})"


def _from_text(text):
    """Ours from the native form (a saved model's argument)."""
    if not text:
        return None
    inside = text[text.index("(") + 1:-1]
    if text.startswith("l1_l2"):
        values = dict(item.split("=") for item in inside.replace(" ", "").split(","))
        return L1L2(l1=float(values.get("l1", 0)), l2=float(values.get("l2", 0)))
    value = float(inside.split("=")[-1])
    return L1(value) if text.startswith("l1(") else L2(value)
