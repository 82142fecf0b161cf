#!/usr/bin/python3
"""CI (issue 28): the build compiles on every CPU class users have, proved without the hardware.

  scripts/ci-march.py BUILD_DIR

BUILD_DIR is a configured and built tree (its compile_commands.json and ninja's header deps).
Three checks, each failing with the file and the flag that broke:
1. The default build is portable: no compile command uses -march=native (a file built for the
   build machine fails on CPUs that GCC or Highway do not know, as bench_conv_onednn did on
   Sapphire Rapids).
2. Highway's choice of SIMD targets compiles for every -march value this compiler knows, with the
   build's own HWY_DISABLED_TARGETS (cmake/simd_probe.cpp: the check ONEFIT_NATIVE=ON makes at
   configure time, so this is ONEFIT_NATIVE "as if on" each CPU).
3. Every translation unit that includes core/simd.hpp, with the build's own flags, compiles
   (-fsyntax-only) with its -march replaced by each CPU class in CPU_CLASSES: what ONEFIT_NATIVE=ON
   compiles on such a CPU (the portable build's flags do not depend on the CPU once check 1 holds).
"""
import json
import os
import re
import shlex
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# The CPU classes users have, as GCC 12 names them; a class GCC does not know is given as the
# flags its -march=native gives there (GCC 12.2 has no znver4: a Zen 4 is znver3 plus AVX-512).
X86_CLASSES = {
    "x86-64-v2": "-march=x86-64-v2",
    "haswell": "-march=haswell",
    "skylake-avx512": "-march=skylake-avx512",
    "icelake-server": "-march=icelake-server",
    "sapphirerapids": "-march=sapphirerapids",
    "alderlake": "-march=alderlake",
    "znver3": "-march=znver3",
    "znver4": "-march=znver4",
}
ZEN4_AS_GCC12_SEES_IT = ("-march=znver3 -mavx512f -mavx512dq -mavx512cd -mavx512bw -mavx512vl -mavx512ifma "
                         "-mavx512vbmi -mavx512vbmi2 -mavx512vnni -mavx512bitalg -mavx512vpopcntdq -mavx512bf16 "
                         "-mgfni -mvaes -mvpclmulqdq")
# aarch64 (the cross-build's tree): the portable floor, Graviton 2 (Neoverse N1), Graviton 3
# (V1, SVE), Graviton 4 (V2, SVE2), Jetson Orin (Cortex-A78AE).
ARM_CLASSES = {
    "armv8-a+crypto": "-march=armv8-a+crypto",
    "neoverse-n1": "-mcpu=neoverse-n1",
    "neoverse-v1": "-mcpu=neoverse-v1",
    "neoverse-v2": "-march=armv9-a+crypto",
    "cortex-a78ae": "-mcpu=cortex-a78ae",
}
PORTABLE_MARCH = re.compile(r"^-m(arch|cpu)=")


def fail(msg):
    print("ci-march: " + msg, file=sys.stderr)
    sys.exit(1)


def compiles(args, timeout=600):
    r = subprocess.run(args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=timeout)
    return r.returncode == 0, r.stdout


def first_error(out):
    for line in out.splitlines():
        if "error" in line:
            return line.strip()
    return out.strip().splitlines()[-1] if out.strip() else "(no output)"


def known_marches(compiler, is_arm):
    """Every -march value the compiler lists (it names them when given a bad one)."""
    flag = "-mcpu=" if is_arm else "-march="
    _, out = compiles([compiler, flag + "onefit-no-such-cpu", "-x", "c++", "-fsyntax-only", "/dev/null"])
    m = re.search(r"valid arguments (?:to \S+ switch )?are: ([^\n;]*)", out)
    if not m:
        fail(f"{compiler} did not list its {flag} values:\n{out}")
    names = [n for n in m.group(1).split() if n not in ("native",) and not n.endswith(";")]
    return [flag + n for n in names]


