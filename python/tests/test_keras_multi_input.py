"""Functional models of several inputs, against Keras 3 itself (JAX backend): a numeric input and a
categorical one through an Embedding, merged. From the same weights, the same predictions and
per-epoch losses within 1e-5; x as a list or a dict by input name; the model's files read both
ways; ONNX with one graph input per model input; mistakes named."""
import os

import numpy as np
import pytest

os.environ.setdefault("KERAS_BACKEND", "jax")
import keras as real_keras  # noqa: E402  (after choosing its backend)

import onefit.keras as keras  # noqa: E402
from onefit.keras import layers  # noqa: E402
from functional_twins import functional_twins  # noqa: E402


def two_input_net(k, numbers, codes):
    h = k.Dense(6, activation="tanh", name="h")(numbers)
    e = k.Flatten(name="flat")(k.Embedding(5, 2, name="embed")(codes))
    joined = k.Concatenate(name="cat")([h, e, numbers])
    return k.Dense(3, activation="softmax", name="out")(k.Add(name="add")([k.Dense(3, name="side")(e),
                                                                         k.Dense(3, name="main")(joined)]))


def data(n, seed):
    rng = np.random.default_rng(seed)
    numbers = rng.uniform(-1, 2, (n, 4)).astype(np.float32)
    codes = rng.integers(0, 5, (n, 3)).astype(np.float32)
    return numbers, codes, ((codes[:, 0] + (numbers[:, 1] > 0.5)) % 3).astype(np.float32)


def twins():
    return functional_twins(two_input_net, [((4,), "numbers"), ((3,), "codes")], 3, 0.02,
                            "sparse_categorical_crossentropy")


def test_two_inputs_predict_and_train_as_keras():
    numbers, codes, y = data(40, 1)
    vn, vc, vy = data(12, 2)
    k, m = twins()
    assert m.input_shape == [(None, 4), (None, 3)]
    np.testing.assert_allclose(m.predict([numbers, codes], verbose=0), k.predict([numbers, codes], verbose=0),
                               rtol=1e-5, atol=1e-6)
    theirs = k.fit([numbers, codes], y, batch_size=8, epochs=3, shuffle=False, validation_data=([vn, vc], vy),
                   verbose=0).history
    ours = m.fit([numbers, codes], y, batch_size=8, epochs=3, shuffle=False, validation_data=([vn, vc], vy),
                 verbose=0).history
    np.testing.assert_allclose(ours["loss"], theirs["loss"], rtol=1e-5)
    np.testing.assert_allclose(ours["val_loss"], theirs["val_loss"], rtol=1e-5)
    np.testing.assert_allclose(m.evaluate({"codes": vc, "numbers": vn}, vy, verbose=0),
                               k.evaluate({"codes": vc, "numbers": vn}, vy, verbose=0), rtol=1e-5)
    np.testing.assert_allclose(m.predict_on_batch((numbers, codes)), k.predict_on_batch([numbers, codes]),
                               rtol=1e-5, atol=1e-6)


