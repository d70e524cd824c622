/*
 * test_watch_cmdline.c -- `lil watch` from outside, on what decides what
 * runs and when it stops: the exit codes never restarted (lil's own 2 to 5
 * when the command is lil, 126 and 127, --no-restart-on), a script's
 * python3 (a virtualenv's), the options written after the command
 * (--max-restarts N --backoff S after the script, the letitloop names) and
 * the unknown ones refused, and a clean exit reported as such, not as a
 * death.
 */
#include <lil/lil.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sv_util.h"
#include "t.h"

static char err[SV_CAP];

/* An executable shell script at t_path(name). */
static const char *script(const char *name, const char *body)
{
    const char *path = t_path(name);
    FILE *f = fopen(path, "we");

    if (!f)
        return NULL;
    fprintf(f, "#!/bin/sh\n%s\n", body);
    fclose(f);
    chmod(path, 0755);
    return path;
}

/* A loop that pauses at a breakpoint on its first iteration: `lil run`
 * exits 3 (paused). */
static const char *pause_spec(const char *id)
{
    static char path[4096];
    FILE *f;

    snprintf(path, sizeof(path), "%s", t_path("pause.yaml"));
    f = fopen(path, "we");
    if (!f)
        return NULL;
    fprintf(f,
            "loopspec: \"0.1\"\nid: %s\npattern: react\n"
            "state: { vars: { n: { type: int, init: 0 } } }\n"
            "body:\n"
            "  - { id: a, kind: shell, cmd: \"echo a >> side.txt\" }\n"
            "  - { id: ok, kind: breakpoint, ask: \"go on?\" }\n"
            "  - { id: b, kind: shell, cmd: \"true\", on_done: { incr: n } }\n"
            "terminate: { signal: state-predicate, until: \"${state.n >= 1}\" }\n"
            "caps: { max_iterations: 5, budget: { wallclock: 1h } }\n",
            id);
    fclose(f);
    return path;
}

static const char *event_message(json_t *ev, const char *kind)
{
    return json_string_value(json_object_get(sv_event(ev, kind, 0), "message"));
}

/* ---- lil's own statuses -------------------------------------------------- */

/* `lil watch -- lil run loop.yaml` on a loop that pauses: lil exits 3 and
 * lil watch exits 3 at once, saying why, with no restart. */
T_TEST(lil_child_paused_not_restarted)
{
    const char *spec = pause_spec("paused");
    json_t *ev;

    T_REQUIRE(spec);
    T_EQ_I64(sv_watch(err, "--json --backoff 0 -- '%s' run '%s'", t_lil_bin(), spec),
             3);
    ev = sv_events(err);
    T_EQ_I64(sv_count_kind(ev, "start"), 1);
    T_EQ_I64(sv_count_kind(ev, "backoff"), 0);
    T_EQ_I64(json_integer_value(json_object_get(sv_event(ev, "exit", 0), "exit_code")),
             3);
    T_EQ_STR(event_message(ev, "exit"),
             "exiting with 3 (lil's status 3, paused: the run waits for an approval "
             "(lil approve); not restarted)");
    json_decref(ev);
    T_EQ_I64(sv_count_lines(sv_slurp(t_path("side.txt")), "a"), 1);
}

/* The program is lil when it is this executable under another name (a
 * symlink), and when its file name is lil (here a script): 2, 4 and 5
 * pass through too. */
