"""keras.optimizers.schedules against Keras 3 itself (JAX backend): every schedule's rate at every
step; fits from the same weights whose rate follows a schedule inside the compiled program (the
same per-epoch losses within 1e-5 and the same weights, for SGD, Adam and AdamW, whose weight decay
follows the rate too); the schedule carried by save/load and from_keras/to_keras; and what Keras
refuses (setting a scheduled rate) refused alike."""
import os

import numpy as np
import pytest

os.environ.setdefault("KERAS_BACKEND", "jax")
import keras as real_keras  # noqa: E402  (after choosing its backend)

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")  # Keras 3.15 under NumPy 2 (its own code)

import onefit.keras as keras  # noqa: E402
from onefit.keras.optimizers import schedules  # noqa: E402

SCHEDULES = [
    ("ExponentialDecay", dict(initial_learning_rate=0.1, decay_steps=4, decay_rate=0.6)),
    ("ExponentialDecay", dict(initial_learning_rate=0.1, decay_steps=4, decay_rate=0.6, staircase=True)),
    ("InverseTimeDecay", dict(initial_learning_rate=0.1, decay_steps=3, decay_rate=0.5, staircase=True)),
    ("PiecewiseConstantDecay", dict(boundaries=[5, 11], values=[0.1, 0.03, 0.01])),
    ("PolynomialDecay", dict(initial_learning_rate=0.1, decay_steps=10, end_learning_rate=0.01, power=2.0)),
    # (decay_steps 8: at a multiple of 7, Keras's jitted JAX step computes ceil(21 * (1/7)) = 4, XLA
    # having turned the division into a product with a rounded reciprocal; its formula, and onefit, give 3)
    ("PolynomialDecay", dict(initial_learning_rate=0.1, decay_steps=8, cycle=True)),
    ("CosineDecay", dict(initial_learning_rate=0.1, decay_steps=12, alpha=0.1)),
    ("CosineDecay", dict(initial_learning_rate=0.0, decay_steps=10, warmup_target=0.1, warmup_steps=5)),
    ("CosineDecayRestarts", dict(initial_learning_rate=0.1, first_decay_steps=4, t_mul=2.0, m_mul=0.7, alpha=0.05)),
    ("CosineDecayRestarts", dict(initial_learning_rate=0.1, first_decay_steps=5, t_mul=1.0)),
]
IDS = [f"{name}-{i}" for i, (name, _) in enumerate(SCHEDULES)]


@pytest.mark.parametrize("name, arguments", SCHEDULES, ids=IDS)
def test_every_rate_is_kerass(name, arguments):
    ours, theirs = getattr(schedules, name)(**arguments), getattr(real_keras.optimizers.schedules, name)(**arguments)
    steps = range(60)
    np.testing.assert_allclose([ours(s) for s in steps], [float(theirs(s)) for s in steps], rtol=1e-5, atol=1e-8)  # Keras computes in float32
    assert ours.get_config() == theirs.get_config()


def data(n=30, seed=3):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n, 4)).astype(np.float32)
    return x, (np.arange(n) % 3).astype(np.float32)


def twins(optimizer, name, arguments, **settings):
    real_keras.utils.set_random_seed(2)
    k = real_keras.Sequential([real_keras.Input((4,)), real_keras.layers.Dense(8, activation="tanh"),
                               real_keras.layers.Dense(3, activation="softmax")])
    k.compile(getattr(real_keras.optimizers, optimizer)(getattr(real_keras.optimizers.schedules, name)(**arguments),
                                                         **settings),
              "sparse_categorical_crossentropy")
    m = keras.Sequential([keras.Input(shape=(4,)), keras.layers.Dense(8, activation="tanh"),
                          keras.layers.Dense(3, activation="softmax")])
    m.compile(getattr(keras.optimizers, optimizer)(getattr(schedules, name)(**arguments), **settings),
              "sparse_categorical_crossentropy")
    m.set_weights(k.get_weights())
    return k, m


