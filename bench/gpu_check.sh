#!/usr/bin/env bash
# The GPU check, for the lent machine with an NVIDIA H200 (or any sm_90 GPU): prints the
# machine's tools, builds onefit with -DONEFIT_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90 (only the
# onefit CLI, bench_gpu_fit and onefit_tests), runs the CUDA tests, bench_gpu_fit, `onefit fit
# --device cuda|cpu` end to end and the PyTorch peer, and prints `name: value unit` lines to
# stdout and to $OUT/gpu_check.txt (when $OUT is set). Every step says `# step NAME: ok` or
# `# step NAME: FAILED ...` and a failed step does not stop the steps that do not need it.
# Never installs anything: that machine has no network and none of onefit's Debian dev
# packages. They come from .gpu-bundle/ (made here by scripts/gpu-bundle.sh, unpacked into the
# build folder); without it the system's packages are used.
#
# The device call (from the checkout the session sends, with .gpu-bundle/ made in it):
#   scripts/gpu-bundle.sh                          # here, once; ~6 MiB, ignored by git
#   run  command: bash bench/gpu_check.sh
#        carry:   [".gpu-bundle"]
#        timeout_s: 600
# Every step has a timeout within GPU_CHECK_BUDGET_S (default 470 s, so under 8 minutes; the
# build gets what the runs after it do not need, 150 s); GPU_CHECK_KEEP_BUILD=1 reuses build-gpu/. Back
# in $OUT: gpu_check.txt, build.log, configure.log, cuda_tests.txt, bench_gpu_fit.txt.
# scripts/gpu-check-rehearse.sh runs it in a clean Debian 12 root without a GPU.
set -uo pipefail
cd "$(dirname "$0")/.."
out=${OUT:-}
build=${GPU_CHECK_BUILD:-build-gpu}
budget=${GPU_CHECK_BUDGET_S:-470}
[ -n "$out" ] && mkdir -p "$out" && : > "$out/gpu_check.txt"
log() { echo "$*"; [ -n "$out" ] && echo "$*" >> "$out/gpu_check.txt"; return 0; }
logpipe() { while IFS= read -r l; do log "$l"; done; }
# Seconds a step may take: its own cap, less what must stay for the later steps ($2).
cap() { local c=$1 l=$(( budget - SECONDS - ${2:-0} )); (( l < c )) && c=$l; (( c < 5 )) && c=5; echo "$c"; }
step() { log "# step $1: $2 (t=${SECONDS}s)"; }
failed=()
fail() { failed+=("$1"); step "$1" "FAILED${2:+ - $2}"; }
save() { [ -n "$out" ] && [ -f "$1" ] && tail -c 8000000 "$1" > "$out/$(basename "$1")"; return 0; }
tail_of() { tail -n "$2" "$1" | sed 's/^/#   /' | logpipe; }
orig_ld=${LD_LIBRARY_PATH:-}

digest=$(find CMakeLists.txt cmake src include tools tests bench -type f 2>/dev/null | LC_ALL=C sort \
         | xargs cat 2>/dev/null | sha256sum | cut -c1-12)
log "# gpu_check $(date -u +%FT%TZ) commit $(git rev-parse --short HEAD 2>/dev/null || echo '?') sources $digest"

# What the machine has, before anything can fail.
nvcc=
for c in /usr/local/cuda/bin/nvcc "$(command -v nvcc 2>/dev/null)"; do [ -n "$c" ] && [ -x "$c" ] && { nvcc=$c; break; }; done
gpus=$(nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>/dev/null | head -1)
{
  echo "== /etc/os-release"; cat /etc/os-release
  echo "== uname -m -r: $(uname -m) $(uname -r); nproc: $(nproc); $(ldd --version 2>&1 | head -1)"
  echo "== g++ ($(command -v g++ || echo none))"; g++ --version | head -1
  echo "== cmake ($(command -v cmake || echo none))"; cmake --version | head -1
  echo "== ninja ($(command -v ninja || echo none)): $(ninja --version 2>&1)"
  echo "== nvcc (${nvcc:-none})"; ${nvcc:-false} --version | tail -2
  echo "== python3 ($(command -v python3 || echo none)): $(python3 --version 2>&1)"
  echo "== nvidia-smi: ${gpus:-no GPU listed}"
  echo "== ld.so.cache: $(ldconfig -p 2>/dev/null | grep -oE 'lib(cuda|cublasLt|gfortran|openblas)\.so[.0-9]*' | sort -u | tr '\n' ' ')"
} 2>&1 | sed 's/^/# /' | logpipe

