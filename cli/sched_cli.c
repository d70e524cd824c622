/*
 * sched_cli.c -- firing the due slots of the store's schedules, for `lil
 * tick` and `lil schedule run` (docs/loops.md, "Schedules").
 *
 * A schedule's document (written by `lil schedule add`, kept by the store:
 * lil_schedule_put) is {"id", "spec" (an absolute path), "cwd", "cron",
 * "catch_up", "inputs" (an object or null), "spec_sha256", "added_ms",
 * "added_by"}.  For each schedule, the slots due now after its mark (or
 * after added_ms when it never fired) by its catch-up policy
 * (lil_schedule_due) fire, oldest first: the spec is loaded and must still
 * have the digest the schedule was added with (else the slot is refused:
 * `lil schedule add --replace` binds the new text), then a NEW run
 * "<id>@<slot>" is opened (LIL_LOOP_NEW_RUN | LIL_LOOP_UNATTENDED: its
 * start journaled), the mark moved to the slot, and the run run.
 *
 * Each slot fires once: its run id is derived from the schedule and the
 * slot, so a tick that finds the run exists (LIL_E_DONE) or held by
 * another process (LIL_E_LOCKED: a racing tick is firing it) counts the
 * slot as fired and moves on; the mark only spares the next tick the
 * look.  A tick that died after the open and before the mark leaves a run
 * that the next tick finds, and never a second one.
 */
#include "sched_cli.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "spec_cli.h"

#define MIN_MS 60000

/* ---- times ---------------------------------------------------------------------- */

bool cli_sched_parse_now(const char *text, int64_t *out)
{
    struct tm tm;
    const char *end;
    size_t len = strlen(text);

    if (len > 0 && len <= 15 && strspn(text, "0123456789") == len) {
        *out = (int64_t)strtoll(text, NULL, 10);
        return true;
    }
    memset(&tm, 0, sizeof(tm));
    end = strptime(text, "%Y-%m-%dT%H:%M", &tm);
    if (end && *end == ':')
        end = strptime(end, ":%S", &tm);
    if (!end || strcmp(end, "Z") != 0)
        return false;
    *out = (int64_t)timegm(&tm) * 1000;
    return *out >= 0;
}

void cli_sched_slot_text(int64_t slot_ms, char *buf, size_t cap)
{
    time_t t = (time_t)(slot_ms / 1000);
    struct tm tm;

    if (!gmtime_r(&t, &tm)) {
        snprintf(buf, cap, "%lld", (long long)slot_ms);
        return;
    }
    if (strftime(buf, cap, tm.tm_sec ? "%Y-%m-%dT%H:%M:%SZ" : "%Y-%m-%dT%H:%MZ", &tm) ==
        0)
        snprintf(buf, cap, "%lld", (long long)slot_ms);
}

/* ---- one schedule --------------------------------------------------------------- */

struct fire {
    const struct cli_ctx *ctx;
    lil_store *st;
    int64_t now_ms;
    json_t *runs;
    bool *failed;
};

static const char *member(const json_t *doc, const char *key)
{
    return json_string_value(json_object_get(doc, key));
}

static void report(struct fire *f, const char *sched, const char *run_id,
                   const char *action, const char *text, const lil_loop_result *res)
{
    json_t *e;

    if (!f->runs) {
        if (res)
            printf("schedule '%s': fired run '%s', now %s at iteration %lld\n", sched,
                   run_id, lil_loop_status_name(res->status),
                   (long long)res->iteration);
        else if (strcmp(action, "failed") == 0 || strcmp(action, "refused") == 0)
            cli_err(f->ctx, "schedule '%s': run '%s' %s: %s", sched, run_id,
                    strcmp(action, "refused") == 0 ? "not fired" : "failed", text);
        else
            printf("schedule '%s': run '%s' %s\n", sched, run_id, text);
        return;
    }
    if (strcmp(action, "failed") == 0 || strcmp(action, "refused") == 0)
        cli_err(f->ctx, "schedule '%s': run '%s': %s", sched, run_id, text);
    e = json_object();
    cli_json_set(e, "run", cli_json_str(run_id, strlen(run_id)));
    cli_json_set(e, "schedule", cli_json_str(sched, strlen(sched)));
    cli_json_set(e, "action", json_string(action));
    if (res) {
        cli_json_set(e, "status", json_string(lil_loop_status_name(res->status)));
        cli_json_set(e, "result", res->json ? json_loads(res->json, 0, NULL) : NULL);
    } else if (text) {
        cli_json_set(e, "reason", cli_json_str(text, strlen(text)));
    }
    json_array_append_new(f->runs, e);
}

