#!/usr/bin/env bash
# Fuzzes onefit's file readers, and the bytes an MPI sweep's ranks exchange: builds fuzz/ with
# clang (libFuzzer + ASan + UBSan) in build-fuzz/, runs each target for SECONDS (default 30) over
# a copy of its seed corpus (fuzz/corpus/TARGET, never modified) and fails on any crash,
# sanitizer report, leak or hang.
# A failing input is kept as build-fuzz/run/TARGET/crash-*; rerun it with
#   build-fuzz/fuzz_TARGET build-fuzz/run/TARGET/crash-...
# Usage: scripts/ci-fuzz.sh [SECONDS]   (BUILD_FUZZ=dir to build elsewhere)
set -euo pipefail
seconds=${1:-30}
root=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD_FUZZ:-$root/build-fuzz}
targets=(csv npy idx safetensors members keras)

if ! command -v clang++ >/dev/null; then
  echo "ci-fuzz: clang++ not found; install clang and libclang-rt-14-dev (Debian 12)" >&2
  exit 1
fi
cmake -S "$root/fuzz" -B "$build" -G Ninja -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build "$build"

# libhdf5 leaks a little on some damaged files' error paths (its own code, Debian's build): those
# leaks are suppressed by library name, as in the sanitizer leg; any other leak still fails.
export LSAN_OPTIONS=suppressions=$root/scripts/lsan-suppressions.txt
failed=()
for target in "${targets[@]}"; do
  work=$build/run/$target
  rm -rf "$work"
  mkdir -p "$work/corpus"
  cp "$root/fuzz/corpus/$target/"* "$work/corpus/"
  options=(-max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1
           -artifact_prefix="$work/")
  [ -f "$root/fuzz/$target.dict" ] && options+=(-dict="$root/fuzz/$target.dict")
  # A damaged HDF5 file can make libhdf5 ask malloc for an impossible size (2^64 - 2^40); outside
  # ASan malloc returns null, which libhdf5 checks, so fuzz_keras sees what a real run sees.
  export ASAN_OPTIONS=allocator_may_return_null=$([ "$target" = keras ] && echo 1 || echo 0)
  echo "== fuzz_$target: $seconds s"
  if "$build/fuzz_$target" "${options[@]}" "$work/corpus" >"$work/log.txt" 2>&1; then
    execs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$work/log.txt" | grep -o '[0-9]*$' || echo '?')
    corpus=$(ls "$work/corpus" | wc -l)
    echo "fuzz_$target: ok, $execs runs, corpus $corpus inputs"
  else
    echo "fuzz_$target: FAILED; the end of $work/log.txt:" >&2
    tail -n 40 "$work/log.txt" >&2
    ls "$work"/crash-* "$work"/leak-* "$work"/timeout-* "$work"/oom-* 2>/dev/null >&2 || true
    failed+=("$target")
  fi
done
if [ ${#failed[@]} -gt 0 ]; then
  echo "ci-fuzz: failed: ${failed[*]}" >&2
  exit 1
fi
echo "ci-fuzz: ${#targets[@]} targets, $seconds s each, no crash"
