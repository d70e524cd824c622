/*
 * test_spec_api.c -- every lil_spec_* call of lil.h, black-box: results,
 * ownership, misuse, limits, and allocation failure at every point.
 */
#include <lil/lil.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <jansson.h>

#include "t.h"

static const char valid_spec[] =
    "loopspec: \"0.1\"\n"
    "id: t\n"
    "pattern: react\n"
    "state: { vars: { done: { type: boolean, init: false } } }\n"
    "body:\n"
    "  - { id: w, kind: agent, harness: claude-code, prompt: do, on_done: { set: { done: true } } }\n"
    "terminate: { signal: state-predicate, until: \"${state.done == true}\" }\n"
    "caps: { max_iterations: 5, budget: { tokens: 10000, usd: 1, wallclock: 1h } }\n";

/* The base spec with a reference to an undeclared var on line 6. */
static const char bad_ref_spec[] =
    "loopspec: \"0.1\"\n"
    "id: t\n"
    "pattern: react\n"
    "state: { vars: { done: { type: boolean, init: false } } }\n"
    "body:\n"
    "  - { id: w, kind: agent, harness: claude-code, prompt: do, when: \"${state.nope == 1}\", "
    "on_done: { set: { done: true } } }\n"
    "terminate: { signal: state-predicate, until: \"${state.done == true}\" }\n"
    "caps: { max_iterations: 5, budget: { tokens: 10000, usd: 1, wallclock: 1h } }\n";

static void write_file(const char *path, const char *text, size_t len)
{
    FILE *f = fopen(path, "wb");

    if (f) {
        fwrite(text, 1, len, f);
        fclose(f);
    }
}

static const lil_diag *find_code(const lil_spec *spec, const char *code)
{
    for (size_t i = 0; i < lil_spec_diag_count(spec); i++) {
        if (strcmp(lil_spec_diag(spec, i)->code, code) == 0)
            return lil_spec_diag(spec, i);
    }
    return NULL;
}

T_TEST(valid_spec_loads_with_json_and_explain)
{
    lil_spec *spec = NULL;
    lil_bytes out;
    json_t *doc;

    T_OK(lil_spec_parse(NULL, "t.yaml", valid_spec, strlen(valid_spec), NULL, &spec));
    T_REQUIRE(spec);
    T_EQ_I64(lil_spec_ok(spec), 1);
    T_EQ_I64(lil_spec_diag_count(spec), 0);
    T_CHECK(lil_spec_diag(spec, 0) == NULL);
    T_OK(lil_spec_json(spec, &out));
    doc = json_loadb(out.data, out.len, 0, NULL);
    T_REQUIRE(doc);
    T_EQ_STR(json_string_value(json_object_get(doc, "id")), "t");
    T_EQ_I64(json_integer_value(
                 json_object_get(json_object_get(doc, "caps"), "max_iterations")),
             5);
    json_decref(doc);
    lil_free(out.data);
    T_OK(lil_spec_explain(spec, &out));
    doc = json_loadb(out.data, out.len, 0, NULL);
    T_REQUIRE(doc);
    T_CHECK(json_is_object(json_object_get(doc, "exit")));
    json_decref(doc);
    lil_free(out.data);
    lil_spec_free(spec);
}

/* lil_spec_explain_at: the fire times of a cron schedule from a given time
 * (the same document every call); times outside 1970..9999 are misuse. */
T_TEST(explain_at_counts_fire_times_from_now)
{
    static const char cron_spec[] =
        "loopspec: \"0.1\"\n"
        "id: t\n"
        "pattern: cron\n"
        "state: { vars: { done: { type: boolean, init: false } } }\n"
        "body:\n"
        "  - { id: w, kind: shell, cmd: \"true\", on_done: { set: { done: true } } }\n"
        "terminate: { signal: state-predicate, until: \"${state.done == true}\" }\n"
        "caps: { max_iterations: 2, budget: { wallclock: \"1h\" } }\n"
        "schedule: { mode: cron, cron: \"30 6 * * 1\" }\n";
    lil_spec *spec = NULL;
    lil_bytes a = {0}, b = {0}, out = {(void *)1, 1};
    json_t *doc;
    const json_t *next;

    T_OK(lil_spec_parse(NULL, "c.yaml", cron_spec, strlen(cron_spec), NULL, &spec));
    T_REQUIRE(lil_spec_ok(spec));
    /* 2025-01-01T12:00:00Z, a Wednesday: the next Mondays at 06:30 */
    T_OK(lil_spec_explain_at(spec, INT64_C(1735732800000), &a));
    T_OK(lil_spec_explain_at(spec, INT64_C(1735732800000), &b));
    T_EQ_MEM(a.data, a.len, b.data, b.len);
    doc = json_loadb(a.data, a.len, 0, NULL);
    T_REQUIRE(doc);
    next = json_object_get(json_object_get(doc, "schedule"), "next");
    T_EQ_I64((int64_t)json_array_size(next), 3);
    T_EQ_STR(json_string_value(json_object_get(json_array_get(next, 0), "iso")),
             "2025-01-06T06:30:00Z");
    T_EQ_STR(json_string_value(json_object_get(json_array_get(next, 2), "iso")),
             "2025-01-20T06:30:00Z");
    T_EQ_I64(json_integer_value(json_object_get(json_array_get(next, 0), "epoch_ms")),
             INT64_C(1736145000000));
    json_decref(doc);
    lil_free(a.data);
    lil_free(b.data);
    T_EQ_I64(lil_spec_explain_at(spec, -1, &out), LIL_E_INVAL);
    T_CHECK(out.data == NULL && out.len == 0);
    T_EQ_I64(lil_spec_explain_at(spec, INT64_C(253402300800000), &out), LIL_E_INVAL);
    T_EQ_I64(lil_spec_explain_at(spec, 0, NULL), LIL_E_INVAL);
    lil_spec_free(spec);
}