@pytest.mark.parametrize("name, arguments", SCHEDULES, ids=IDS)
@pytest.mark.parametrize("optimizer, settings", [("SGD", dict(momentum=0.5)), ("Adam", {}),
                                                 ("AdamW", dict(weight_decay=0.05))], ids=["SGD", "Adam", "AdamW"])
def test_a_fit_follows_the_schedule_step_by_step_as_keras(name, arguments, optimizer, settings):
    x, y = data()
    k, m = twins(optimizer, name, arguments, **settings)
    theirs = k.fit(x, y, batch_size=4, epochs=3, shuffle=False, verbose=0).history["loss"]
    ours = m.fit(x, y, batch_size=4, epochs=3, shuffle=False, verbose=0).history["loss"]  # 8 steps an epoch
    np.testing.assert_allclose(ours, theirs, rtol=1e-5)
    for a, b in zip(m.get_weights(), k.get_weights()):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-5)


def test_a_schedule_differs_from_its_initial_rate_so_the_comparison_shows_it():
    x, y = data()
    _, scheduled = twins("SGD", "ExponentialDecay", dict(initial_learning_rate=0.1, decay_steps=2, decay_rate=0.3))
    _, constant = twins("SGD", "ExponentialDecay", dict(initial_learning_rate=0.1, decay_steps=2, decay_rate=1.0))
    a = scheduled.fit(x, y, batch_size=4, epochs=2, shuffle=False, verbose=0).history["loss"]
    b = constant.fit(x, y, batch_size=4, epochs=2, shuffle=False, verbose=0).history["loss"]
    assert abs(a[1] - b[1]) > 1e-3


def test_save_load_and_keras_interop_carry_the_schedule(tmp_path):
    x, y = data()
    name, arguments = SCHEDULES[7]  # CosineDecay with warmup
    k, m = twins("Adam", name, arguments)
    m.fit(x, y, batch_size=4, epochs=1, shuffle=False, verbose=0)
    m.save(str(tmp_path / "m"))
    loaded = keras.models.load_model(str(tmp_path / "m"))
    assert loaded.optimizer._schedule.get_config() == m.optimizer._schedule.get_config()
    # Continued from the saved step count: the loaded model's next epoch is the original's.
    np.testing.assert_allclose(loaded.fit(x, y, batch_size=4, epochs=1, shuffle=False, verbose=0).history["loss"],
                               m.fit(x, y, batch_size=4, epochs=1, shuffle=False, verbose=0).history["loss"], rtol=1e-6)
    back = keras.to_keras(keras.from_keras(k))
    assert type(back.optimizer.learning_rate).__name__ != "float"
    assert back.optimizer.get_config()["learning_rate"]["config"] == k.optimizer.get_config()["learning_rate"]["config"]


def test_a_scheduled_rate_cannot_be_set_as_in_keras():
    optimizer = keras.optimizers.SGD(schedules.ExponentialDecay(0.1, 10, 0.5))
    assert float(optimizer.learning_rate) == pytest.approx(0.1)
    with pytest.raises(TypeError, match="not settable"):
        optimizer.learning_rate = 0.01
    x, y = data()
    _, m = twins("SGD", "ExponentialDecay", dict(initial_learning_rate=0.1, decay_steps=2, decay_rate=0.5))
    with pytest.raises(TypeError, match="not settable"):
        m.fit(x, y, epochs=1, verbose=0, callbacks=[keras.callbacks.LearningRateScheduler(lambda e, lr: lr / 2)])


def test_keras_argument_checks():
    with pytest.raises(ValueError, match="decay_steps"):
        schedules.ExponentialDecay(0.1, 0, 0.5)
    with pytest.raises(ValueError, match="1 less than the length of values"):
        schedules.PiecewiseConstantDecay([1, 2], [0.1, 0.2])
    class Halving(real_keras.optimizers.schedules.LearningRateSchedule):  # a user's own schedule
        def __call__(self, step):
            return 0.1 / (1 + step)

        def get_config(self):
            return {}

    with pytest.raises(ValueError, match="Halving is not one onefit has"):
        keras.optimizers.get(real_keras.optimizers.Adam(Halving()))
