/*
 * test_watch.c -- `lil watch` from outside: the real binary supervising
 * the fixture sv_child (and /bin/sh), its exit status, its stderr events
 * (--json), the fixture's own logs, and /proc.
 *
 * Each test names what it proves; the timings use generous tolerances
 * (the machine may be busy), and lower bounds only where the supervisor
 * promises them (a backoff is never shorter than asked).
 */
#include <fcntl.h>
#include <lil/lil.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sv_util.h"
#include "t.h"

static char err[SV_CAP];

static const char *log_path(void)
{
    return t_path("steps.log");
}

/* ---- restarts and durable steps ------------------------------------------ */

/* SIGKILLed in steps 2, 4 and 5 of six: three restarts, then the run
 * completes with every step done exactly once (the steps count
 * themselves); the killed steps started twice, the others once. */
T_TEST(sigkill_three_times_each_step_once)
{
    char line[64];
    int rc = sv_watch(
        err, "--json --backoff 0.01 --jitter 0 -- '%s' steps 6 '%s' --kill-at 2,4,5",
        sv_child(), log_path());
    const char *log;
    json_t *ev;

    T_EQ_I64(rc, 0);
    ev = sv_events(err);
    T_EQ_I64(sv_count_kind(ev, "start"), 4);
    T_EQ_I64(sv_count_kind(ev, "death"), 3);
    T_EQ_I64(sv_count_kind(ev, "done"), 1);
    T_EQ_I64(sv_count_kind(ev, "backoff"), 3);
    for (size_t i = 0; i < 3; i++)
        T_EQ_STR(json_string_value(json_object_get(sv_event(ev, "death", i), "signal")),
                 "SIGKILL");
    /* died inside step 2: the journal's last step is s (step 1) */
    T_EQ_STR(json_string_value(json_object_get(sv_event(ev, "death", 0), "run")), "sv");
    T_EQ_STR(json_string_value(json_object_get(sv_event(ev, "death", 0), "step")), "s");
    T_CHECK(json_is_false(json_object_get(sv_event(ev, "death", 0), "step_started")));
    T_EQ_STR(json_string_value(json_object_get(sv_event(ev, "death", 1), "step")),
             "s#3");
    T_EQ_STR(json_string_value(json_object_get(sv_event(ev, "exit", 0), "message")),
             "exiting with 0 (the child exited with 0)");
    json_decref(ev);
    log = sv_slurp(log_path());
    for (int k = 1; k <= 6; k++) {
        snprintf(line, sizeof(line), "done %d", k);
        T_EQ_I64(sv_count_lines(log, line), 1);
    }
    T_EQ_I64(sv_count_lines(log, "start 2 attempt 1"), 1);
    T_EQ_I64(sv_count_lines(log, "start 2 attempt 2"), 1);
    T_EQ_I64(sv_count_lines(log, "start 4 attempt 3"), 1);
    T_EQ_I64(sv_count_lines(log, "start 5 attempt 4"), 1);
    T_EQ_I64(sv_count_lines(log, "start 1 attempt 2"), 0); /* replayed, not run */
}

/* The text form names the run and the step of each death. */
T_TEST(text_reports_name_run_and_step)
{
    int rc = sv_watch(err, "--backoff 0.01 -- '%s' steps 3 '%s' --kill-at 3",
                      sv_child(), log_path());

    T_EQ_I64(rc, 0);
    T_CONTAINS(err, "lil watch: attempt 1: started pid ");
    T_CONTAINS(err, "was killed by SIGKILL after ");
    T_CONTAINS(err, "in run sv after step s#2\n");
    T_CONTAINS(err, "lil watch: restart 1 of 10 in 0.01s\n");
    T_CONTAINS(err, "lil watch: attempt 2: started pid ");
    T_CONTAINS(err, "exited with 0 after ");
    T_CONTAINS(err, "lil watch: exiting with 0 (the child exited with 0)\n");
}

/* Exit 0 ends it; exit 1 is restarted under on-failure, not on-crash;
 * always restarts exit 0 too. */
