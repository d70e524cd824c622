#!/bin/sh
# do-next-task.sh TASKS DONE -- "execute" the first task of TASKS: move its
# line to DONE and print {"task": "<the line>"} (JSON-escaped).
set -e
task=$(grep -m1 . "$1" || true)
[ -n "$task" ] || { echo '{"task": ""}'; exit 0; }
printf '%s\n' "$task" >>"$2"
# drop that one line; keep the others, later duplicates included
awk -v t="$task" 'done || $0 != t { print; next } { done = 1 }' "$1" >"$1.tmp"
mv "$1.tmp" "$1"
esc=$(printf '%s' "$task" | sed 's/\\/\\\\/g; s/"/\\"/g')
printf '{"task": "%s"}\n' "$esc"
