#!/usr/bin/env bash
# Runs every benchmark (`make bench` builds them first; this script builds nothing), then each
# installed peer (`make peers`) on the same workloads, and prints onefit's speed-up over each.
# Every line goes to stdout and to BUILD_DIR/bench_results.txt.
#   bash bench/run.sh BUILD_DIR
set -uo pipefail
build="${1:-build}"
here="$(cd "$(dirname "$0")" && pwd)"
python="${PYTHON:-python3}"
results="$build/bench_results.txt"
[ -d "$build/bench" ] || { echo "bench/run.sh: no $build/bench: run 'make bench' (it builds first)" >&2; exit 2; }
: >"$results"
failed=0

say() { printf '%s\n' "$*" | tee -a "$results"; }
# Runs a command, its stdout to both places. Its stderr (TensorFlow's start-up chatter) is shown
# only when it fails; a failure is reported and remembered, not fatal.
errors="$(mktemp)"
trap 'rm -f "$errors"' EXIT
run() {
  "$@" 2>"$errors" | tee -a "$results"
  local rc=${PIPESTATUS[0]}
  if [ "$rc" -ne 0 ]; then
    sed 's/^/# stderr: /' "$errors" | tail -n 20 | tee -a "$results"
    say "# FAILED (exit $rc): $*"
    failed=1
  fi
}

cpu="$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')"
rev="$(git -C "$here/.." rev-parse --short HEAD 2>/dev/null || echo unknown)"
git -C "$here/.." diff --quiet HEAD 2>/dev/null || rev="$rev+local changes"
say "# onefit benchmarks, $(date -u +%Y-%m-%dT%H:%MZ), commit $rev, $cpu, $(nproc) cores, $(uname -sr)"
say "# load average before: $(cut -d' ' -f1-3 /proc/loadavg) (other work on the machine skews every figure)"
say "# env: OPENBLAS_CORETYPE=${OPENBLAS_CORETYPE:-(unset)} OPENBLAS_L2_SIZE=${OPENBLAS_L2_SIZE:-(unset)} OPENBLAS_NUM_THREADS=${OPENBLAS_NUM_THREADS:-(unset)}"

[ -x "$build/bench/bench_gemm_choice" ] && run "$build/bench/bench_gemm_choice"
[ -x "$build/bench/bench_small_kernels" ] && run "$build/bench/bench_small_kernels"
# oneDNN's convolution primitives against onefit's im2col + GEMM Conv2D on the MNIST convnet's
# shapes (built when libdnnl-dev is installed): SHAPE_{fwd,bwd,step}_us_SIDE, SHAPE_reorder_*_us_*,
# SHAPE_SIDE_over_onefit and SHAPE_onednn_over_onefit (step time ratios; < 1: oneDNN faster).
[ -x "$build/bench/bench_conv_onednn" ] && run "$build/bench/bench_conv_onednn"
run "$build/bench/bench_iris_fit"
# The same fit through the Python package, when this build made it (make's build does).
if [ -f "$build/python/onefit/__init__.py" ] && [ -x "$build/pyenv/bin/python3" ]; then
  run env PYTHONPATH="$build/python" "$build/pyenv/bin/python3" "$here/py_seed_fit.py"
fi
run "$build/bench/bench_sweep"
run "$build/bench/bench_mlp_mnist"
run "$build/bench/bench_cnn_mnist"
# mlp_mnist_vs_sgemm: the MNIST fit's GFLOP/s over the best sgemm rate bench_gemm_choice measured
# for its big product (128x784x256, any library, any thread count) in this run (target >= 0.8).
best_sgemm="$(sed -n 's/^gemm_[a-z0-9]*_mnist1_fwd_gflops: \([0-9.]*\) .*/\1/p' "$results" | sort -g | tail -n 1)"
fit_gflops="$(sed -n 's/^mlp_mnist_gflops: \([0-9.]*\) .*/\1/p' "$results" | tail -n 1)"
if [ -n "$best_sgemm" ] && [ -n "$fit_gflops" ]; then
  say "mlp_mnist_vs_sgemm: $(awk -v f="$fit_gflops" -v g="$best_sgemm" 'BEGIN { printf "%.2f", f / g }') x (fit $fit_gflops GFLOP/s over the best sgemm $best_sgemm GFLOP/s at 128x784x256; target >= 0.8)"
fi
run bash "$here/process_time.sh" "$build"
# Data loading (issue 11): generates BUILD_DIR/bench-data once (~280 MB); its peers, pyarrow and
# numpy, from PYTHON or the venv BUILD_DIR/bench-venv when there is one.
data_python="$python"
[ -z "${PYTHON:-}" ] && [ -x "$build/bench-venv/bin/python" ] && data_python="$build/bench-venv/bin/python"
run env PYTHON="$data_python" "$build/bench/bench_data_load" "$build/bench-data" 5
# The whole `onefit fit` run of the issue on those files (Dense(64), one epoch): its peak RSS.
if [ -x /usr/bin/time ] && [ -x "$build/onefit" ] && [ -f "$build/bench-data/y.npy" ]; then
  for format in csv npy; do
    if [ "$format" = csv ]; then data=(--data "$build/bench-data/data.csv")
    else data=(--data "$build/bench-data/x.npy" --labels "$build/bench-data/y.npy"); fi
    kb="$( { /usr/bin/time -f '%M' "$build/onefit" fit "${data[@]}" --layers 64:relu,10:softmax \
             --loss sparse_categorical_crossentropy --epochs 1 --batch-size 256 --test-size 0 --verbose 0 >/dev/null; } 2>&1 | tail -n 1)"
    say "fit_${format}_peak_rss_mb: $(awk -v k="$kb" 'BEGIN { printf "%.1f", k * 1024 / 1e6 }') MB ($(awk -v k="$kb" 'BEGIN { printf "%.2f", k * 1024 / 80e6 }') x the float32 features)"
  done
