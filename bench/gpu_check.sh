#!/usr/bin/env bash
# The GPU check, for a machine with an NVIDIA H100/H200: builds with -arch=sm_90, runs the CUDA
# tests, then prints `name: value unit` lines to stdout and to $OUT/gpu_check.txt (when $OUT is
# set). Run from the repository root; fits in about 5 minutes.
set -uo pipefail
cd "$(dirname "$0")/.."
out=${OUT:-}
log() { echo "$*"; [ -n "$out" ] && echo "$*" >> "$out/gpu_check.txt"; }
[ -n "$out" ] && mkdir -p "$out" && : > "$out/gpu_check.txt"
log "# gpu_check $(date -u +%FT%TZ) commit $(git rev-parse --short HEAD 2>/dev/null || echo '?')"
log "# $(nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>/dev/null | head -1)"
bash scripts/install-deps.sh >/dev/null 2>&1 || true
build=build-gpu
cmake -S . -B $build -G Ninja -DCMAKE_BUILD_TYPE=Release -DONEFIT_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90 >/dev/null \
  || { log "# configure failed"; exit 1; }
cmake --build $build -j "$(nproc)" 2>&1 | tail -3
status=0
if ./$build/tests/onefit_tests --gtest_filter='Cuda*' > $build/cuda_tests.txt 2>&1; then
  log "cuda_tests: $(grep -c '\[       OK \]' $build/cuda_tests.txt) passed"
else
  status=1
  log "cuda_tests: FAILED"; grep -E 'Failure|FAILED|error' $build/cuda_tests.txt | head -20 | sed 's/^/# /' | while read -r l; do log "$l"; done
fi
[ -n "$out" ] && cp $build/cuda_tests.txt "$out/" 2>/dev/null
timeout 240 ./$build/bench/bench_gpu_fit 200 2>&1 | while read -r l; do log "$l"; done
# The whole process, and the same with the CPU for scale.
for dev in cuda cpu; do
  t=$(python3 - "$build" "$dev" <<'PY'
import subprocess, sys, time
b, dev = sys.argv[1], sys.argv[2]
ts = []
for _ in range(15):
    t = time.perf_counter()
    subprocess.run([f"./{b}/onefit", "fit", "--device", dev, "--verbose", "0"], check=True, capture_output=True)
    ts.append((time.perf_counter() - t) * 1e3)
print(f"{sorted(ts)[len(ts) // 2]:.1f}")
PY
)
  log "gpu_iris_e2e_ms_${dev}: ${t} ms"
done
if python3 -c 'import torch; assert torch.cuda.is_available()' 2>/dev/null; then
  timeout 120 python3 bench/peers/torch_gpu_peer.py 2>&1 | while read -r l; do log "$l"; done
else
  log "# torch with CUDA not importable here"
fi
[ -n "$out" ] && python3 - "$out/gpu_check.txt" <<'PY' | while read -r l; do log "$l"; done
import re, sys
v = {}
for line in open(sys.argv[1]):
    m = re.match(r"^(\w+): ([0-9.eE+-]+)", line)
    if m: v[m.group(1)] = float(m.group(2))
o = v.get("gpu_mlp_mnist_samples_per_s")
for peer in ("torch_gpu_mlp_mnist_samples_per_s", "torch_gpu_graph_mlp_mnist_samples_per_s"):
    if o and v.get(peer):
        print(f"{peer.replace('torch_', 'speedup_vs_torch_').replace('_samples_per_s', '')}: {o / v[peer]:.2f} x")
PY
exit $status
