#!/usr/bin/env bash
# Pack a GPU-path build of trainpath with the shared libraries it needs into
# one folder, for a GPU machine that has CUDA but not trainpath's Debian
# libraries (and no network to install them): the device tool's machines
# run their own image. bench/gpu-check.sh uses the folder when it finds it.
#
# usage: bench/gpu-bundle.sh [BUILD_DIR] [DEST]
#   BUILD_DIR  a build with the GPU path (default build-gpu, configured here
#              with -Dgpu=enabled when it does not exist)
#   DEST       the folder to fill (default .gpu; add it to .git/info/exclude
#              and name it in the device tool's carry)
# CUDA's own libraries (libcudart, libnccl, libcublas) are not packed: they
# are large, and the GPU machine's must match its driver; trainpath loads
# them at run time from LD_LIBRARY_PATH, which gpu-check.sh sets.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${1:-build-gpu}
DEST=${2:-.gpu}
die() { echo "gpu-bundle: $*" >&2; exit 2; }

if [ ! -f "$BUILD/build.ninja" ]; then
    meson setup "$BUILD" --buildtype=release -Dgpu=enabled >/dev/null ||
        die "meson setup $BUILD -Dgpu=enabled failed (is the CUDA toolkit installed?)"
fi
ninja -C "$BUILD" trainpath tests/test_gpu >/dev/null || die "build failed in $BUILD"
"$BUILD/trainpath" --version | grep -q "GPU path built" ||
    die "$BUILD/trainpath has no GPU path (configure it with -Dgpu=enabled)"

rm -rf "$DEST"
mkdir -p "$DEST/lib"
cp "$BUILD/trainpath" "$BUILD/tests/test_gpu" "$DEST/"
# every shared library they load, except the C library's own (the GPU
# machine's newer glibc serves a binary built against Debian 12's)
for bin in "$DEST/trainpath" "$DEST/test_gpu"; do
    ldd "$bin" | awk '/=> \// {print $3}'
done | sort -u | while read -r lib; do
    case "$(basename "$lib")" in
    libc.so.* | libm.so.* | libpthread.so.* | libdl.so.* | librt.so.* | ld-linux*) continue ;;
    esac
    cp -L "$lib" "$DEST/lib/"
done
# Open MPI's components are loaded at run time by its own path; the local
# and env launchers that gpu-check.sh uses do not need them
du -sh "$DEST" | awk '{print "gpu-bundle: " $1 " in '"$DEST"' (trainpath, test_gpu, " }' | tr -d '\n'
echo "$(ls "$DEST/lib" | wc -l) libraries)"
