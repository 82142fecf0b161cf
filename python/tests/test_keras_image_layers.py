"""onefit.keras's image layers (Conv2D, MaxPooling2D, AveragePooling2D, GlobalAveragePooling2D,
Flatten, Reshape) against Keras 3 itself (the JAX backend, installed by scripts/python-env.sh): given
Keras's initial weights, the same predictions and, after one SGD step on the whole batch, the same
weights (1e-5); Keras's parameter counts and weight layouts; images as (N, H, W, C), (N, H, W) and
flattened rows; save/load and from_keras/to_keras; Keras's argument errors."""
import os

import numpy as np
import pytest

os.environ.setdefault("KERAS_BACKEND", "jax")
import keras as real_keras  # noqa: E402  (after choosing its backend)

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")  # Keras 3.15 under NumPy 2 (its own code)

import onefit  # noqa: E402
import onefit.keras as keras  # noqa: E402
from onefit.keras import layers  # noqa: E402


def convnet(k):
    """The brief's small convnet from the layers module `k` (keras.layers of either library)."""
    return [k.Conv2D(4, 3, activation="relu", name="conv"), k.MaxPooling2D(name="pool"), k.Flatten(name="flat"),
            k.Dense(3, activation="softmax", name="out")]


def strided_net(k):
    """'same' padding with unequal strides and kernel, overhanging pooling windows, a Reshape back
    to an image and the global average: every argument a binding passes on."""
    return [k.Conv2D(3, (3, 2), strides=(2, 1), padding="same", activation="tanh"),
            k.MaxPooling2D(2, strides=1, padding="same"), k.AveragePooling2D((2, 3), strides=2, padding="same"),
            k.Flatten(), k.Reshape((-1, 3, 3)), k.Conv2D(2, 1, activation="elu", use_bias=False),
            k.GlobalAveragePooling2D(), k.Dense(2)]


def images(shape, n=6, seed=7):
    return np.random.default_rng(seed).uniform(-1, 1, (n,) + shape).astype(np.float32)


def keras_twin(make_layers, shape, loss):
    """A Keras model and the onefit model given its initial weights, both compiled with SGD(0.1)."""
    real_keras.utils.set_random_seed(1)
    k = real_keras.Sequential([real_keras.Input(shape)] + make_layers(real_keras.layers))
    k.compile(real_keras.optimizers.SGD(0.1), loss)
    m = keras.Sequential([keras.Input(shape=shape)] + make_layers(layers))
    m.set_weights(k.get_weights())
    m.compile(keras.optimizers.SGD(0.1), loss)
    return k, m


@pytest.mark.parametrize("make_layers, shape, loss", [(convnet, (8, 8, 1), "sparse_categorical_crossentropy"),
                                                      (strided_net, (7, 6, 2), "mse")])
def test_given_keras_weights_predicts_as_keras_and_takes_the_same_sgd_step(make_layers, shape, loss):
    x = images(shape)
    y = (np.arange(6) % 3).astype(np.float32) if loss != "mse" else images((2,), seed=8)
    k, m = keras_twin(make_layers, shape, loss)
    np.testing.assert_allclose(m.predict(x, verbose=0), k.predict(x, verbose=0), rtol=1e-5, atol=1e-6)
    k.train_on_batch(x, y)
    m.fit(x, y, batch_size=len(x), epochs=1, shuffle=False, verbose=0)
    after = m.get_weights()
    assert [w.shape for w in after] == [w.shape for w in k.get_weights()]
    for ours, theirs in zip(after, k.get_weights()):
        np.testing.assert_allclose(ours, theirs, rtol=1e-5, atol=1e-6)


def test_the_step_moves_every_weight_array():
    # The comparison above means something only if a step changes the weights.
    x, y = images((8, 8, 1)), (np.arange(6) % 3).astype(np.float32)
    _, m = keras_twin(convnet, (8, 8, 1), "sparse_categorical_crossentropy")
    before = m.get_weights()
    m.fit(x, y, batch_size=6, epochs=1, shuffle=False, verbose=0)
    for a, b in zip(before, m.get_weights()):
        assert not np.array_equal(a, b)