T_TEST(lil_child_by_executable_or_name)
{
    const char *spec = pause_spec("linked");
    char bin[4096];

    T_REQUIRE(spec);
    snprintf(bin, sizeof(bin), "%s", t_path("runner"));
    T_REQUIRE(symlink(t_lil_bin(), bin) == 0);
    T_EQ_I64(sv_watch(err, "--backoff 0 -- '%s' run '%s'", bin, spec), 3);
    T_CONTAINS(err, "lil watch: exiting with 3 (lil's status 3, paused");
    T_EQ_I64(sv_count_lines(err, "lil watch: restart 1 of 10 in 0.00s"), 0);

    T_REQUIRE(mkdir(t_path("bin"), 0755) == 0);
    T_REQUIRE(script("bin/lil", "exit \"$1\""));
    for (int code = 2; code <= 5; code++) {
        T_EQ_I64(
            sv_watch(err, "--json --backoff 0 -- '%s' %d", t_path("bin/lil"), code),
            code);
        T_CONTAINS(err, "(lil's status ");
        T_CONTAINS(err, "; not restarted)");
    }
    T_CONTAINS(err, "stopped: the run was stopped");
}

/* Another program's 2 to 5 are restarted as any failure; --no-restart-on
 * gives any program the rule, and `none` takes it from lil. */
T_TEST(no_restart_on_option)
{
    json_t *ev;

    T_EQ_I64(sv_watch(err, "--json --backoff 0 --max-restarts 1 -- sh -c 'exit 3'"),
             LIL_SUPERVISE_EXIT_RESTARTS);
    ev = sv_events(err);
    T_EQ_I64(sv_count_kind(ev, "start"), 2);
    json_decref(ev);

    T_EQ_I64(sv_watch(err, "--json --no-restart-on 9,3-4 -- sh -c 'exit 4'"), 4);
    ev = sv_events(err);
    T_EQ_I64(sv_count_kind(ev, "start"), 1);
    T_EQ_STR(event_message(ev, "exit"), "exiting with 4 (exit 4 is a no-restart code)");
    json_decref(ev);

    T_REQUIRE(mkdir(t_path("bin"), 0755) == 0);
    T_REQUIRE(script("bin/lil", "exit 3"));
    T_EQ_I64(sv_watch(err,
                      "--json --backoff 0 --max-restarts 1 --no-restart-on none -- "
                      "'%s'",
                      t_path("bin/lil")),
             LIL_SUPERVISE_EXIT_RESTARTS);
    ev = sv_events(err);
    T_EQ_I64(sv_count_kind(ev, "start"), 2);
    json_decref(ev);

    /* none: 127 is restarted too */
    T_EQ_I64(sv_watch(err, "--backoff 0 --max-restarts 1 --no-restart-on none -- sh -c "
                           "'exit 127'"),
             LIL_SUPERVISE_EXIT_RESTARTS);
}

/* ---- programs that cannot run -------------------------------------------- */

/* A child that exits 127 (a shell that did not find its command) or 126
 * (found, not executable) is not retried: lil watch exits with the code at
 * once, and says so. */
T_TEST(exit_127_and_126_not_retried)
{
    const char *noexec = t_path("noexec.sh");
    FILE *f = fopen(noexec, "we");
    json_t *ev;

    T_REQUIRE(f);
    fputs("#!/bin/sh\nexit 0\n", f);
    fclose(f);
    chmod(noexec, 0644);
    T_EQ_I64(sv_watch(err, "--json --backoff 0 -- sh -c 'no-such-command-lil'"), 127);
    ev = sv_events(err);
    T_EQ_I64(sv_count_kind(ev, "start"), 1);
    T_EQ_I64(sv_count_kind(ev, "backoff"), 0);
    T_EQ_STR(event_message(ev, "exit"), "exiting with 127 (the command was not found: "
                                        "exit 127 is not restarted)");
    json_decref(ev);

    T_EQ_I64(sv_watch(err, "--backoff 0 -- sh -c '%s'", noexec), 126);
    T_EQ_I64(sv_count_lines(err, "lil watch: exiting with 126 (the command is not "
                                 "executable: exit 126 is not restarted)"),
             1);
    T_CHECK(!strstr(err, "restart 1"));
}

/* ---- a script's python3 -------------------------------------------------- */

static bool make_venv(const char *dir)
{
    char cmd[4096];

    snprintf(cmd, sizeof(cmd), "python3 -m venv --without-pip '%s' >/dev/null 2>&1",
             dir);
    return t_run(cmd, NULL, 0, 0) == 0;
}

