/*
 * test_shell.c -- the shell effect (src/effects/effect_shell.h), from the
 * outside: real /bin/sh commands and programs.
 *
 * It checks every vector of the reference's shell results in both modes, exit
 * codes, JSON detection on the trimmed stdout (JavaScript's trim and
 * JSON.parse, numbers as JavaScript prints them), non-JSON output, invalid
 * UTF-8, a timeout that kills the whole process group (a grandchild
 * `sleep` is gone afterwards, SIGKILL after the grace period when SIGTERM
 * is ignored), output over the cap (the command stopped at once), a death
 * by a signal, a program that cannot be started (ENOENT, EACCES) and a
 * command /bin/sh cannot find (127), stdin at end of file, the child
 * leading its own session and process group, the working directory, a
 * scrubbed environment (a secret of this process does not reach the child;
 * an allowed name does), the identity bytes, misuse, and an
 * allocation-failure sweep over whole runs (LIL_E_NOMEM or the fault-free
 * result, nothing leaked).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "effects/effect_env.h"
#include "effects/effect_shell.h"
#include "faults.h"
#include "proc_util.h"
#include "t.h"

static struct lil_err E;

static lil_env *env(void)
{
    static lil_env *e;

    if (!e && lil_env_new(&e) != LIL_OK)
        abort();
    return e;
}

static double now_s(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* The canonical text of v (malloc'd; "(null)" for NULL). */
static char *canon(lil_env *e, const json_t *v)
{
    struct lil_buf b;
    char *s;

    if (!v)
        return strdup("(null)");
    lil__buf_init(&b, e, SIZE_MAX);
    if (lil__json_canon(e, &E, v, &b) != LIL_OK)
        s = strdup("(canon failed)");
    else
        s = strdup((const char *)b.data);
    lil__buf_free(&b);
    return s;
}

/* Run cmd with o; the canonical result (malloc'd), or the status name. */
static char *run_cmd(const struct lil_shell_cmd *cmd, const struct lil_shell_opts *o,
                     struct lil_shell_info *info)
{
    json_t *v = NULL;
    lil_status rc = lil__shell_run(env(), &E, cmd, o, info, &v);
    char *s;

    if (rc != LIL_OK) {
        T_CHECK(v == NULL);
        return strdup(lil_status_name(rc));
    }
    s = canon(env(), v);
    json_decref(v);
    return s;
}

static char *run_sh(const char *script, const struct lil_shell_opts *o)
{
    struct lil_shell_cmd c = {.script = script};

    return run_cmd(&c, o, NULL);
}

static char *run_argv(const char *command, const char *const *args, size_t n,
                      const struct lil_shell_opts *o)
{
    struct lil_shell_cmd c = {.command = command, .args = args, .n_args = n};

    return run_cmd(&c, o, NULL);
}

#define EXPECT_SH(script, want)              \
    do {                                     \
        char *got_ = run_sh((script), NULL); \
        T_EQ_STR(got_, (want));              \
        free(got_);                          \
    } while (0)

/* ---- the reference's vectors ------------------------------------------------- */

T_TEST(contract_vectors_string_mode)
{
    EXPECT_SH("echo hi", "{\"code\":0,\"stdout\":\"hi\"}");
    EXPECT_SH("echo out; echo err 1>&2; exit 3",
              "{\"code\":3,\"stderr\":\"err\\n\",\"stdout\":\"out\\n\"}");
    EXPECT_SH("echo '  {\"a\":1}  '", "{\"a\":1}");
    EXPECT_SH("true", "{\"code\":0,\"stdout\":\"\"}");
    EXPECT_SH("echo '{\"a\":1}'; exit 2",
              "{\"code\":2,\"stderr\":\"\",\"stdout\":\"{\\\"a\\\":1}\\n\"}");
}