def test_summary_count_params_and_weight_layouts_are_keras_s():
    k, m = keras_twin(convnet, (8, 8, 1), "mse")
    assert m.count_params() == k.count_params() == 4 * 9 + 4 + (3 * 3 * 4) * 3 + 3
    assert [w.shape for w in m.get_weights()] == [(3, 3, 1, 4), (4,), (36, 3), (3,)]
    lines = []
    m.summary(print_fn=lines.append)
    text = "\n".join(lines)
    for expected in ("Conv2D", "(None, 6, 6, 4)", "MaxPooling2D", "(None, 3, 3, 4)", "Flatten", "(None, 36)",
                     f"Total params: {k.count_params()}"):
        assert expected in text
    assert m.input_shape == (None, 8, 8, 1) and m.output_shape == (None, 3)


def test_grayscale_and_flattened_images_are_the_same_samples():
    _, m = keras_twin(convnet, (8, 8, 1), "mse")
    x = images((8, 8, 1))
    expected = m.predict(x, verbose=0)
    np.testing.assert_array_equal(m.predict(x[..., 0], verbose=0), expected)
    np.testing.assert_array_equal(m.predict(x.reshape(6, -1), verbose=0), expected)
    # Without an input shape, (N, H, W) before a Conv2D builds the model for (H, W, 1).
    unbuilt = keras.Sequential(convnet(layers), seed=2)
    unbuilt.compile("sgd", "sparse_categorical_crossentropy")
    unbuilt.fit(x[..., 0], np.arange(6) % 3, epochs=1, verbose=0)
    assert unbuilt.input_shape == (None, 8, 8, 1)
    with pytest.raises(ValueError, match=r"\(None, 8, 8, 1\)"):
        m.predict(images((8, 7, 1)), verbose=0)


def test_fit_with_validation_data_and_a_dataset_of_images():
    x, y = images((8, 8, 1), n=12), (np.arange(12) % 3).astype(np.float32)
    _, a = keras_twin(convnet, (8, 8, 1), "sparse_categorical_crossentropy")
    _, b = keras_twin(convnet, (8, 8, 1), "sparse_categorical_crossentropy")
    history = a.fit(x, y, batch_size=4, epochs=2, shuffle=False, validation_data=(x[:6], y[:6]), verbose=0)
    assert len(history.history["val_loss"]) == 2
    b.fit(onefit.data.Dataset.from_tensor_slices((x, y)).batch(4), epochs=2, verbose=0)
    for wa, wb in zip(a.get_weights(), b.get_weights()):
        np.testing.assert_allclose(wa, wb, rtol=1e-6, atol=1e-7)
    assert a.evaluate(x, y, verbose=0) == pytest.approx(b.evaluate(x, y, verbose=0), rel=1e-6)


def test_save_and_load_model_keep_the_image_layers(tmp_path):
    x, y = images((7, 6, 2)), images((2,), seed=8)
    _, m = keras_twin(strided_net, (7, 6, 2), "mse")
    m.fit(x, y, batch_size=3, epochs=2, verbose=0)
    m.save(tmp_path / "model")
    loaded = keras.models.load_model(tmp_path / "model")
    assert [type(l).__name__ for l in loaded.layers] == [type(l).__name__ for l in m.layers]
    conv, pool, avg, _, reshape, conv1 = loaded.layers[:6]
    assert (conv.filters, conv.kernel_size, conv.strides, conv.padding, conv.activation) == (3, (3, 2), (2, 1),
                                                                                                "same", "tanh")
    assert (pool.pool_size, pool.strides, avg.pool_size, avg.strides) == ((2, 2), (1, 1), (2, 3), (2, 2))
    assert reshape.target_shape == (-1, 3, 3) and not conv1.use_bias
    np.testing.assert_array_equal(loaded.predict(x, verbose=0), m.predict(x, verbose=0))
    # Training continues from the saved optimizer state exactly as the original does.
    loaded.fit(x, y, batch_size=3, epochs=1, shuffle=False, verbose=0)
    m.fit(x, y, batch_size=3, epochs=1, shuffle=False, verbose=0)
    for a, b in zip(loaded.get_weights(), m.get_weights()):
        np.testing.assert_array_equal(a, b)


