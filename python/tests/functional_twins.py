"""A Functional model built twice from one net function: in Keras 3 (from its seed) and in
onefit.keras with Keras's weights copied layer by layer by name; both compiled with Adam."""
import os

os.environ.setdefault("KERAS_BACKEND", "jax")
import keras as real_keras  # noqa: E402  (after choosing its backend)

import onefit.keras as keras  # noqa: E402
from onefit.keras import layers  # noqa: E402


def functional_twins(net, inputs, seed, learning_rate, loss):
    """`net(layers_module, *input_tensors)` gives the output; `inputs` is [(shape, name)]."""
    real_keras.utils.set_random_seed(seed)
    sources = [real_keras.Input(shape, name=name) for shape, name in inputs]
    k = real_keras.Model(sources, net(real_keras.layers, *sources))
    k.compile(real_keras.optimizers.Adam(learning_rate), loss)
    ours = [keras.Input(shape=shape, name=name) for shape, name in inputs]
    m = keras.Model(ours, net(layers, *ours))
    m.set_weights([w for layer in m.layers for w in k.get_layer(layer.name).get_weights()])
    m.compile(keras.optimizers.Adam(learning_rate), loss)
    return k, m
