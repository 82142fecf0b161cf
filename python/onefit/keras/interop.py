"""from_keras / to_keras: a Keras 3 Sequential of the layers onefit.keras has (Dense, Dropout, the
image, sequence, normalization and activation layers, Embedding; channels last) becomes an
onefit model with the same layers, weights, optimizer, loss and metrics, and back. Keras is imported only by
to_keras (onefit itself never needs it); from_keras reads the model it is given."""
from onefit.keras import layers as _layers
from onefit.keras import metrics as _metric_objects
from onefit.keras import models as _models
from onefit.keras import regularizers as _regularizers

# What a Keras Dense may have that onefit's has not, with the value that means "none".
_DENSE_OFF = {"kernel_constraint": None, "bias_constraint": None, "lora_rank": None,
              "quantization_config": None}
# ... and a Conv2D (its config holds pairs as tuples or lists).
_CONV_OFF = dict(_DENSE_OFF, dilation_rate=(1, 1), groups=1)
# ... and a BatchNormalization.
_BATCH_NORMALIZATION_OFF = {"beta_regularizer": None, "gamma_regularizer": None, "beta_constraint": None,
                            "gamma_constraint": None, "synchronized": False, "renorm": False}


def from_keras(keras_model):
    """An onefit.keras model equal to `keras_model` (a built Keras Sequential, or a Functional model
    of one output and any inputs, of the layers onefit.keras has): same layers, graph, names and
    weights; compiled with its optimizer (and settings), loss and metrics when it is compiled."""
    if not hasattr(keras_model, "layers") or not hasattr(keras_model, "get_weights"):
        raise TypeError(f"from_keras takes a Keras Sequential or Functional model, not {type(keras_model).__name__}")
    if type(keras_model).__name__ not in ("Sequential", "Functional"):
        raise TypeError(f"from_keras: {keras_model.name!r} is a Keras {type(keras_model).__name__} model; onefit "
                        "builds Sequential and Functional models, not subclassed ones")
    try:
        input_shape = tuple(keras_model.input_shape)
    except (AttributeError, ValueError) as e:
        raise ValueError("from_keras: the Keras model is not built; start it with keras.Input(shape) "
                         f"or call build() ({e})") from None
    if type(keras_model).__name__ == "Functional":
        model = _functional(keras_model)
        # Keras orders a Functional model's weights its own way: each layer's, by name.
        model.set_weights([w for layer in model.layers for w in keras_model.get_layer(layer.name).get_weights()])
    else:
        model = _models.Sequential([_layers.Input(shape=input_shape[1:])], name=keras_model.name)
        for layer in keras_model.layers:
            model.add(_layer(layer))
        model.set_weights(keras_model.get_weights())
    if getattr(keras_model, "optimizer", None) is not None and getattr(keras_model, "loss", None) is not None:
        model.compile(optimizer=keras_model.optimizer, loss=keras_model.loss, metrics=_metrics(keras_model))
    return model


def _functional(keras_model):
    """The onefit.keras.Model of a Keras Functional model: each layer called on its twins' tensors."""
    if len(keras_model.outputs) != 1:
        raise ValueError(f"from_keras: {keras_model.name!r} has {len(keras_model.outputs)} outputs; onefit's "
                         "models give one output")
    def key(tensor):  # a tensor is its layer's call (node) number, as Keras's history names it
        return tensor._keras_history.operation.name, tensor._keras_history.node_index

    tensors = {}
    sources = []
    for tensor in keras_model.inputs:  # (in the model's input order)
        name = tensor._keras_history.operation.name
        tensors[key(tensor)] = _layers.Input(shape=tuple(tensor.shape[1:]), name=name)
        sources.append(tensors[key(tensor)])
    # Each call once its inputs are made: a shared layer (called on several tensors) is one onefit
    # layer called as often, and its later call may read a layer Keras lists after it.
    pending = [(layer, k, node) for layer in keras_model.layers if type(layer).__name__ != "InputLayer"
               for k, node in enumerate(layer._inbound_nodes)]
    made = {}
    while True:
        ready = next(((layer, k, node) for layer, k, node in pending
                      if all(key(t) in tensors for t in node.input_tensors)), None)
        if ready is None:
            break
        layer, k, node = ready
        pending.remove(ready)
        if layer.name not in made:
            made[layer.name] = _layer(layer)
        inputs = [tensors[key(t)] for t in node.input_tensors]
        tensors[(layer.name, k)] = made[layer.name](inputs if len(inputs) > 1 else inputs[0])
    output = tensors.get(key(keras_model.outputs[0]))
    if output is None:  # (calls outside this model, on other tensors, are left out above)
        raise ValueError(f"from_keras: {keras_model.name!r}'s output depends on a layer call onefit cannot place")
    return _models.Model(sources if len(sources) > 1 else sources[0], output, name=keras_model.name)


