#!/usr/bin/env bash
# The step loop is compiled once per SIMD target in cpu_targets.cpp (src/core/simd.hpp). Code
# outside the AVX2/AVX-512 targets' namespaces there (std:: templates, shared helpers, the
# dispatcher) must stay baseline x86-64: the linker keeps one copy of each such symbol for the
# whole program, and an AVX copy would crash an older CPU. Checks the object's disassembly:
# no VEX/EVEX instruction outside onefit::N_AVX2 and onefit::N_AVX3, and some inside them.
# Usage: check-simd-isolation.sh OBJECT... (the library's objects; cpu_targets.cpp.o is picked)
set -euo pipefail
obj=""
for o in "$@"; do
  IFS=';' read -ra parts <<< "$o"
  for p in "${parts[@]}"; do [[ "$p" == *cpu_targets.cpp.o ]] && obj="$p"; done
done
[ -n "$obj" ] || { echo "check-simd-isolation: no cpu_targets.cpp.o among the objects" >&2; exit 1; }
[ "$(uname -m)" = x86_64 ] || { echo "check-simd-isolation: x86-64 only; nothing to check on $(uname -m)"; exit 0; }
objdump -d -C --no-show-raw-insn "$obj" | awk '
  # (lambdas with auto parameters stay mangled: onefit::N_AVX2 reads "6N_AVX2" there)
  /^[0-9a-f]+ <.*>:$/ { name = $0; inside = name ~ /N_AVX[23]::|[0-9]N_AVX[23][0-9]/; next }
  /%[xyz]mm[0-9]+.*%[xyz]mm|%[yz]mm|\tv[a-z]/ {
    if (inside) wide_inside++
    else if ($0 ~ /%[yz]mm|\tv[a-z]/) { bad[name]++; nbad++ }
  }
  END {
    for (n in bad) print "baseline code uses AVX: " bad[n] " instructions in " n
    if (wide_inside == 0) { print "no AVX instruction inside the AVX targets: the check would prove nothing"; exit 1 }
    if (nbad > 0) exit 1
    print "simd isolation: " wide_inside " vector instructions inside the AVX targets, none outside"
  }'
