#!/usr/bin/env bash
# The portable build (the default: every SIMD target in one binary, chosen at run time) against
# a build for this machine only (-DONEFIT_NATIVE=ON), on the seed fit and the MNIST MLP. Builds
# the native benchmarks in NATIVE_DIR (default build-native, ~5 min the first time), then runs
# the two alternately, ROUNDS times, and prints the median of the per-round ratios
# (target: portable within 5% of native, i.e. a ratio >= 0.95).
#   bash bench/native_vs_portable.sh [BUILD_DIR] [NATIVE_DIR] [ROUNDS]
set -euo pipefail
build="${1:-build}" native="${2:-build-native}" rounds="${3:-6}"
here="$(cd "$(dirname "$0")/.." && pwd)"
cmake -S "$here" -B "$native" -G Ninja -DCMAKE_BUILD_TYPE=Release -DONEFIT_NATIVE=ON -DONEFIT_TESTS=OFF \
  -DONEFIT_CUDA=OFF >/dev/null
ninja -C "$native" bench_iris_fit bench_mlp_mnist >/dev/null
figure() {  # figure BINARY NAME ARGS...
  local binary="$1" name="$2"
  shift 2
  "$binary" "$@" 2>/dev/null | sed -n "s/^$name: \([0-9.eE+-]*\) .*/\1/p" | tail -n 1
}
paired() {  # paired BENCH FIGURE HIGHER_IS_BETTER ARGS...
  local bench="$1" name="$2" higher="$3"
  shift 3
  local ratios=()
  for ((r = 1; r <= rounds; r++)); do
    local n p
    n="$(figure "$native/bench/$bench" "$name" "$@")"
    p="$(figure "$build/bench/$bench" "$name" "$@")"
    if [ "$higher" = 1 ]; then ratios+=("$(awk -v p="$p" -v n="$n" 'BEGIN { print p / n }')")
    else ratios+=("$(awk -v p="$p" -v n="$n" 'BEGIN { print n / p }')"); fi
  done
  printf '%s\n' "${ratios[@]}" | sort -g | awk -v name="$name" '
    { v[NR] = $1; line = line " " sprintf("%.3f", $1) }
    END { m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
          printf "portable_vs_native_%s: %.3f x (paired median of %d rounds; >= 0.95 wanted; rounds:%s)\n", name, m, NR, line }'
}
cpu="$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')"
echo "# portable vs native, $cpu; portable SIMD target: $("$build/bench/bench_iris_fit" 1 | sed -n 's/^# machine: .*SIMD target \([A-Z0-9]*\).*/\1/p')"
paired bench_iris_fit iris_fit_us 0 1000
paired bench_mlp_mnist mlp_mnist_samples_per_s 1
