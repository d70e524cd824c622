#!/bin/sh
# take-inbox.sh INBOX SEEN -- move every file of INBOX to SEEN and print
# {"new": <files moved now>, "total": <files in SEEN>}.
mkdir -p "$1" "$2"
new=0
for f in "$1"/* "$1"/.[!.]*; do
    [ -f "$f" ] || continue
    mv "$f" "$2"/ && new=$((new + 1))
done
total=$(find "$2" -type f | wc -l)
printf '{"new": %d, "total": %d}\n' "$new" "$total"
