#!/usr/bin/env bash
# install_test.sh BUILD_DIR WORK_DIR CC SOURCE
#
# Install the build into a scratch prefix, build SOURCE (README's example)
# against it with pkg-config alone, run it twice (run, then replay), and run
# the installed `lil` command on the store it made.
set -euo pipefail
build=$1 work=$2 cc=$3 src=$4
rm -rf "$work"
mkdir -p "$work/app"
cmake --install "$build" --prefix "$work/prefix" >"$work/install.log"
pc=$(find "$work/prefix" -name lil.pc)
[ -n "$pc" ] || { echo "no lil.pc installed"; exit 1; }
export PKG_CONFIG_PATH
PKG_CONFIG_PATH=$(dirname "$pc")
libdir=$(pkg-config --variable=libdir lil)
# shellcheck disable=SC2046
"$cc" "$src" $(pkg-config --cflags --libs lil) -Wl,-rpath,"$libdir" -o "$work/app/quickstart"
cd "$work/app"
first=$(./quickstart)
second=$(./quickstart)
[ "$first" = "$second" ] || { echo "replay differs: '$first' vs '$second'"; exit 1; }
"$work/prefix/bin/lil" ls | grep -q "invoice-42  completed" ||
    { echo "installed lil does not list the run"; "$work/prefix/bin/lil" ls; exit 1; }
echo "install: ok ($first)"