T_TEST(invalid_spec_keeps_diagnostic_with_position_and_source_line)
{
    lil_spec *spec = NULL;
    const lil_diag *d;
    lil_bytes out = {(void *)1, 1};

    T_OK(lil_spec_parse(NULL, "bad.yaml", bad_ref_spec, strlen(bad_ref_spec), NULL,
                        &spec));
    T_REQUIRE(spec);
    T_EQ_I64(lil_spec_ok(spec), 0);
    d = find_code(spec, "bad-ref");
    T_REQUIRE(d);
    T_EQ_I64(d->severity, LIL_SEV_ERROR);
    T_EQ_STR(d->file, "bad.yaml");
    T_EQ_I64(d->line, 6);
    /* the caret points at `state` inside the guard */
    T_REQUIRE(d->column > 0 && d->column <= strlen(d->source_line));
    T_CHECK(strncmp(d->source_line + d->column - 1, "state.nope", 10) == 0);
    T_CONTAINS(d->message, "state.nope");
    T_CONTAINS(d->path, "body[0]:w");
    T_EQ_I64(lil_spec_json(spec, &out), LIL_E_SPEC);
    T_CHECK(out.data == NULL && out.len == 0);
    T_EQ_I64(lil_spec_explain(spec, &out), LIL_E_SPEC);
    T_EQ_I64(lil_spec_explain_at(spec, 0, &out), LIL_E_SPEC);
    lil_spec_free(spec);
}

T_TEST(load_reads_the_file_and_names_it)
{
    lil_spec *spec = NULL;

    write_file(t_path("loop.yaml"), valid_spec, strlen(valid_spec));
    T_OK(lil_spec_load(NULL, t_path("loop.yaml"), NULL, &spec));
    T_EQ_I64(lil_spec_ok(spec), 1);
    lil_spec_free(spec);

    write_file(t_path("bad.yaml"), bad_ref_spec, strlen(bad_ref_spec));
    T_OK(lil_spec_load(NULL, t_path("bad.yaml"), NULL, &spec));
    T_REQUIRE(find_code(spec, "bad-ref"));
    T_EQ_STR(find_code(spec, "bad-ref")->file, t_path("bad.yaml"));
    lil_spec_free(spec);
}

T_TEST(load_reads_a_pipe)
{
    lil_spec *spec = NULL;
    pid_t pid;
    int status = 0;

    T_REQUIRE(mkfifo(t_path("fifo.yaml"), 0600) == 0);
    pid = fork();
    T_REQUIRE(pid >= 0);
    if (pid == 0) {
        write_file(t_path("fifo.yaml"), valid_spec, strlen(valid_spec));
        _exit(0);
    }
    T_OK(lil_spec_load(NULL, t_path("fifo.yaml"), NULL, &spec));
    waitpid(pid, &status, 0);
    T_EQ_I64(lil_spec_ok(spec), 1);
    lil_spec_free(spec);
}

T_TEST(unreadable_file_is_io_error_naming_the_path)
{
    lil_spec *spec = (lil_spec *)1;

    T_EQ_I64(lil_spec_load(NULL, t_path("missing.yaml"), NULL, &spec), LIL_E_IO);
    T_CHECK(spec == NULL);
    T_CONTAINS(lil_errmsg(), "missing.yaml");
    mkdir(t_path("dir.yaml"), 0700);
    T_EQ_I64(lil_spec_load(NULL, t_path("dir.yaml"), NULL, &spec), LIL_E_IO);
    T_CONTAINS(lil_errmsg(), "dir.yaml");
}