/* SCRIPT.py runs with $VIRTUAL_ENV/bin/python3 when VIRTUAL_ENV is set,
 * else with the first python3 in PATH (an activated venv's). */
T_TEST(script_runs_with_the_environments_python)
{
    char venv[1024], path[8192];
    const char *old_path = getenv("PATH");
    FILE *f = fopen(t_path("where.py"), "we");

    T_REQUIRE(f);
    fputs("import sys\nopen('prefix.txt', 'a').write(sys.prefix + '\\n')\n", f);
    fclose(f);
    snprintf(venv, sizeof(venv), "%s", t_path("venv"));
    T_REQUIRE(make_venv(venv));

    setenv("VIRTUAL_ENV", venv, 1);
    T_EQ_I64(sv_watch(err, "where.py"), 0);
    unsetenv("VIRTUAL_ENV");
    snprintf(path, sizeof(path), "%s/bin/python3 where.py", venv);
    T_CONTAINS(err, path);

    snprintf(path, sizeof(path), "%s/bin:%s", venv, old_path ? old_path : "/usr/bin");
    setenv("PATH", path, 1);
    T_EQ_I64(sv_watch(err, "where.py"), 0);
    setenv("PATH", old_path ? old_path : "/usr/bin:/bin", 1);

    T_EQ_I64(sv_watch(err, "where.py"), 0); /* no venv: another python */
    snprintf(path, sizeof(path), "%s\n%s\n", venv, venv);
    T_CHECK(strncmp(sv_slurp(t_path("prefix.txt")), path, strlen(path)) == 0);
    T_EQ_I64(sv_count_lines(sv_slurp(t_path("prefix.txt")), venv), 2);
    T_EQ_I64(sv_count_lines(sv_slurp(t_path("prefix.txt")), ""), 0);
    T_CHECK(strlen(sv_slurp(t_path("prefix.txt"))) > strlen(path)); /* a third line */
}

/* ---- options after the command ------------------------------------------- */

/* letitloop's words: `lil watch SCRIPT --max-restarts 2 --backoff S` stops
 * after 2 restarts, and the script gets none of those words. */
T_TEST(options_after_the_script_are_watchs)
{
    const char *fail = script("fail.sh", "echo \"$#:$*\" >> runs.txt; exit 1");
    json_t *ev;

    T_REQUIRE(fail);
    T_EQ_I64(sv_watch(err, "'%s' --max-restarts 2 --backoff 0.01 --json", fail),
             LIL_SUPERVISE_EXIT_RESTARTS);
    ev = sv_events(err);
    T_EQ_I64(sv_count_kind(ev, "start"), 3);
    T_EQ_I64(sv_count_kind(ev, "backoff"), 2);
    T_CHECK(json_real_value(json_object_get(sv_event(ev, "backoff", 0), "delay_s")) <=
            0.01 + 1e-9);
    json_decref(ev);
    T_EQ_I64(sv_count_lines(sv_slurp(t_path("runs.txt")), "0:"), 3);
}

/* Arguments and options mixed: the script's words stay in order, '--'
 * hands the rest to the script (options included), a negative number is
 * an argument. */
T_TEST(script_arguments_and_double_dash)
{
    const char *args = script("args.sh", "echo \"$#:$*\" > args.txt");

    T_REQUIRE(args);
    T_EQ_I64(sv_watch(err, "'%s' a --backoff 0 -5 b -- --max-restarts -x", args), 0);
    T_EQ_STR(sv_slurp(t_path("args.txt")), "5:a -5 b --max-restarts -x\n");
    T_EQ_I64(sv_watch(err, "--backoff=0 -- '%s' --max-restarts 3 -v", args), 0);
    T_EQ_STR(sv_slurp(t_path("args.txt")), "3:--max-restarts 3 -v\n");
}

/* --max-rapid-failures N --healthy-threshold S: the crash-loop breaker,
 * N quick deaths in a row each less than S seconds after its start. */
