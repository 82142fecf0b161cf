"""keras.metrics' epoch-level ratio metrics as onefit computes them inside the compiled fit:
Precision, Recall, AUC (ROC and PR), R2Score, F1Score and FBetaScore. Each is a description (its
name, its Keras config); the model counts it over every batch of an epoch and logs the ratio, as
Keras's stateful metrics do. Keras's own metric objects are accepted too (compiled_names)."""


class Metric:
    _defaults = {}

    def __init__(self, name, **config):
        unsupported = {k: v for k, v in config.items() if v != self._defaults.get(k, v) or k not in self._defaults}
        if unsupported:
            raise ValueError(f"{type(self).__name__}: onefit computes it at Keras's defaults "
                             f"({', '.join(f'{k}={v!r}' for k, v in self._defaults.items())}), not "
                             f"{', '.join(f'{k}={v!r}' for k, v in unsupported.items())}")
        self.name = name or self._spec()
        self._config = {**self._defaults, **config}

    def _spec(self):
        raise NotImplementedError

    def get_config(self):
        return {"name": self.name, **self._config}

    def __repr__(self):
        return f"{type(self).__name__}(name={self.name!r})"


class Precision(Metric):
    """keras.metrics.Precision(): true positives / predicted positives, predictions above 0.5."""
    _defaults = {"thresholds": None, "top_k": None, "class_id": None}

    def __init__(self, thresholds=None, top_k=None, class_id=None, name=None, dtype=None):
        super().__init__(name, thresholds=_threshold(thresholds), top_k=top_k, class_id=class_id)

    def _spec(self):
        return "precision"


class Recall(Precision):
    """keras.metrics.Recall(): true positives / actual positives, predictions above 0.5."""

    def _spec(self):
        return "recall"


class AUC(Metric):
    """keras.metrics.AUC(num_thresholds=200, curve="ROC" or "PR"): the area under the curve over
    200 thresholds, summed by Keras's interpolation (Davis & Goadrich's for PR)."""
    _defaults = {"num_thresholds": 200, "summation_method": "interpolation", "multi_label": False,
                 "num_labels": None, "label_weights": None, "from_logits": False, "thresholds": None}

    def __init__(self, num_thresholds=200, curve="ROC", summation_method="interpolation", name=None, dtype=None,
                 thresholds=None, multi_label=False, num_labels=None, label_weights=None, from_logits=False):
        if str(curve).upper() not in ("ROC", "PR"):
            raise ValueError(f'AUC: curve must be "ROC" or "PR", not {curve!r}')
        self._curve = str(curve).upper()
        super().__init__(name or "auc", num_thresholds=num_thresholds, summation_method=str(summation_method).lower(),
                         multi_label=multi_label, num_labels=num_labels, label_weights=label_weights,
                         from_logits=from_logits, thresholds=thresholds)
        self._config["curve"] = self._curve

    def _spec(self):
        return "pr_auc" if self._curve == "PR" else "auc"


class R2Score(Metric):
    """keras.metrics.R2Score(): each output's coefficient of determination, averaged uniformly."""
    _defaults = {"class_aggregation": "uniform_average", "num_regressors": 0}

    def __init__(self, class_aggregation="uniform_average", num_regressors=0, name="r2_score", dtype=None):
        super().__init__(name, class_aggregation=class_aggregation, num_regressors=num_regressors)

    def _spec(self):
        return "r2_score"


class F1Score(Metric):
    """keras.metrics.F1Score(average="macro"|"micro"|"weighted", threshold=None): the harmonic mean
    of each class's precision and recall (threshold None: each row's largest prediction is its
    positive), averaged as Keras's. average=None (Keras's default: one value per class) is refused:
    onefit's logs hold one number per metric."""
    _defaults = {}

    def __init__(self, average=None, threshold=None, name="f1_score", dtype=None):
        if average not in ("micro", "macro", "weighted"):
            raise ValueError(f"F1Score: average={average!r} is not supported by onefit: Keras's default (None) gives "
                             "one value per class, which onefit's logs (one number per metric) do not hold; use "
                             'average="macro", "micro" or "weighted"')
        if threshold is not None and not (isinstance(threshold, float) and 0 < threshold <= 1):
            raise ValueError(f"F1Score: threshold must be a float in (0, 1], as Keras requires, not {threshold!r}")
        super().__init__(name or "f1_score")
        self._config = {"average": average, "threshold": threshold}

    def _spec(self):
        average, threshold = self._config["average"], self._config["threshold"]
        return f"f1_score({average})" if threshold is None else f"f1_score({average}, {threshold!r})"


