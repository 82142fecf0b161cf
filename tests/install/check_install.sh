#!/usr/bin/env bash
# Installs a built onefit into a temporary prefix, then builds examples/iris.cpp outside the
# project twice, as another project would: with find_package(onefit) (CMake) and with
# pkg-config --static; runs both and checks they train. Usage: check_install.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
build=$(cd "$1" && pwd)
source_dir=$(cd "$2" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cmake --install "$build" --prefix "$work/prefix" >/dev/null
test -x "$work/prefix/bin/onefit"
test -f "$work/prefix/include/onefit/onefit.hpp"

cmake -S "$source_dir/tests/install/consumer" -B "$work/consumer" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_PREFIX_PATH="$work/prefix" -DIRIS_SOURCE="$source_dir/examples/iris.cpp" >/dev/null
cmake --build "$work/consumer" >/dev/null
"$work/consumer/iris_consumer" > "$work/cmake.txt"

pc_dir=$(dirname "$(find "$work/prefix" -name onefit.pc)")
# shellcheck disable=SC2046
g++ -O2 -o "$work/iris_pc" "$source_dir/examples/iris.cpp" \
  $(PKG_CONFIG_PATH="$pc_dir" pkg-config --static --cflags --libs onefit)
"$work/iris_pc" > "$work/pkg-config.txt"

for out in "$work/cmake.txt" "$work/pkg-config.txt"; do
  grep -q 'val_loss' "$out" || { echo "no val_loss in $(basename "$out"):"; cat "$out"; exit 1; }
done
[ "$(grep val_loss "$work/cmake.txt")" = "$(grep val_loss "$work/pkg-config.txt")" ] \
  || { echo "the two builds trained to different results"; exit 1; }
echo "installed onefit: find_package and pkg-config builds of examples/iris.cpp both train"
