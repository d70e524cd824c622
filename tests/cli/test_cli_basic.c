/*
 * test_cli_basic.c -- the `lil` command itself: --help, help VERB,
 * VERB --help, --version, usage errors (exit 64 with a message that names
 * the problem and points to --help), the store lookup (--dir, --dir=,
 * LIL_DIR, .lil) and the rule that inspection never creates a store.
 */
#include <lil/lil.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli_util.h"
#include "t.h"

static char out[C_OUT_CAP], err[C_OUT_CAP];

T_TEST(version)
{
    char want[64];

    snprintf(want, sizeof(want), "lil %s\n", lil_version());
    T_EQ_I64(c_lil(out, err, "--version"), 0);
    T_EQ_STR(out, want);
}

T_TEST(main_help_lists_verbs_and_exit_codes)
{
    static const char *const words[] = {
        "ls", "inspect", "log", "check", "resolve", "--dir", "--json", "LIL_DIR", "64"};

    T_EQ_I64(c_lil(out, err, "--help"), 0);
    for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++)
        T_CONTAINS(out, words[i]);
    T_CONTAINS(out, "Exit status");
    T_EQ_I64(c_lil(out, err, "-h"), 0);
    T_CONTAINS(out, "Usage: lil");
    T_EQ_I64(c_lil(out, err, "help"), 0);
    T_CONTAINS(out, "Usage: lil");
}

T_TEST(verb_help_two_ways)
{
    static const char *const verbs[] = {"ls", "inspect", "log", "check", "resolve"};
    char a[C_OUT_CAP], want[64];

    for (size_t i = 0; i < sizeof(verbs) / sizeof(verbs[0]); i++) {
        snprintf(want, sizeof(want), "Usage: lil %s", verbs[i]);
        T_EQ_I64(c_lil(a, err, "help %s", verbs[i]), 0);
        T_CONTAINS(a, want);
        T_CONTAINS(a, "Exit status");
        T_EQ_I64(c_lil(out, err, "%s --help", verbs[i]), 0);
        T_EQ_STR(out, a);
        T_EQ_I64(c_lil(out, err, "%s -h", verbs[i]), 0);
        T_EQ_STR(out, a);
    }
}

T_TEST(no_verb_is_usage)
{
    T_EQ_I64(c_lil(out, err, "%s", ""), 64);
    T_CONTAINS(err, "Usage: lil");
    T_EQ_STR(out, "");
}

T_TEST(unknown_verb_and_flags)
{
    T_EQ_I64(c_lil(out, err, "frobnicate"), 64);
    T_CONTAINS(err, "lil: unknown verb 'frobnicate'");
    T_CONTAINS(err, "--help");
    T_EQ_I64(c_lil(out, err, "--frob ls"), 64);
    T_CONTAINS(err, "unknown flag '--frob'");
    T_EQ_I64(c_lil(out, err, "ls --frob"), 64);
    T_CONTAINS(err, "lil: ls: unknown flag '--frob'");
    T_CONTAINS(err, "lil ls --help");
    T_EQ_I64(c_lil(out, err, "ls -x"), 64);
    T_CONTAINS(err, "unknown flag '-x'");
    T_EQ_I64(c_lil(out, err, "help frobnicate"), 64);
    T_CONTAINS(err, "unknown verb 'frobnicate'");
    T_EQ_I64(c_lil(out, err, "help ls inspect"), 64);
}

T_TEST(mistyped_verb_gets_the_nearest_one)
{
    T_EQ_I64(c_lil(out, err, "isnpect x"), 64);
    T_EQ_STR(err, "lil: unknown verb 'isnpect'; did you mean 'inspect'?\n"
                  "Try 'lil --help'.\n");
    T_EQ_I64(c_lil(out, err, "rnu loop.yaml"), 64);
    T_CONTAINS(err, "did you mean 'run'?");
    T_EQ_I64(c_lil(out, err, "help exlpain"), 64);
    T_CONTAINS(err, "lil: help: unknown verb 'exlpain'; did you mean 'explain'?");
    T_EQ_I64(c_lil(out, err, "frobnicate"), 64);
    T_CHECK(strstr(err, "did you mean") == NULL); /* nothing close: no guess */
    T_EQ_STR(out, "");
}

