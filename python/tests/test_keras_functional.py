"""The Functional API (keras.Input, layers called on tensors, keras.Model(inputs, outputs)) and its
merge layers (Add, Subtract, Multiply, Average, Maximum, Minimum, Concatenate, Dot) against Keras 3 itself (JAX backend):
from the same weights, the same predictions, per-epoch losses and validation losses within 1e-5 and
the same trained weights; save/load, to_keras and summary keep the graph; what onefit refuses is
named."""
import os

import numpy as np
import pytest

os.environ.setdefault("KERAS_BACKEND", "jax")
import keras as real_keras  # noqa: E402  (after choosing its backend)

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")  # Keras 3.15 under NumPy 2 (its own code)

import onefit.keras as keras  # noqa: E402
from onefit.keras import layers  # noqa: E402


def residual_net(k, x):
    """Every merge, an output read by three layers, and a Concatenate with the model's input."""
    h = k.Dense(8, activation="relu", name="d0")(x)
    a = k.Dense(8, activation="tanh", name="d1")(h)
    s = k.Add(name="add")([h, a])
    b = k.Dense(8, name="d2")(x)
    m = k.Multiply(name="mul")([s, b])
    d = k.Subtract(name="sub")([m, h])
    avg = k.Average(name="avg")([d, s, a])
    c = k.Concatenate(name="cat")([avg, x])
    return k.Dense(3, activation="softmax", name="out")(k.LayerNormalization(name="ln")(c))


def image_net(k, x):
    """A residual block of convolutions, concatenated with the image along its channels."""
    c0 = k.Conv2D(4, 3, padding="same", activation="relu", name="c0")(x)
    c1 = k.Conv2D(4, 3, padding="same", name="c1")(c0)
    r = k.ReLU(name="relu")(k.Add(name="add")([c0, c1]))
    p = k.GlobalAveragePooling2D(name="gap")(k.Concatenate(name="cat")([r, x]))
    return k.Dense(3, activation="softmax", name="out")(p)


def extremum_net(k, x):
    """Maximum and Minimum: each value's winner gets the gradient."""
    a = k.Dense(6, activation="tanh", name="a")(x)
    b = k.Dense(6, name="b")(x)
    c = k.Dense(6, activation="sigmoid", name="c")(x)
    hi = k.Maximum(name="max")([a, b, c])
    lo = k.Minimum(name="min")([hi, b])
    return k.Dense(3, activation="softmax", name="out")(k.Concatenate(name="cat")([hi, lo]))


def dot_net(k, x):
    """Dot: vectors (cosine proximity with normalize) and matrices along either axis of each."""
    a = k.Dense(6, activation="tanh", name="a")(x)
    b = k.Dense(6, name="b")(x)
    cosine = k.Dot(axes=1, normalize=True, name="cos")([a, b])
    ma = k.Reshape((3, 4), name="ma")(k.Dense(12, activation="tanh", name="c")(x))
    mb = k.Reshape((4, 2), name="mb")(k.Dense(8, name="d")(x))
    product = k.Flatten(name="flat")(k.Dot(axes=(2, 1), name="mm")([ma, mb]))
    gram = k.Flatten(name="flat_g")(k.Dot(axes=[1, 1], normalize=True, name="gram")([ma, ma]))
    return k.Dense(3, activation="softmax", name="out")(k.Concatenate(name="cat")([cosine, product, gram, b]))


CASES = [(residual_net, (5,)), (image_net, (6, 6, 2)), (extremum_net, (5,)), (dot_net, (5,))]


def data(shape, n, seed):
    rng = np.random.default_rng(seed)
    return rng.uniform(-1, 2, (n,) + shape).astype(np.float32), (np.arange(n) % 3).astype(np.float32)


def twins(make, shape):
    real_keras.utils.set_random_seed(1)
    source = real_keras.Input(shape)
    k = real_keras.Model(source, make(real_keras.layers, source))
    k.compile(real_keras.optimizers.Adam(0.02), "sparse_categorical_crossentropy")
    x = keras.Input(shape=shape)
    m = keras.Model(x, make(layers, x))
    # Keras orders a Functional model's weights its own way: each layer's, by name.
    m.set_weights([w for layer in m.layers for w in k.get_layer(layer.name).get_weights()])
    m.compile(keras.optimizers.Adam(0.02), "sparse_categorical_crossentropy")
    return k, m