static char *inputs_text(const json_t *doc)
{
    const json_t *in = json_object_get(doc, "inputs");

    return json_is_object(in) ? json_dumps(in, JSON_COMPACT) : NULL;
}

/* The run of one slot: opened new, marked, run. */
static void fire_run(struct fire *f, const char *sched, const json_t *doc,
                     const lil_spec *spec, int64_t slot, const char *run_id)
{
    char reason[256], slot_text[40];
    lil_loop_opts o;
    lil_loop_result res = {0};
    lil_loop *lp = NULL;
    char *inputs = inputs_text(doc);
    lil_status rc;

    cli_sched_slot_text(slot, slot_text, sizeof(slot_text));
    snprintf(reason, sizeof(reason), "lil tick: schedule %s, slot %s", sched,
             slot_text);
    memset(&o, 0, sizeof(o));
    o.struct_size = sizeof(o);
    o.run_id = run_id;
    o.cwd = member(doc, "cwd");
    o.inputs_json = inputs;
    o.reason = reason;
    o.flags = LIL_LOOP_UNATTENDED | LIL_LOOP_NEW_RUN;
    rc = lil_loop_open(f->st, spec, &o, &lp);
    free(inputs);
    if (rc == LIL_E_DONE || rc == LIL_E_LOCKED) {
        report(f, sched, run_id, "exists",
               rc == LIL_E_DONE ? "fired already" : "being fired by another process",
               NULL);
        (void)lil_schedule_mark(f->st, sched, slot);
        return;
    }
    if (rc != LIL_OK) {
        *f->failed = true;
        report(f, sched, run_id, "failed", lil_store_errmsg(f->st), NULL);
        return;
    }
    if (lil_schedule_mark(f->st, sched, slot) != LIL_OK)
        cli_err(f->ctx, "schedule '%s': marking slot %s: %s", sched, slot_text,
                lil_store_errmsg(f->st));
    cli_tick_current(lp);
    rc = cli_tick_stopping() ? LIL_OK : lil_loop_run(lp, &res);
    cli_tick_current(NULL);
    if (rc != LIL_OK) {
        *f->failed = true;
        report(f, sched, run_id, "failed", lil_loop_errmsg(lp), NULL);
    } else if (res.json) {
        *f->failed = *f->failed || res.status == LIL_LOOP_FAILED;
        report(f, sched, run_id, "fired", NULL, &res);
    }
    lil_loop_result_free(&res);
    if (lil_loop_close(lp) != LIL_OK)
        cli_err(f->ctx, "schedule '%s': closing run '%s': %s", sched, run_id,
                lil_errmsg());
}

/* The spec of doc, loaded and checked against the digest it was added
 * with; NULL (reported) when it cannot fire. */
static lil_spec *bound_spec(struct fire *f, const char *sched, const json_t *doc,
                            const char *run_id)
{
    const char *path = member(doc, "spec"), *want = member(doc, "spec_sha256");
    lil_spec *spec = NULL;
    char msg[1024], now[65] = "";

    if (!path || cli_spec_load(NULL, path, &spec, msg, sizeof(msg)) != LIL_OK) {
        if (!path)
            snprintf(msg, sizeof(msg), "the schedule names no spec");
        *f->failed = true;
        report(f, sched, run_id, "failed", msg, NULL);
        return NULL;
    }
    if (!lil_spec_ok(spec) || lil_spec_digest(spec, now) != LIL_OK || !want ||
        strcmp(now, want) != 0) {
        snprintf(msg, sizeof(msg),
                 "its spec %s %s (sha256 %.16s, the schedule is bound to %.16s): "
                 "`lil schedule add %s --replace` binds the spec as it is now",
                 path, lil_spec_ok(spec) ? "changed" : "is no longer valid", now,
                 want ? want : "?", path);
        *f->failed = true;
        report(f, sched, run_id, "refused", msg, NULL);
        lil_spec_free(spec);
        return NULL;
    }
    return spec;
}

