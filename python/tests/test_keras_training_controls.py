"""Training controls inside the compiled fit, against Keras 3 itself (JAX backend) from the same
weights: label_smoothing of the categorical and binary crossentropies (fused with the output's
softmax/sigmoid, from logits, and on probabilities) and weight_decay on every optimizer: the same
per-epoch losses within 1e-5, the same weights, and the settings carried by save/load and
from_keras/to_keras."""
import os

import numpy as np
import pytest

os.environ.setdefault("KERAS_BACKEND", "jax")
import keras as real_keras  # noqa: E402  (after choosing its backend)

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")  # Keras 3.15 under NumPy 2 (its own code)

import onefit.keras as keras  # noqa: E402


def data(n=30, classes=3, seed=4):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n, 4)).astype(np.float32)
    labels = np.arange(n) % classes
    return x, np.eye(classes, dtype=np.float32)[labels]


def twins(make_layers, loss_class, loss_args, seed=2):
    real_keras.utils.set_random_seed(seed)
    k = real_keras.Sequential([real_keras.Input((4,))] + make_layers(real_keras.layers))
    k.compile(real_keras.optimizers.Adam(0.02), getattr(real_keras.losses, loss_class)(**loss_args),
              metrics=["categorical_accuracy"] if "Categorical" in loss_class else ["binary_accuracy"])
    m = keras.Sequential([keras.Input(shape=(4,))] + make_layers(keras.layers))
    m.compile(keras.optimizers.Adam(0.02), getattr(keras.losses, loss_class)(**loss_args),
              metrics=["categorical_accuracy"] if "Categorical" in loss_class else ["binary_accuracy"])
    m.set_weights(k.get_weights())
    return k, m


CASES = [
    ("softmax output", lambda L: [L.Dense(8, activation="tanh"), L.Dense(3, activation="softmax")],
     "CategoricalCrossentropy", dict(label_smoothing=0.2), 3),
    ("logits", lambda L: [L.Dense(8, activation="tanh"), L.Dense(3)],
     "CategoricalCrossentropy", dict(from_logits=True, label_smoothing=0.1), 3),
    ("sigmoid output", lambda L: [L.Dense(8, activation="tanh"), L.Dense(2, activation="sigmoid")],
     "BinaryCrossentropy", dict(label_smoothing=0.3), 2),
    ("binary logits", lambda L: [L.Dense(8, activation="tanh"), L.Dense(2)],
     "BinaryCrossentropy", dict(from_logits=True, label_smoothing=0.2), 2),
    ("binary on probabilities", lambda L: [L.Dense(8, activation="tanh"), L.Dense(2, activation="softmax")],
     "BinaryCrossentropy", dict(label_smoothing=0.2), 2),
]


@pytest.mark.parametrize("what, make_layers, loss_class, loss_args, classes", CASES, ids=[c[0] for c in CASES])
def test_label_smoothing_trains_as_keras(what, make_layers, loss_class, loss_args, classes):
    x, y = data(classes=classes)
    k, m = twins(make_layers, loss_class, loss_args)
    theirs = k.fit(x, y, batch_size=8, epochs=3, shuffle=False, verbose=0).history
    ours = m.fit(x, y, batch_size=8, epochs=3, shuffle=False, verbose=0).history
    np.testing.assert_allclose(ours["loss"], theirs["loss"], rtol=1e-5)
    metric = next(key for key in theirs if key.endswith("accuracy"))
    np.testing.assert_allclose(ours[metric], theirs[metric], rtol=1e-6)  # metrics see the labels as given
    for a, b in zip(m.get_weights(), k.get_weights()):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(m.evaluate(x, y, verbose=0), k.evaluate(x, y, verbose=0), rtol=1e-5)
    # Smoothing changes the loss: without it the same model's loss differs.
    plain = dict(loss_args, label_smoothing=0.0)
    _, unsmoothed = twins(make_layers, loss_class, plain)
    assert abs(unsmoothed.evaluate(x, y, verbose=0)[0] - m.evaluate(x, y, verbose=0)[0]) > 1e-3


