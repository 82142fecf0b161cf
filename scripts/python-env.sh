#!/usr/bin/env bash
# The Python the interop tests run: a virtual environment at $1 (make passes build/pyenv) with
# numpy and safetensors from PyPI, so the tests check that Python reads what onefit writes and
# never skip for a missing package. Made from Debian's /usr/bin/python3 (python3-venv), not
# whatever python3 is first on PATH; skips what is already there.
set -euo pipefail
env_dir=${1:?usage: scripts/python-env.sh DIR}
python=$env_dir/bin/python3
if [ ! -x "$python" ]; then
  /usr/bin/python3 -m venv "$env_dir"
fi
if ! "$python" -c 'import numpy, safetensors.numpy' 2>/dev/null; then
  echo "onefit: installing numpy and safetensors into $env_dir"
  "$python" -m pip install --quiet --disable-pip-version-check numpy safetensors
fi