T_TEST(restart_policies)
{
    json_t *ev;

    T_EQ_I64(sv_watch(err, "--json -- sh -c 'exit 0'"), 0);
    ev = sv_events(err);
    T_EQ_I64(sv_count_kind(ev, "start"), 1);
    json_decref(ev);

    T_EQ_I64(sv_watch(err, "--json --backoff 0 --max-restarts 2 -- sh -c 'exit 1'"),
             LIL_SUPERVISE_EXIT_RESTARTS);
    ev = sv_events(err);
    T_EQ_I64(sv_count_kind(ev, "start"), 3);
    json_decref(ev);

    T_EQ_I64(sv_watch(err, "--json --restart on-crash -- sh -c 'exit 1'"), 1);
    ev = sv_events(err);
    T_EQ_I64(sv_count_kind(ev, "start"), 1);
    T_CONTAINS(json_string_value(json_object_get(sv_event(ev, "exit", 0), "message")),
               "not a crash");
    json_decref(ev);

    T_EQ_I64(sv_watch(err, "--json --restart on-crash --backoff 0 --max-restarts 1 -- "
                           "sh -c 'kill -SEGV $$'"),
             LIL_SUPERVISE_EXIT_RESTARTS);
    ev = sv_events(err);
    T_EQ_I64(sv_count_kind(ev, "start"), 2);
    json_decref(ev);

    T_EQ_I64(
        sv_watch(err, "--json --restart always --backoff 0 --max-restarts 3 -- true"),
        LIL_SUPERVISE_EXIT_RESTARTS);
    ev = sv_events(err);
    T_EQ_I64(sv_count_kind(ev, "start"), 4);
    json_decref(ev);
}

/* A child that exits by a signal: the status is 128 + the signal once the
 * policy stops restarting; a death by SIGINT is the user's, never
 * restarted. */
T_TEST(signal_death_status_and_sigint)
{
    T_EQ_I64(sv_watch(err, "--restart on-crash -- sh -c 'kill -INT $$'"), 130);
    T_CONTAINS(err, "was killed by SIGINT");
    T_CONTAINS(err, "exiting with 130 (interrupted by SIGINT)");
}

/* The limits stop it with their codes and messages. */
T_TEST(restart_limit_crash_loop_same_step)
{
    T_EQ_I64(sv_watch(err, "--backoff 0 --max-restarts 3 -- sh -c 'exit 7'"),
             LIL_SUPERVISE_EXIT_RESTARTS);
    T_CONTAINS(
        err,
        "lil watch: giving up: restart limit: 3 restarts made (last death: exit 7)");
    T_CONTAINS(err, "lil watch: exiting with 80 (restart limit)");

    T_EQ_I64(sv_watch(err, "--backoff 0 --crash-loop 3/5 -- sh -c 'exit 1'"),
             LIL_SUPERVISE_EXIT_CRASH_LOOP);
    T_CONTAINS(err,
               "giving up: crash loop: 3 deaths in a row, each less than 5s after its "
               "start (crash-loop 3/5)");
    T_CONTAINS(err, "exiting with 81 (crash loop)");

    /* a poison: step 3 kills the program on every attempt */
    T_EQ_I64(sv_watch(err, "--backoff 0 --same-step 3 -- '%s' steps 5 '%s' --poison 3",
                      sv_child(), log_path()),
             LIL_SUPERVISE_EXIT_SAME_STEP);
    T_CONTAINS(err,
               "giving up: the child died 3 times in a row in run sv after step s#2: "
               "a poison input, not bad luck (same-step 3)");
    T_CONTAINS(err, "exiting with 82 (same step)");
    T_EQ_I64(sv_count_lines(sv_slurp(log_path()), "done 2"), 1);
}

/* Killed inside an effect: the death names the effect as started and not
 * finished; the restarted program finds it uncertain (exit 2) at the same
 * step, and --same-step 3 stops the loop there. */