T_TEST(letitloop_breaker_names)
{
    const char *fail = script("fail.sh", "exit 1");

    T_REQUIRE(fail);
    T_EQ_I64(sv_watch(err,
                      "'%s' --max-rapid-failures 3 --healthy-threshold 5 "
                      "--backoff 0",
                      fail),
             LIL_SUPERVISE_EXIT_CRASH_LOOP);
    T_CONTAINS(err, "giving up: crash loop: 3 deaths in a row, each less than 5s after "
                    "its start (crash-loop 3/5)");
    /* without a threshold, the --healthy default (30 s) */
    T_EQ_I64(sv_watch(err, "'%s' --max-rapid-failures 2 --backoff 0", fail),
             LIL_SUPERVISE_EXIT_CRASH_LOOP);
    T_CONTAINS(err, "(crash-loop 2/30)");
}

/* An option lil watch does not know, after the command, is refused and
 * named; nothing runs. */
T_TEST(unknown_options_refused)
{
    static const struct {
        const char *args, *msg;
    } cases[] = {
        {"./args.sh --verbose", "unknown option '--verbose' after the command"},
        {"./args.sh a -x", "unknown option '-x' after the command"},
        {"./args.sh --max-restart 2",
         "unknown option '--max-restart' after the command"},
        {"./args.sh --healthy 3 --healthy-threshold 4",
         "--healthy and --healthy-threshold"},
        {"./args.sh --crash-loop 3/5 --max-rapid-failures 2",
         "both set the crash-loop"},
        {"./args.sh --max-rapid-failures 0",
         "--max-rapid-failures: '0' is not a whole"},
        {"./args.sh --healthy-threshold x", "--healthy-threshold: 'x' is not a number"},
        {"--no-restart-on 300 -- ./args.sh",
         "--no-restart-on: '300' is not none or a list"},
        {"--no-restart-on 5-2 -- ./args.sh", "--no-restart-on: '5-2' is not none"},
        {"--no-restart-on 3, -- ./args.sh", "--no-restart-on: '3,' is not none"},
        {"--no-restart-on '' -- ./args.sh", "--no-restart-on: '' is not none"},
        {"--bogus 1 ./args.sh", "unknown flag '--bogus'"},
        {"./args.sh --backoff", "flag --backoff needs a value"},
    };

    const char *args = script("args.sh", "echo ran > ran.txt");

    T_REQUIRE(args);
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        T_EQ_I64(sv_watch(err, "%s", cases[i].args), 64);
        T_CONTAINS(err, cases[i].msg);
        T_CONTAINS(err, "lil: watch: ");
    }
    T_CONTAINS(err, "Try 'lil watch --help'");
    T_EQ_STR(sv_slurp(t_path("ran.txt")), "");
}

/* ---- a clean exit -------------------------------------------------------- */

/* Exit 0 is reported as "done", never as a death; under --restart always
 * it is restarted all the same. */
T_TEST(exit_zero_is_done_not_death)
{
    json_t *ev;

    T_EQ_I64(sv_watch(err, "--json -- true"), 0);
    ev = sv_events(err);
    T_EQ_I64(sv_count_kind(ev, "death"), 0);
    T_EQ_I64(sv_count_kind(ev, "done"), 1);
    T_EQ_I64(json_integer_value(json_object_get(sv_event(ev, "done", 0), "exit_code")),
             0);
    T_CHECK(json_is_real(json_object_get(sv_event(ev, "done", 0), "uptime_s")));
    json_decref(ev);

    T_EQ_I64(sv_watch(err, "--json --restart always --backoff 0 --max-restarts 2 -- "
                           "true"),
             LIL_SUPERVISE_EXIT_RESTARTS);
    ev = sv_events(err);
    T_EQ_I64(sv_count_kind(ev, "death"), 0);
    T_EQ_I64(sv_count_kind(ev, "done"), 3);
    json_decref(ev);
}

T_MAIN()
