#!/usr/bin/env bash
# A/B two builds of one benchmark on this noisy shared machine: runs them alternately, N rounds,
# and prints each one's figures sorted and its median. Alternating puts both through the same
# bursts of load; one run of each in a row would not (the same binary moves by up to 40%).
#   bash bench/ab.sh [-n ROUNDS] [-m FIGURE] BINARY_A BINARY_B [ARGS...]
#   bash bench/ab.sh -n 8 -m mlp_mnist_samples_per_s /tmp/old/bench_mlp_mnist build/bench/bench_mlp_mnist 5
set -euo pipefail
rounds=6
figure=mlp_mnist_samples_per_s
while getopts "n:m:" opt; do
  case "$opt" in
    n) rounds="$OPTARG" ;;
    m) figure="$OPTARG" ;;
    *) echo "usage: bench/ab.sh [-n ROUNDS] [-m FIGURE] BINARY_A BINARY_B [ARGS...]" >&2; exit 2 ;;
  esac
done
shift $((OPTIND - 1))
[ $# -ge 2 ] || { echo "usage: bench/ab.sh [-n ROUNDS] [-m FIGURE] BINARY_A BINARY_B [ARGS...]" >&2; exit 2; }
a="$1" b="$2"
shift 2
for binary in "$a" "$b"; do [ -x "$binary" ] || { echo "bench/ab.sh: $binary is not an executable" >&2; exit 2; }; done

values_a="" values_b=""
for ((round = 1; round <= rounds; round++)); do
  for side in a b; do
    binary="$a"; [ "$side" = b ] && binary="$b"
    value="$("$binary" "$@" 2>/dev/null | sed -n "s/^$figure: \([0-9.eE+-]*\) .*/\1/p" | tail -n 1)"
    [ -n "$value" ] || { echo "bench/ab.sh: $binary printed no '$figure: VALUE UNIT' line" >&2; exit 1; }
    if [ "$side" = a ]; then values_a="$values_a $value"; else values_b="$values_b $value"; fi
  done
done
summary() {  # summary LABEL VALUES...
  local label="$1"
  shift
  printf '%s\n' "$@" | sort -g | awk -v label="$label" '
    { v[NR] = $1; line = line " " $1 }
    END { m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2; printf "%s median %g:%s\n", label, m, line }'
}
summary "A ($a)" $values_a
summary "B ($b)" $values_b
