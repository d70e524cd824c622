#!/usr/bin/env bash
# deps.sh -- install what lil needs to build and test on Debian 12.
#
# Checks every package with dpkg-query first: a machine that already has them
# all does no network at all.  Otherwise it runs `apt-get update` once and
# installs only the missing packages (as root, or through sudo).
set -euo pipefail

PACKAGES=(
    build-essential cmake ninja-build pkg-config
    clang libclang-rt-14-dev llvm          # asan/tsan/fuzz presets, llvm-symbolizer
    cppcheck                               # the lint target
    clang-format clang-tidy                # scripts/format.sh, scripts/tidy.sh (14)
    libjansson-dev libssl-dev libisal-dev  # the library (ISA-L: CRC-32)
    zlib1g-dev                             # tests craft damaged records with crc32
    libyaml-dev libcurl4-openssl-dev libpq-dev libmicrohttpd-dev
    postgresql                             # the PostgreSQL store's tests start a server
    python3
    passwd util-linux                      # useradd, setpriv: tests run lil as a second user
    python3-dev python3-venv               # the Python package: its extension, pip install test
    nodejs                                 # the Node tests' clients (scripts/nodeenv.sh)
    chromium                               # lil serve's browser tests (playwright-core drives it)
)

installed() {
    [ "$(dpkg-query -W -f='${db:Status-Status}' "$1" 2>/dev/null)" = installed ]
}

missing=()
for p in "${PACKAGES[@]}"; do
    installed "$p" || missing+=("$p")
done
# npm comes with some builds of nodejs and is Debian's package npm with
# Debian's.  Debian 12's nodejs is Node 18: the MCP conformance suite needs
# 20.18.1 or newer (scripts/nodeenv.sh says so and fails).
command -v npm >/dev/null 2>&1 || missing+=(npm)

if [ ${#missing[@]} -eq 0 ]; then
    echo "deps: all ${#PACKAGES[@]} packages present"
    exit 0
fi

if [ "$(id -u)" -eq 0 ]; then
    SUDO=()
elif command -v sudo >/dev/null 2>&1; then
    SUDO=(sudo)
else
    echo "deps: missing ${missing[*]}; run this script as root or install sudo" >&2
    exit 1
fi

echo "deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
"${SUDO[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -q
"${SUDO[@]}" env DEBIAN_FRONTEND=noninteractive \
    apt-get install -y -q --no-install-recommends "${missing[@]}"

for p in "${missing[@]}"; do
    if ! installed "$p"; then
        echo "deps: $p did not install" >&2
        exit 1
    fi
done
echo "deps: done"