T_TEST(effect_in_flight_same_step)
{
    json_t *ev, *d;
    int rc = sv_watch(err,
                      "--json --backoff 0 --same-step 3 -- '%s' steps 4 '%s' --effect "
                      "--kill-at 2",
                      sv_child(), log_path());

    T_EQ_I64(rc, LIL_SUPERVISE_EXIT_SAME_STEP);
    ev = sv_events(err);
    T_EQ_I64(sv_count_kind(ev, "death"), 3);
    for (size_t i = 0; i < 3; i++) {
        d = sv_event(ev, "death", i);
        T_EQ_STR(json_string_value(json_object_get(d, "step")), "s#2");
        T_CHECK(json_is_true(json_object_get(d, "step_started")));
    }
    T_EQ_I64(json_integer_value(json_object_get(sv_event(ev, "death", 1), "exit_code")),
             2);
    T_CONTAINS(json_string_value(json_object_get(sv_event(ev, "giveup", 0), "message")),
               "in run sv at step s#2");
    json_decref(ev);
}

/* The child sees LIL_SUPERVISED=1 and its attempt number. */
T_TEST(child_environment)
{
    const char *out = t_path("env.txt");

    setenv("LIL_ATTEMPT", "99", 1);
    T_EQ_I64(sv_watch(err, "--backoff 0 -- '%s' env '%s'", sv_child(), out), 0);
    T_EQ_STR(sv_slurp(out), "LIL_SUPERVISED=1 LIL_ATTEMPT=1\n"
                            "LIL_SUPERVISED=1 LIL_ATTEMPT=2\n"
                            "LIL_SUPERVISED=1 LIL_ATTEMPT=3\n");
}

/* ---- signals ------------------------------------------------------------- */

/* SIGTERM, SIGHUP and SIGINT to lil watch reach the child's group; the
 * child's graceful exit (3) is not restarted and becomes the status.
 * SIGUSR1 is passed on and changes nothing. */
T_TEST(signals_forwarded_no_restart)
{
    static const int sigs[] = {SIGTERM, SIGHUP, SIGINT};
    static const char *names[] = {"SIGTERM", "SIGHUP", "SIGINT"};
    char want[64];

    for (size_t i = 0; i < 3; i++) {
        const char *out = t_path(names[i]);
        pid_t w = sv_watch_bg("--json -- '%s' trap '%s'", sv_child(), out);
        json_t *ev;
        T_REQUIRE(sv_wait_file(out, "ready", 10000));
        if (i == 0) {
            kill(w, SIGUSR1);
            T_CHECK(sv_wait_file(out, "SIGUSR1", 10000));
        }
        kill(w, sigs[i]);
        T_EQ_I64(sv_wait(w, 10000), 3);
        T_CONTAINS(sv_slurp(out), names[i]);
        ev = sv_events(sv_slurp(t_path("watch.err")));
        T_EQ_I64(sv_count_kind(ev, "start"), 1);
        snprintf(want, sizeof(want), "exiting with 3 (stopped by %s)", names[i]);
        T_EQ_STR(json_string_value(json_object_get(sv_event(ev, "exit", 0), "message")),
                 want);
        json_decref(ev);
    }
}

/* A second Ctrl+C kills a child that ignores the first: 137, no restart. */
T_TEST(double_ctrl_c_kills)
{
    const char *out = t_path("trap.txt");
    pid_t w = sv_watch_bg("-- '%s' trap '%s' --ignore", sv_child(), out);

    T_REQUIRE(sv_wait_file(out, "ready", 10000));
    kill(w, SIGINT);
    T_REQUIRE(sv_wait_file(out, "SIGINT", 10000));
    kill(w, SIGINT);
    T_EQ_I64(sv_wait(w, 10000), 137);
    T_CONTAINS(sv_slurp(t_path("watch.err")), "was killed by SIGKILL");
    T_CONTAINS(sv_slurp(t_path("watch.err")), "exiting with 137 (stopped by SIGINT)");
}

/* lil watch killed with SIGKILL: its child gets SIGTERM (no orphan keeps
 * running). */
T_TEST(supervisor_death_terms_child)
{
    const char *out = t_path("trap.txt");
    pid_t w = sv_watch_bg("--json -- '%s' trap '%s'", sv_child(), out);
    pid_t c;

    T_REQUIRE(sv_wait_file(out, "ready", 10000));
    c = sv_started_pid(0);
    kill(w, SIGKILL);
    T_EQ_I64(sv_wait(w, 10000), 137);
    T_CHECK(sv_wait_file(out, "SIGTERM", 10000));
    for (int i = 0; i < 1000 && sv_state(c) && sv_state(c) != 'Z'; i++)
        usleep(10000);
    T_CHECK(sv_state(c) == 0 || sv_state(c) == 'Z'); /* an orphan's zombie is init's */
}

