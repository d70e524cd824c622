#!/usr/bin/env bash
# test.sh -- build lil and run its tests, the way CI does.
#
#   scripts/test.sh            presets ci, asan and tsan; label "slow" excluded
#   scripts/test.sh --slow     the same, with the slow tests too
#   scripts/test.sh --preset ci [--preset asan ...]   only these presets
#
# ci    RelWithDebInfo with -Werror: the whole suite, cppcheck (target lint),
#       the layout check (scripts/format.sh) and clang-tidy (scripts/tidy.sh,
#       over the ci build's compile_commands.json)
# asan  the whole suite again under ASan + UBSan (leak checks on), asserts on
# tsan  only the multithreaded tests (ctest -R "$LIL_TSAN_TESTS", default
#       the thread, locking, effect, marker, scan, JSON, child-process and
#       fork tests): group commit, shared runs and stores, processes racing
#       for runs and markers, the recovery scan that checks the chain on a
#       second thread, jansson's allocations from many threads and envs,
#       and child processes, under TSan; and test_loop_api (loop runs
#       stopped and interrupted from another thread); and the PostgreSQL
#       store's threads, locking and markers (its group commit, leases and
#       the renewing thread: pg_test_*, test_pg_store); and test_begin
#       (calls begun on one thread and ended on others)
#
# Each preset builds in build/<preset>.  The script prints one summary line
# per preset, then a total, and exits non-zero if anything failed.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"

TSAN_TESTS=${LIL_TSAN_TESTS:-^(test_(threads|locking|effects|markers|scan|json|proc|fork|loop_api|pg_store|begin)|pg_test_(threads|locking|markers))$}  # ctest -R regex for tsan
JOBS=${LIL_TEST_JOBS:-2}              # ctest -j
TIMEOUT=${LIL_TEST_TIMEOUT:-300}      # seconds per test

slow=0
presets=()
usage() {
    echo "usage: scripts/test.sh [--slow] [--preset ci|asan|tsan]..." >&2
    exit 64
}
while [ $# -gt 0 ]; do
    case $1 in
    --slow) slow=1 ;;
    --preset)
        [ $# -ge 2 ] || usage
        presets+=("$2")
        shift
        ;;
    -h | --help) usage ;;
    *) usage ;;
    esac
    shift