def test_from_keras_and_to_keras_carry_the_image_layers():
    x = images((8, 8, 1))
    k, _ = keras_twin(convnet, (8, 8, 1), "sparse_categorical_crossentropy")
    m = keras.from_keras(k)
    assert [type(l).__name__ for l in m.layers] == ["Conv2D", "MaxPooling2D", "Flatten", "Dense"]
    assert [l.name for l in m.layers] == ["conv", "pool", "flat", "out"]
    np.testing.assert_allclose(m.predict(x, verbose=0), k.predict(x, verbose=0), rtol=1e-5, atol=1e-6)
    _, s = keras_twin(strided_net, (7, 6, 2), "mse")
    back = s.to_keras()
    assert [type(l).__name__ for l in back.layers] == [type(l).__name__ for l in s.layers]
    x2 = images((7, 6, 2))
    np.testing.assert_allclose(back.predict(x2, verbose=0), s.predict(x2, verbose=0), rtol=1e-5, atol=1e-6)
    again = keras.from_keras(back)
    for a, b in zip(again.get_weights(), s.get_weights()):
        np.testing.assert_array_equal(a, b)


def test_from_keras_refuses_what_onefit_cannot_carry_by_name():
    L = real_keras.layers
    with pytest.raises(TypeError, match="'dil'.*dilation_rate"):
        keras.from_keras(real_keras.Sequential([real_keras.Input((8, 8, 1)),
                                                L.Conv2D(2, 3, dilation_rate=2, name="dil")]))
    with pytest.raises(TypeError, match="'cf'.*data_format"):
        keras.from_keras(real_keras.Sequential([real_keras.Input((1, 8, 8)),
                                                L.MaxPooling2D(data_format="channels_first", name="cf")]))


@pytest.mark.parametrize("make, argument", [
    (lambda: layers.Conv2D(4, 3, dilation_rate=2), "dilation_rate"),
    (lambda: layers.Conv2D(4, 3, groups=2), "groups"),
    (lambda: layers.Conv2D(4, 3, kernel_constraint="non_neg"), "kernel_constraint"),
    (lambda: layers.Conv2D(4, 3, data_format="channels_first"), "data_format"),
    (lambda: layers.Conv2D(4, 3, padding="causal"), "padding"),
    (lambda: layers.Conv2D(4, (3,)), "kernel_size"),
    (lambda: layers.Conv2D(4, 3, strides=0), "strides"),
    (lambda: layers.Conv2D(0, 3), "filters"),
    (lambda: layers.MaxPooling2D(pool_size=(2, 2, 2)), "pool_size"),
    (lambda: layers.AveragePooling2D(2, strides=-1), "strides"),
    (lambda: layers.MaxPooling2D(padding="full"), "padding"),
    (lambda: layers.GlobalAveragePooling2D(keepdims=True), "keepdims"),
    (lambda: layers.GlobalAveragePooling2D(data_format="channels_first"), "data_format"),
    (lambda: layers.Flatten(data_format="channels_first"), "data_format"),
    (lambda: layers.Reshape((-1, -1)), "target_shape"),
    (lambda: layers.Reshape((0, 4)), "target_shape"),
])
def test_unsupported_or_bad_arguments_raise_value_error_naming_them(make, argument):
    with pytest.raises(ValueError, match=argument):
        make()


def test_keras_defaults_and_accepted_forms():
    conv = layers.Conv2D(8, 5, dilation_rate=(1, 1), groups=1, data_format="channels_last", kernel_regularizer=None)
    assert (conv.kernel_size, conv.strides, conv.padding, conv.activation, conv.use_bias) == ((5, 5), (1, 1), "valid",
                                                                                              "linear", True)
    assert layers.Conv2D(8, [3, 1], padding="SAME").padding == "same"
    assert layers.MaxPooling2D().strides == (2, 2) and layers.AveragePooling2D(3).strides == (3, 3)
    assert layers.MaxPooling2D((2, 3), strides=1).strides == (1, 1)
    assert layers.Reshape([2, -1]).target_shape == (2, -1)
    with pytest.raises(TypeError, match="bogus"):
        layers.Conv2D(8, 3, bogus=1)


def test_shape_errors_of_the_model_are_value_errors_naming_the_layer():
    m = keras.Sequential([keras.Input(shape=(8, 8, 1)), layers.Reshape((5, -1), name="bad"), layers.Flatten(),
                          layers.Dense(2)])
    with pytest.raises(ValueError, match="bad|Reshape"):
        m.compile("sgd", "mse")
    m = keras.Sequential([keras.Input(shape=(8, 8, 1)), layers.Conv2D(2, 3), layers.Dense(2)])
    with pytest.raises(ValueError, match="Flatten"):
        m.compile("sgd", "mse")