# The bundle's libraries: unpacked into the build folder, found by CMAKE_PREFIX_PATH, and on
# LD_LIBRARY_PATH for the build (gtest_discover_tests runs onefit_tests) and the runs.
[ "${GPU_CHECK_KEEP_BUILD:-0}" = 1 ] || rm -rf "$build"
mkdir -p "$build"
cmake_deps=()
if [ -f .gpu-bundle/deps.tar.xz ]; then
  deps=$PWD/$build/deps
  rm -rf "$deps" && mkdir -p "$deps"
  if tar -C "$deps" -xJf .gpu-bundle/deps.tar.xz 2>/dev/null \
     || python3 -c 'import sys, tarfile
kw = {"filter": "tar"} if hasattr(tarfile, "tar_filter") else {}
tarfile.open(sys.argv[1]).extractall(sys.argv[2], **kw)' .gpu-bundle/deps.tar.xz "$deps"; then
    step bundle "ok, $(grep -c '^[a-z]' .gpu-bundle/MANIFEST 2>/dev/null) packages into $build/deps"
    cmake_deps=(-DCMAKE_PREFIX_PATH="$deps/usr")
    export LD_LIBRARY_PATH="$deps/usr/lib/x86_64-linux-gnu:$deps/usr/lib/x86_64-linux-gnu/openblas-pthread${orig_ld:+:$orig_ld}"
  else
    fail bundle "could not unpack .gpu-bundle/deps.tar.xz; trying the system's packages"
  fi
else
  log "# no .gpu-bundle/deps.tar.xz (scripts/gpu-bundle.sh makes it; carry .gpu-bundle): using the system's packages"
fi

gen=(-G Ninja); keep_going=(-k 0)
command -v ninja >/dev/null || { gen=(-G "Unix Makefiles"); keep_going=(-k); log "# no ninja: using make"; }
configured=0
t0=$SECONDS
if timeout "$(cap 240 200)" cmake -S . -B "$build" "${gen[@]}" -DCMAKE_BUILD_TYPE=Release -DONEFIT_CUDA=ON -DONEFIT_KERAS_FILES=OFF -DONEFIT_ONNX=OFF \
     -DCMAKE_CUDA_ARCHITECTURES=90 ${nvcc:+-DCMAKE_CUDA_COMPILER="$nvcc"} "${cmake_deps[@]}" \
     > "$build/configure.log" 2>&1; then
  configured=1
  step configure "ok in $(( SECONDS - t0 )) s"
else
  fail configure "exit $? after $(( SECONDS - t0 )) s; configure.log's end:"
  tail_of "$build/configure.log" 25
fi
save "$build/configure.log"

# One build for the three targets, going on past errors (-k 0), so that a test file that does
# not compile still leaves the CLI and the bench built.
declare -A binary=([onefit_cli]=onefit [bench_gpu_fit]=bench/bench_gpu_fit [onefit_tests]=tests/onefit_tests)
if (( configured )); then
  t0=$SECONDS
  touch "$build/.build_start"
  timeout "$(cap "$budget" 150)" cmake --build "$build" -j "$(nproc)" --target onefit_cli bench_gpu_fit onefit_tests \
    -- "${keep_going[@]}" > "$build/build.log" 2>&1
  rc=$?
  log "# build: exit $rc in $(( SECONDS - t0 )) s on $(nproc) cores$( (( rc == 124 )) && echo ' (timed out)')"
  # (ninja -n cannot tell: CONFIGURE_DEPENDS globs make it plan a re-run of CMake first.)
  for t in onefit_cli bench_gpu_fit onefit_tests; do
    b=$build/${binary[$t]}
    if [ ! -x "$b" ]; then
      fail "build_$t" "not built; see build.log"
    elif grep -qE "^FAILED: (.* )?${binary[$t]}( |\$)" "$build/build.log"; then
      fail "build_$t" "its link or post-build step (test discovery) failed; running it anyway"
    elif (( rc != 0 )) && [ "$b" -ot "$build/.build_start" ]; then
      fail "build_$t" "not rebuilt (errors above): an earlier build's binary; running it anyway"
    else
      step "build_$t" ok
    fi
  done
  if (( rc != 0 )); then
    grep -E 'error|FAILED|Error' "$build/build.log" | head -30 | sed 's/^/#   /' | logpipe
    log "#   ... build.log's end:"; tail_of "$build/build.log" 30
  fi
  # The slowest build steps, to size the build on other machines.
  [ -f "$build/.ninja_log" ] && awk -F'\t' 'NR > 1 { printf "%.1f s %s\n", ($2 - $1) / 1000, $4 }' "$build/.ninja_log" \
    | sort -rn | head -5 | sed 's/^/# slowest build step: /' | logpipe
  save "$build/build.log"
fi

