#!/usr/bin/env bash
# nodeenv.sh -- the npm packages of the tests written for Node: a package
# folder's package.json and its package-lock.json.  The folders:
#   tests/mcp/node     (the default) the official TypeScript clients that
#                      drive `lil mcp`: the MCP SDK, the conformance suite,
#                      the inspector
#   tests/serve/node   playwright-core, which drives Debian's chromium in
#                      the browser tests of `lil serve` (no browser is
#                      downloaded: PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1)
#
#   scripts/nodeenv.sh [FOLDER]          make (or reuse) the env of FOLDER
#                                        (relative to the repository, or
#                                        absolute); print its node_modules
#   scripts/nodeenv.sh --path [FOLDER]   print the node_modules directory,
#                                        build nothing
#   scripts/nodeenv.sh --all             make the env of every folder above
#
# The lock names exact versions and their integrity hashes.  The folder is
# build/node/HASH/ (HASH: the first 12 hex digits of the lock's SHA-256, so a
# changed pin makes a new folder and never reuses a stale one), filled with
# `npm ci`; a folder is complete only when its `.ok` file exists, written
# last, so an interrupted install is redone.  Two processes making the same
# folder wait for each other (flock).  Nothing is installed outside
# build/node/.
#
# Node 20.18.1 or newer is needed (the conformance suite's HTTP client,
# undici 7, needs it).  When node or npm is missing or too old, or the
# registry cannot be reached, this script exits 1 saying so: tests that
# need the packages fail, they never skip.  LIL_NODE_ROOT overrides
# build/node.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
folders=(tests/mcp/node tests/serve/node)
pkgdir=
lock=
envs=${LIL_NODE_ROOT:-$root/build/node}
min_node=20.18.1

usage() {
    echo "usage: scripts/nodeenv.sh [--path] [FOLDER] | --all" >&2
    exit 64
}

# use_folder FOLDER: the package folder whose env is made (its lock named).
use_folder() {
    case $1 in
    /*) pkgdir=$1 ;;
    *) pkgdir=$root/$1 ;;
    esac
    lock=$pkgdir/package-lock.json
    if [ ! -f "$pkgdir/package.json" ] || [ ! -f "$lock" ]; then
        echo "nodeenv: $1 has no package.json and package-lock.json" >&2
        exit 64
    fi
}

env_dir() {
    echo "$envs/$(sha256sum "$lock" | cut -c1-12)"
}

# check_node: node and npm are here and node is new enough.
check_node() {
    local v
    if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
        echo "nodeenv: node and npm are needed (Node $min_node or newer;" \
            "scripts/deps.sh installs them)" >&2
        return 1
    fi
    v=$(node -p 'process.versions.node')
    if [ "$(printf '%s\n%s\n' "$min_node" "$v" | sort -V | head -n 1)" != "$min_node" ]; then
        echo "nodeenv: node $v is too old: the Node tests need Node $min_node or newer" >&2
        return 1
    fi
}

make_env() {
    local dir
    check_node || return 1
    dir=$(env_dir)
    mkdir -p "$envs"
    exec 9>"$dir.lock"
    flock 9
    if [ ! -e "$dir/.ok" ]; then
        rm -rf "$dir"
        mkdir -p "$dir"
        cp "$pkgdir/package.json" "$lock" "$dir/"
        echo "nodeenv: installing $(basename "$dir") from ${lock#"$root"/}" >&2
        if ! (cd "$dir" && PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 \
            npm ci --no-audit --no-fund --loglevel=error >&2); then
            echo "nodeenv: npm could not install ${lock#"$root"/} (is the npm registry" \
                "reachable? these tests need it and fail without it)" >&2
            rm -rf "$dir"
            exec 9>&-
            return 1
        fi
        touch "$dir/.ok"
    fi
    exec 9>&-
    echo "$dir/node_modules"
}

case ${1:-} in
--all)
    [ $# -eq 1 ] || usage
    rc=0
    for f in "${folders[@]}"; do
        use_folder "$f"
        make_env >/dev/null || rc=1
    done
    exit $rc
    ;;
--path)
    [ $# -le 2 ] || usage
    use_folder "${2:-${folders[0]}}"
    echo "$(env_dir)/node_modules"
    ;;
-*) usage ;;
*)
    [ $# -le 1 ] || usage
    use_folder "${1:-${folders[0]}}"
    make_env
    ;;
esac