T_TEST(contract_vectors_argv_mode)
{
    const char *hi[] = {"hi"};
    const char *home[] = {"$HOME", "a b", "*"};
    char *got;

    got = run_argv("echo", hi, 1, NULL);
    T_EQ_STR(got, "{\"code\":0,\"stdout\":\"hi\"}");
    free(got);
    /* No shell: no expansion, no word splitting, no globbing. */
    got = run_argv("echo", home, 3, NULL);
    T_EQ_STR(got, "{\"code\":0,\"stdout\":\"$HOME a b *\"}");
    free(got);
    got = run_argv("true", NULL, 0, NULL);
    T_EQ_STR(got, "{\"code\":0,\"stdout\":\"\"}");
    free(got);
}

T_TEST(program_not_found)
{
    const char *args[] = {"x"};
    struct lil_shell_cmd c = {
        .command = "lil-no-such-program", .args = args, .n_args = 1};
    struct lil_shell_info info;
    char *got = run_cmd(&c, NULL, &info);

    T_EQ_STR(got, "{\"code\":\"ENOENT\",\"stderr\":\"\",\"stdout\":\"\"}");
    T_EQ_I64(info.exec_errno, ENOENT);
    T_EQ_I64(info.exit_code, -1);
    free(got);
    got = run_argv("/nonexistent/dir/prog", NULL, 0, NULL);
    T_EQ_STR(got, "{\"code\":\"ENOENT\",\"stderr\":\"\",\"stdout\":\"\"}");
    free(got);
}

T_TEST(program_not_executable)
{
    char *got;
    int fd = open("script.sh", O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);

    T_REQUIRE(fd >= 0);
    T_REQUIRE(write(fd, "#!/bin/sh\necho no\n", 18) == 18);
    close(fd);
    got = run_argv("./script.sh", NULL, 0, NULL);
    T_EQ_STR(got, "{\"code\":\"EACCES\",\"stderr\":\"\",\"stdout\":\"\"}");
    free(got);
}

T_TEST(shell_command_not_found)
{
    json_t *v = NULL;
    struct lil_shell_cmd c = {.script = "lil-no-such-command-xyz"};

    T_OK(lil__shell_run(env(), &E, &c, NULL, NULL, &v));
    T_REQUIRE(json_is_object(v));
    T_EQ_I64(json_integer_value(json_object_get(v, "code")), 127);
    T_EQ_STR(json_string_value(json_object_get(v, "stdout")), "");
    T_CONTAINS(json_string_value(json_object_get(v, "stderr")), "not found");
    json_decref(v);
}

/* ---- exit codes and output ------------------------------------------------------ */

T_TEST(exit_codes)
{
    struct lil_shell_cmd c = {.script = "printf 'x'; exit 255"};
    struct lil_shell_info info;
    char *got = run_cmd(&c, NULL, &info);

    T_EQ_STR(got, "{\"code\":255,\"stderr\":\"\",\"stdout\":\"x\"}");
    T_EQ_I64(info.exit_code, 255);
    T_CHECK(!info.timed_out && !info.over_cap && info.signal == 0);
    T_EQ_I64(info.out_bytes, 1);
    free(got);
    EXPECT_SH("exit 1", "{\"code\":1,\"stderr\":\"\",\"stdout\":\"\"}");
    /* Raw output on failure: neither trimmed nor parsed. */
    EXPECT_SH("printf '  42  \\n'; printf ' e ' >&2; exit 7",
              "{\"code\":7,\"stderr\":\" e \",\"stdout\":\"  42  \\n\"}");
    /* stderr is dropped on success, as in the reference. */
    EXPECT_SH("echo warn >&2; echo ok", "{\"code\":0,\"stdout\":\"ok\"}");
}