static void fire_schedule(struct fire *f, const char *sched)
{
    lil_bytes b = {NULL, 0};
    int64_t mark = 0, slots[CLI_SCHED_MAX_SLOTS], added;
    size_t n = 0;
    json_t *doc = NULL;
    lil_spec *spec = NULL;
    char run_id[512], slot_text[40];

    if (lil_schedule_get(f->st, sched, &b, &mark) != LIL_OK ||
        !(doc = json_loadb(b.data, b.len, 0, NULL))) {
        *f->failed = true;
        cli_err(f->ctx, "schedule '%s': cannot read it: %s", sched,
                b.data ? "not JSON" : lil_store_errmsg(f->st));
        lil_free(b.data);
        return;
    }
    lil_free(b.data);
    added = (int64_t)json_integer_value(json_object_get(doc, "added_ms"));
    if (lil_schedule_due(member(doc, "cron"), member(doc, "catch_up"),
                         mark > added ? mark : added, f->now_ms, slots,
                         CLI_SCHED_MAX_SLOTS, &n) != LIL_OK) {
        *f->failed = true;
        cli_err(f->ctx, "schedule '%s': %s", sched, lil_errmsg());
    }
    for (size_t i = 0; i < n && !cli_tick_stopping(); i++) {
        cli_sched_slot_text(slots[i], slot_text, sizeof(slot_text));
        snprintf(run_id, sizeof(run_id), "%s@%s", sched, slot_text);
        if (!spec && !(spec = bound_spec(f, sched, doc, run_id)))
            break;
        fire_run(f, sched, doc, spec, slots[i], run_id);
    }
    lil_spec_free(spec);
    json_decref(doc);
}

/* ---- every schedule ------------------------------------------------------------- */

static int collect(void *ud, const char *id)
{
    json_array_append_new((json_t *)ud, json_string(id));
    return 0;
}

/* The ids of st's schedules (a new array), or NULL (reported). */
static json_t *schedule_ids(const struct cli_ctx *ctx, lil_store *st)
{
    json_t *ids = json_array();

    if (ids && lil_schedule_foreach(st, collect, ids) != LIL_OK) {
        if (ctx)
            cli_err(ctx, "listing schedules: %s", lil_store_errmsg(st));
        json_decref(ids);
        return NULL;
    }
    return ids;
}

void cli_sched_fire(const struct cli_ctx *ctx, lil_store *st, int64_t now_ms,
                    json_t *runs, bool *failed)
{
    struct fire f = {ctx, st, now_ms, runs, failed};
    json_t *ids = schedule_ids(ctx, st);
    size_t i;
    json_t *id;

    if (!ids) {
        *failed = true;
        return;
    }
    json_array_foreach(ids, i, id)
    {
        if (cli_tick_stopping())
            break;
        fire_schedule(&f, json_string_value(id));
    }
    json_decref(ids);
}

static int64_t next_of(lil_store *st, const char *sched, int64_t now_ms)
{
    lil_bytes b = {NULL, 0};
    int64_t mark = 0, slot = 0;
    size_t n = 0;
    json_t *doc = NULL;

    if (lil_schedule_get(st, sched, &b, &mark) == LIL_OK &&
        (doc = json_loadb(b.data, b.len, 0, NULL)) &&
        lil_schedule_due(member(doc, "cron"), "all", now_ms,
                         now_ms + INT64_C(400) * 86400000, &slot, 1, &n) != LIL_OK)
        n = 0;
    json_decref(doc);
    lil_free(b.data);
    return n ? slot : 0;
}

int64_t cli_sched_next(lil_store *st, int64_t now_ms)
{
    json_t *ids = schedule_ids(NULL, st), *id;
    int64_t best = 0;
    size_t i;

    if (!ids)
        return 0;
    json_array_foreach(ids, i, id)
    {
        int64_t t = next_of(st, json_string_value(id), now_ms);

        if (t && (!best || t < best))
            best = t;
    }
    json_decref(ids);
    return best;
}
