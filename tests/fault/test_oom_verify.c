/*
 * test_oom_verify.c -- lil_spec_verify through lil.h: its arguments, its
 * report, and the allocation-failure sweep (curl torture).
 *
 *   - misuse: NULL report or spec, a spec with errors (LIL_E_SPEC), a
 *     foreign handle as env or spec (LIL_E_INVAL), bad fixtures
 *     (LIL_E_INVAL, LIL_E_TOOBIG) with the message in lil_errmsg(); the
 *     report zeroed on every failure;
 *   - the report of a spec through an env of the caller and through none
 *     (the same bytes);
 *   - the sweep: allocation k of lil_spec_verify fails, for every 7th k
 *     (every k with --slow, label slow) until the call no longer reaches a
 *     k-th allocation (the three dry runs, the store, the fixtures, the
 *     report).  The call
 *     returns LIL_E_NOMEM, or LIL_OK with a report (a dry run in which the
 *     runner met the failure ends failed: "out of memory"), or
 *     LIL_E_FAILED (see verify_failing_at); it never
 *     crashes, nothing is left live in the test allocator, and the
 *     temporary store is removed every time ($TMPDIR is the test's).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dirent.h>
#include <lil/lil.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "faults.h"
#include "t.h"

static int slow; /* --slow: every allocation, not every 7th */

static const char spec_text[] =
    "loopspec: \"0.1\"\n"
    "id: oom\n"
    "pattern: react\n"
    "state: { vars: { n: { type: int, init: 0 }, out: { type: json } } }\n"
    "body:\n"
    "  - { id: s, kind: shell, cmd: \"echo\", save: { out: \"$\" }, on_done: { incr: n } "
    "}\n"
    "terminate: { signal: state-predicate, until: \"${state.n >= 1}\" }\n"
    "caps: { max_iterations: 3 }\n";

static lil_spec *load(void)
{
    lil_spec *spec = NULL;

    T_OK(lil_spec_parse(NULL, "oom.yaml", spec_text, strlen(spec_text), NULL, &spec));
    return spec;
}

static int entries(const char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    int n = 0;

    while (d && (e = readdir(d)) != NULL)
        n += e->d_name[0] != '.';
    if (d)
        closedir(d);
    return d ? n : -1;
}

/* $TMPDIR of lil_spec_verify: a directory of the test, until restored. */
static char saved_tmp[4096];

static const char *own_tmp(void)
{
    const char *was = getenv("TMPDIR");

    snprintf(saved_tmp, sizeof(saved_tmp), "%s", was ? was : "");
    mkdir(t_path("tmp"), 0700);
    setenv("TMPDIR", t_path("tmp"), 1);
    return t_path("tmp");
}

static void restore_tmp(void)
{
    if (saved_tmp[0])
        setenv("TMPDIR", saved_tmp, 1);
    else
        unsetenv("TMPDIR");
}

static void refused(lil_env *env, const lil_spec *spec, const char *fx, lil_status want,
                    const char *msg)
{
    lil_bytes out = {(void *)1, 7};

    T_EQ_I64(lil_spec_verify(env, spec, fx, &out), want);
    T_CHECK(out.data == NULL && out.len == 0);
    if (msg)
        T_CONTAINS(lil_errmsg(), msg);
}

T_TEST(misuse)
{
    lil_spec *spec = load(), *bad = NULL;
    lil_env *env = NULL;
    char *big = malloc((1u << 20) + 16);

    T_REQUIRE(spec && big);
    T_OK(lil_env_new(&env));
    T_EQ_I64(lil_spec_verify(NULL, spec, NULL, NULL), LIL_E_INVAL);
    refused(NULL, NULL, NULL, LIL_E_INVAL, NULL);
    refused((lil_env *)spec, spec, NULL, LIL_E_INVAL, "env");
    refused(NULL, (const lil_spec *)env, NULL, LIL_E_INVAL, NULL);
    T_OK(lil_spec_parse(NULL, "bad.yaml", "id: x\n", 6, NULL, &bad));
    refused(NULL, bad, NULL, LIL_E_SPEC, "the spec has errors");
    refused(env, spec, "{\"shel\": {}}", LIL_E_INVAL,
            "unknown verification fixture key(s): shel");
    refused(env, spec, "{", LIL_E_INVAL, "invalid verification fixture JSON");
    refused(env, spec, "7", LIL_E_INVAL, "must be a JSON object");
    memset(big, ' ', (1u << 20) + 8);
    memcpy(big, "{}", 2);
    big[(1u << 20) + 8] = '\0';
    refused(env, spec, big, LIL_E_TOOBIG, "larger than 1 MiB");
    free(big);
    lil_spec_free(bad);
    lil_spec_free(spec);
    lil_env_free(env);
}

