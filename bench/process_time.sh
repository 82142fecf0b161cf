#!/usr/bin/env bash
# iris_process_ms: wall clock of the whole `onefit fit --verbose 0` process (start-up, the seed's
# Iris fit, exit), median of RUNS runs after 3 warm-ups. hyperfine when installed (Debian's
# package), else (or with NO_HYPERFINE=1) a python3 loop with time.perf_counter.
#   bash bench/process_time.sh BUILD_DIR [COMMAND ARGS...]   (default: BUILD_DIR/onefit fit --verbose 0)
set -uo pipefail
build="${1:-build}"
shift || true
if [ $# -gt 0 ]; then cmd=("$@"); else cmd=("$build/onefit" fit --verbose 0); fi
runs="${RUNS:-30}"

# A command that fails is no measurement: say why and print no figure.
err="$("${cmd[@]}" 2>&1 >/dev/null)"
rc=$?
if [ $rc -ne 0 ]; then
  echo "# iris_process_ms: not measured: '${cmd[*]}' exited $rc: $(printf '%s' "$err" | head -n 1)"
  exit 0
fi

if [ -z "${NO_HYPERFINE:-}" ] && command -v hyperfine >/dev/null; then
  json="$(mktemp)"
  trap 'rm -f "$json"' EXIT
  # -N: no shell in between, so the figure is the process alone. Its outlier warnings go to
  # stderr; kept only if it fails.
  if ! err="$(hyperfine -N --warmup 3 --runs "$runs" --style none --output null --export-json "$json" \
                -- "$(printf '%q ' "${cmd[@]}")" 2>&1 >/dev/null)"; then
    echo "# iris_process_ms: not measured: hyperfine failed: $(printf '%s' "$err" | head -n 1)"
    exit 0
  fi
  median_ms="$(python3 -c 'import json, sys; print("%.2f" % (json.load(open(sys.argv[1]))["results"][0]["median"] * 1e3))' "$json")"
  tool="hyperfine $(hyperfine --version | cut -d' ' -f2) -N"
else
  median_ms="$(python3 - "$runs" "${cmd[@]}" <<'PY'
import statistics, subprocess, sys, time
runs, cmd = int(sys.argv[1]), sys.argv[2:]
for _ in range(3):
    subprocess.run(cmd, stdout=subprocess.DEVNULL, check=True)
times = []
for _ in range(runs):
    t0 = time.perf_counter()
    subprocess.run(cmd, stdout=subprocess.DEVNULL, check=True)
    times.append(time.perf_counter() - t0)
print("%.2f" % (statistics.median(times) * 1e3))
PY
)"
  tool="python3 subprocess loop"
fi
echo "# iris_process: '${cmd[*]}' as a whole process, median of $runs runs after 3 warm-ups ($tool)"
echo "iris_process_ms: $median_ms ms"