/* A dead child is reaped at once (no zombie during the backoff), and what
 * it left in its process group is killed; SIGTERM during the backoff ends
 * the supervision with 143. */
T_TEST(reaped_and_group_killed)
{
    const char *gc = t_path("grandchild.pid");
    char cmd[512];
    pid_t w, c, g;

    snprintf(cmd, sizeof(cmd), "sh -c 'sleep 300 & echo $! > %s; exit 1'", gc);
    w = sv_watch_bg("--json --backoff 30 -- %s", cmd);
    c = sv_started_pid(0);
    T_REQUIRE(c > 0);
    T_REQUIRE(sv_wait_file(t_path("watch.err"), "\"event\":\"backoff\"", 10000));
    g = (pid_t)atoi(sv_slurp(gc));
    T_CHECK(g > 0);
    T_EQ_I64(sv_state(c), 0); /* reaped: not even a zombie */
    for (int i = 0; i < 500 && g > 0 && sv_state(g) && sv_state(g) != 'Z'; i++)
        usleep(10000);
    T_CHECK(g > 0 && (sv_state(g) == 0 || sv_state(g) == 'Z'));
    kill(w, SIGTERM);
    T_EQ_I64(sv_wait(w, 10000), 143);
    T_CONTAINS(sv_slurp(t_path("watch.err")), "stopped by SIGTERM during the backoff");
}

/* Descriptors the caller leaked to lil watch do not reach the child. */
T_TEST(no_fd_leak)
{
    const char *out = t_path("fds.txt");
    char cmd[1024];

    setenv("LIL_DIR", "store", 1);
    snprintf(cmd, sizeof(cmd),
             "exec 7</dev/null 9>'%s'; exec '%s' watch -- '%s' fds '%s' 2>/dev/null",
             t_path("nine"), t_lil_bin(), sv_child(), out);
    T_EQ_I64(t_run(cmd, NULL, 0, 0), 0);
    T_EQ_STR(sv_slurp(out), "0 1 2\n");
}

/* ---- backoff and events -------------------------------------------------- */

/* Delays double from --backoff up to --max-backoff: measured from the
 * events' times (death to next start), never shorter, within a tolerance
 * longer (a loaded machine may be slow to schedule the supervisor; the
 * delay asked for is checked exactly in the reports). */
#define SLACK_MS 750

T_TEST(backoff_growth_and_cap)
{
    static const double want[] = {0.1, 0.2, 0.4, 0.4, 0.4};
    json_t *ev;
    int rc = sv_watch(err, "--json --backoff 0.1 --max-backoff 0.4 --jitter 0 "
                           "--max-restarts 5 -- sh -c 'exit 1'");

    T_EQ_I64(rc, LIL_SUPERVISE_EXIT_RESTARTS);
    ev = sv_events(err);
    for (size_t i = 0; i < 5; i++) {
        json_t *b = sv_event(ev, "backoff", i);
        json_int_t died =
            json_integer_value(json_object_get(sv_event(ev, "death", i), "time_ms"));
        json_int_t next = json_integer_value(
            json_object_get(sv_event(ev, "start", i + 1), "time_ms"));
        double delay = json_real_value(json_object_get(b, "delay_s"));
        T_CHECK(delay > want[i] - 1e-9 && delay < want[i] + 1e-9);
        T_CHECK(next - died >= (json_int_t)(want[i] * 1000) - 1);
        T_CHECK(next - died <= (json_int_t)(want[i] * 1000) + SLACK_MS);
        if (next - died < (json_int_t)(want[i] * 1000) - 1 ||
            next - died > (json_int_t)(want[i] * 1000) + SLACK_MS)
            fprintf(stderr, "restart %zu: %lld ms, want %.0f\n", i + 1,
                    (long long)(next - died), want[i] * 1000);
    }
    json_decref(ev);
}