def _layer(layer):
    kind, config = type(layer).__name__, layer.get_config()
    where = f"from_keras: layer {layer.name!r} ({kind})"
    if not config.get("trainable", True):
        raise TypeError(f"{where} is frozen (trainable=False); onefit trains every layer")
    if config.get("data_format", "channels_last") != "channels_last":
        raise TypeError(f"{where}: data_format {config['data_format']!r} is not supported by onefit "
                        "(channels last only)")
    if kind == "Dense":
        _refuse_on(config, _DENSE_OFF, where)
        return _layers.Dense(int(config["units"]), activation=_activation(config, where),
                             use_bias=bool(config.get("use_bias", True)), name=layer.name,
                             **_regularizers_of(config, where))
    if kind == "Dropout":
        if config.get("noise_shape") is not None:
            raise TypeError(f"{where}: noise_shape is not supported by onefit")
        return _layers.Dropout(float(config["rate"]), name=layer.name)
    if kind == "Conv2D":
        _refuse_on(config, _CONV_OFF, where)
        return _layers.Conv2D(int(config["filters"]), tuple(config["kernel_size"]), strides=tuple(config["strides"]),
                              padding=config["padding"], activation=_activation(config, where),
                              use_bias=bool(config.get("use_bias", True)), name=layer.name,
                              **_regularizers_of(config, where))
    if kind in ("MaxPooling2D", "AveragePooling2D"):
        strides = config.get("strides")
        return _layers.LAYERS[kind](tuple(config["pool_size"]), strides=None if strides is None else tuple(strides),
                                    padding=config["padding"], name=layer.name)
    if kind == "GlobalAveragePooling2D":
        if config.get("keepdims"):
            raise TypeError(f"{where}: keepdims=True is not supported by onefit")
        return _layers.GlobalAveragePooling2D(name=layer.name)
    if kind == "Flatten":
        return _layers.Flatten(name=layer.name)
    if kind == "Reshape":
        return _layers.Reshape(tuple(config["target_shape"]), name=layer.name)
    if kind == "BatchNormalization":
        _refuse_on(config, _BATCH_NORMALIZATION_OFF, where)
        if config.get("axis", -1) not in (-1, [-1], (-1,), len(layer.input.shape) - 1):
            raise TypeError(f"{where}: axis {config['axis']!r} is not supported by onefit (the last axis only)")
        return _layers.BatchNormalization(momentum=float(config["momentum"]), epsilon=float(config["epsilon"]),
                                          center=bool(config["center"]), scale=bool(config["scale"]), name=layer.name)
    if kind in _layers.LAYERS:  # every other kind: its class takes Keras's config, refusing what it lacks
        config = {k: v for k, v in config.items() if k not in ("name", "trainable", "dtype")}
        try:
            return _layers.LAYERS[kind](**config, name=layer.name)
        except (TypeError, ValueError) as e:
            raise TypeError(f"{where}: {e}") from None
    raise TypeError(f"{where}: onefit has the layers {', '.join(_layers.LAYERS)} only")


def _regularizers_of(config, where):
    try:
        return {key: _regularizers.get(config.get(key))
                for key in ("kernel_regularizer", "bias_regularizer", "activity_regularizer")}
    except ValueError as e:
        raise TypeError(f"{where}: {e}") from None


def _keras_regularizer(k, value):
    """Keras's regularizer object for a native argument ("l1_l2(l1=..., l2=...)"), or None."""
    r = _regularizers.get(value)
    return None if r is None else k.regularizers.L1L2(l1=r.l1, l2=r.l2)


def _refuse_on(config, off, where):
    for key, none in off.items():
        value = config.get(key, none)
        if (tuple(value) if isinstance(value, list) else value) != none:
            raise TypeError(f"{where}: {key} is not supported by onefit")


def _activation(config, where):
    activation = config.get("activation") or "linear"
    if not isinstance(activation, str):
        raise TypeError(f"{where}: activation {activation!r} is not one onefit knows by name")
    return activation


def _metrics(keras_model):
    # Keras 3 keeps compile()'s arguments in _compile_config; compile() names metric objects.
    compile_config = getattr(keras_model, "_compile_config", None)
    config = getattr(compile_config, "config", {}) if compile_config is not None else {}
    for name in ("loss_weights", "weighted_metrics"):  # refused, never dropped
        if config.get(name) is not None:
            raise ValueError(f"from_keras: compile's {name} is not supported by onefit")
    metrics = config.get("metrics")
    if isinstance(metrics, dict):
        raise ValueError("from_keras: per-output metrics are not supported by onefit")
    return list(metrics or [])


