/*
 * test_cli_resolve.c -- `lil resolve RUN IDENTITY ...`: each resolution
 * (retry, assume-done with and without --result, abort) checked from the
 * outside through lil.h afterwards (the run's state, whether the effect
 * runs again, what it returns), the journaled actor and reason (--actor and
 * the $USER default), an identity that is not uncertain (exit 1, nothing
 * written), a held run (exit 75, the holder's pid named), usage errors
 * (exit 64) and --json.
 */
#include <lil/lil.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "cli_util.h"
#include "t.h"

static char out[C_OUT_CAP], err[C_OUT_CAP];

struct effect_ud {
    int calls;
    unsigned attempt;
};

static int fn_charge(lil_call *call, void *ud)
{
    struct effect_ud *e = ud;

    e->calls++;
    e->attempt = lil_call_attempt(call);
    return lil_call_set_result(call, "charged", 7) != LIL_OK;
}

/* Reopen run id, replay "prep" and "charge"; the status of the effect,
 * its result in res (cap 64) and the calls of its function. */
static lil_status replay(const char *id, struct effect_ud *e, char *res)
{
    lil_store *st = c_open_store();
    lil_run *run = c_open_run(st, id);
    lil_bytes b = {NULL, 0};
    lil_status rc = LIL_E_INVAL;

    res[0] = '\0';
    if (run && lil_step(run, "prep", fn_charge, e, NULL) == LIL_OK) {
        rc = lil_effect(run, "charge", "amount=10", 9, fn_charge, e, &b);
        if (rc == LIL_OK)
            snprintf(res, 64, "%.*s", (int)b.len, (const char *)b.data);
    }
    lil_free(b.data);
    lil_run_close(run);
    lil_store_close(st);
    return rc;
}

/* The payload of the run's resolve record (static), or "". */
static int find_resolve(void *ud, const lil_record *rec)
{
    if (rec->type == LIL_REC_RESOLVE)
        snprintf(ud, 2048, "%.*s", (int)rec->payload_len, (const char *)rec->payload);
    return 0;
}

static const char *resolve_payload(const char *id)
{
    static char buf[2048];
    lil_store *st = c_open_store();
    lil_run_opts o = {sizeof(o), LIL_SYNC_DEFAULT, LIL_OPEN_READONLY, 0};
    lil_run *run = NULL;

    buf[0] = '\0';
    if (lil_run_open(st, id, &o, &run) == LIL_OK)
        lil_run_foreach(run, find_resolve, buf);
    lil_run_close(run);
    lil_store_close(st);
    return buf;
}

T_TEST(retry_runs_the_effect_again)
{
    struct effect_ud e = {0, 0};
    char res[64];

    c_make_uncertain_run("u");
    T_EQ_I64(c_lil(out, err,
                   "resolve u charge --retry --actor alice --reason 'not sent' "
                   "--dir '%s'",
                   c_store()),
             0);
    T_EQ_STR(err, "");
    T_CONTAINS(out, "resolved 'charge' of run 'u': retry (by alice: not sent)");
    T_CONTAINS(out, "now running");
    T_EQ_I64(c_state("u"), LIL_RUN_RUNNING);
    T_CONTAINS(resolve_payload("u"), "alice");
    T_CONTAINS(resolve_payload("u"), "not sent");
    T_OK(replay("u", &e, res));
    T_EQ_I64(e.calls, 1);
    T_EQ_I64(e.attempt, 2);
    T_EQ_STR(res, "charged");
}

T_TEST(assume_done_with_result)
{
    struct effect_ud e = {0, 0};
    char res[64];

    c_make_uncertain_run("u");
    T_EQ_I64(c_lil(out, err,
                   "resolve u charge --assume-done --result='{\"id\":7}' "
                   "--actor=bob --reason='the bank says paid' --dir '%s'",
                   c_store()),
             0);
    T_CONTAINS(out, "assume-done");
    T_EQ_I64(c_state("u"), LIL_RUN_RUNNING);
    T_OK(replay("u", &e, res));
    T_EQ_I64(e.calls, 0);
    T_EQ_STR(res, "{\"id\":7}");
}

T_TEST(assume_done_without_result_is_empty)
{
    struct effect_ud e = {0, 0};
    char res[64];

    c_make_uncertain_run("u");
    T_EQ_I64(c_lil(out, err, "resolve u charge --assume-done --reason x --dir '%s'",
                   c_store()),
             0);
    T_OK(replay("u", &e, res));
    T_EQ_I64(e.calls, 0);
    T_EQ_STR(res, "");
}

T_TEST(abort_stops_the_run)
{
    struct effect_ud e = {0, 0};
    char res[64];

    c_make_uncertain_run("u");
    T_EQ_I64(c_lil(out, err, "resolve u charge --abort --reason 'give up' --dir '%s'",
                   c_store()),
             0);
    T_CONTAINS(out, "abort");
    T_CONTAINS(out, "now stopped");
    T_EQ_I64(c_state("u"), LIL_RUN_STOPPED);
    T_CHECK(replay("u", &e, res) != LIL_OK);
    T_EQ_I64(e.calls, 0);
    T_EQ_I64(c_lil(out, err, "inspect u --dir '%s'", c_store()), 0);
    T_CONTAINS(out, "status        stopped");
}