def test_label_smoothing_is_saved_and_carried_to_and_from_keras(tmp_path):
    x, y = data()
    k, m = twins(CASES[0][1], "CategoricalCrossentropy", dict(label_smoothing=0.2))
    m.save(str(tmp_path / "m"))
    loaded = keras.models.load_model(str(tmp_path / "m"))
    np.testing.assert_allclose(loaded.evaluate(x, y, verbose=0), m.evaluate(x, y, verbose=0), rtol=1e-6)
    assert keras.to_keras(m).loss.get_config()["label_smoothing"] == pytest.approx(0.2)
    np.testing.assert_allclose(keras.from_keras(k).evaluate(x, y, verbose=0), k.evaluate(x, y, verbose=0), rtol=1e-5)


def test_label_smoothing_where_keras_has_none_is_refused():
    with pytest.raises(TypeError, match="label_smoothing"):
        keras.losses.SparseCategoricalCrossentropy(label_smoothing=0.1)
    with pytest.raises(ValueError, match=r"label_smoothing must be a number in \[0, 1\]"):
        keras.losses.CategoricalCrossentropy(label_smoothing=1.5)
    with pytest.raises(TypeError, match="unexpected argument"):
        keras.losses.MeanSquaredError(from_logits=True)


@pytest.mark.parametrize("optimizer, settings", [("SGD", dict(learning_rate=0.05, momentum=0.9)), ("Adam", {}),
                                                 ("RMSprop", {}), ("Adagrad", dict(learning_rate=0.05))])
def test_every_optimizers_weight_decay_is_kerass(optimizer, settings, tmp_path):
    x, y = data()
    make = CASES[0][1]
    real_keras.utils.set_random_seed(2)
    k = real_keras.Sequential([real_keras.Input((4,))] + make(real_keras.layers))
    k.compile(getattr(real_keras.optimizers, optimizer)(weight_decay=0.1, **settings), "categorical_crossentropy")
    m = keras.Sequential([keras.Input(shape=(4,))] + make(keras.layers))
    m.compile(getattr(keras.optimizers, optimizer)(weight_decay=0.1, **settings), "categorical_crossentropy")
    m.set_weights(k.get_weights())
    before = m.get_weights()
    theirs = k.fit(x, y, batch_size=8, epochs=3, shuffle=False, verbose=0).history["loss"]
    ours = m.fit(x, y, batch_size=8, epochs=3, shuffle=False, verbose=0).history["loss"]
    np.testing.assert_allclose(ours, theirs, rtol=1e-5)
    for a, b in zip(m.get_weights(), k.get_weights()):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-5)
    # The decay shows: the same fit without it ends elsewhere.
    plain = keras.Sequential([keras.Input(shape=(4,))] + make(keras.layers))
    plain.compile(getattr(keras.optimizers, optimizer)(**settings), "categorical_crossentropy")
    plain.set_weights(before)
    plain.fit(x, y, batch_size=8, epochs=3, shuffle=False, verbose=0)
    assert max(float(np.abs(a - b).max()) for a, b in zip(plain.get_weights(), m.get_weights())) > 1e-4
    m.save(str(tmp_path / "m"))
    assert keras.models.load_model(str(tmp_path / "m")).optimizer.weight_decay == pytest.approx(0.1)
    assert keras.to_keras(m).optimizer.weight_decay == pytest.approx(0.1)
    assert keras.from_keras(k).optimizer.weight_decay == pytest.approx(0.1)


def regularized_net(L, reg):
    return [L.Dense(8, activation="tanh", kernel_regularizer=reg.l2(0.01), bias_regularizer=reg.l1(0.02),
                    activity_regularizer=reg.l1_l2(l1=0.01, l2=0.03)),
            L.Dense(3, activation="softmax", kernel_regularizer=reg.L1L2(l1=0.005, l2=0.02))]


def regularized_sequence_net(L, reg):
    return [L.Embedding(6, 3, embeddings_regularizer=reg.l2(0.05)),
            L.Conv1D(2, 2, kernel_regularizer=reg.l1_l2(l1=0.01, l2=0.01), bias_regularizer="l2",
                     activity_regularizer=reg.l2(0.02)),
            L.Flatten(), L.Dense(3, activation="softmax")]


@pytest.mark.parametrize("make, indices", [(regularized_net, False), (regularized_sequence_net, True)],
                         ids=["dense", "embedding-conv1d"])