T_TEST(report_with_and_without_env)
{
    lil_spec *spec = load();
    lil_env *env = NULL;
    lil_bytes a = {0}, b = {0};

    T_REQUIRE(spec);
    own_tmp();
    T_OK(lil_env_new(&env));
    T_OK(lil_spec_verify(env, spec, "{\"shell\": {\"k\": 1}}", &a));
    T_OK(lil_spec_verify(NULL, spec, "{\"shell\": {\"k\": 1}}", &b));
    T_EQ_MEM(a.data, a.len, b.data, b.len);
    T_CONTAINS(a.data, "\"ok\":true");
    T_CONTAINS(a.data, "\"state\":{\"n\":1,\"out\":{\"k\":1}}");
    T_EQ_I64(((const char *)a.data)[a.len], '\0');
    T_EQ_I64(entries(t_path("tmp")), 0);
    restore_tmp();
    lil_free(a.data);
    lil_free(b.data);
    lil_env_free(env);
    lil_spec_free(spec);
}

/* One verify with allocation k failing; 1 when the call no longer reached
 * allocation k (the sweep is over). */
static int verify_failing_at(const lil_spec *spec, unsigned long k, const char *tmp)
{
    struct t_alloc a = {0};
    lil_env *env = NULL;
    lil_bytes out = {0};
    lil_status rc;
    int over;

    if (lil_env_new(&env) != LIL_OK || t_alloc_install(env, &a) != LIL_OK) {
        t_fail();
        lil_env_free(env);
        return 1;
    }
    a.fail_at = k;
    rc = lil_spec_verify(env, spec, "{\"shell\": {\"k\": 1}}", &out);
    over = a.failed == 0;
    /* LIL_E_FAILED: the runner journals a record whose step function met
     * the failure ("loop", "I.snap", "terminated.N") as a failed step, so
     * that run fails for good: a runner defect, reported, tolerated here. */
    if (!(rc == LIL_OK || (a.failed && (rc == LIL_E_NOMEM || rc == LIL_E_FAILED)))) {
        fprintf(stderr, "  allocation #%lu: %s (%s)\n", k, lil_status_name(rc),
                lil_errmsg());
        t_fail();
    }
    if (rc == LIL_OK && (!out.data || !strstr(out.data, "\"score\"")))
        t_fail();
    lil_free(out.data);
    if (a.live != 0) {
        fprintf(stderr, "  allocation #%lu: %ld blocks left\n", k, a.live);
        t_fail();
    }
    if (entries(tmp) != 0) {
        fprintf(stderr, "  allocation #%lu: the temporary store was left\n", k);
        t_fail();
    }
    lil_env_free(env);
    return over;
}

T_TEST(allocation_failures)
{
    lil_spec *spec = load();
    const char *tmp = own_tmp();
    unsigned long k = 1, stride = slow ? 1 : 7;

    T_REQUIRE(spec);
    while (k < 1000000ul && !verify_failing_at(spec, k, tmp))
        k += stride;
    printf("lil_spec_verify: allocations 1..%lu failed (every %lu%s)\n", k - 1, stride,
           stride == 1 ? "" : "th; --slow: each");
    T_CHECK(k > 100);
    restore_tmp();
    lil_spec_free(spec);
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "--slow") == 0) {
        slow = 1;
        argc--;
        argv++;
    }
    return t_main(argc, argv);
}