/* With jitter, each delay lies in [d * (1 - jitter), d]. */
T_TEST(backoff_jitter_bounds)
{
    json_t *ev;

    T_EQ_I64(sv_watch(err, "--json --backoff 0.05 --max-backoff 0.05 --jitter 0.5 "
                           "--max-restarts 6 -- false"),
             LIL_SUPERVISE_EXIT_RESTARTS);
    ev = sv_events(err);
    for (size_t i = 0; i < 6; i++) {
        double d =
            json_real_value(json_object_get(sv_event(ev, "backoff", i), "delay_s"));
        T_CHECK(d >= 0.025 - 1e-9 && d <= 0.05 + 1e-9);
    }
    json_decref(ev);
}

/* --json: one object per line, in order start, death, backoff, ..., exit,
 * with the fields of each kind. */
T_TEST(json_events)
{
    json_t *ev, *e;
    size_t i;
    const char *order[] = {"start", "death",  "backoff", "start",
                           "death", "giveup", "exit"};

    T_EQ_I64(sv_watch(err, "--json --backoff 0.01 --jitter 0 --max-restarts 1 -- sh -c "
                           "'exit 5'"),
             LIL_SUPERVISE_EXIT_RESTARTS);
    ev = sv_events(err);
    T_EQ_I64(json_array_size(ev), 7);
    json_array_foreach(ev, i, e)
    {
        if (i < 7)
            T_EQ_STR(json_string_value(json_object_get(e, "event")), order[i]);
        T_CHECK(json_integer_value(json_object_get(e, "time_ms")) > 1600000000000);
        T_CHECK(json_is_string(json_object_get(e, "message")));
    }
    e = sv_event(ev, "death", 0);
    T_EQ_I64(json_integer_value(json_object_get(e, "exit_code")), 5);
    T_EQ_I64(json_integer_value(json_object_get(e, "attempt")), 1);
    T_CHECK(json_integer_value(json_object_get(e, "pid")) > 0);
    T_CHECK(json_is_real(json_object_get(e, "uptime_s")));
    T_CHECK(!json_object_get(e, "run")); /* no store here */
    e = sv_event(ev, "backoff", 0);
    T_CHECK(json_real_value(json_object_get(e, "delay_s")) > 0.0099);
    T_EQ_I64(json_integer_value(json_object_get(e, "restarts")), 1);
    e = sv_event(ev, "exit", 0);
    T_EQ_I64(json_integer_value(json_object_get(e, "exit_code")), 80);
    /* every line of stderr is an event */
    T_EQ_I64(sv_count_lines(err, ""), 0);
    json_decref(ev);
}

/* A loop run (`lil run`) under lil watch, killed during a sleep step of
 * each of two iterations (0.3 s into a sleep of 2 s, after its iteration's
 * shell step logged): it resumes each time and completes, each shell
 * step having run once per iteration. */
T_TEST(loop_run_under_watch)
{
    const char *spec = t_path("loop.yaml");
    FILE *f = fopen(spec, "we");
    pid_t w, c;
    char line[64];
    const char *log;

    T_REQUIRE(f);
    fprintf(
        f,
        "loopspec: \"0.1\"\nid: watched\npattern: react\n"
        "state:\n  vars:\n    n: { type: int, init: 0 }\n"
        "body:\n"
        "  - id: work\n    kind: shell\n"
        "    cmd: \"echo 'iteration ${state.n}' >> work.log\"\n"
        "  - id: nap\n    kind: sleep\n    for: 2s\n"
        "  - id: count\n    kind: shell\n    cmd: \"true\"\n    on_done: { incr: n }\n"
        "terminate:\n  signal: state-predicate\n  until: \"${state.n >= 3}\"\n"
        "caps:\n  max_iterations: 10\n  budget: { wallclock: 10m }\n");
    fclose(f); /* (a budget: no warning from lil run to interleave with the
                  events on the shared stderr) */
    w = sv_watch_bg("--json --backoff 0 -- '%s' run '%s' --dir store --wait",
                    t_lil_bin(), spec);
    for (int k = 0; k < 2; k++) {
        snprintf(line, sizeof(line), "iteration %d", k);
        T_REQUIRE(sv_wait_file(t_path("work.log"), line, 20000));
        c = sv_started_pid((size_t)k);
        usleep(300000); /* inside the 2 s sleep */
        kill(c, SIGKILL);
        T_REQUIRE(sv_started_pid((size_t)k + 1) > 0);
    }
    T_EQ_I64(sv_wait(w, 30000), 0);
    log = sv_slurp(t_path("work.log"));
    T_EQ_I64(sv_count_lines(log, "iteration 0"), 1);
    T_EQ_I64(sv_count_lines(log, "iteration 1"), 1);
    T_EQ_I64(sv_count_lines(log, "iteration 2"), 1);
    T_CONTAINS(sv_slurp(t_path("watch.err")), "\"run\":\"watched\"");
}