def main():
    if len(sys.argv) != 2:
        fail("usage: scripts/ci-march.py BUILD_DIR")
    build = os.path.abspath(sys.argv[1])
    start = time.time()
    try:
        with open(os.path.join(build, "compile_commands.json")) as f:
            commands = json.load(f)
    except OSError as e:
        fail(f"{build}: no compile_commands.json ({e.strerror}): configure the build first")
    cxx = [c for c in commands if c["file"].endswith((".cpp", ".cc", ".cxx"))]
    if not cxx:
        fail(f"{build}/compile_commands.json has no C++ commands")

    # 1. portable
    native = [os.path.relpath(c["file"], ROOT) for c in cxx if "-march=native" in shlex.split(c["command"])
              or "-mcpu=native" in shlex.split(c["command"])]
    if native:
        fail("the default build compiles these for the build machine (-march=native): " + ", ".join(native))
    print(f"ci-march: 1. no -march=native in {len(cxx)} compile commands of {build}")

    args0 = shlex.split(cxx[0]["command"])
    compiler = args0[0]
    is_arm = any(a.startswith("-march=armv") for a in args0)
    hwy_def = next((a for a in args0 if a.startswith("-DHWY_DISABLED_TARGETS=")), None)
    if not hwy_def:
        fail(f"{cxx[0]['file']}: its command has no -DHWY_DISABLED_TARGETS")
    hwy_inc = next((a for a in args0 if a.startswith("-I") and os.path.exists(a[2:] + "/hwy/highway.h")), None)
    probe = os.path.join(ROOT, "cmake", "simd_probe.cpp")

    # 2. Highway's target choice for every -march the compiler knows
    def probe_one(march):
        args = [compiler, "-std=c++20", hwy_def, *march.split(), "-fsyntax-only", probe]
        if hwy_inc:
            args.insert(1, hwy_inc)
        ok, out = compiles(args)
        return march, ok, out

    marches = known_marches(compiler, is_arm)
    with ThreadPoolExecutor(os.cpu_count() or 2) as pool:
        results = list(pool.map(probe_one, marches))
    bad = [(m, first_error(o)) for m, ok, o in results if not ok]
    if bad:
        fail("Highway cannot build for these CPUs (what ONEFIT_NATIVE=ON would meet there):\n" +
             "\n".join(f"  {m}: {e}" for m, e in bad))
    print(f"ci-march: 2. Highway's targets compile for all {len(marches)} {'-mcpu' if is_arm else '-march'} "
          f"values {os.path.basename(compiler)} knows")

    # 3. every file that includes core/simd.hpp, per CPU class
    deps = subprocess.run(["ninja", "-C", build, "-t", "deps"], stdout=subprocess.PIPE, text=True, check=True).stdout
    simd_objects, obj = set(), None
    for line in deps.splitlines():
        if line and not line[0].isspace():
            obj = line.split(":")[0]
        elif obj and line.strip().endswith("src/core/simd.hpp"):
            simd_objects.add(obj)
    units = [c for c in cxx if any(c["command"].find(" -o " + o + " ") >= 0 for o in simd_objects)]
    if not units:
        fail(f"{build}: ninja knows no object that includes src/core/simd.hpp: build the tree first")

    classes = dict(ARM_CLASSES if is_arm else X86_CLASSES)
    if not is_arm and "-march=znver4" not in marches:
        classes["znver4"] = ZEN4_AS_GCC12_SEES_IT

    def unit_for(c, flags):
        args = shlex.split(c["command"])
        out = []
        skip = False
        for a in args:
            if skip:
                skip = False
                continue
            if a in ("-o", "-MF", "-MT", "-MQ"):
                skip = True
                continue
            if a in ("-c", "-MD", "-MMD"):
                continue
            if PORTABLE_MARCH.match(a):
                out.extend(flags.split())
                continue
            out.append(a)
        return out + ["-fsyntax-only"]

    jobs = [(name, c) for name in classes for c in units]

    def check(job):
        name, c = job
        ok, out = compiles(unit_for(c, classes[name]), timeout=900)
        return name, c["file"], ok, out

    with ThreadPoolExecutor(os.cpu_count() or 2) as pool:
        results = list(pool.map(check, jobs))
    bad = [(n, os.path.relpath(f, ROOT), first_error(o)) for n, f, ok, o in results if not ok]
    if bad:
        fail("these files do not compile for these CPUs:\n" + "\n".join(f"  {n}: {f}: {e}" for n, f, e in bad))
    print(f"ci-march: 3. {len(units)} files that include core/simd.hpp compile for {', '.join(classes)} "
          f"({time.time() - start:.0f} s)")


if __name__ == "__main__":
    main()