T_TEST(json_detection)
{
    EXPECT_SH("echo 42", "42");
    EXPECT_SH("echo '\"s\"'", "\"s\"");
    EXPECT_SH("echo null", "null");
    EXPECT_SH("echo true", "true");
    EXPECT_SH("echo '[1, \"two\", {\"b\": [], \"a\": {}}]'",
              "[1,\"two\",{\"a\":{},\"b\":[]}]");
    /* Numbers as JavaScript reads and prints them. */
    EXPECT_SH("echo 1.0", "1");
    EXPECT_SH("echo 1e2", "100");
    EXPECT_SH("echo -0", "0");
    EXPECT_SH("echo 1.5", "1.5");
    EXPECT_SH("echo '{\"a\":[2.0,{\"b\":-3.0}]}'", "{\"a\":[2,{\"b\":-3}]}");
    EXPECT_SH("echo 12345678901234567890", "1.2345678901234567e19");
    EXPECT_SH("echo 9007199254740993", "9007199254740992");
    /* JSON.parse: the last duplicate wins, \u0000 is a string like any. */
    EXPECT_SH("printf '%s' '{\"a\":1,\"a\":2}'", "{\"a\":2}");
    EXPECT_SH("printf '%s' '\"a\\u0000b\"'", "\"a\\u0000b\"");
}

T_TEST(not_json)
{
    EXPECT_SH("printf '  hello \\n\\n'", "{\"code\":0,\"stdout\":\"hello\"}");
    EXPECT_SH("printf '\\n\\t \\n'", "{\"code\":0,\"stdout\":\"\"}");
    EXPECT_SH("echo '[1,'", "{\"code\":0,\"stdout\":\"[1,\"}");
    EXPECT_SH("echo '{\"a\":1} x'", "{\"code\":0,\"stdout\":\"{\\\"a\\\":1} x\"}");
    EXPECT_SH("echo NaN", "{\"code\":0,\"stdout\":\"NaN\"}");
    EXPECT_SH("echo 0x10", "{\"code\":0,\"stdout\":\"0x10\"}");
    EXPECT_SH("echo \"{'a':1}\"", "{\"code\":0,\"stdout\":\"{'a':1}\"}");
    /* Documented differences: JSON.parse gives Infinity and a lone
     * surrogate; lil keeps the text. */
    EXPECT_SH("echo 1e400", "{\"code\":0,\"stdout\":\"1e400\"}");
    EXPECT_SH("printf '%s' '\"\\ud800\"'",
              "{\"code\":0,\"stdout\":\"\\\"\\\\ud800\\\"\"}");
    /* Two lines are not one JSON value. */
    EXPECT_SH("echo 1; echo 2", "{\"code\":0,\"stdout\":\"1\\n2\"}");
}

T_TEST(trim_is_javascript_trim)
{
    /* BOM, NBSP, U+2028, U+3000, vertical tab and form feed around JSON. */
    EXPECT_SH(
        "printf '\\357\\273\\277 \\302\\240{\"a\":1}\\342\\200\\250\\343\\200\\200\\v\\f\\r\\n'",
        "{\"a\":1}");
    /* ... and around text, which keeps its inner blanks. */
    EXPECT_SH("printf '\\302\\240 a  b \\357\\273\\277'",
              "{\"code\":0,\"stdout\":\"a  b\"}");
    /* NEL (U+0085) and ZWSP (U+200B) are not JavaScript whitespace. */
    EXPECT_SH("printf '\\302\\205x\\342\\200\\213'",
              "{\"code\":0,\"stdout\":\"\xc2\x85x\xe2\x80\x8b\"}");
}

T_TEST(invalid_utf8)
{
    /* One U+FFFD per maximal ill-formed subpart, as Node decodes. */
    EXPECT_SH("printf '\\377a\\355\\240\\200b\\360\\237\\230'",
              "{\"code\":0,\"stdout\":\"\xef\xbf\xbd"
              "a\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd"
              "b\xef\xbf\xbd\"}");
    EXPECT_SH("printf 'ok\\300'; printf '\\377' >&2; exit 1",
              "{\"code\":1,\"stderr\":\"\xef\xbf\xbd\",\"stdout\":\"ok\xef\xbf\xbd\"}");
    /* Inside a JSON string: decoded first, then parsed. */
    EXPECT_SH("printf '\"\\377\"'", "\"\xef\xbf\xbd\"");
}