/* ---- bad input ----------------------------------------------------------- */

T_TEST(bad_flags_exit_64)
{
    static const struct {
        const char *args, *msg;
    } cases[] = {
        {"--bogus 1 -- true", "unknown flag '--bogus'"},
        {"--crash-loop 3 -- true", "--crash-loop: '3' is not K/T"},
        {"--crash-loop 0/5 -- true", "--crash-loop: '0' is not a whole number"},
        {"--crash-loop 3/x -- true", "--crash-loop: 'x' is not a number of seconds"},
        {"--backoff -1 -- true", "--backoff: '-1' is not a number of seconds"},
        {"--backoff=abc -- true", "--backoff: 'abc' is not a number of seconds"},
        {"--max-backoff 0 -- true", "--max-backoff: '0' is not a number of seconds"},
        {"--jitter 2 -- true", "--jitter: '2' is above 1"},
        {"--max-restarts 0 -- true", "--max-restarts: '0' is not a whole number"},
        {"--max-restarts lots -- true", "--max-restarts: 'lots' is not a whole number"},
        {"--same-step -2 -- true", "--same-step: '-2' is not a whole number"},
        {"--restart sometimes -- true", "--restart: 'sometimes' is not on-failure"},
        {"--backoff", "flag --backoff needs a value"},
        {"--", "missing COMMAND"},
        {"", "missing COMMAND"},
    };

    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        int rc = sv_watch(err, "%s", cases[i].args);
        T_EQ_I64(rc, 64);
        T_CONTAINS(err, cases[i].msg);
        T_CONTAINS(err, "lil: watch: ");
    }
}

/* A command that does not exist (127) or cannot be executed (126) is
 * reported once and not restarted. */
T_TEST(command_not_found_or_not_executable)
{
    const char *noexec = t_path("noexec.sh");
    FILE *f = fopen(noexec, "we");
    json_t *ev;

    T_REQUIRE(f);
    fputs("#!/bin/sh\nexit 0\n", f);
    fclose(f);
    chmod(noexec, 0644);
    T_EQ_I64(sv_watch(err, "--json -- no-such-command-lil arg"), 127);
    ev = sv_events(err);
    T_EQ_I64(sv_count_kind(ev, "start"), 0);
    T_EQ_I64(sv_count_kind(ev, "giveup"), 1);
    T_CONTAINS(json_string_value(json_object_get(sv_event(ev, "giveup", 0), "message")),
               "cannot run no-such-command-lil: No such file or directory");
    json_decref(ev);
    T_EQ_I64(sv_watch(err, "-- '%s'", noexec), 126);
    T_CONTAINS(err, "Permission denied");
    T_EQ_I64(
        sv_count_lines(err, "lil watch: exiting with 126 (command not executable)"), 1);
}

/* `lil watch script.py ARGS` runs it with python3. */
T_TEST(python_shorthand)
{
    FILE *f = fopen(t_path("hello.py"), "we");

    T_REQUIRE(f);
    fputs("import os, sys\nprint('hello', sys.argv[1], os.environ['LIL_ATTEMPT'])\n",
          f);
    fclose(f);
    if (t_run("command -v python3 >/dev/null", NULL, 0, 0) != 0) {
        fprintf(stderr, "python3 not found: skipped\n");
        return;
    }
    T_EQ_I64(sv_watch(err, "hello.py world"), 0);
    T_EQ_STR(sv_slurp(t_path("watch.out")), "hello world 1\n");
    T_CONTAINS(err, "started pid");
    T_CONTAINS(err, "python3 hello.py world");
}

T_MAIN()