def test_files_both_ways_and_onnx_keep_the_inputs(tmp_path):
    numbers, codes, y = data(10, 3)
    k, m = twins()
    m.fit([numbers, codes], y, epochs=1, verbose=0)
    ours = m.predict([numbers, codes], verbose=0)
    m.save(tmp_path / "ours.keras")
    loaded_by_keras = real_keras.models.load_model(tmp_path / "ours.keras")
    by_name = {"codes": codes, "numbers": numbers}  # (the inputs' names are kept both ways)
    np.testing.assert_allclose(loaded_by_keras.predict(by_name, verbose=0), ours, rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(keras.models.load_model(tmp_path / "ours.keras").predict(by_name, verbose=0), ours,
                               rtol=1e-6, atol=1e-6)
    k.save(tmp_path / "theirs.keras")
    loaded = keras.models.load_model(tmp_path / "theirs.keras")
    assert loaded.input_shape == [(None, 4), (None, 3)]
    np.testing.assert_allclose(loaded.predict(by_name, verbose=0), k.predict([numbers, codes], verbose=0),
                               rtol=1e-6, atol=1e-6)
    m.save(tmp_path / "folder")
    np.testing.assert_array_equal(keras.models.load_model(tmp_path / "folder").predict(by_name, verbose=0), ours)
    np.testing.assert_allclose(keras.from_keras(k).predict([numbers, codes], verbose=0),
                               k.predict([numbers, codes], verbose=0), rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(m.to_keras().predict([numbers, codes], verbose=0), ours, rtol=1e-6, atol=1e-6)

    import onnxruntime

    m.export(tmp_path / "m.onnx")
    session = onnxruntime.InferenceSession(str(tmp_path / "m.onnx"))
    assert [i.name for i in session.get_inputs()] == ["input", "input_1"]
    (got,) = session.run(None, {"input": numbers, "input_1": codes})
    np.testing.assert_allclose(got, ours, rtol=1e-5, atol=1e-6)


def test_a_dataset_of_several_inputs_fits_as_the_arrays_do():
    from onefit.data import Dataset

    numbers, codes, y = data(20, 5)
    _, by_arrays = twins()
    _, by_dataset = twins()
    dataset = Dataset.from_tensor_slices(((numbers, codes), y)).batch(8)
    (first_x, first_y) = next(iter(dataset))
    assert isinstance(first_x, tuple) and first_x[0].shape == (8, 4) and first_x[1].shape == (8, 3)
    np.testing.assert_array_equal(first_x[1], codes[:8])
    ours = by_dataset.fit(dataset, epochs=2, shuffle=False, verbose=0).history
    theirs = by_arrays.fit([numbers, codes], y, batch_size=8, epochs=2, shuffle=False, verbose=0).history
    assert ours["loss"] == theirs["loss"]
    np.testing.assert_array_equal(by_dataset.predict(dataset, verbose=0), by_arrays.predict([numbers, codes], verbose=0))
    with pytest.raises(ValueError, match=r"yields 2 inputs of shapes \[\(4,\), \(4,\)\]"):
        by_dataset.fit(Dataset.from_tensor_slices(((numbers, numbers), y)).batch(8), verbose=0)


def test_a_dict_dataset_is_put_in_the_models_input_order():
    from onefit.data import Dataset

    numbers, codes, y = data(20, 6)
    _, by_arrays = twins()
    _, by_dict = twins()
    dataset = Dataset.from_tensor_slices(({"codes": codes, "numbers": numbers}, y)).shuffle(20, seed=3).batch(8)
    first_x, _ = next(iter(dataset))
    assert sorted(first_x) == ["codes", "numbers"] and first_x["codes"].shape[1] == 3
    arrays = Dataset.from_tensor_slices(((numbers, codes), y)).shuffle(20, seed=3).batch(8)
    ours = by_dict.fit(dataset, epochs=2, verbose=0).history
    theirs = by_arrays.fit(arrays, epochs=2, verbose=0).history
    assert ours["loss"] == theirs["loss"]
    np.testing.assert_array_equal(by_dict.predict(dataset.take(1), verbose=0), by_arrays.predict(arrays.take(1), verbose=0))
    with pytest.raises(ValueError, match=r"yields the inputs \['codes', 'other'\]"):
        by_dict.fit(Dataset.from_tensor_slices(({"codes": codes, "other": numbers}, y)).batch(8), verbose=0)
    one = keras.Input(shape=(4,))
    single = keras.Model(one, layers.Dense(2)(one))
    np.testing.assert_array_equal(single.predict([numbers], verbose=0), single.predict(numbers, verbose=0))


def test_mistakes_are_named():
    numbers, codes, y = data(6, 4)
    _, m = twins()
    with pytest.raises(ValueError, match="got 1 arrays, but the model has 2 inputs"):
        m.predict([numbers], verbose=0)
    with pytest.raises(ValueError, match=r"x\[1\] has 5 rows, but x\[0\] has 6"):
        m.predict([numbers, codes[:5]], verbose=0)
    with pytest.raises(ValueError, match=r"x\[1\] has shape \(6, 4\), but input 1 takes \(None, 3\)"):
        m.predict([numbers, numbers], verbose=0)
    with pytest.raises(ValueError, match="give a list of 2 arrays"):
        m.predict(numbers, verbose=0)
    with pytest.raises(ValueError, match=r"the model's inputs are \['numbers', 'codes'\]"):
        m.predict({"numbers": numbers}, verbose=0)
    bad = codes.copy()
    bad[2, 1] = 9
    with pytest.raises(ValueError, match="x input 1 row 2, column 1 holds 9"):
        m.predict([numbers, bad], verbose=0)
    with pytest.raises(ValueError, match="repeat; Keras needs unique names"):
        same = [keras.Input(shape=(2,), name="same"), keras.Input(shape=(2,), name="same")]
        keras.Model(same, layers.Dense(1)(layers.Add()(same)))
    a, b = keras.Input(shape=(4,)), keras.Input(shape=(2,))
    with pytest.raises(ValueError, match="input 1 .* is read by no layer"):
        keras.Model([a, b], layers.Dense(2)(a))
    with pytest.raises(ValueError, match="not among its inputs"):
        keras.Model(a, layers.Add()([layers.Dense(2)(a), layers.Dense(2)(b)]))