T_TEST(own_session_and_group)
{
    /* /proc/$$/stat: pid (comm) state ppid pgrp session ... */
    EXPECT_SH("read -r pid comm state ppid pgrp sid rest < /proc/$$/stat; "
              "[ \"$pgrp\" = $$ ] && [ \"$sid\" = $$ ] && echo leader",
              "{\"code\":0,\"stdout\":\"leader\"}");
}

T_TEST(stdin_is_at_end_of_file)
{
    struct lil_shell_opts o = {.timeout_ms = 10000};
    double t0 = now_s();
    char *got = run_sh("cat; echo done", &o);

    T_EQ_STR(got, "{\"code\":0,\"stdout\":\"done\"}");
    T_CHECK(now_s() - t0 < 5);
    free(got);
}

/* ---- timeouts, signals, caps ---------------------------------------------------- */

static pid_t read_pid(const char *path)
{
    char buf[32] = {0};
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    ssize_t n;

    if (fd < 0)
        return -1;
    n = read(fd, buf, sizeof(buf) - 1);
    close(fd);
    return n > 0 ? (pid_t)atoi(buf) : -1;
}

T_TEST(timeout_kills_the_group)
{
    struct lil_shell_opts o = {.timeout_ms = 300};
    struct lil_shell_cmd c = {.script = "sleep 30 & echo $! > gc.pid; echo partial; "
                                        "echo e >&2; sleep 30"};
    struct lil_shell_info info;
    double t0 = now_s();
    char *got = run_cmd(&c, &o, &info);
    pid_t gc;

    T_EQ_STR(
        got,
        "{\"code\":1,\"stderr\":\"e\\n\",\"stdout\":\"partial\\n\",\"timedOut\":true}");
    free(got);
    T_CHECK(info.timed_out);
    T_CHECK(now_s() - t0 < 5);
    gc = read_pid("gc.pid");
    T_REQUIRE(gc > 0);
    T_CHECK(tp_dead(gc)); /* the grandchild sleep went with the group */
    T_CHECK(tp_no_children());
}

T_TEST(timeout_sigkill_after_grace)
{
    struct lil_shell_opts o = {.timeout_ms = 200, .grace_ms = 300};
    struct lil_shell_cmd c = {
        .script = "trap '' TERM; sleep 30 & echo $! > gc.pid; sleep 30"};
    struct lil_shell_info info;
    double t0 = now_s(), dt;
    char *got = run_cmd(&c, &o, &info);

    dt = now_s() - t0;
    T_EQ_STR(got, "{\"code\":1,\"stderr\":\"\",\"stdout\":\"\",\"timedOut\":true}");
    free(got);
    T_EQ_I64(info.signal, SIGKILL);
    T_CHECK(dt >= 0.45 && dt < 5);
    T_CHECK(tp_dead(read_pid("gc.pid")));
}

T_TEST(death_by_signal)
{
    struct lil_shell_cmd c = {.script = "echo before; kill -USR1 $$"};
    struct lil_shell_info info;
    char *got = run_cmd(&c, NULL, &info);

    T_EQ_STR(
        got,
        "{\"code\":1,\"signal\":\"SIGUSR1\",\"stderr\":\"\",\"stdout\":\"before\\n\"}");
    T_EQ_I64(info.signal, SIGUSR1);
    T_CHECK(!info.timed_out);
    free(got);
}

T_TEST(signal_names)
{
    char buf[16];

    lil__shell_signal_name(SIGSEGV, buf);
    T_EQ_STR(buf, "SIGSEGV");
    lil__shell_signal_name(SIGKILL, buf);
    T_EQ_STR(buf, "SIGKILL");
    lil__shell_signal_name(999, buf);
    T_EQ_STR(buf, "SIG999");
}

/* A string of n times c. */
static char *repeat(char c, size_t n)
{
    char *s = malloc(n + 1);

    memset(s, c, n);
    s[n] = '\0';
    return s;
}