T_TEST(size_limit_gives_a_diagnostic_not_a_failure)
{
    lil_spec_limits lim = {64, 0, 0};
    lil_spec *spec = NULL;

    write_file(t_path("loop.yaml"), valid_spec, strlen(valid_spec));
    T_OK(lil_spec_load(NULL, t_path("loop.yaml"), &lim, &spec));
    T_REQUIRE(spec);
    T_EQ_I64(lil_spec_ok(spec), 0);
    T_REQUIRE(lil_spec_diag_count(spec) == 1);
    T_EQ_STR(lil_spec_diag(spec, 0)->code, "yaml");
    T_CHECK(lil_spec_diag(spec, 0)->line >= 1);
    lil_spec_free(spec);
}

T_TEST(depth_limit_applies)
{
    lil_spec_limits lim = {0, 4, 0};
    const char *deep = "a: { b: { c: { d: { e: { f: 1 } } } } }\n";
    lil_spec *spec = NULL;

    T_OK(lil_spec_parse(NULL, "deep.yaml", deep, strlen(deep), &lim, &spec));
    T_REQUIRE(spec);
    T_EQ_I64(lil_spec_ok(spec), 0);
    T_REQUIRE(lil_spec_diag_count(spec) == 1);
    T_EQ_STR(lil_spec_diag(spec, 0)->code, "yaml");
    T_EQ_I64(lil_spec_diag(spec, 0)->line, 1);
    lil_spec_free(spec);
}

T_TEST(misuse_returns_inval)
{
    lil_spec *spec = NULL;
    lil_bytes out;

    T_EQ_I64(lil_spec_parse(NULL, "x", "a", 1, NULL, NULL), LIL_E_INVAL);
    T_EQ_I64(lil_spec_parse(NULL, "x", NULL, 5, NULL, &spec), LIL_E_INVAL);
    T_EQ_I64(lil_spec_load(NULL, NULL, NULL, &spec), LIL_E_INVAL);
    T_EQ_I64(lil_spec_load(NULL, "x", NULL, NULL), LIL_E_INVAL);
    T_EQ_I64(lil_spec_json(NULL, &out), LIL_E_INVAL);
    T_EQ_I64(lil_spec_explain(NULL, &out), LIL_E_INVAL);
    T_EQ_I64(lil_spec_explain_at(NULL, 0, &out), LIL_E_INVAL);
    T_EQ_I64(lil_spec_ok(NULL), 0);
    T_EQ_I64(lil_spec_diag_count(NULL), 0);
    T_CHECK(lil_spec_diag(NULL, 0) == NULL);
    lil_spec_free(NULL);
    /* empty text is a spec with a diagnostic, not a misuse */
    T_OK(lil_spec_parse(NULL, "empty.yaml", NULL, 0, NULL, &spec));
    T_REQUIRE(spec);
    T_EQ_I64(lil_spec_ok(spec), 0);
    T_CHECK(lil_spec_diag_count(spec) >= 1);
    lil_spec_free(spec);
}

/* ---- allocation failure at every point ---------------------------------- */

static long alloc_budget;

static void *limited_malloc(void *ud, size_t n)
{
    (void)ud;
    if (alloc_budget-- <= 0)
        return NULL;
    return malloc(n);
}

static void *limited_realloc(void *ud, void *p, size_t n)
{
    (void)ud;
    if (alloc_budget-- <= 0)
        return NULL;
    return realloc(p, n);
}

static void plain_free(void *ud, void *p)
{
    (void)ud;
    free(p);
}

/* Fail the k-th allocation for every k: each attempt must either succeed
 * with the same result as without faults or return LIL_E_NOMEM, and leak
 * nothing (ASan's leak check runs this test too). */
static void torture(const char *text)
{
    lil_env *env = NULL;
    int ok_runs = 0;

    T_OK(lil_env_new(&env));
    T_OK(lil_env_set_allocator(env, limited_malloc, limited_realloc, plain_free, NULL));
    for (long k = 0; k < 100000 && ok_runs < 3; k++) {
        lil_spec *spec = NULL;
        lil_status rc;

        alloc_budget = k;
        rc = lil_spec_parse(env, "t.yaml", text, strlen(text), NULL, &spec);
        if (rc == LIL_OK) {
            T_REQUIRE(spec);
            ok_runs++;
            lil_spec_free(spec);
        } else {
            T_EQ_I64(rc, LIL_E_NOMEM);
            T_CHECK(spec == NULL);
        }
    }
    T_CHECK(ok_runs > 0);
    lil_env_free(env);
}

T_TEST(allocation_failure_at_every_point)
{
    torture(valid_spec);
    torture(bad_ref_spec);
}

T_MAIN()
