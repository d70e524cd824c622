#!/usr/bin/env bash
# nodeenv.sh -- the npm packages of the tests that drive `lil mcp` with the
# official TypeScript clients (the MCP SDK, the conformance suite, the
# inspector): tests/mcp/node/package.json and its package-lock.json.
#
#   scripts/nodeenv.sh          make (or reuse) the folder; print its
#                               node_modules directory
#   scripts/nodeenv.sh --path   print the node_modules directory, build nothing
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
pkgdir=$root/tests/mcp/node
lock=$pkgdir/package-lock.json
envs=${LIL_NODE_ROOT:-$root/build/node}
min_node=20.18.1

usage() {
    echo "usage: scripts/nodeenv.sh [--path]" >&2
    exit 64
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
        echo "nodeenv: node $v is too old: the MCP tests need Node $min_node or newer" >&2
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
        if ! (cd "$dir" && npm ci --no-audit --no-fund --loglevel=error >&2); then
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
"")
    [ $# -eq 0 ] || usage
    make_env
    ;;
--path)
    [ $# -eq 1 ] || usage
    echo "$(env_dir)/node_modules"
    ;;
*) usage ;;
esac
