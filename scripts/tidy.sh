#!/usr/bin/env bash
# tidy.sh -- run clang-tidy (the checks of .clang-tidy) over src/ and cli/.
#
#   scripts/tidy.sh                     fail on findings the baseline lacks
#   scripts/tidy.sh --update-baseline   write the current findings as baseline
#
# It uses the ci preset's compilation database (build/ci/
# compile_commands.json; configured when missing), builds the one generated
# headers it needs, and runs LIL_TIDY_JOBS (default 2) clang-tidy 14
# processes at a time.  CLANG_TIDY names the binary.
#
# scripts/tidy-baseline.txt lists the findings tolerated for now, as
# "COUNT FILE CHECK" lines.  The run fails when a file has more findings of
# a check than its line allows (a file or check it does not name allows
# none), and prints them; it fails on a compiler error too.  When a file
# has fewer than allowed, it says so: lower the line (--update-baseline)
# so that the count cannot grow back unnoticed.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"

baseline=scripts/tidy-baseline.txt
db=build/ci
jobs=${LIL_TIDY_JOBS:-2}
update=0
case ${1:-} in
"") ;;
--update-baseline) update=1 ;;
*)
    echo "usage: scripts/tidy.sh [--update-baseline]" >&2
    exit 64
    ;;
esac

ct=${CLANG_TIDY:-}
if [ -z "$ct" ]; then
    for c in clang-tidy-14 clang-tidy; do
        if command -v "$c" >/dev/null 2>&1; then
            ct=$c
            break
        fi
    done
fi
if [ -z "$ct" ] || ! "$ct" --version | grep -qE 'version 14\.'; then
    echo "tidy.sh: clang-tidy 14 not found (scripts/deps.sh installs it)" >&2
    exit 1
fi
[ -f $db/compile_commands.json ] || cmake --preset ci >/dev/null
# The generated headers cli/blueprints.c and cli/serve/serve_assets.c include.
cmake --build --preset ci --target lil_blueprints lil_serve_assets >/dev/null

start=$SECONDS
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

# The translation units of src/ and cli/, once each.
python3 - "$db/compile_commands.json" "$root" >"$out/files" <<'EOF'
import json, os, sys
root = sys.argv[2]
files = set()
for e in json.load(open(sys.argv[1])):
    f = os.path.relpath(os.path.join(e["directory"], e["file"]), root)
    if f.startswith(("src/", "cli/")):
        files.add(f)
print("\n".join(sorted(files)))
EOF

# One output file per translation unit; clang-tidy's own exit status is
# ignored: the findings are judged below.
export ct db out
xargs -P "$jobs" -I{} sh -c \
    '"$ct" -p "$db" --quiet "$1" >"$out/$(echo "$1" | tr / _).log" 2>&1 || true' \
    sh {} <"$out/files"

# "FILE:LINE:COL: warning: MESSAGE [CHECK]", relative to the root, once
# each (a header's findings come from every file that includes it).
cat "$out"/*.log |
    sed -n -E "s|^$root/||; /^[^ :]+:[0-9]+:[0-9]+: (warning|error): /p" |
    LC_ALL=C sort -u >"$out/findings"
nfiles=$(wc -l <"$out/files")
nfind=$(wc -l <"$out/findings")

if grep -q ': error: ' "$out/findings"; then
    grep ': error: ' "$out/findings" >&2
    echo "tidy.sh: compiler errors (above)" >&2
    exit 1
fi

# COUNT FILE CHECK
sed -E 's/^([^:]+):.*\[([^]]+)\]$/\1 \2/' "$out/findings" | LC_ALL=C sort | uniq -c |
    awk '{print $1, $2, $3}' >"$out/counts"

if [ $update -eq 1 ]; then
    {
        echo "# clang-tidy findings tolerated for now: COUNT FILE CHECK."
        echo "# Written by scripts/tidy.sh --update-baseline; see that script."
        cat "$out/counts"
    } >"$baseline"
    echo "tidy.sh: $nfind findings in $nfiles files written to $baseline"
    exit 0
fi

touch "$out/known"
[ ! -f "$baseline" ] || grep -v '^#' "$baseline" >"$out/known" || true
failed=0
while read -r n file check; do
    allowed=$(awk -v f="$file" -v c="$check" '$2 == f && $3 == c {print $1}' "$out/known")
    allowed=${allowed:-0}
    if [ "$n" -gt "$allowed" ]; then
        echo "tidy.sh: $file: $n finding(s) of $check, $allowed known:" >&2
        grep -F "$file:" "$out/findings" | grep -F "[$check]" | sed 's/^/  /' >&2
        failed=1
    fi
done <"$out/counts"
while read -r n file check; do
    got=$(awk -v f="$file" -v c="$check" '$2 == f && $3 == c {print $1}' "$out/counts")
    got=${got:-0}
    if [ "$got" -lt "$n" ]; then
        echo "tidy.sh: $file: $got finding(s) of $check, $n known: lower" \
            "$baseline (scripts/tidy.sh --update-baseline)"
    fi
done <"$out/known"

if [ $failed -ne 0 ]; then
    echo "tidy.sh: new findings (above); fix them, or add a NOLINT(check) with its reason" >&2
    exit 1
fi
echo "tidy.sh: $nfiles files, $nfind findings, all known ($baseline), $((SECONDS - start)) s"
