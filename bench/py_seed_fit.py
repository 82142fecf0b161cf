"""py_iris_fit_us: the seed's fit through onefit.keras, in process (the same fit as bench_iris_fit's
iris_fit_us: Iris 105/45 unshuffled, Dense(32, relu) -> Dense(3, softmax), Adam(0.1), logcosh,
batch 20, 20 epochs with validation, verbose 0), median of many; and py_import_ms, what
`import onefit` adds to a Python start (median of 15 starts, minus a bare start).
    PYTHONPATH=build/python build/pyenv/bin/python3 bench/py_seed_fit.py [RUNS]"""
import statistics
import subprocess
import sys
import time

import numpy as np
from sklearn.datasets import load_iris

import onefit
import onefit.keras as keras
from onefit.keras.layers import Dense
from onefit.keras.optimizers import Adam

runs = int(sys.argv[1]) if len(sys.argv) > 1 else 2000
iris = load_iris()
x, y = iris.data.astype(np.float32), iris.target
x_train, x_val, y_train, y_val = x[:105], x[105:], y[:105], y[105:]
tag = f"({onefit.cpu_simd_target()})"

times = []
for seed in range(runs):
    model = keras.Sequential(seed=seed)
    model.add(Dense(32, input_shape=(4,), activation=onefit.nn.relu))
    model.add(Dense(3, activation=onefit.nn.softmax))
    model.compile(optimizer=Adam(learning_rate=0.1), loss="logcosh")
    with __import__("warnings").catch_warnings():
        __import__("warnings").simplefilter("ignore")  # the seed's label broadcast, every run
        t0 = time.perf_counter()
        model.fit(x_train, y_train, batch_size=20, epochs=20, validation_data=(x_val, y_val), verbose=0,
                  shuffle=False)
        times.append((time.perf_counter() - t0) * 1e6)
print(f"# python seed fit: onefit.keras, {runs} runs, seeds 0..{runs - 1}, Python {sys.version.split()[0]}")
print(f"py_iris_fit_us: {statistics.median(times):.1f} us {tag}")
print(f"py_iris_fit_min_us: {min(times):.1f} us {tag}")


def start_ms(code):
    samples = []
    for _ in range(15):
        t0 = time.perf_counter()
        subprocess.run([sys.executable, "-c", code], check=True)
        samples.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(samples)


bare = start_ms("pass")
print(f"py_import_ms: {start_ms('import onefit') - bare:.1f} ms (python -c 'import onefit', minus a bare start of {bare:.1f} ms)")
print(f"py_import_keras_ms: {start_ms('import onefit.keras') - bare:.1f} ms (onefit.keras, which imports NumPy)")