def _keras_layer(k, layer):
    """The Keras layer (from the module `k`, keras.layers) equal to an onefit.keras layer."""
    kind = type(layer).__name__
    keras = __import__("keras")
    regularizers = {key: _keras_regularizer(keras, getattr(layer, key))
                    for key in ("kernel_regularizer", "bias_regularizer", "activity_regularizer")
                    if hasattr(layer, key)}
    if kind == "Dense":
        return k.Dense(layer.units, activation=layer.activation, use_bias=layer.use_bias, name=layer.name,
                       **regularizers)
    if kind == "Dropout":
        return k.Dropout(layer.rate, name=layer.name)
    if kind == "Conv2D":
        return k.Conv2D(layer.filters, layer.kernel_size, strides=layer.strides, padding=layer.padding,
                        activation=layer.activation, use_bias=layer.use_bias, name=layer.name, **regularizers)
    if kind in ("MaxPooling2D", "AveragePooling2D"):
        return getattr(k, kind)(layer.pool_size, strides=layer.strides, padding=layer.padding, name=layer.name)
    if kind == "Reshape":
        return k.Reshape(layer.target_shape, name=layer.name)
    if kind == "BatchNormalization":
        return k.BatchNormalization(momentum=layer.momentum, epsilon=layer.epsilon, center=layer.center,
                                    scale=layer.scale, name=layer.name)
    # Every other kind: its declared arguments are Keras's names (GlobalAveragePooling2D, Embedding, ...).
    arguments = {key: _keras_regularizer(keras, value) if key.endswith("_regularizer") else value
                 for key, value in layer._arguments().items()}
    return getattr(k, kind)(**arguments, name=layer.name)


# onefit's native loss names and optimizer names -> Keras 3's classes.
_KERAS_LOSSES = {"mean_squared_error": "MeanSquaredError", "mean_absolute_error": "MeanAbsoluteError",
                 "log_cosh": "LogCosh", "huber": "Huber", "binary_crossentropy": "BinaryCrossentropy",
                 "categorical_crossentropy": "CategoricalCrossentropy",
                 "sparse_categorical_crossentropy": "SparseCategoricalCrossentropy"}
_KERAS_OPTIMIZERS = {"sgd": "SGD", "adam": "Adam", "adamw": "AdamW", "rmsprop": "RMSprop", "adagrad": "Adagrad"}


def to_keras(model):
    """A Keras 3 Sequential equal to `model` (an onefit.keras.Sequential): same layers, names and
    weights; compiled with the same optimizer settings, loss and metrics when `model` is. Needs
    Keras (and a backend) installed."""
    try:
        import keras
    except ImportError as e:
        raise ImportError(f"to_keras needs Keras 3 and a backend (pip install keras jax): {e}") from None
    model._require_built("to_keras")
    names = getattr(model, "_input_names", None) or [None]
    sources = [keras.Input(shape=shape, name=name)
               for shape, name in zip(model._input_shapes or [model._input_shape], names)]
    source = sources[0]
    keras_of = {id(layer): _keras_layer(keras.layers, layer) for layer in model.layers}
    keras_layers = [keras_of[id(layer)] for layer in model.layers]
    if any(model._layer_inputs()) or len(model._call_layers()) != len(model.layers):
        outputs = []  # a Functional model: Keras's, called on the same tensors (a shared layer again)
        for layer, inputs in zip(model._call_layers(), model._layer_inputs()):
            tensors = [sources[-1 - i] if i < 0 else outputs[i] for i in inputs] or [outputs[-1] if outputs else source]
            outputs.append(keras_of[id(layer)](tensors if len(tensors) > 1 else tensors[0]))
        out = keras.Model(sources if len(sources) > 1 else source, outputs[-1], name=model.name)
        # Keras orders a Functional model's weights its own way: each layer's are set on it (in
        # onefit's order, each layer takes as many arrays as its Keras twin has).
        flat, at = model.get_weights(), 0
        for layer in keras_layers:
            n = len(layer.get_weights())
            layer.set_weights(flat[at:at + n])
            at += n
    else:
        out = keras.Sequential([source] + keras_layers, name=model.name)
        out.set_weights(model.get_weights())
    if model._compiled is not None:
        optimizer, loss, metrics = model._compiled
        settings = {k: getattr(optimizer, k) for k in optimizer._defaults}
        settings.update({c: getattr(optimizer, c) for c in ("clipnorm", "clipvalue", "global_clipnorm")})
        if "weight_decay" not in optimizer._defaults:
            settings["weight_decay"] = optimizer.weight_decay
        learning_rate = optimizer.learning_rate
        if optimizer._schedule is not None:  # Keras's own schedule, from the same arguments
            schedule = optimizer._schedule
            learning_rate = getattr(keras.optimizers.schedules, type(schedule).__name__)(**schedule.get_config())
        keras_optimizer = getattr(keras.optimizers, _KERAS_OPTIMIZERS[optimizer._name])(
            learning_rate=learning_rate, **settings)
        loss_class = getattr(keras.losses, _KERAS_LOSSES[loss.name])
        loss_args = {"delta": loss.delta} if loss.name == "huber" else {}
        if "crossentropy" in loss.name:
            loss_args["from_logits"] = loss.from_logits
        if loss.label_smoothing:
            loss_args["label_smoothing"] = loss.label_smoothing
        out.compile(optimizer=keras_optimizer, loss=loss_class(**loss_args),
                    metrics=[_metric_objects.keras_metric(keras, name) for name in metrics])
    return out
