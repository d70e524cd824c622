#!/bin/sh
# setup.sh -- (re)create work/ for the examples: a task list, an inbox with
# three files, and the status endpoint set to "pending".
cd "$(dirname "$0")/.." || exit 1
rm -rf work && mkdir -p work/inbox work/seen
printf '%s\n' "write the changelog" "tag the release" "announce it" >work/tasks.txt
for i in 1 2 3; do echo "message $i" >"work/inbox/msg-$i.txt"; done
./scripts/set-status.sh pending
echo "work/ is ready"