# dlopen("libcublasLt.so.N") (src/runtime/cuda/cublaslt_loader.cuh) needs it on the loader's
# path; when ld.so.cache lacks it, the toolkit's own copy is put on LD_LIBRARY_PATH.
cuda_major=$(${nvcc:-false} --version 2>/dev/null | sed -n 's/.*release \([0-9]*\)\..*/\1/p')
if [ -n "$cuda_major" ] && ! ldconfig -p 2>/dev/null | grep -q "libcublasLt\.so\.$cuda_major "; then
  root=$(dirname "$(dirname "$(readlink -f "$nvcc")")")
  for d in "$root/lib64" "$root/lib" "$root/targets/x86_64-linux/lib"; do
    if [ -e "$d/libcublasLt.so.$cuda_major" ]; then
      export LD_LIBRARY_PATH="${LD_LIBRARY_PATH:+$LD_LIBRARY_PATH:}$d"
      log "# note: libcublasLt.so.$cuda_major is not in ld.so.cache; the runs find it in $d"; break
    fi
  done
fi

if [ -x "$build/tests/onefit_tests" ]; then
  timeout "$(cap 180 120)" "./$build/tests/onefit_tests" --gtest_filter='Cuda*' > "$build/cuda_tests.txt" 2>&1
  rc=$?
  passed=$(grep -cE '^\[       OK \] ' "$build/cuda_tests.txt")
  skipped=$(grep -cE '^\[  SKIPPED \] \S+ \(' "$build/cuda_tests.txt")
  nfailed=$(grep -cE '^\[  FAILED  \] \S+ \(' "$build/cuda_tests.txt")
  log "cuda_tests: $passed passed, $skipped skipped, $nfailed failed"
  grep -m1 -A1 ': Skipped$' "$build/cuda_tests.txt" | tail -1 | sed 's/^/#   first skip: /' | logpipe
  if (( rc != 0 )); then
    fail cuda_tests "exit $rc$( (( rc == 124 )) && echo ' (timed out)')"
    grep -E 'Failure|FAILED|error|Expected|Which is|actual' "$build/cuda_tests.txt" | head -30 | sed 's/^/#   /' | logpipe
  elif (( skipped > 0 )) && [ -n "$gpus" ]; then
    fail cuda_tests "tests skipped although nvidia-smi lists a GPU"
  else
    step cuda_tests ok
  fi
  save "$build/cuda_tests.txt"
else
  fail cuda_tests "no test binary"
fi

if [ -x "$build/bench/bench_gpu_fit" ]; then
  timeout "$(cap 240 90)" "./$build/bench/bench_gpu_fit" 200 > "$build/bench_gpu_fit.txt" 2>&1
  rc=$?
  logpipe < "$build/bench_gpu_fit.txt"
  if (( rc == 0 )); then step bench_gpu_fit ok; else fail bench_gpu_fit "exit $rc$( (( rc == 124 )) && echo ' (timed out)')"; fi
  save "$build/bench_gpu_fit.txt"
else
  fail bench_gpu_fit "not built"
fi

# The whole process, and the same with the CPU for scale.
if [ -x "$build/onefit" ]; then
  for dev in cuda cpu; do
    t=$(timeout "$(cap 90 45)" python3 - "$build" "$dev" <<'PY' 2>&1
import subprocess, sys, time
b, dev = sys.argv[1], sys.argv[2]
ts = []
for _ in range(15):
    t = time.perf_counter()
    r = subprocess.run([f"./{b}/onefit", "fit", "--device", dev, "--verbose", "0"], capture_output=True, text=True)
    if r.returncode != 0:
        lines = r.stderr.strip().splitlines() or r.stdout.strip().splitlines()
        print(f"FAILED: exit {r.returncode}: {lines[-1] if lines else ''}")
        sys.exit(1)
    ts.append((time.perf_counter() - t) * 1e3)
print(f"{sorted(ts)[len(ts) // 2]:.1f}")
PY
)
    if [[ $t =~ ^[0-9.]+$ ]]; then
      log "gpu_iris_e2e_ms_${dev}: ${t} ms"; step "e2e_$dev" ok
    else
      fail "e2e_$dev" "$(echo "$t" | tail -1)"
    fi
  done
else
  fail e2e "onefit not built"
fi

# PyTorch sees none of the bundle's libraries.
if LD_LIBRARY_PATH=$orig_ld timeout 60 python3 -c 'import torch; assert torch.cuda.is_available()' 2>/dev/null; then
  LD_LIBRARY_PATH=$orig_ld timeout "$(cap 120 5)" python3 bench/peers/torch_gpu_peer.py 2>&1 | logpipe
  rc=${PIPESTATUS[0]}
  if (( rc == 0 )); then step torch_peer ok; else fail torch_peer "exit $rc"; fi
else
  log "# torch with CUDA not importable here"
fi
[ -n "$out" ] && python3 - "$out/gpu_check.txt" <<'PY' | logpipe
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
log "# gpu_check done in ${SECONDS} s; failed steps: ${failed[*]:-none}"
(( ${#failed[@]} == 0 ))
