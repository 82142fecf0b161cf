#!/usr/bin/env bash
# The Python the interop tests and the Python package's tests run: a virtual environment at $1
# (make passes build/pyenv) with numpy and safetensors (the interop tests check that Python reads
# what onefit writes), nanobind (the module's build), pytest, and scikit-learn (the seed's own
# code loads Iris with it: examples/seed_notebook.py; k-fold is tested against its
# StratifiedKFold), pandas (onefit.sweep's as_frame), and Keras 3 with JAX as its backend
# (onefit.keras.from_keras/to_keras are tested against Keras itself), and tensorboard (its own event
# reader checks the files onefit.keras.callbacks.TensorBoard writes), and onnxruntime (it runs
# the ONNX models onefit exports), from PyPI, so no test ever
# skips for a missing package. Made from Debian's /usr/bin/python3 (python3-venv), not
# whatever python3 is first on PATH; skips what is already there.
set -euo pipefail
env_dir=${1:?usage: scripts/python-env.sh DIR}
python=$env_dir/bin/python3
if [ ! -x "$python" ]; then
  /usr/bin/python3 -m venv "$env_dir"
fi
if ! KERAS_BACKEND=jax "$python" -c 'import numpy, safetensors.numpy, nanobind, pytest, sklearn, pandas, keras, jax, tensorboard, onnxruntime' 2>/dev/null; then
  echo "onefit: installing numpy, safetensors, nanobind, pytest, scikit-learn, pandas, keras, jax, tensorboard and onnxruntime into $env_dir"
  "$python" -m pip install --quiet --disable-pip-version-check numpy safetensors nanobind pytest scikit-learn \
    pandas keras jax tensorboard onnxruntime
fi