T_TEST(mistyped_flag_gets_the_nearest_one)
{
    T_EQ_I64(c_lil(out, err, "run --dri x loop.yaml"), 64);
    T_EQ_STR(err, "lil: run: unknown flag '--dri'; did you mean '--dir'?\n"
                  "Try 'lil run --help'.\n");
    T_EQ_I64(c_lil(out, err, "run loop.yaml --dri=x"), 64);
    T_CONTAINS(err, "unknown flag '--dri'; did you mean '--dir'?");
    T_EQ_I64(c_lil(out, err, "--dri x ls"), 64);
    T_EQ_STR(err, "lil: unknown flag '--dri'; did you mean '--dir'?\n"
                  "Try 'lil --help'.\n");
    T_EQ_I64(c_lil(out, err, "resolve r s --asume-done --reason x"), 64);
    T_CONTAINS(err, "did you mean '--assume-done'?");
    T_EQ_I64(c_lil(out, err, "ls --jsn"), 64);
    T_CONTAINS(err, "lil: ls: unknown flag '--jsn'; did you mean '--json'?");
    T_EQ_I64(c_lil(out, err, "ls --frobnicate"), 64);
    T_CHECK(strstr(err, "did you mean") == NULL); /* nothing close: no guess */
    T_EQ_I64(c_lil(out, err, "ls --d"), 64);      /* as many edits as letters */
    T_CHECK(strstr(err, "did you mean") == NULL);
    T_EQ_STR(out, "");
}

T_TEST(missing_and_extra_arguments)
{
    T_EQ_I64(c_lil(out, err, "inspect"), 64);
    T_CONTAINS(err, "lil: inspect: missing argument RUN");
    T_EQ_I64(c_lil(out, err, "log"), 64);
    T_CONTAINS(err, "missing argument RUN");
    T_EQ_I64(c_lil(out, err, "check"), 64);
    T_EQ_I64(c_lil(out, err, "resolve r --retry --reason x"), 64);
    T_CONTAINS(err, "missing argument IDENTITY");
    T_EQ_I64(c_lil(out, err, "inspect a b"), 64);
    T_CONTAINS(err, "unexpected argument 'b'");
    T_EQ_I64(c_lil(out, err, "ls extra"), 64);
    T_EQ_I64(c_lil(out, err, "inspect r --dir"), 64);
    T_CONTAINS(err, "--dir needs a value");
    T_EQ_I64(c_lil(out, err, "--dir"), 64);
    T_EQ_I64(c_lil(out, err, "log r --jsonl=yes"), 64);
    T_CONTAINS(err, "--jsonl takes no value");
    T_EQ_I64(c_lil(out, err, "ls --dir="), 64);
    T_CONTAINS(err, "non-empty");
}

T_TEST(invalid_run_id_is_usage)
{
    T_EQ_I64(c_lil(out, err, "inspect 'a/b' --dir '%s'", c_store()), 64);
    T_CONTAINS(err, "invalid run id 'a/b'");
    T_EQ_I64(c_lil(out, err, "log .. --dir '%s'", c_store()), 64);
    T_EQ_I64(c_lil(out, err, "check '' --dir '%s'", c_store()), 64);
}

T_TEST(double_dash_ends_flags)
{
    c_make_run("--odd", 1, true);
    T_EQ_I64(c_lil(out, err, "inspect --dir '%s' -- --odd", c_store()), 0);
    T_CONTAINS(out, "--odd");
}

T_TEST(missing_store_is_error_and_not_created)
{
    struct stat sb;

    T_EQ_I64(c_lil(out, err, "ls --dir '%s'", t_path("nope")), 1);
    T_CONTAINS(err, "lil: ls: no store at");
    T_CHECK(stat(t_path("nope"), &sb) != 0);
    T_EQ_I64(c_lil(out, err, "inspect r --dir '%s'", t_path("nope")), 1);
    T_CHECK(stat(t_path("nope"), &sb) != 0);
    /* the default, .lil in the working directory */
    T_EQ_I64(c_lil(out, err, "ls"), 1);
    T_CONTAINS(err, ".lil");
    T_CHECK(stat(t_path(".lil"), &sb) != 0);
}

T_TEST(store_from_flag_forms_env_and_default)
{
    T_FILE_ONLY();
    c_make_run("alpha", 1, true);
    T_EQ_I64(c_lil(out, err, "ls --dir '%s'", c_store()), 0);
    T_CONTAINS(out, "alpha");
    T_EQ_I64(c_lil(out, err, "ls --dir='%s'", c_store()), 0);
    T_CONTAINS(out, "alpha");
    T_EQ_I64(c_lil(out, err, "--dir '%s' ls", c_store()), 0);
    T_CONTAINS(out, "alpha");
    T_EQ_I64(c_lil(out, err, "--dir='%s' --json ls", c_store()), 0);
    T_CONTAINS(out, "\"alpha\"");
    /* LIL_DIR, and --dir over LIL_DIR */
    T_EQ_I64(c_lil(out, err, "ls"), 1);
    setenv("LIL_DIR", c_store(), 1);
    T_EQ_I64(c_lil(out, err, "ls"), 0);
    T_CONTAINS(out, "alpha");
    T_EQ_I64(c_lil(out, err, "ls --dir '%s'", t_path("nope")), 1);
    unsetenv("LIL_DIR");
    /* the default: .lil in the working directory (the test's tmpdir) */
    T_CHECK(rename(c_store(), t_path(".lil")) == 0);
    T_EQ_I64(c_lil(out, err, "ls"), 0);
    T_CONTAINS(out, "alpha");
}

T_MAIN()