done
[ ${#presets[@]} -gt 0 ] || presets=(ci asan tsan)

bash scripts/deps.sh

export ASAN_OPTIONS=detect_leaks=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
export LSAN_OPTIONS=${LSAN_OPTIONS:-}

logdir=$root/build/test-logs
mkdir -p "$logdir"

# The sanitizers must really work here: LeakSanitizer refuses to run under
# some ptrace setups and ThreadSanitizer under some ASLR settings, and a
# sanitizer that cannot run must fail the run, not pass it quietly.
tsan_prefix=()
sanitizer_preflight() {
    local t=$logdir/preflight
    mkdir -p "$t"
    printf '#include <stdlib.h>\nint main(void){void *volatile p = malloc(77); p = 0; return 0;}\n' \
        >"$t/leak.c"
    clang -fsanitize=address,undefined -g "$t/leak.c" -o "$t/leak"
    if "$t/leak" >"$t/leak.out" 2>&1 || ! grep -q 'LeakSanitizer: detected memory leaks' "$t/leak.out"; then
        cat "$t/leak.out" >&2
        echo "test.sh: LeakSanitizer does not work on this machine" >&2
        return 1
    fi
    printf '#include <pthread.h>\nstatic void *f(void *a){return a;}\nint main(void){pthread_t t; pthread_create(&t,0,f,0); return pthread_join(t,0);}\n' \
        >"$t/thr.c"
    clang -fsanitize=thread -g "$t/thr.c" -o "$t/thr" -lpthread
    if ! "$t/thr" >"$t/thr.out" 2>&1; then
        # TSan from clang 14 fails with high ASLR entropy: run without ASLR.
        if setarch "$(uname -m)" -R "$t/thr" >"$t/thr.out" 2>&1; then
            tsan_prefix=(setarch "$(uname -m)" -R)
        else
            cat "$t/thr.out" >&2
            echo "test.sh: ThreadSanitizer does not work on this machine" >&2
            return 1
        fi
    fi
}

summary=()
total_pass=0
total_fail=0
failed=0

# static_checks LOG: cppcheck, the layout and clang-tidy, after the ci build.
static_checks() {
    local log=$1 start
    if ! cmake --build --preset ci --target lint >>"$log" 2>&1; then
        tail -n 30 "$log"
        summary+=("lint (cppcheck): FAILED")
        total_fail=$((total_fail + 1))
        failed=1
    fi
    echo "== format: scripts/format.sh --check"
    if ! bash scripts/format.sh --check 2>&1 | tee -a "$log"; then
        summary+=("format: FAILED (scripts/format.sh --fix rewrites the files)")
        total_fail=$((total_fail + 1))
        failed=1
    fi
    echo "== clang-tidy: scripts/tidy.sh"
    start=$SECONDS
    if ! bash scripts/tidy.sh 2>&1 | tee -a "$log"; then
        summary+=("clang-tidy: FAILED ($((SECONDS - start)) s)")
        total_fail=$((total_fail + 1))
        failed=1
    fi
}

# run_preset NAME: configure, build and test one preset.
run_preset() {
    local p=$1 log=$logdir/$1.log start=$SECONDS
    local args=(--preset "$p" -j "$JOBS" --timeout "$TIMEOUT" --no-tests=error)
    local prefix=()

    [ $slow -eq 1 ] || args+=(-LE slow)
    [ "$p" != tsan ] || { args+=(-R "$TSAN_TESTS"); prefix=("${tsan_prefix[@]}"); }

    echo "== $p: configure and build (log: ${log#"$root"/})"
    if ! { cmake --preset "$p" && cmake --build --preset "$p"; } >"$log" 2>&1; then
        tail -n 60 "$log"
        summary+=("$p: BUILD FAILED ($((SECONDS - start)) s)")
        total_fail=$((total_fail + 1))
        failed=1
        return
    fi
    [ "$p" != ci ] || static_checks "$log"
    wait_envs
    echo "== $p: ctest ${args[*]}"
    local rc=0
    "${prefix[@]}" ctest "${args[@]}" 2>&1 | tee "$log.ctest" || rc=$?
    local line pass=0 fail=0 total=0
    line=$(grep -E '[0-9]+% tests passed, [0-9]+ tests? failed out of [0-9]+' "$log.ctest" | tail -n 1 || true)
    if [ -n "$line" ]; then
        fail=$(sed -E 's/.* ([0-9]+) tests? failed.*/\1/' <<<"$line")
        total=$(sed -E 's/.*out of ([0-9]+).*/\1/' <<<"$line")
        pass=$((total - fail))
    fi
    total_pass=$((total_pass + pass))
    total_fail=$((total_fail + fail))
    if [ $rc -ne 0 ] || [ "$total" -eq 0 ]; then
        failed=1
        summary+=("$p: FAILED: $pass passed, $fail failed of $total ($((SECONDS - start)) s)")
    else
        summary+=("$p: ok: $pass passed ($((SECONDS - start)) s)")
    fi
}

# The tests' Python packages (the JSON Schema validator): build/pydeps/.
if ! scripts/pydeps.sh; then
    failed=1
    total_fail=$((total_fail + 1))
    summary+=("pydeps (scripts/pydeps.sh): FAILED")
fi
# The frameworks' venvs (bindings/python/requirements/*.txt: build/venvs/)
# and the npm packages of the Node tests (tests/mcp/node/ and
# tests/serve/node/, each package-lock.json:
# build/node/) are made in the background while the first preset builds
# (mostly downloads); wait_envs waits for them before the first ctest.
envs_log=$logdir/envs.log
(
    rc=0
    scripts/pyenv.sh --all || rc=1
    scripts/nodeenv.sh --all || rc=$((rc | 2))
    exit $rc
) >"$envs_log" 2>&1 &
envs_pid=$!
envs_waited=0
wait_envs() {
    local rc=0
    [ $envs_waited -eq 0 ] || return 0
    envs_waited=1
    wait "$envs_pid" || rc=$?
    if [ $((rc & 1)) -ne 0 ]; then
        tail -n 20 "$envs_log"
        failed=1
        total_fail=$((total_fail + 1))
        summary+=("venvs (scripts/pyenv.sh --all): FAILED (log: ${envs_log#"$root"/})")
    fi
    if [ $((rc & 2)) -ne 0 ]; then
        tail -n 20 "$envs_log"
        failed=1
        total_fail=$((total_fail + 1))
        summary+=("node packages (scripts/nodeenv.sh): FAILED (log: ${envs_log#"$root"/})")
    fi
}
if ! sanitizer_preflight; then
    failed=1
    total_fail=$((total_fail + 1))
    summary+=("sanitizer preflight: FAILED")
fi
for p in "${presets[@]}"; do
    case $p in
    ci | asan | tsan | dev) run_preset "$p" ;;
    *) usage ;;
    esac
done

wait_envs # when no preset got as far as its tests
echo
echo "== summary$([ $slow -eq 1 ] && echo " (with slow tests)" || echo " (slow tests excluded; --slow runs them)")"
for s in "${summary[@]}"; do
    echo "  $s"
done
echo "test.sh: $total_pass passed, $total_fail failed"
exit $failed
