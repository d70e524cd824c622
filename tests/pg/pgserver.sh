#!/usr/bin/env bash
# pgserver.sh -- a throwaway PostgreSQL server for the tests and benchmarks.
#
#   pgserver.sh start DIR      initdb in DIR/data, start it; prints the
#                              connection string (also in DIR/url)
#   pgserver.sh stop DIR       stop it (immediate) and remove DIR
#   pgserver.sh restart DIR MODE   pg_ctl restart -m MODE (fast, immediate)
#   pgserver.sh url DIR        print the connection string
#
# The server listens on a unix socket in DIR only (listen_addresses is
# empty), so servers of several builds never compete for a TCP port; DIR
# must be short (a socket path has at most 107 bytes).  fsync and
# synchronous_commit stay on: the tests measure and check real durability.
# Authentication is trust, for the superuser "postgres" (the tests create
# other roles themselves).  initdb refuses to run as root: as root the
# server runs as the system user postgres (Debian's postgresql package makes
# it), and DIR is given to it.  PostgreSQL's programs are found through
# PG_BINDIR, else the newest /usr/lib/postgresql/*/bin, else PATH.
set -euo pipefail

usage() {
    echo "usage: pgserver.sh start|stop|url DIR | restart DIR fast|immediate" >&2
    exit 64
}
[ $# -ge 2 ] || usage
cmd=$1
dir=$2

bindir=${PG_BINDIR:-}
if [ -z "$bindir" ]; then
    for d in $(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V -r); do
        if [ -x "$d/initdb" ]; then
            bindir=$d
            break
        fi
    done
fi
if [ -z "$bindir" ] && command -v initdb >/dev/null 2>&1; then
    bindir=$(dirname "$(command -v initdb)")
fi

as_owner() {
    if [ "$(id -u)" -eq 0 ]; then
        runuser -u postgres -- "$@"
    else
        "$@"
    fi
}

url_of() {
    echo "postgresql:///postgres?host=$1&user=postgres"
}

need_bindir() {
    if [ -z "$bindir" ] || [ ! -x "$bindir/pg_ctl" ]; then
        echo "pgserver.sh: PostgreSQL server programs not found (install the Debian" \
            "package postgresql, or set PG_BINDIR)" >&2
        exit 1
    fi
}

stop_server() {
    if [ -f "$1/data/postmaster.pid" ]; then
        as_owner "$bindir/pg_ctl" -D "$1/data" -m immediate -w stop >/dev/null 2>&1 || true
    fi
}

start() {
    need_bindir
    stop_server "$dir"
    rm -rf "$dir"
    mkdir -p "$dir"
    if [ "$(id -u)" -eq 0 ]; then
        chown postgres: "$dir"
    fi
    chmod 0700 "$dir"
    as_owner "$bindir/initdb" -D "$dir/data" -A trust -U postgres -E UTF8 \
        --locale=C.UTF-8 >"$dir/initdb.log" 2>&1 || {
        cat "$dir/initdb.log" >&2
        exit 1
    }
    # Room for parallel tests and their pools; small memory; logs in DIR.
    cat >>"$dir/data/postgresql.conf" <<CONF
listen_addresses = ''
unix_socket_directories = '$dir'
max_connections = 300
shared_buffers = 32MB
fsync = on
synchronous_commit = on
log_min_messages = warning
log_min_error_statement = panic
CONF
    as_owner "$bindir/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 start \
        >/dev/null || {
        cat "$dir/server.log" >&2
        exit 1
    }
    url_of "$dir" >"$dir/url"
    url_of "$dir"
}

case $cmd in
start) start ;;
stop)
    need_bindir
    stop_server "$dir"
    rm -rf "$dir"
    ;;
restart)
    [ $# -ge 3 ] || usage
    need_bindir
    as_owner "$bindir/pg_ctl" -D "$dir/data" -l "$dir/server.log" -m "$3" -w -t 60 \
        restart >/dev/null
    ;;
url) url_of "$dir" ;;
*) usage ;;
esac