def test_weight_and_activity_regularizers_train_as_keras_and_show_in_the_loss(make, indices, tmp_path):
    x, y = data()
    if indices:
        x = np.random.default_rng(5).integers(0, 6, (30, 4)).astype(np.float32)
    real_keras.utils.set_random_seed(2)
    k = real_keras.Sequential([real_keras.Input((4,))] + make(real_keras.layers, real_keras.regularizers))
    k.compile(real_keras.optimizers.Adam(0.02), "categorical_crossentropy")
    # Biases away from 0, where the gradient of |b| is a convention (JAX says 1, TF and onefit 0).
    rng = np.random.default_rng(9)
    k.set_weights([w + rng.uniform(0.05, 0.2, w.shape).astype(np.float32) for w in k.get_weights()])
    m = keras.Sequential([keras.Input(shape=(4,))] + make(keras.layers, keras.regularizers))
    m.compile(keras.optimizers.Adam(0.02), "categorical_crossentropy")
    m.set_weights(k.get_weights())
    np.testing.assert_allclose(m.evaluate(x, y, verbose=0), k.evaluate(x, y, verbose=0), rtol=1e-5)  # penalty included
    theirs = k.fit(x, y, batch_size=8, epochs=3, shuffle=False, verbose=0, validation_data=(x[:10], y[:10])).history
    ours = m.fit(x, y, batch_size=8, epochs=3, shuffle=False, verbose=0, validation_data=(x[:10], y[:10])).history
    np.testing.assert_allclose(ours["loss"], theirs["loss"], rtol=1e-5)
    np.testing.assert_allclose(ours["val_loss"], theirs["val_loss"], rtol=1e-5)
    for a, b in zip(m.get_weights(), k.get_weights()):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-5)
    # Saved and carried both ways, with the same penalties.
    m.save(str(tmp_path / "m"))
    loaded = keras.models.load_model(str(tmp_path / "m"))
    np.testing.assert_allclose(loaded.evaluate(x, y, verbose=0), m.evaluate(x, y, verbose=0), rtol=1e-6)
    np.testing.assert_allclose(keras.from_keras(k).evaluate(x, y, verbose=0), k.evaluate(x, y, verbose=0), rtol=1e-5)
    back = keras.to_keras(m)
    np.testing.assert_allclose(back.evaluate(x, y, verbose=0), k.evaluate(x, y, verbose=0), rtol=1e-5)


def test_regularizers_keras_has_and_onefit_lacks_are_refused_by_name():
    with pytest.raises(ValueError, match="OrthogonalRegularizer is not supported"):
        keras.layers.Dense(2, kernel_regularizer=real_keras.regularizers.OrthogonalRegularizer())
    with pytest.raises(ValueError, match="activity_regularizer on the output layer"):  # (fused with its loss)
        m = keras.Sequential([keras.Input(shape=(3,)), keras.layers.Dense(2, activation="softmax",
                                                                          activity_regularizer="l2")])
        m.compile("adam", "categorical_crossentropy")
    with pytest.raises(ValueError, match="non-negative"):
        keras.regularizers.L2(-1.0)
    assert keras.regularizers.l2()(np.array([1.0, -2.0])) == pytest.approx(0.05)


def weighted_twins(loss="sparse_categorical_crossentropy"):
    real_keras.utils.set_random_seed(2)
    k = real_keras.Sequential([real_keras.Input((4,)), real_keras.layers.Dense(8, activation="tanh"),
                               real_keras.layers.Dense(3, activation="softmax")])
    k.compile(real_keras.optimizers.Adam(0.02), loss, metrics=["accuracy"])
    m = keras.Sequential([keras.Input(shape=(4,)), keras.layers.Dense(8, activation="tanh"),
                          keras.layers.Dense(3, activation="softmax")])
    m.compile(keras.optimizers.Adam(0.02), loss, metrics=["accuracy"])
    m.set_weights(k.get_weights())
    return k, m