T_TEST(output_at_the_cap)
{
    struct lil_shell_opts o = {.out_cap = 1000};
    char *a = repeat('a', 1000), *want = malloc(1100), *got;

    snprintf(want, 1100, "{\"code\":0,\"stdout\":\"%s\"}", a);
    got = run_sh("head -c 1000 /dev/zero | tr '\\000' a", &o);
    T_EQ_STR(got, want);
    free(got);
    free(want);
    free(a);
}

T_TEST(output_over_the_cap)
{
    struct lil_shell_opts o = {.out_cap = 1000};
    char *a = repeat('a', 1000), *want = malloc(1200), *got;
    struct lil_shell_cmd c = {.script =
                                  "head -c 1001 /dev/zero | tr '\\000' a; echo e >&2"};
    struct lil_shell_info info;

    snprintf(want, 1200,
             "{\"code\":\"ERR_CHILD_PROCESS_STDIO_MAXBUFFER\",\"stderr\":\"e\\n\","
             "\"stdout\":\"%s\"}",
             a);
    got = run_cmd(&c, &o, &info);
    T_EQ_STR(got, want);
    T_CHECK(info.over_cap);
    T_EQ_I64(info.out_bytes, 1001);
    free(got);
    /* stderr has the same cap; the exit status does not matter. */
    got = run_sh("head -c 5000 /dev/zero | tr '\\000' a >&2; exit 0", &o);
    T_CONTAINS(got, "\"code\":\"ERR_CHILD_PROCESS_STDIO_MAXBUFFER\"");
    T_CONTAINS(got, "\"stdout\":\"\"");
    free(got);
    free(want);
    free(a);
}

T_TEST(endless_output_is_stopped)
{
    struct lil_shell_opts o = {.timeout_ms = 60000, .out_cap = 4096};
    struct lil_shell_cmd c = {.script = "yes & echo $! > gc.pid; wait"};
    struct lil_shell_info info;
    double t0 = now_s();
    char *got = run_cmd(&c, &o, &info);

    T_CONTAINS(got, "\"code\":\"ERR_CHILD_PROCESS_STDIO_MAXBUFFER\"");
    T_CHECK(info.over_cap && !info.timed_out);
    T_CHECK(now_s() - t0 < 10);
    T_CHECK(tp_dead(read_pid("gc.pid")));
    free(got);
}

T_TEST(cap_cuts_no_character_in_two)
{
    struct lil_shell_opts o = {.out_cap = 4};
    char *got = run_sh("printf 'abc\\303\\251'", &o);

    T_EQ_STR(got, "{\"code\":\"ERR_CHILD_PROCESS_STDIO_MAXBUFFER\",\"stderr\":\"\","
                  "\"stdout\":\"abc\"}");
    free(got);
}

T_TEST(default_cap_is_one_mebibyte)
{
    struct lil_shell_cmd c = {.script = "head -c 1048577 /dev/zero | tr '\\000' a"};
    struct lil_shell_info info;
    char *got = run_cmd(&c, NULL, &info);

    T_CHECK(info.over_cap);
    T_CONTAINS(got, "\"code\":\"ERR_CHILD_PROCESS_STDIO_MAXBUFFER\"");
    T_EQ_I64(strlen(got),
             1048576 + strlen("{\"code\":\"ERR_CHILD_PROCESS_STDIO_MAXBUFFER\","
                              "\"stderr\":\"\",\"stdout\":\"\"}"));
    free(got);
}

/* ---- working directory and environment ------------------------------------------ */

T_TEST(working_directory)
{
    struct lil_shell_opts o = {0};
    char real[PATH_MAX], *want, *got;
    size_t n;

    T_REQUIRE(mkdir("sub", 0700) == 0);
    T_REQUIRE(realpath("sub", real) != NULL);
    o.cwd = real;
    n = strlen(real) + 64;
    want = malloc(n);
    snprintf(want, n, "{\"code\":0,\"stdout\":\"%s\"}", real);
    got = run_sh("pwd -P", &o);
    T_EQ_STR(got, want);
    free(got);
    got = run_argv("pwd", NULL, 0, &o);
    T_EQ_STR(got, want);
    free(got);
    free(want);
    /* A directory that cannot be entered is lil's error, never a result. */
    o.cwd = "no-such-dir";
    got = run_sh("true", &o);
    T_EQ_STR(got, "LIL_E_CHILD");
    T_CONTAINS(E.msg, "working directory no-such-dir");
    free(got);
    got = run_argv("true", NULL, 0, &o);
    T_EQ_STR(got, "LIL_E_CHILD");
    free(got);
}

