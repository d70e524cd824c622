#!/bin/sh
# list-files.sh DIR -- print {"files": [...]}: the regular files of DIR
# whose names need no JSON escaping (letters, digits, . _ - /).
printf '{"files": ['
sep=
for f in "$1"/*; do
    [ -f "$f" ] || continue
    case "$f" in *[!A-Za-z0-9._/-]*) continue ;; esac
    printf '%s"%s"' "$sep" "$f"
    sep=', '
done
printf ']}\n'
