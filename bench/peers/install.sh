#!/usr/bin/env bash
# Installs the benchmark peers (`make peers`): Debian's pthread OpenBLAS, then requirements.txt
# into the python3 on PATH. Optional: onefit's build and tests never need any of this.
#
# torch: current torch from PyPI. PyPI has no CPU-only Linux wheel (that build lives only on
# PyTorch's own index, which this project's machines cannot reach), so the default wheel brings
# its CUDA libraries: about 3.3 GB of wheels, 7 GB installed. Measured here (2 cores): all of
# requirements.txt in 232 s, downloads under a minute, well inside the 10 minutes we allow; so we
# take it over Debian's python3-torch 1.13.1 (three years older, and only for /usr/bin/python3,
# not the python3 the other peers use). The CUDA libraries stay unused: the peers run on the CPU.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
python="${PYTHON:-python3}"

if ! dpkg-query -W -f='${Status}' libopenblas0-pthread 2>/dev/null | grep -q "install ok installed"; then
  if [ "$(id -u)" -ne 0 ]; then
    echo "peers: libopenblas0-pthread is missing (run as root, or apt-get install it)" >&2
    exit 1
  fi
  echo "peers: installing libopenblas0-pthread"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends libopenblas0-pthread
fi

echo "peers: pip-installing $here/requirements.txt into $("$python" -c 'import sys; print(sys.executable)')"
"$python" -m pip install --progress-bar off -r "$here/requirements.txt"
# Import each once (TensorFlow's start-up chatter on stderr is dropped; a failure still says which).
TF_CPP_MIN_LOG_LEVEL=3 "$python" - 2>/dev/null <<'PY'
import importlib
for name in ("numpy", "torch", "tensorflow", "keras", "sklearn"):
    try:
        print(f"peers: {name} {importlib.import_module(name).__version__}")
    except Exception as e:
        print(f"peers: {name} does not import: {type(e).__name__}: {e}")
        raise SystemExit(1)
PY