T_TEST(scrubbed_environment)
{
    const char *allow[] = {"LIL_TEST_ALLOWED,LIL_JOURNAL_KEY"};
    const char **vars = NULL;
    struct lil_shell_opts o = {0};
    char *got;

    setenv("LIL_TEST_SECRET_TOKEN", "do-not-leak", 1);
    setenv("LIL_TEST_ALLOWED", "visible", 1);
    setenv("LOOPY_JOURNAL_KEY", "loopy-key", 1);
    setenv("LIL_JOURNAL_KEY", "lil-key", 1);
    T_OK(lil__effect_env_build(env(), &E, NULL, allow, 1, &vars));
    o.envp = vars;
    got = run_sh(
        "printf '%s|%s|%s|%s|' \"$LIL_TEST_SECRET_TOKEN\" \"$LIL_TEST_ALLOWED\" "
        "\"$LOOPY_JOURNAL_KEY\" \"$LIL_JOURNAL_KEY\"; [ -n \"$PATH\" ] && echo path",
        &o);
    T_EQ_STR(got, "{\"code\":0,\"stdout\":\"|visible||lil-key|path\"}");
    free(got);
    /* Without an environment the child inherits lil's (the reference). */
    got = run_sh("printf '%s' \"$LIL_TEST_SECRET_TOKEN\"", NULL);
    T_EQ_STR(got, "{\"code\":0,\"stdout\":\"do-not-leak\"}");
    free(got);
    lil__effect_env_free(env(), vars);
    unsetenv("LIL_TEST_SECRET_TOKEN");
    unsetenv("LIL_TEST_ALLOWED");
    unsetenv("LOOPY_JOURNAL_KEY");
    unsetenv("LIL_JOURNAL_KEY");
}

/* ---- identity and misuse -------------------------------------------------------- */

static char *identity(const struct lil_shell_cmd *c)
{
    struct lil_buf b;
    char *s;
    lil_status rc;

    lil__buf_init(&b, env(), 1 << 20);
    rc = lil__shell_identity(env(), &E, c, &b);
    s = strdup(rc == LIL_OK ? (const char *)b.data : lil_status_name(rc));
    lil__buf_free(&b);
    return s;
}

#define EXPECT_ID(cmd, want)          \
    do {                              \
        char *id_ = identity(&(cmd)); \
        T_EQ_STR(id_, (want));        \
        free(id_);                    \
    } while (0)

T_TEST(identity_bytes)
{
    const char *args[] = {"a", "$HOME", "\xc3\xa9\n\"\\"};
    struct lil_shell_cmd s = {.script = "echo hi"};
    struct lil_shell_cmd q = {.script = "printf '\"%s\"\t\\n' \xc3\xa9/x"};
    struct lil_shell_cmd a = {.command = "echo", .args = args, .n_args = 3};
    struct lil_shell_cmd none = {.command = "true"};
    struct lil_shell_cmd bad = {.script = "echo \xff"};
    struct lil_shell_cmd bad_arg = {
        .command = "echo", .args = (const char *[]){"\xc3"}, .n_args = 1};

    EXPECT_ID(s, "{\"cmd\":\"echo hi\"}");
    EXPECT_ID(q, "{\"cmd\":\"printf '\\\"%s\\\"\\t\\\\n' \xc3\xa9/x\"}");
    EXPECT_ID(
        a,
        "{\"cmd\":{\"args\":[\"a\",\"$HOME\",\"\xc3\xa9\\n\\\"\\\\\"],\"command\":\"echo\"}}");
    EXPECT_ID(none, "{\"cmd\":{\"args\":[],\"command\":\"true\"}}");
    EXPECT_ID(bad, "LIL_E_INVAL");
    EXPECT_ID(bad_arg, "LIL_E_INVAL");
}

