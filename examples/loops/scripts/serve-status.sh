#!/bin/sh
# serve-status.sh -- serve work/www/ (status.json, made by setup.sh) on
# 127.0.0.1:8765 for poll-until.yaml.  Stop it with Ctrl-C.
cd "$(dirname "$0")/.." || exit 1
[ -f work/www/status.json ] || ./scripts/set-status.sh pending || exit 1
exec python3 -m http.server 8765 --bind 127.0.0.1 --directory work/www
