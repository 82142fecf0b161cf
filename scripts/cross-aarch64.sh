#!/usr/bin/env bash
# Cross-builds onefit for arm64 and runs its whole test suite under qemu-aarch64 (the NEON
# target of the step loop, the GEMM choice without LIBXSMM, every reader and the CLI).
# Installs what is missing (as root): the arm64 architecture, the cross compiler, qemu-user and
# the :arm64 dev packages. .ci/run calls it.
#   bash scripts/cross-aarch64.sh [BUILD_DIR]   (default build-aarch64)
set -euo pipefail
build="${1:-build-aarch64}"
here="$(cd "$(dirname "$0")/.." && pwd)"
arm_packages=(libgtest-dev:arm64 libopenblas-dev:arm64 libblis-dev:arm64 libhwy-dev:arm64)
host_packages=(g++-aarch64-linux-gnu qemu-user)
missing=()
for p in "${host_packages[@]}" "${arm_packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  [ "$(id -u)" -eq 0 ] || { echo "cross-aarch64: missing packages: ${missing[*]} (run as root)" >&2; exit 2; }
  dpkg --print-foreign-architectures | grep -qx arm64 || dpkg --add-architecture arm64
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
fi
# The interop tests' Python runs on the host (numpy and safetensors read what the arm64 build wrote).
bash "$here/scripts/python-env.sh" "$build/pyenv"
cmake -S "$here" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_TOOLCHAIN_FILE="$here/cmake/aarch64-linux-gnu.cmake" -DONEFIT_CUDA=OFF -DONEFIT_MPI=OFF -DONEFIT_BENCH=OFF -DONEFIT_KERAS_FILES=OFF -DONEFIT_ONNX=OFF \
  -DONEFIT_WERROR=ON -DONEFIT_TEST_PYTHON="$(cd "$build" && pwd)/pyenv/bin/python3"
cmake --build "$build" -j "$(nproc)"
file "$build/onefit" | grep -q "ARM aarch64" || { echo "cross-aarch64: $build/onefit is not an arm64 binary" >&2; exit 1; }
ctest --test-dir "$build" --output-on-failure -j "$(nproc)" 2>&1 | tee "$build/ctest.log"
[ "${PIPESTATUS[0]}" -eq 0 ] || exit 1
# As in .ci/run: only the GPU tests may skip.
skipped=$(grep -E '^[[:space:]]+[0-9]+ - .*\(Skipped\)' "$build/ctest.log" | grep -v -E ' - Cuda[A-Za-z]*\.' || true)
if [ -n "$skipped" ]; then
  echo "cross-aarch64: these tests skipped without a hardware reason:"; echo "$skipped"; exit 1
fi