@pytest.mark.parametrize("how", ["sample_weight", "class_weight", "class_weight one-hot", "validation_split"])
def test_sample_and_class_weights_train_as_keras(how):
    rng = np.random.default_rng(6)
    x = rng.normal(size=(36, 4)).astype(np.float32)
    labels = (np.arange(36) % 3).astype(np.float32)
    weights = rng.uniform(0.2, 3.0, 36).astype(np.float32)
    one_hot = how == "class_weight one-hot"
    y = np.eye(3, dtype=np.float32)[labels.astype(int)] if one_hot else labels
    k, m = weighted_twins("categorical_crossentropy" if one_hot else "sparse_categorical_crossentropy")
    settings = dict(batch_size=8, epochs=3, shuffle=False, verbose=0)
    if how.startswith("class_weight"):
        settings["class_weight"] = {0: 1.0, 1: 4.0, 2: 0.5}
    else:
        settings["sample_weight"] = weights
    if how == "validation_split":
        settings["validation_split"] = 0.25
    else:
        settings["validation_data"] = (x[:12], y[:12], weights[:12])
    theirs = k.fit(x, y, **settings).history
    ours = m.fit(x, y, **settings).history
    for key in ("loss", "val_loss", "accuracy", "val_accuracy"):  # (accuracy: unweighted, as Keras's compile metrics)
        np.testing.assert_allclose(ours[key], theirs[key], rtol=1e-5, err_msg=key)
    for a, b in zip(m.get_weights(), k.get_weights()):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(m.evaluate(x, y, sample_weight=weights, verbose=0),
                               k.evaluate(x, y, sample_weight=weights, verbose=0), rtol=1e-5)
    # The weights change the fit: unweighted, the same model ends elsewhere.
    _, plain = weighted_twins("categorical_crossentropy" if one_hot else "sparse_categorical_crossentropy")
    unweighted = plain.fit(x, y, batch_size=8, epochs=3, shuffle=False, verbose=0).history["loss"]
    assert abs(unweighted[-1] - ours["loss"][-1]) > 1e-3


def test_weights_keras_refuses_or_onefit_lacks_are_errors():
    x, y = data()
    _, m = weighted_twins("categorical_crossentropy")
    with pytest.raises(ValueError, match="You cannot `class_weight` and `sample_weight` at the same time"):
        m.fit(x, y, sample_weight=np.ones(30), class_weight={0: 2.0}, verbose=0)
    with pytest.raises(ValueError, match="sample_weight has 29 rows but the features have 30"):
        m.fit(x, y, sample_weight=np.ones(29), verbose=0)
    with pytest.raises(ValueError, match="sample_weight holds a non-finite value at row 3"):
        m.fit(x, y, sample_weight=np.where(np.arange(30) == 3, np.nan, 1.0), verbose=0)


@pytest.mark.parametrize("how", ["sample_weight", "class_weight"])
def test_a_dataset_of_weighted_rows_trains_and_evaluates_as_keras_with_weights(how):
    from onefit.data import Dataset

    rng = np.random.default_rng(8)
    x = rng.normal(size=(36, 4)).astype(np.float32)
    y = (np.arange(36) % 3).astype(np.float32)
    w = rng.uniform(0.2, 3.0, 36).astype(np.float32)
    k, m = weighted_twins()
    validation = (x[:12], y[:12], w[:12])
    if how == "sample_weight":
        theirs = k.fit(x, y, sample_weight=w, batch_size=8, epochs=3, shuffle=False, verbose=0,
                       validation_data=validation).history
        ours = m.fit(Dataset.from_tensor_slices((x, y, w[:, None])).batch(8), epochs=3, verbose=0,
                     validation_data=Dataset.from_tensor_slices(validation).batch(8)).history
    else:
        class_weight = {0: 1.0, 1: 4.0, 2: 0.5}
        theirs = k.fit(x, y, class_weight=class_weight, batch_size=8, epochs=3, shuffle=False, verbose=0).history
        ours = m.fit(Dataset.from_tensor_slices((x, y)).batch(8), class_weight=class_weight, epochs=3,
                     verbose=0).history
    for key in theirs:
        np.testing.assert_allclose(ours[key], theirs[key], rtol=1e-5, err_msg=key)
    weighted = Dataset.from_tensor_slices((x, y, w)).batch(8)
    np.testing.assert_allclose(m.evaluate(weighted, verbose=0), k.evaluate(x, y, sample_weight=w, batch_size=8, verbose=0),
                               rtol=1e-5)
    first = next(iter(weighted))
    assert len(first) == 3 and np.array_equal(first[2], w[:8])  # it yields (x, y, sample_weight), as tf.data
    with pytest.raises(ValueError, match="You cannot `class_weight` and `sample_weight` at the same time"):
        m.fit(weighted, class_weight={0: 2.0}, verbose=0)
    with pytest.raises(ValueError, match=r"yields \(x, y, sample_weight\)"):
        m.fit(Dataset.from_tensor_slices((x, y)).batch(8), sample_weight=w, verbose=0)
    with pytest.raises(ValueError, match="sample_weight has 35 rows but x has 36"):
        Dataset.from_tensor_slices((x, y, w[:35]))
