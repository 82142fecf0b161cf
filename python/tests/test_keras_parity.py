"""onefit.keras trains what Keras's definitions say: the seed's model (Dense 32 relu, Dense 3
softmax, logcosh, Adam lr 0.1, batch 20, unshuffled) against a float64 NumPy implementation of
Keras's forward pass, logcosh and Adam rule, from the same initial weights."""
import numpy as np

import onefit
import onefit.keras as keras
from onefit.keras.layers import Dense
from onefit.keras.optimizers import Adam


def seed_model(seed=0):
    model = keras.Sequential(seed=seed)
    model.add(Dense(32, input_shape=(4,), activation=onefit.nn.relu, name="relu"))
    model.add(Dense(3, activation=onefit.nn.softmax, name="softmax"))
    model.compile(optimizer=Adam(learning_rate=0.1), loss="logcosh")
    return model


def forward(w, x):
    h = np.maximum(x @ w[0] + w[1], 0)
    z = h @ w[2] + w[3]
    e = np.exp(z - z.max(axis=1, keepdims=True))
    return h, e / e.sum(axis=1, keepdims=True)


def reference_fit(weights, x, y, batch, epochs, lr=0.1, b1=0.9, b2=0.999, eps=1e-7):
    """Per-epoch mean losses of Keras's fit (batches in order, the last one partial)."""
    w = [np.asarray(a, dtype=np.float64) for a in weights]
    m = [np.zeros_like(a) for a in w]
    v = [np.zeros_like(a) for a in w]
    t = 0
    losses = []
    for _ in range(epochs):
        total = 0.0
        for start in range(0, len(x), batch):
            xb, yb = x[start:start + batch].astype(np.float64), y[start:start + batch].astype(np.float64)
            n = len(xb)
            h, p = forward(w, xb)
            d = p - yb
            total += np.sum(np.mean(d + np.log1p(np.exp(-2 * d)) - np.log(2), axis=1)) / n * n
            dp = np.tanh(d) / 3 / n  # d loss / d p
            dz = p * (dp - np.sum(dp * p, axis=1, keepdims=True))
            dh = (dz @ w[2].T) * (h > 0)
            grads = [xb.T @ dh, dh.sum(0), h.T @ dz, dz.sum(0)]
            t += 1
            alpha = lr * np.sqrt(1 - b2 ** t) / (1 - b1 ** t)
            for i, g in enumerate(grads):
                m[i] += (g - m[i]) * (1 - b1)
                v[i] += (g * g - v[i]) * (1 - b2)
                w[i] -= alpha * m[i] / (np.sqrt(v[i]) + eps)
        losses.append(total / len(x))
    return losses, w


def test_the_seed_fit_matches_kerass_definitions_per_epoch(iris_like):
    x, y, _ = iris_like
    model = seed_model()
    initial = model.get_weights()
    history = model.fit(x[:105], y[:105], batch_size=20, epochs=5, shuffle=False, verbose=0)
    expected, final = reference_fit(initial, x[:105], y[:105], 20, 5)
    np.testing.assert_allclose(history.history["loss"], expected, rtol=2e-5)
    for got, want in zip(model.get_weights(), final):
        np.testing.assert_allclose(got, want, rtol=1e-3, atol=1e-4)


def test_weights_are_in_kerass_layout_and_predict_is_the_forward_pass(iris_like):
    x, _, _ = iris_like
    model = seed_model()
    weights = model.get_weights()
    assert [w.shape for w in weights] == [(4, 32), (32,), (32, 3), (3,)]
    assert all(w.dtype == np.float32 for w in weights)
    limit = np.sqrt(6 / (4 + 32))  # glorot_uniform
    assert np.all(np.abs(weights[0]) <= limit) and np.all(weights[1] == 0)
    _, expected = forward([w.astype(np.float64) for w in weights], x.astype(np.float64))
    np.testing.assert_allclose(model.predict(x), expected, rtol=1e-5, atol=1e-6)


def test_any_array_like_gives_the_same_fit_as_float32_arrays(iris_like):
    x, y, _ = iris_like
    runs = []
    for xs, ys in [(x, y), (x.astype(np.float64), y.tolist()), (np.asfortranarray(x), y.astype(np.int64)),
                   (x.tolist(), y.astype(np.float64)[:, :])]:
        model = seed_model(seed=3)
        runs.append(model.fit(xs, ys, batch_size=20, epochs=2, shuffle=False, verbose=0).history["loss"])
    assert all(r == runs[0] for r in runs)


def test_a_seed_gives_the_same_fit_and_models_without_one_differ(iris_like):
    x, y, _ = iris_like
    a = seed_model(seed=7).fit(x, y, batch_size=20, epochs=2, verbose=0).history["loss"]
    b = seed_model(seed=7).fit(x, y, batch_size=20, epochs=2, verbose=0).history["loss"]
    assert a == b
    keras.utils.set_random_seed(1)
    first = keras.Sequential([Dense(8, input_shape=(4,)), Dense(3)]).get_weights()[0]
    second = keras.Sequential([Dense(8, input_shape=(4,)), Dense(3)]).get_weights()[0]
    keras.utils.set_random_seed(1)
    again = keras.Sequential([Dense(8, input_shape=(4,)), Dense(3)]).get_weights()[0]
    assert not np.array_equal(first, second)
    np.testing.assert_array_equal(first, again)


def test_every_optimizer_and_loss_matches_keras_3_per_epoch():
    """Against Keras 3's per-epoch losses stored by keras_reference.py (same initial weights)."""
    import json
    import pathlib

    import parity_cases as cases

    stored = json.loads((pathlib.Path(__file__).parent / "data" / "keras_parity.json").read_text())["cases"]
    assert len(stored) == len(cases.OPTIMIZERS) * len(cases.LOSSES)
    worst = {}
    for opt_case in cases.OPTIMIZERS:
        for loss_case, (units, activation, kind, _) in cases.LOSSES.items():
            x, y = cases.data(kind)
            model = keras.Sequential([Dense(8, activation="tanh", input_shape=(5,)), Dense(units, activation=activation)],
                                     seed=11)
            model.compile(optimizer=cases.optimizer_object(keras, opt_case), loss=cases.loss_object(keras, loss_case))
            got = model.fit(x, y, batch_size=cases.BATCH, epochs=cases.EPOCHS, shuffle=False, verbose=0).history["loss"]
            want = stored[f"{opt_case}/{loss_case}"]
            worst[f"{opt_case}/{loss_case}"] = float(np.max(np.abs(np.subtract(got, want)) / np.abs(want)))
    bad = {k: v for k, v in worst.items() if v > 1e-5}
    assert not bad, f"relative differences from Keras 3 above 1e-5: {bad}"
