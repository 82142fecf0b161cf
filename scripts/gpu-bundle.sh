#!/usr/bin/env bash
# Makes .gpu-bundle/, the build dependencies bench/gpu_check.sh needs on the lent GPU machine,
# which has CMake, ninja, nvcc and g++ but none of onefit's Debian dev packages and no network.
# Run it HERE (Debian 12, x86-64, apt reaching the Debian mirror; root is not needed), in the
# checkout the device tool sends (a helper's worktree is not sent: run it in, or copy
# .gpu-bundle/ into, the session's own checkout), then name .gpu-bundle in the run's `carry`.
#
#   bash scripts/gpu-bundle.sh      # ~1 min; writes .gpu-bundle/deps.tar.xz and MANIFEST
#
# What it holds: the .deb files of nlohmann-json3-dev, libcli11-dev, libgtest-dev (Debian 12's
# ships prebuilt libgtest.a/libgtest_main.a and a CMake package; its /usr/src sources are
# dropped), libxsmm-dev (static libxsmm.a + libxsmmnoblas.a, the two onefit links; there is no
# libxsmm1 in Debian 12), libopenblas-pthread-dev + libopenblas0-pthread (libopenblas.so.0, only
# onefit_tests links it) and what that needs at run time, libgfortran5 + libquadmath0, unpacked
# with `dpkg -x` into one prefix, trimmed (docs, sources, Fortran modules, unused static
# libraries) and packed as one tar.xz. The alternatives links a dpkg install would make
# (lib/x86_64-linux-gnu/libopenblas.so{,.0} -> openblas-pthread/) are made here, so that plain
# CMAKE_PREFIX_PATH=<prefix>/usr finds everything: the CMake packages of nlohmann_json, CLI11
# and GTest, and CMakeLists.txt's find_path/find_library calls for cblas.h, openblas, libxsmm.h,
# xsmm and xsmmnoblas (no pkg-config is involved). gpu_check.sh unpacks it into its build folder.
#
# Why these libraries and a build there rather than a build folder made here (2026-12):
#  - size decides nothing: the bundle is 6.2 MiB packed (44 MiB unpacked, 36 of it
#    libopenblas.so.0, hence the tar.xz) next to 1.4 MiB of tracked files; the three binaries
#    built here are 15 MiB (onefit 4.3, bench_gpu_fit 2.8, onefit_tests 7.6, cudart static) and
#    onefit_tests would still need libopenblas + libgfortran beside it;
#  - a build here is stale: the CUDA code changes between the bundle and the device call, and a
#    build there compiles exactly the tree the call sends;
#  - CMakeLists.txt builds with -march=native: a binary from this CPU may not run on that one,
#    and with ONEFIT_NATIVE=OFF the CPU-side figures would time other code than a build there;
#  - time: the build is 82 ninja steps, 1055 s summed at -j2 here (the longest: cuda_fit.cu,
#    49 s); on 16 cores that is an estimated 2 minutes of the check's 8, bounded by the chain
#    cuda_fit.cu -> libonefit.a -> a test file -> onefit_tests;
#  - glibc/libstdc++: the bundle's shared libraries need GLIBC_2.34 at most, and its g++ 12
#    static libraries (libgtest.a, libxsmm.a) link with a newer g++ (backward compatible).
# scripts/gpu-check-rehearse.sh builds and runs it in a Debian 12 root without these packages.
set -euo pipefail
cd "$(dirname "$0")/.."
dest=.gpu-bundle
packages=(nlohmann-json3-dev libcli11-dev libgtest-dev libxsmm-dev libopenblas-pthread-dev
          libopenblas0-pthread libgfortran5 libquadmath0 libhwy-dev libblis4-openmp libgomp1)
arch=$(dpkg --print-architecture)
[ "$arch" = amd64 ] || { echo "gpu-bundle: needs an amd64 Debian (this is $arch)" >&2; exit 1; }
command -v apt-get >/dev/null && command -v dpkg-deb >/dev/null || { echo "gpu-bundle: needs apt-get and dpkg-deb" >&2; exit 1; }

tmp=$(mktemp -d /tmp/onefit-gpu-bundle.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/debs" "$tmp/prefix"
# apt-get download needs current package lists; refresh them only when a download fails.
(cd "$tmp/debs" && apt-get download -q "${packages[@]}" >/dev/null 2>&1) || {
  echo "gpu-bundle: apt-get download failed; running apt-get update" >&2
  apt-get update -qq
  (cd "$tmp/debs" && apt-get download -q "${packages[@]}")
}
for deb in "$tmp"/debs/*.deb; do dpkg-deb -x "$deb" "$tmp/prefix"; done

p=$tmp/prefix/usr
multi=lib/x86_64-linux-gnu
# Trim what neither the build nor the run reads.
rm -rf "$p/share/doc" "$p/share/lintian" "$p/src" "$p/bin" "$p/share/gcc"* \
       "$p"/include/libxsmm.f "$p"/include/libxsmm.mod "$p"/include/libxsmm/ \
       "$p"/lib/libxsmmext.a "$p"/lib/libxsmmf.a "$p"/lib/libxsmmgen.a \
       "$p/$multi"/openblas-pthread/*.a "$p/$multi"/openblas-pthread/libblas.so* \
       "$p/$multi"/openblas-pthread/liblapack.so*
# What update-alternatives makes on a dpkg install of libopenblas0-pthread/-dev.
ln -sf openblas-pthread/libopenblas.so "$p/$multi/libopenblas.so"
ln -sf openblas-pthread/libopenblas.so.0 "$p/$multi/libopenblas.so.0"
# ... and of libblis4-openmp (the GEMM choice dlopens libblis.so.4; Highway is headers only).
ln -sf blis-openmp/libblis.so.4 "$p/$multi/libblis.so.4"
rm -f "$p/$multi"/libhwy*.so*
# Sanity: what CMakeLists.txt and the runs look for is there.
for f in include/nlohmann/json.hpp include/CLI/CLI.hpp include/gtest/gtest.h include/libxsmm.h \
         include/x86_64-linux-gnu/openblas-pthread/cblas.h lib/libxsmm.a lib/libxsmmnoblas.a \
         $multi/libgtest.a $multi/libgtest_main.a $multi/cmake/GTest/GTestConfig.cmake \
         share/cmake/nlohmann_json/nlohmann_jsonConfig.cmake share/cmake/CLI11/CLI11Config.cmake \
         $multi/libopenblas.so $multi/libopenblas.so.0 $multi/libgfortran.so.5 $multi/libquadmath.so.0 \
         include/hwy/highway.h $multi/libblis.so.4 $multi/libgomp.so.1; do
  [ -e "$p/$f" ] || { echo "gpu-bundle: missing usr/$f after unpacking" >&2; exit 1; }
done

rm -rf "$dest"
mkdir -p "$dest"
tar -C "$tmp/prefix" -cJf "$dest/deps.tar.xz" usr
{
  echo "# onefit GPU-check bundle, made $(date -u +%FT%TZ) on $(. /etc/os-release; echo "$PRETTY_NAME") by scripts/gpu-bundle.sh"
  echo "# unpacked: $(du -sk "$tmp/prefix" | cut -f1) KiB; packed: $(du -k "$dest/deps.tar.xz" | cut -f1) KiB"
  for deb in "$tmp"/debs/*.deb; do
    echo "$(dpkg-deb -f "$deb" Package) $(dpkg-deb -f "$deb" Version) $(sha256sum "$deb" | cut -c1-16)"
  done
} > "$dest/MANIFEST"
cat "$dest/MANIFEST"
du -sh "$dest"
