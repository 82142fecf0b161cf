#!/usr/bin/env bash
# Builds onefit and its tests with AddressSanitizer + UndefinedBehaviorSanitizer in build-asan/
# and runs every test under ctest: any memory error, leak or UB report fails the run.
# Usage: scripts/ci-sanitizers.sh   (BUILD_ASAN=dir to build elsewhere, JOBS=n for parallelism)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD_ASAN:-$root/build-asan}
jobs=${JOBS:-$(nproc)}

# RelWithDebInfo: optimised like the real build (some UB only shows up optimised), with line
# numbers in the reports; portable SIMD dispatch as in the shipped build.
# The interop tests' Python: the one make's set-up made (scripts/python-env.sh).
python_env=${ONEFIT_PYTHON_ENV:-$root/build/pyenv}
bash "$root/scripts/python-env.sh" "$python_env"
# Only the SIMD copies this CPU can run: an AVX-512 copy nobody runs costs minutes under ASan.
simd_disable=
if [ "$(uname -m)" = x86_64 ] && ! grep -qw avx512f /proc/cpuinfo; then simd_disable=HWY_AVX3; fi
cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DONEFIT_SANITIZE=address,undefined -DONEFIT_BENCH=OFF -DONEFIT_CUDA=OFF -DONEFIT_SIMD_DISABLE="$simd_disable" \
  -DONEFIT_TEST_PYTHON="$python_env/bin/python3" >/dev/null
cmake --build "$build" -j "$jobs"

export ASAN_OPTIONS=detect_leaks=1:abort_on_error=0:strict_string_checks=1:detect_stack_use_after_return=1
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
# A test is run a second time only if its first run failed: GCC 12's LeakSanitizer sometimes
# crashes in its own tracer at exit ("Tracer caught signal 11", google/sanitizers#1353), after
# the test passed, on a loaded machine. A real leak or memory error fails both runs.
ctest --test-dir "$build" --output-on-failure -j "$jobs" --repeat until-pass:2