@pytest.mark.parametrize("make, shape", CASES, ids=["residual", "image", "extremum", "dot"])
def test_predicts_and_trains_as_keras(make, shape):
    x, y = data(shape, 32, 5)
    k, m = twins(make, shape)
    np.testing.assert_allclose(m.predict(x, verbose=0), k.predict(x, verbose=0), rtol=1e-5, atol=1e-6)
    before = m.get_weights()
    theirs = k.fit(x, y, batch_size=8, epochs=3, shuffle=False, validation_split=0.25, verbose=0).history
    ours = m.fit(x, y, batch_size=8, epochs=3, shuffle=False, validation_split=0.25, verbose=0).history
    np.testing.assert_allclose(ours["loss"], theirs["loss"], rtol=1e-5)
    np.testing.assert_allclose(ours["val_loss"], theirs["val_loss"], rtol=1e-5)
    assert theirs["loss"][-1] < theirs["loss"][0], "the fit did not learn: the comparison would be weak"
    ours_after = m.get_weights()
    theirs_after = [w for layer in m.layers for w in k.get_layer(layer.name).get_weights()]
    for i, (a, b) in enumerate(zip(ours_after, theirs_after)):
        assert not np.array_equal(a, before[i]), f"array {i} did not move: the comparison would be vacuous"
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-5, err_msg=f"weight array {i}")


def test_save_load_to_keras_and_summary_keep_the_graph(tmp_path):
    x, _ = data((5,), 6, 7)
    k, m = twins(residual_net, (5,))
    m.save(tmp_path / "m")
    loaded = keras.models.load_model(tmp_path / "m")
    assert isinstance(loaded, keras.Model)
    assert [layer.name for layer in loaded.layers] == [layer.name for layer in m.layers]
    np.testing.assert_array_equal(loaded.predict(x, verbose=0), m.predict(x, verbose=0))
    converted = m.to_keras()
    assert isinstance(converted, real_keras.Model) and not isinstance(converted, real_keras.Sequential)
    np.testing.assert_allclose(converted.predict(x, verbose=0), k.predict(x, verbose=0), rtol=1e-5, atol=1e-6)
    lines = []
    m.summary(print_fn=lines.append)
    text = "\n".join(lines)
    assert 'Model: "functional"' in text and "Connected to" in text
    assert "avg (Average)" in text and "sub, add, d1" in text, text
    # A loaded model trains on from where it was.
    loaded.compile("adam", "sparse_categorical_crossentropy")
    loaded.fit(x, np.zeros(6, np.float32), epochs=1, verbose=0)


def test_from_keras_reads_a_functional_model_and_trains_as_it():
    x, y = data((5,), 24, 9)
    k, _ = twins(residual_net, (5,))
    m = keras.from_keras(k)
    assert isinstance(m, keras.Model)
    assert sorted(layer.name for layer in m.layers) == sorted(layer.name for layer in k.layers[1:])
    np.testing.assert_allclose(m.predict(x, verbose=0), k.predict(x, verbose=0), rtol=1e-5, atol=1e-6)
    theirs = k.fit(x, y, batch_size=8, epochs=2, shuffle=False, verbose=0).history["loss"]
    ours = m.fit(x, y, batch_size=8, epochs=2, shuffle=False, verbose=0).history["loss"]
    np.testing.assert_allclose(ours, theirs, rtol=1e-5)


def test_tensor_shapes_follow_onefits_shape_rules():
    x = keras.Input(shape=(4, 4, 3))
    c = layers.Concatenate()([layers.Conv2D(5, 3, padding="same")(x), x])
    assert c.shape == (None, 4, 4, 8)
    assert layers.Flatten()(c).shape == (None, 128)


def test_what_onefit_refuses_is_named():
    x = keras.Input(shape=(4,))
    a, b = keras.Input(shape=(4,)), keras.Input(shape=(4,))
    with pytest.raises(ValueError, match="give one output"):
        keras.Model([a, b], [layers.Dense(2)(a), layers.Dense(2)(b)])
    with pytest.raises(TypeError, match="subclassing"):
        keras.Model()
    with pytest.raises(TypeError, match="keras.Input tensors"):
        layers.Dense(2)(np.zeros((3, 4), np.float32))
    with pytest.raises(ValueError, match="merges 2 to 32 inputs"):
        keras.Sequential([keras.Input(shape=(4,)), layers.Dense(3), layers.Add()]).compile("adam", "mse")
    with pytest.raises(ValueError, match="same shape"):
        y = keras.Input(shape=(4,))
        keras.Model(y, layers.Add()([layers.Dense(3)(y), y])).compile("adam", "mse")
    with pytest.raises(TypeError, match="Functional model's layers come from"):
        z = keras.Input(shape=(4,))
        keras.Model(z, layers.Dense(2)(z)).add(layers.Dense(1))


def test_a_tensors_shape_is_worked_out_once_and_compile_takes_every_metric_form():
    x = keras.Input(shape=(5,))
    h = layers.Dense(4)(x)
    assert h.shape == (None, 4) and h.shape is h.shape  # (cached: the same tuple)
    m = keras.Model(x, layers.Dense(3, activation="softmax")(h))
    m.compile("adam", "categorical_crossentropy",
              metrics=["acc", keras.metrics.AUC(curve="PR", name="pr"), real_keras.metrics.TopKCategoricalAccuracy(k=2)])
    assert m._compiled[2] == ["acc", "pr=pr_auc", "top_k_categorical_accuracy=top_k_categorical_accuracy(2)"]