T_TEST(misuse)
{
    const char *args[] = {"x", NULL};
    struct lil_shell_cmd neither = {0};
    struct lil_shell_cmd both = {.script = "true", .command = "true"};
    struct lil_shell_cmd no_array = {.command = "echo", .n_args = 2};
    struct lil_shell_cmd null_arg = {.command = "echo", .args = args, .n_args = 2};
    json_t *v = NULL;
    char *got;

    got = run_cmd(&neither, NULL, NULL);
    T_EQ_STR(got, "LIL_E_INVAL");
    free(got);
    got = run_cmd(&both, NULL, NULL);
    T_EQ_STR(got, "LIL_E_INVAL");
    free(got);
    got = run_cmd(&no_array, NULL, NULL);
    T_EQ_STR(got, "LIL_E_INVAL");
    free(got);
    got = run_cmd(&null_arg, NULL, NULL);
    T_EQ_STR(got, "LIL_E_INVAL");
    free(got);
    T_EQ_I64(lil__shell_run(env(), &E, NULL, NULL, NULL, &v), LIL_E_INVAL);
    T_EQ_I64(lil__shell_run(env(), &E, &both, NULL, NULL, NULL), LIL_E_INVAL);
    EXPECT_ID(neither, "LIL_E_INVAL");
}

/* ---- allocation failures -------------------------------------------------------- */

/* Run c with allocation k failing, for every k: LIL_E_NOMEM when one
 * failed, else the fault-free result; nothing live afterwards. */
static void sweep(const struct lil_shell_cmd *c, const struct lil_shell_opts *o)
{
    char *want = run_cmd(c, o, NULL);
    unsigned long k;

    for (k = 1; k < 100000; k++) {
        struct t_alloc a = {0};
        lil_env *e = NULL;
        json_t *v = NULL;
        lil_status rc;
        char *got;

        T_REQUIRE(lil_env_new(&e) == LIL_OK && t_alloc_install(e, &a) == LIL_OK);
        a.fail_at = a.calls + k;
        rc = lil__shell_run(e, &E, c, o, NULL, &v);
        a.fail_at = 0;
        if (rc != (a.failed ? LIL_E_NOMEM : LIL_OK)) {
            fprintf(stderr, "  %s: allocation %lu: %s (%s)\n",
                    c->script ? c->script : c->command, k, lil_status_name(rc), E.msg);
            t_fail();
        }
        if (rc == LIL_OK) {
            got = canon(e, v);
            T_EQ_STR(got, want);
            free(got);
        } else {
            T_CHECK(v == NULL);
            T_CONTAINS(E.msg, "out of memory");
        }
        json_decref(v);
        lil_env_free(e);
        T_EQ_I64(a.live, 0);
        if (!a.failed)
            break;
    }
    free(want);
    printf("  %s: allocations 1..%lu failed in turn\n",
           c->script ? c->script : c->command, k - 1);
    T_CHECK(k > 3);
    T_CHECK(tp_no_children());
}

T_TEST(allocation_failures)
{
    const char *args[] = {"-c", "echo out; echo err >&2; exit 3"};
    struct lil_shell_cmd json = {.script = "echo '{\"a\":[1,2.0,{\"b\":\"\\377\"}]}'"};
    struct lil_shell_cmd text = {.script = "printf ' plain \\377 text '"};
    struct lil_shell_cmd fail = {.command = "sh", .args = args, .n_args = 2};
    struct lil_shell_cmd missing = {.command = "lil-no-such-program"};
    struct lil_shell_cmd over = {.script = "echo 0123456789; echo e >&2"};
    struct lil_shell_opts cap = {.out_cap = 8};

    sweep(&json, NULL);
    sweep(&text, NULL);
    sweep(&fail, NULL);
    sweep(&missing, NULL);
    sweep(&over, &cap);
}

T_MAIN()