class FBetaScore(Metric):
    """keras.metrics.FBetaScore(average="macro"|"micro"|"weighted", beta=1.0, threshold=None): each
    class's (1 + beta^2) precision recall / (beta^2 precision + recall), averaged as Keras's;
    average=None is refused as for F1Score."""
    _defaults = {}

    def __init__(self, average=None, beta=1.0, threshold=None, name="fbeta_score", dtype=None):
        if average not in ("micro", "macro", "weighted"):
            raise ValueError(f"FBetaScore: average={average!r} is not supported by onefit: Keras's default (None) gives "
                             "one value per class, which onefit's logs (one number per metric) do not hold; use "
                             'average="macro", "micro" or "weighted"')
        if not isinstance(beta, float) or not beta > 0:  # (Keras refuses an int too)
            raise ValueError(f"FBetaScore: beta must be a positive float, as Keras requires, not {beta!r}")
        if threshold is not None and not (isinstance(threshold, float) and 0 < threshold <= 1):
            raise ValueError(f"FBetaScore: threshold must be a float in (0, 1], as Keras requires, not {threshold!r}")
        super().__init__(name or "fbeta_score")
        self._config = {"average": average, "beta": float(beta), "threshold": threshold}

    def _spec(self):
        c = self._config
        return f"fbeta_score({c['average']}, {c['beta']!r}" + ("" if c["threshold"] is None else f", {c['threshold']!r}") + ")"


def _threshold(thresholds):
    return None if thresholds in (None, 0.5, [0.5], (0.5,)) else thresholds


# Keras's string identifiers of these classes (compile(metrics=["AUC"]) logs "auc").
_BY_STRING = {"F1Score": "f1_score", "AUC": "auc", "auc": "auc", "Precision": "precision", "precision": "precision", "Recall": "recall",
              "recall": "recall", "R2Score": "r2_score", "r2_score": "r2_score"}
_CLASSES = {"Precision": Precision, "Recall": Recall, "AUC": AUC, "R2Score": R2Score, "F1Score": F1Score,
            "FBetaScore": FBetaScore}


# The top-k accuracies' native words by Keras class ("top_k_categorical_accuracy(3)" is k=3).
TOP_K_WORDS = {"TopKCategoricalAccuracy": "top_k_categorical_accuracy",
               "SparseTopKCategoricalAccuracy": "sparse_top_k_categorical_accuracy"}


def metric_spec(metric):
    """The native metric string for a metric object (onefit's or Keras's, by its class and config):
    'spec', or 'key=spec' when its name is not the spec's own; None for other objects."""
    cls = _CLASSES.get(type(metric).__name__)
    if cls is None:
        return None
    if not isinstance(metric, Metric):  # a Keras object: its config through onefit's class, which checks it
        config = dict(metric.get_config())
        config.pop("dtype", None)
        metric = cls(**config)
    spec = metric._spec()
    return spec if metric.name == spec else f"{metric.name}={spec}"


def keras_metric(keras, native_name):
    """What Keras's compile takes for a native metric string ('pr=pr_auc': AUC(curve="PR", name="pr"))."""
    key, _, spec = native_name.rpartition("=")
    objects = {"precision": lambda name: keras.metrics.Precision(name=name),
               "recall": lambda name: keras.metrics.Recall(name=name),
               "auc": lambda name: keras.metrics.AUC(name=name),
               "pr_auc": lambda name: keras.metrics.AUC(curve="PR", name=name),
               "r2_score": lambda name: keras.metrics.R2Score(name=name)}
    if spec in objects:
        return objects[spec](key or ("auc" if spec == "pr_auc" else spec))
    if spec.startswith("f1_score(") and spec.endswith(")"):
        average, _, threshold = spec[len("f1_score("):-1].partition(",")
        return keras.metrics.F1Score(average=average, threshold=float(threshold) if threshold.strip() else None,
                                     name=key or "f1_score")
    for cls, word in TOP_K_WORDS.items():
        if spec.startswith(word + "(") and spec.endswith(")"):
            return getattr(keras.metrics, cls)(k=int(spec[len(word) + 1:-1]), name=key or word)
    if spec.startswith("fbeta_score(") and spec.endswith(")"):
        average, beta, *threshold = [part.strip() for part in spec[len("fbeta_score("):-1].split(",")]
        return keras.metrics.FBetaScore(average=average, beta=float(beta),
                                        threshold=float(threshold[0]) if threshold else None, name=key or "fbeta_score")
    return native_name


def compiled_names(metrics):
    """compile(metrics=[...]) as onefit's metric names: strings (Keras's aliases resolved), onefit's or
    Keras's metric objects (a ratio metric's spec, a top-k's k, else its name) and named functions."""
    names = []
    for m in metrics or []:
        if isinstance(m, str):
            names.append(_BY_STRING.get(m, m))
        elif metric_spec(m) is not None:  # a ratio metric (onefit's or Keras's object)
            names.append(metric_spec(m))
        elif isinstance(getattr(m, "name", None), str):  # a Keras metric object
            config = m.get_config() if callable(getattr(m, "get_config", None)) else {}
            top_k = TOP_K_WORDS.get(type(m).__name__)
            if top_k and config.get("k", 5) != 5:  # its k in the spec, its name the log key
                names.append(f"{m.name}={top_k}({int(config['k'])})")
            else:
                names.append(m.name)
        elif callable(m) and getattr(m, "__name__", None):
            names.append(m.__name__)
        else:
            raise ValueError(f"metrics are given by name ('accuracy', 'mae', 'mse'), not {m!r}")
    return names