T_TEST(actor_defaults_to_user_then_cli)
{
    const char *u = getenv("USER");
    char *saved = u ? strdup(u) : NULL;

    c_make_uncertain_run("v");
    setenv("USER", "carol-from-env", 1);
    T_EQ_I64(
        c_lil(out, err, "resolve v charge --retry --reason r2 --dir '%s'", c_store()),
        0);
    T_CONTAINS(out, "by carol-from-env");
    T_CONTAINS(resolve_payload("v"), "carol-from-env");
    c_make_uncertain_run("w");
    unsetenv("USER");
    T_EQ_I64(
        c_lil(out, err, "resolve w charge --retry --reason r3 --dir '%s'", c_store()),
        0);
    T_CONTAINS(out, "by cli:");
    T_CONTAINS(resolve_payload("w"), "cli");
    if (saved)
        setenv("USER", saved, 1);
    free(saved);
}

T_TEST(not_uncertain_is_1_and_writes_nothing)
{
    uint64_t before;

    c_make_uncertain_run("u");
    before = c_file_hash(c_journal("u"));
    T_EQ_I64(c_lil(out, err, "resolve u prep --retry --reason x --dir '%s'", c_store()),
             1);
    T_CONTAINS(err, "lil: resolve: 'prep' is not an uncertain effect of run 'u'");
    T_CONTAINS(err, "charge");
    T_EQ_I64(
        c_lil(out, err, "resolve u nothing --abort --reason x --dir '%s'", c_store()),
        1);
    T_CHECK(c_file_hash(c_journal("u")) == before);
    c_make_run("fine", 1, true);
    T_EQ_I64(
        c_lil(out, err, "resolve fine s1 --retry --reason x --dir '%s'", c_store()), 1);
    T_CONTAINS(err, "has no uncertain effect");
    T_EQ_I64(c_lil(out, err, "resolve nope x --retry --reason x --dir '%s'", c_store()),
             1);
    T_CONTAINS(err, "no run 'nope'");
}

T_TEST(held_run_is_75)
{
    char want[128];
    pid_t holder;

    c_make_uncertain_run("u");
    holder = c_hold("u");
    T_REQUIRE(holder > 0);
    T_EQ_I64(
        c_lil(out, err, "resolve u charge --retry --reason x --dir '%s'", c_store()),
        75);
    snprintf(want, sizeof(want),
             "lil: resolve: run u is held by pid %d; try again when it is done\n",
             (int)holder);
    T_EQ_STR(err, want);
    T_EQ_STR(out, "");
    c_release(holder);
    T_EQ_I64(c_state("u"), LIL_RUN_UNCERTAIN);
    T_EQ_I64(
        c_lil(out, err, "resolve u charge --retry --reason x --dir '%s'", c_store()),
        0);
}

T_TEST(usage_errors)
{
    static const char *const bad[] = {
        "resolve u charge --reason x",                    /* no decision */
        "resolve u charge --retry --abort --reason x",    /* two */
        "resolve u charge --retry --result y --reason x", /* result w/o assume */
        "resolve u charge --retry",                       /* no reason */
        "resolve u charge --retry --reason=",             /* empty reason */
        "resolve u charge --retry --reason x --actor=",   /* empty actor */
        "resolve u charge --retry --reason",              /* no value */
        "resolve u --retry --reason x",                   /* no identity */
        "resolve u charge extra --retry --reason x",      /* one too many */
        "resolve u charge --retry --reason x --bogus",
    };
    uint64_t before;

    c_make_uncertain_run("u");
    before = c_file_hash(c_journal("u"));
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        T_EQ_I64(c_lil(out, err, "%s --dir '%s'", bad[i], c_store()), 64);
        T_CONTAINS(err, "lil: resolve: ");
        T_CONTAINS(err, "lil resolve --help");
    }
    T_CHECK(c_file_hash(c_journal("u")) == before);
    T_EQ_I64(c_state("u"), LIL_RUN_UNCERTAIN);
}

T_TEST(json_output)
{
    json_t *doc;

    c_make_uncertain_run("u");
    T_EQ_I64(c_lil(out, err,
                   "resolve u charge --abort --actor ops --reason why --json "
                   "--dir '%s'",
                   c_store()),
             0);
    doc = c_json(out);
    T_REQUIRE(doc);
    T_EQ_STR(json_string_value(json_object_get(doc, "run")), "u");
    T_EQ_STR(json_string_value(json_object_get(doc, "identity")), "charge");
    T_EQ_STR(json_string_value(json_object_get(doc, "resolution")), "abort");
    T_EQ_STR(json_string_value(json_object_get(doc, "actor")), "ops");
    T_EQ_STR(json_string_value(json_object_get(doc, "reason")), "why");
    T_EQ_STR(json_string_value(json_object_get(doc, "status")), "stopped");
    json_decref(doc);
}

T_MAIN()
