#!/bin/sh
# set-status.sh pending|ready|failed -- what the status endpoint answers
# (work/www/status.json).
cd "$(dirname "$0")/.." || exit 1
case "$1" in
pending | ready | failed) ;;
*) echo "usage: $0 pending|ready|failed" >&2; exit 64 ;;
esac
mkdir -p work/www && printf '{"state": "%s"}\n' "$1" >work/www/status.json.tmp &&
    mv work/www/status.json.tmp work/www/status.json
