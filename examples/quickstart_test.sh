#!/usr/bin/env bash
# quickstart_test.sh BIN WORKDIR README SOURCE -- the CTest test quickstart.
#
# 1. The C example in README.md is examples/quickstart.c (less its top
#    comment), byte for byte, so the README shows code that builds and runs.
# 2. The program runs twice on one store: the first run executes "fetch"
#    and completes the run, the second replays it and finds the run done;
#    both print the same price and exit 0.
set -euo pipefail

bin=$1
work=$2
readme=$3
src=$4

# The first ```c block of the README, and the source after its top comment.
awk '/^```c$/ && !done { on = 1; next } on && /^```$/ { on = 0; done = 1 } on' \
    "$readme" >"${work}.readme.c"
awk 'body { print; next } /^ \*\/$/ { body = 1 }' "$src" >"${work}.source.c"
if ! diff -u "${work}.source.c" "${work}.readme.c"; then
    echo "README.md's C example differs from $src" >&2
    exit 1
fi

rm -rf "$work"
mkdir -p "$work"
LIL_DIR=$work/store "$bin" >"$work/first.out"
LIL_DIR=$work/store "$bin" >"$work/second.out"
cat "$work/first.out"
expected='price: {"cents":4200,"sku":"sku-7"}'
for f in first second; do
    if [ "$(cat "$work/$f.out")" != "$expected" ]; then
        echo "$f run printed '$(cat "$work/$f.out")', expected '$expected'" >&2
        exit 1
    fi
done
echo "1 passed, 0 failed"
