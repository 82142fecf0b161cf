#!/usr/bin/env bash
# Installs the Debian packages onefit builds and tests with, skipping those already present.
set -euo pipefail
packages=(build-essential cmake ninja-build libgtest-dev libbenchmark-dev nlohmann-json3-dev
          libcli11-dev libopenblas-dev libblis-dev libxsmm-dev libdnnl-dev libhwy-dev clang libclang-rt-14-dev python3-venv python3-dev pkg-config
          libhdf5-dev libzip-dev libonnx-dev libprotobuf-dev
          openmpi-bin libopenmpi-dev openssh-client)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0
if [ "$(id -u)" -ne 0 ]; then
  echo "onefit: missing Debian packages: ${missing[*]} (run as root, or install them)" >&2
  exit 1
fi
echo "onefit: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}"
