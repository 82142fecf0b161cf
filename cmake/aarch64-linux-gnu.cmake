# Cross-building for arm64 on a Debian x86-64 host (scripts/cross-aarch64.sh): Debian's
# g++-aarch64-linux-gnu, the :arm64 multiarch dev packages under /usr/lib/aarch64-linux-gnu, and
# qemu-aarch64 (qemu-user) to run what was built: the test discovery, ctest and the CLI tests.
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)
set(CMAKE_CXX_COMPILER aarch64-linux-gnu-g++)
set(CMAKE_LIBRARY_ARCHITECTURE aarch64-linux-gnu)
set(CMAKE_CROSSCOMPILING_EMULATOR qemu-aarch64)
