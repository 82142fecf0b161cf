"""Writes python/tests/data/seed_notebook_keras.json: Keras 3's per-epoch losses for the three fits
of examples/seed_notebook.py, each started from the weights onefit's model had (set_random_seed(0)
before the script, as the test does); and python/tests/data/keras_parity.json: Keras 3's
per-epoch losses for every optimizer and loss of parity_cases.py, from onefit's initial weights.
Needs Keras, TensorFlow and scikit-learn (`make peers`) and the built module on PYTHONPATH:
    PYTHONPATH=build/python PEER_PYTHON python/tests/keras_reference.py
test_seed_notebook.py and test_keras_parity.py compare onefit's fits with these numbers."""
import json
import os
import pathlib
import runpy
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
import keras  # noqa: E402
import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

import onefit.keras  # noqa: E402
from onefit.keras import models as onefit_models  # noqa: E402

here = pathlib.Path(__file__).resolve().parent
runs = []
original_fit = onefit_models.Sequential.fit


def recording_fit(self, x=None, y=None, **kwargs):
    # Shuffled batches cannot be the same in two frameworks (each has its own generator): the
    # arrays fit runs unshuffled here and in the test.
    kwargs = {**kwargs, "shuffle": False}
    runs.append({"weights": [w.copy() for w in self.get_weights()], "x": x, "y": y, "kwargs": dict(kwargs)})
    return original_fit(self, x, y, **kwargs)


onefit_models.Sequential.fit = recording_fit
onefit.keras.utils.set_random_seed(0)
runpy.run_path(str(here.parent.parent / "examples" / "seed_notebook.py"), run_name="__main__")


# Keras 3 refuses the seed's labels as they are: class indices of shape (N,) against 3 softmax
# outputs are a shape error in its losses, where tf.keras 2 (what the seed ran on) expanded them
# to (N, 1) and broadcast. onefit follows tf.keras 2, so Keras 3 gets the labels as (N, 1),
# which it broadcasts the same way.
def column(y):
    return np.asarray(y).reshape(-1, 1)


def keras_dataset(ds):
    return tf.data.Dataset.from_tensor_slices((ds._x, column(ds._y)))


def keras_model(weights):
    model = keras.Sequential([keras.Input(shape=(4,)), keras.layers.Dense(32, activation="relu"),
                              keras.layers.Dense(3, activation="softmax")])
    # Keras 3 no longer takes the string 'logcosh' (tf.keras 2's name): its LogCosh object.
    model.compile(optimizer=keras.optimizers.Adam(learning_rate=0.1), loss=keras.losses.LogCosh())
    model.set_weights(weights)
    return model


results = []
datasets = [None, (lambda d: d.batch(20), lambda d: d.batch(20)), (lambda d: d.repeat(20).batch(20), lambda d: d.batch(20))]
for i, run in enumerate(runs):
    model = keras_model(run["weights"])
    kwargs = dict(run["kwargs"])
    if i == 0:
        vx, vy = kwargs["validation_data"]
        kwargs["validation_data"] = [np.asarray(vx), column(vy)]
        history = model.fit(run["x"], column(run["y"]), **kwargs)
    else:
        train, val = datasets[i]
        kwargs["validation_data"] = val(keras_dataset(kwargs["validation_data"]))
        kwargs["verbose"] = 0
        history = model.fit(train(keras_dataset(run["x"])), **kwargs)
    results.append({k: [float(v) for v in vs] for k, vs in history.history.items()})

out = here / "data" / "seed_notebook_keras.json"
out.write_text(json.dumps({"keras": keras.__version__, "tensorflow": tf.__version__, "fits": results}, indent=1) + "\n")
print(f"wrote {out}: {len(results)} fits", file=sys.stderr)

onefit_models.Sequential.fit = original_fit
sys.path.insert(0, str(here))
import parity_cases as cases  # noqa: E402

parity = {}
for opt_case, (opt_class, _) in cases.OPTIMIZERS.items():
    for loss_case, (units, activation, kind, _) in cases.LOSSES.items():
        x, y = cases.data(kind)
        ours = onefit.keras.Sequential([onefit.keras.layers.Dense(8, activation="tanh", input_shape=(5,)),
                                        onefit.keras.layers.Dense(units, activation=activation)], seed=11)
        ours.compile(optimizer=opt_class, loss="mse")  # only for its initial weights
        theirs = keras.Sequential([keras.Input(shape=(5,)), keras.layers.Dense(8, activation="tanh"),
                                   keras.layers.Dense(units, activation=activation)])
        theirs.compile(optimizer=cases.optimizer_object(keras, opt_case), loss=cases.loss_object(keras, loss_case))
        theirs.set_weights(ours.get_weights())
        h = theirs.fit(x, y, batch_size=cases.BATCH, epochs=cases.EPOCHS, shuffle=False, verbose=0)
        parity[f"{opt_case}/{loss_case}"] = [float(v) for v in h.history["loss"]]
out = here / "data" / "keras_parity.json"
out.write_text(json.dumps({"keras": keras.__version__, "cases": parity}, indent=1) + "\n")
print(f"wrote {out}: {len(parity)} cases", file=sys.stderr)