fi

# Peers: optional. Run with OPENBLAS_CORETYPE/OPENBLAS_L2_SIZE unset (set on some machines for
# onefit's tests), so each library picks its own kernels as it would for a user.
peer() {  # peer NAME MODULES SCRIPT [ARGS...]
  if "$python" -c "import $2" 2>/dev/null; then
    run env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE "$python" "$here/peers/$3" "${@:4}"
  else
    say "# peer $1: not installed (make peers)"
  fi
}
peer torch "torch, numpy, sklearn" torch_peer.py
peer keras "tensorflow, keras, sklearn" keras_peer.py
# Keras's MNIST convnet on 60,000 images, as bench_cnn_mnist's line (torch's is paired below).
peer keras "tensorflow, keras, sklearn" keras_peer.py cnn
# GridSearchCV over bench_sweep's grid: scikit-learn is in the build's Python (make's set-up).
sk_python="$python"
[ -x "$build/pyenv/bin/python3" ] && sk_python="$build/pyenv/bin/python3"
if "$sk_python" -c "import sklearn" 2>/dev/null; then
  run env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE "$sk_python" "$here/peers/sklearn_sweep_peer.py"
else
  say "# peer sklearn: not installed (make peers)"
fi

# Speed-ups from the collected lines: times peer/onefit, throughputs onefit/peer.
value() { sed -n "s/^$1: \([0-9.eE+-]*\) .*/\1/p" "$results" | tail -n 1; }
ratio() {  # ratio NAME NUMERATOR DENOMINATOR
  local a b
  a="$(value "$2")" b="$(value "$3")"
  [ -n "$a" ] && [ -n "$b" ] && say "$1: $(awk -v a="$a" -v b="$b" 'BEGIN { printf "%.2f", a / b }') x"
}
say "# speed-ups: time ratios are peer/onefit, throughput ratios onefit/peer; > 1 means onefit is faster"
ratio iris_fit_speedup_vs_torch torch_iris_fit_us iris_fit_us
ratio mlp_mnist_speedup_vs_torch mlp_mnist_samples_per_s torch_mlp_mnist_samples_per_s
ratio cnn_mnist_speedup_vs_keras cnn_mnist_samples_per_s keras_cnn_mnist_samples_per_s
ratio iris_fit_speedup_vs_keras keras_iris_fit_us iris_fit_us
ratio iris_fit_speedup_vs_keras_cold keras_iris_cold_fit_us iris_fit_us
ratio py_iris_fit_speedup_vs_keras keras_iris_fit_us py_iris_fit_us
# 1000 members: GridSearchCV's time over onefit's sweep (issue 14's target: >= 1000x), and a Keras
# loop over the grid, each member a fresh model's first fit (keras_iris_cold_fit_us), over
# onefit's time per member.
ratio sweep_speedup_vs_sklearn sklearn_sweep_1000_iris_ms sweep_1000_iris_ms
ratio sweep_speedup_vs_keras_loop keras_iris_cold_fit_us sweep_member_us
py="$(value py_iris_fit_us)" cpp="$(value iris_fit_us)"
[ -n "$py" ] && [ -n "$cpp" ] && say "py_iris_fit_overhead_us: $(awk -v a="$py" -v b="$cpp" 'BEGIN { printf "%.1f", a - b }') us (py_iris_fit_us - iris_fit_us, same run; target <= 20)"

# The MNIST ratio again from paired rounds: onefit's epoch bench, then PyTorch's, back to back,
# five times, and the median of the five ratios. This shared VM slows down in bursts (the same
# binary moves by up to 40%) that can land on one side of a single comparison; the two halves of
# a pair run seconds apart, and the median drops the rounds a burst hit.
# paired NAME ROUNDS LABEL PEER_MODE "ONEFIT_ARGS" "PEER_ENV" [NOTE]: bench_NAME and torch_peer.py
# PEER_MODE back to back, ROUNDS times; prints NAME_speedup_vs_torch_paired, the median ratio.
paired() {
  local name="$1" rounds="$2" label="$3" mode="$4" args="$5" peer_env="$6" note="${7:-}" pairs="" a b r round
  samples() { sed -n "s/^[a-z_]*${name}_samples_per_s: \([0-9.]*\) .*/\1/p"; }
  for ((round = 1; round <= rounds; round++)); do
    # shellcheck disable=SC2086  # ONEFIT_ARGS and PEER_ENV are word lists
    a="$("$build/bench/bench_$name" $args 2>/dev/null | samples)"
    # shellcheck disable=SC2086
    b="$(env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE $peer_env "$python" "$here/peers/torch_peer.py" "$mode" 2>/dev/null | samples)"
    if [ -z "$a" ] || [ -z "$b" ]; then say "# FAILED: paired ${name} round $round"; failed=1; break; fi
    r="$(awk -v a="$a" -v b="$b" 'BEGIN { printf "%.2f", a / b }')"
    say "# $label $round: onefit $a, torch $b samples/s: $r x"
    pairs="$pairs $r"
  done
  [ -n "$pairs" ] && say "${name}_speedup_vs_torch_paired: $(printf '%s\n' $pairs | sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }') x$note"
}
if "$python" -c "import torch, numpy, sklearn" 2>/dev/null; then
  paired mlp_mnist 5 "paired round" mnist "" ""
  # Keras's MNIST convnet: three rounds of 12,800 images (one timed epoch each side after a
  # warm-up; a full 60,000-image epoch is bench_cnn_mnist's line above).
  paired cnn_mnist 3 "paired cnn round" cnn "1 12800" "CNN_SAMPLES=12800" " (target >= 1.5)"
fi
say "# written to $results"
exit "$failed"
