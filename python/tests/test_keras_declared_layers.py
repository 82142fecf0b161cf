"""Every layer kind's arguments are declared once, in its C++ op file: the Python classes check
through that declaration (the CLI's and C++'s messages), reach the native model through one call,
come back from a saved model generically, and a declared kind has a class even without one
written for it."""
import numpy as np
import pytest

import onefit.keras as keras
from onefit import _onefit
from onefit.keras import layers as L


def test_every_declared_kind_has_a_keras_class_taking_its_declared_arguments():
    kinds = _onefit.layer_kinds()
    assert {k["keras_class"] for k in kinds} == set(L.LAYERS)
    for kind in kinds:
        cls = getattr(L, kind["keras_class"])
        assert cls._type == kind["type"]
        assert set(kind["required"]) <= set(kind["arguments"])


def test_a_kind_declared_without_a_python_class_gets_one():
    # What a new op file's kind gets: made here from a declared kind's description.
    dense = next(k for k in _onefit.layer_kinds() if k["type"] == "dense")
    made = L._declared_class(dict(dense, keras_class="Dense"))
    layer = made(7, activation="relu", name="made")
    assert (layer.units, layer.activation, layer.use_bias) == (7, "relu", True)
    with pytest.raises(ValueError, match="Dense: units is required"):
        made()
    with pytest.raises(TypeError, match="unrecognized keyword"):
        made(3, unit=3)
    model = keras.Sequential([keras.Input((4,)), layer, L.Dense(2)])
    model.compile("adam", "mse")
    assert model.layers[0].name == "made" and model.count_params() == 4 * 7 + 7 + 7 * 2 + 2


def test_values_are_checked_where_the_layer_is_made_with_the_declarations_messages():
    cases = [(lambda: L.Dense("32"), "Dense: units must be an integer, not a string '32'"),
             (lambda: L.Dense(0), "Dense: units must be at least 1, got 0"),
             (lambda: L.Dense(True), "Dense: units must be an integer, not a boolean"),
             (lambda: L.Dense(3, kernel_initializer="orthogonal"), "Dense: kernel_initializer is 'orthogonal'"),
             (lambda: L.Dropout(1.5), r"Dropout: rate must be in \[0, 1\), got 1.5"),
             (lambda: L.Conv2D(4, (3, 0)), r"Conv2D: kernel_size\[1\] must be at least 1, got 0"),
             (lambda: L.Reshape((1.5, 2)), "Reshape: target_shape must hold integers"),
             (lambda: L.MaxPooling2D(padding="full"), "MaxPooling2D: padding"),
             (lambda: L.BatchNormalization(epsilon=0), "BatchNormalization: epsilon must be positive")]
    for make, message in cases:
        with pytest.raises(ValueError, match=message):
            make()


def test_arguments_are_kept_as_keras_shows_them():
    assert L.MaxPooling2D(3).strides == (3, 3)  # strides=None: the pool size
    assert L.AveragePooling2D((3, 2), strides=1).strides == (1, 1)
    assert L.Conv2D(2, 3).kernel_size == (3, 3)
    assert L.Dense(np.int64(4)).units == 4
    assert L.Dropout(np.float32(0.1)).rate == 0.1
    assert L.BatchNormalization().momentum == 0.99
    assert L.Conv2D(2, 3, padding="SAME").padding == "same"


def test_every_kind_comes_back_from_a_saved_model_with_its_arguments(tmp_path):
    model = keras.Sequential([
        keras.Input((8, 8, 1)),
        L.Conv2D(4, (3, 2), strides=(1, 1), padding="same", activation="tanh", use_bias=False,
                 kernel_initializer="he_normal"),
        L.BatchNormalization(momentum=0.9, epsilon=0.01, center=False),
        L.MaxPooling2D(2, strides=1, padding="same"),
        L.AveragePooling2D(2),
        L.Dropout(0.25),
        L.Reshape((4, -1)),
        L.Flatten(),
        L.Reshape((4, 4, 4)),
        L.GlobalAveragePooling2D(),
        L.Dense(3, activation="softmax", bias_initializer="ones", name="out"),
    ])
    model.compile("adam", "sparse_categorical_crossentropy")
    model.save(str(tmp_path / "m"))
    loaded = keras.models.load_model(str(tmp_path / "m"))
    assert [type(a) for a in loaded.layers] == [type(b) for b in model.layers]
    for a, b in zip(model.layers, loaded.layers):
        assert a._arguments() == b._arguments(), type(a).__name__
    assert loaded.layers[-1].name == "out"
    x = np.random.default_rng(0).random((5, 8, 8, 1), dtype=np.float32)
    np.testing.assert_array_equal(loaded.predict(x, verbose=0), model.predict(x, verbose=0))
