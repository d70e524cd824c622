#!/bin/sh
# disk-usage.sh DIR -- print {"used_pct": N}: how full DIR's file system is.
pct=$(df -P "$1" | awk 'NR == 2 { sub(/%/, "", $5); print $5 }')
printf '{"used_pct": %d}\n' "${pct:-0}"
