/*
 * test_step_req.c -- the engine's step request (engine/run.h,
 * lil__run_step_req): an effect's intent may carry a note after the hash of
 * its request, and a plain step may be lazy (its outcome written, synced by
 * the run's next sync).
 *
 * Notes: a process dies inside an effect and the reopened run gives the
 * intent's note (lil__run_intent_note), the journal is intact, `lil log
 * --jsonl` and `lil inspect` show it; an intent of 32 bytes (lil_effect, the
 * format before notes) still opens, replays and goes uncertain; a replay
 * compares the request, never the note, and a request that differs names the
 * journaled note; a note over the run's max_record is LIL_E_TOOBIG, one not
 * UTF-8, on a plain step, or a lazy effect is LIL_E_INVAL, with nothing
 * journaled.  A note over 4 KiB (1 MiB here) is journaled in a request record
 * before a small intent: through a crash inside the effect (uncertain, the
 * note whole or cut), its retry and its replay, and through the crash point
 * between the request record and the intent (the effect never started).
 *
 * Lazy steps: fdatasyncs counted through the fault table (faults.h): in mode
 * full N lazy steps sync nothing and the next effect syncs twice (its intent,
 * which covers them, and its outcome); normal and off sync nothing either; a
 * lazy step survives SIGKILL (also from threads racing with synced steps);
 * after a power cut that drops every unsynced write the journal opens and
 * the lazy steps are gone, while those an intent's sync covered stay.
 */
#include <lil/lil.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/hash.h"
#include "engine/run.h"
#include "faults.h"
#include "t.h"
#include "workload.h"

#define NOTE "iteration=1 seq=2 kind=shell identity=charge caf\xc3\xa9"
#define REQ  "amount=10"

/* ---- helpers ----------------------------------------------------------------- */

static const char *store_dir(void)
{
    return t_path("store");
}

static lil_store *open_store(lil_env *env)
{
    lil_store *st = NULL;

    T_OK(lil_store_open(env, store_dir(), &st));
    return st;
}

static lil_run *open_run(lil_store *st, const char *id, lil_sync sync)
{
    lil_run_opts o = {sizeof(o), sync, 0, 0};
    lil_run *run = NULL;

    T_OK(lil_run_open(st, id, &o, &run));
    return run;
}

struct fn_ctx {
    const char *result;
    int calls;
};

static int fn_result(lil_call *call, void *ud)
{
    struct fn_ctx *c = ud;

    c->calls++;
    return lil_call_set_result(call, c->result, strlen(c->result)) == LIL_OK ? 0 : -1;
}

static int fn_die(lil_call *call, void *ud)
{
    (void)call;
    (void)ud;
    _exit(9); /* a crash inside the effect: intent without outcome */
}

static lil_status effect(lil_run *run, const char *name, const char *request,
                         const char *note, size_t note_len, lil_fn fn, void *ud,
                         lil_bytes *out)
{
    struct lil_step_req req = {0};
    struct lil_err err = {0};

    req.effect = true;
    req.request = request;
    req.request_len = strlen(request);
    req.note = note;
    req.note_len = note_len;
    return lil__run_step_req(run, &err, name, &req, fn, ud, out);
}

static lil_status lazy_step(lil_run *run, const char *name, struct fn_ctx *c)
{
    struct lil_step_req req = {0};
    struct lil_err err = {0};

    req.lazy = true;
    return lil__run_step_req(run, &err, name, &req, fn_result, c, NULL);
}

/* Replay name as a plain step: its journaled result, or "" when it ran. */
static void replayed(lil_run *run, const char *name, const char *want)
{
    struct fn_ctx c = {"ran-again", 0};
    lil_bytes out = {0};

    T_OK(lil_step(run, name, fn_result, &c, &out));
    T_EQ_I64(c.calls, 0);
    T_EQ_MEM(out.data, out.len, want, strlen(want));
    lil_free(out.data);
}

static int wait_child(pid_t pid)
{
    int st = 0;

    while (waitpid(pid, &st, 0) < 0)
        ;
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* A child opens run id, runs "prep", then effect "charge" (request REQ,
 * with note when note_len is not 0) and dies inside it. */
static void crash_in_effect(const char *id, const char *note, size_t note_len)
{
    pid_t pid;

    fflush(NULL);
    pid = fork();
    T_REQUIRE(pid >= 0);
    if (pid == 0) {
        lil_store *st = NULL;
        lil_run *run = NULL;
        lil_run_opts o = {sizeof(o), LIL_SYNC_FULL, 0, 0};
        struct fn_ctx c = {"P", 0};
        if (lil_store_open(NULL, store_dir(), &st) != LIL_OK ||
            lil_run_open(st, id, &o, &run) != LIL_OK ||
            lil_step(run, "prep", fn_result, &c, NULL) != LIL_OK)
            _exit(2);
        if (note_len)
            effect(run, "charge", REQ, note, note_len, fn_die, NULL, NULL);
        else
            lil_effect(run, "charge", REQ, strlen(REQ), fn_die, NULL, NULL);
        _exit(3); /* fn_die did not run */
    }
    T_EQ_I64(wait_child(pid), 9);
}

static int64_t count_records(lil_run *run);

/* ---- notes ------------------------------------------------------------------ */

T_TEST(note_of_an_uncertain_effect)
{
    lil_check_report rep = {.struct_size = sizeof(rep)};
    struct lil_run_note note;
    lil_store *st;
    lil_run *run;

    crash_in_effect("r", NOTE, strlen(NOTE));
    st = open_store(NULL);
    run = open_run(st, "r", LIL_SYNC_FULL);
    T_REQUIRE(run);
    T_EQ_I64(lil_run_status(run), LIL_RUN_UNCERTAIN);
    T_CHECK(lil__run_intent_note(run, "charge", false, &note));
    T_EQ_MEM(note.text, note.len, NOTE, strlen(NOTE));
    T_CHECK(!note.cut);
    T_EQ_I64((int64_t)note.full_len, (int64_t)strlen(NOTE));
    T_CHECK(!lil__run_intent_note(run, "prep", true, &note)); /* not uncertain */
    T_CHECK(note.text == NULL && note.len == 0);
    T_CHECK(!lil__run_intent_note(run, "nothing", true, &note));
    T_OK(lil_run_close(run));
    T_OK(lil_run_check(st, "r", 0, &rep));
    T_CHECK(rep.intact);
    lil_store_close(st);
}

T_TEST(log_and_inspect_show_the_note)
{
    uint8_t digest[LIL_SHA256_LEN];
    char cmd[600], want[200], hex[2 * LIL_SHA256_LEN + 1];
    static char out[65536];

    crash_in_effect("r", NOTE, strlen(NOTE));
    lil__sha256(REQ, strlen(REQ), digest);
    lil__hex(digest, LIL_SHA256_LEN, hex);
    snprintf(cmd, sizeof(cmd), "'%s' log r --jsonl --dir '%s' | grep '\"intent\"'",
             t_lil_bin(), store_dir());
    T_EQ_I64(t_run(cmd, out, sizeof(out), 0), 0);
    T_CONTAINS(out, "\"note\":\"" NOTE "\"");
    snprintf(want, sizeof(want), "\"request_sha256\":\"%s\"", hex);
    T_CONTAINS(out, want);
    snprintf(want, sizeof(want), "\"payload_len\":%zu", 32 + strlen(NOTE));
    T_CONTAINS(out, want);
    snprintf(cmd, sizeof(cmd), "'%s' log r --dir '%s' | grep intent", t_lil_bin(),
             store_dir());
    T_EQ_I64(t_run(cmd, out, sizeof(out), 0), 0);
    T_CONTAINS(out, "0x");
    T_CONTAINS(out, "  note: " NOTE);
    snprintf(cmd, sizeof(cmd), "'%s' inspect r --dir '%s'", t_lil_bin(), store_dir());
    T_EQ_I64(t_run(cmd, out, sizeof(out), 0), 2); /* uncertain */
    T_CONTAINS(out, "uncertain     charge  note: " NOTE "  (outcome unknown");
    snprintf(cmd, sizeof(cmd), "'%s' inspect r --json --dir '%s'", t_lil_bin(),
             store_dir());
    T_EQ_I64(t_run(cmd, out, sizeof(out), 0), 2);
    T_CONTAINS(out, "\"uncertain_notes\": {\n    \"charge\": \"" NOTE "\"");
}

/* An intent of exactly 32 bytes (lil_effect; every journal written before
 * notes) opens, replays, and goes uncertain without a note. */
T_TEST(intent_without_note_still_works)
{
    struct fn_ctx c = {"E", 0};
    struct lil_run_note note;
    lil_bytes out = {0};
    char cmd[600];
    static char text[65536];
    lil_store *st = open_store(NULL);
    lil_run *run = open_run(st, "old", LIL_SYNC_FULL);

    T_REQUIRE(run);
    T_OK(lil_effect(run, "pay", REQ, strlen(REQ), fn_result, &c, NULL));
    T_OK(lil_run_close(run));
    run = open_run(st, "old", LIL_SYNC_FULL);
    T_REQUIRE(run);
    T_OK(lil_effect(run, "pay", REQ, strlen(REQ), fn_result, &c, &out));
    T_EQ_MEM(out.data, out.len, "E", 1);
    lil_free(out.data);
    T_EQ_I64(c.calls, 1); /* replayed */
    T_OK(lil_run_close(run));
    /* the same effect asked with a note replays too */
    run = open_run(st, "old", LIL_SYNC_FULL);
    T_REQUIRE(run);
    T_OK(effect(run, "pay", REQ, NOTE, strlen(NOTE), fn_result, &c, NULL));
    T_EQ_I64(c.calls, 1);
    T_OK(lil_run_close(run));
    lil_store_close(st);

    crash_in_effect("u", NULL, 0);
    st = open_store(NULL);
    run = open_run(st, "u", LIL_SYNC_FULL);
    T_REQUIRE(run);
    T_EQ_I64(lil_run_status(run), LIL_RUN_UNCERTAIN);
    T_CHECK(!lil__run_intent_note(run, "charge", true, &note));
    T_OK(lil_run_close(run));
    lil_store_close(st);
    snprintf(cmd, sizeof(cmd), "'%s' log u --jsonl --dir '%s' | grep '\"intent\"'",
             t_lil_bin(), store_dir());
    T_EQ_I64(t_run(cmd, text, sizeof(text), 0), 0);
    T_CONTAINS(text, "\"payload_b64\":");
    T_CONTAINS(text, "\"request_sha256\":");
    T_CHECK(strstr(text, "\"note\"") == NULL);
}

T_TEST(replay_compares_the_request_not_the_note)
{
    struct fn_ctx c = {"R", 0};
    struct lil_err err = {0};
    struct lil_step_req req = {0};
    lil_bytes out = {0};
    lil_store *st = open_store(NULL);
    lil_run *run = open_run(st, "r", LIL_SYNC_FULL);

    T_REQUIRE(run);
    T_OK(effect(run, "fx", REQ, "first note", 10, fn_result, &c, NULL));
    T_OK(lil_run_close(run));
    run = open_run(st, "r", LIL_SYNC_FULL);
    T_REQUIRE(run);
    T_OK(effect(run, "fx", REQ, "another note", 12, fn_result, &c, &out));
    T_EQ_MEM(out.data, out.len, "R", 1);
    lil_free(out.data);
    T_EQ_I64(c.calls, 1);
    T_OK(lil_run_close(run));
    /* another request diverges, and the message names the journaled note */
    run = open_run(st, "r", LIL_SYNC_FULL);
    T_REQUIRE(run);
    req.effect = true;
    req.request = "amount=11";
    req.request_len = 9;
    T_EQ_I64(lil__run_step_req(run, &err, "fx", &req, fn_result, &c, NULL),
             LIL_E_NONDET);
    T_CONTAINS(err.msg, "differs from the journaled one (first note)");
    T_EQ_I64(c.calls, 1);
    T_OK(lil_run_close(run));
    lil_store_close(st);
}

static int count_fn(void *ud, const lil_record *rec)
{
    (void)rec;
    ++*(int64_t *)ud;
    return 0;
}

static int64_t count_records(lil_run *run)
{
    int64_t n = 0;

    T_OK(lil_run_foreach(run, count_fn, &n));
    return n;
}

/* What lil__run_step_req refuses journals nothing and counts no call. */
static void refused(lil_run *run, const struct lil_step_req *req, lil_status want,
                    const char *msg)
{
    struct fn_ctx c = {"X", 0};
    struct lil_err err = {0};
    int64_t before = count_records(run);

    T_EQ_I64(lil__run_step_req(run, &err, "x", req, fn_result, &c, NULL), want);
    T_CONTAINS(err.msg, msg);
    T_EQ_I64(c.calls, 0);
    T_EQ_I64(count_records(run), before);
}

T_TEST(refused_requests_journal_nothing)
{
    static char big[8193];
    struct lil_step_req req = {0};
    struct fn_ctx c = {"X", 0};
    lil_store *st = open_store(NULL);
    lil_run_opts small = {sizeof(small), LIL_SYNC_FULL, 0, 8192};
    lil_run *run = NULL;
    struct lil_run_note note;

    T_OK(lil_run_open(st, "r", &small, &run));
    T_REQUIRE(run);
    memset(big, 'n', sizeof(big));
    req.effect = true;
    req.request = REQ;
    req.request_len = strlen(REQ);
    req.note = big;
    req.note_len = sizeof(big); /* over the run's max_record */
    refused(run, &req, LIL_E_TOOBIG,
            "its request is 8193 bytes, over the run's record limit of 8192 bytes");
    req.note = "bad \xff byte";
    req.note_len = 10;
    refused(run, &req, LIL_E_INVAL, "its note is not UTF-8 (byte 4)");
    req.note = NULL;
    refused(run, &req, LIL_E_INVAL, "a length without bytes");
    req.note_len = 0;
    req.lazy = true;
    refused(run, &req, LIL_E_INVAL, "effect 'x' cannot be lazy");
    req.effect = false;
    req.lazy = false;
    req.note = "n";
    req.note_len = 1;
    refused(run, &req, LIL_E_INVAL, "only an effect's intent carries one");
    /* no call was counted: the next one is "x", not "x#5"; 8192 bytes is
     * allowed (in a record of its own) */
    T_OK(effect(run, "x", REQ, big, 8192, fn_result, &c, NULL));
    T_OK(lil_run_close(run));
    run = open_run(st, "r", LIL_SYNC_FULL);
    T_REQUIRE(run);
    T_EQ_I64(count_records(run), 7); /* begin open request intent step close open */
    T_OK(effect(run, "x", REQ, NULL, 0, fn_result, &c, NULL));
    T_EQ_I64(c.calls, 1);                                  /* replayed as "x" */
    T_CHECK(!lil__run_intent_note(run, "x", true, &note)); /* done, not uncertain */
    T_OK(lil_run_close(run));
    lil_store_close(st);
}

/* ---- big notes ------------------------------------------------------------- */

#define BIG_NOTE (1024u * 1024u) /* an agent prompt of 1 MiB */

/* A note of n bytes "effect <i>: é..." (valid UTF-8, two-byte characters
 * across the 1024-byte cut). */
static char *big_note(size_t n)
{
    char *s = malloc(n);

    if (!s) {
        perror("malloc");
        exit(1);
    }
    memcpy(s, "agent {", 7); /* then "é" from offset 7: the 1024th byte
                                continues a character */
    for (size_t i = 7; i + 1 < n; i += 2) {
        s[i] = '\xc3';
        s[i + 1] = '\xa9';
    }
    if ((n - 7) % 2)
        s[n - 1] = '}';
    return s;
}

struct rec_list {
    char types[16][16];
    size_t payload_len[16];
    unsigned flags[16];
    int n;
};

static int list_fn(void *ud, const lil_record *rec)
{
    struct rec_list *l = ud;

    if (l->n < 16) {
        snprintf(l->types[l->n], sizeof(l->types[0]), "%s",
                 lil_record_type_name(rec->type));
        l->payload_len[l->n] = rec->payload_len;
        l->flags[l->n] = rec->flags;
        l->n++;
    }
    return 0;
}

/* A process dies inside an effect whose note is 1 MiB: the journal holds
 * the note in a request record and a small intent after it; the reopened
 * run is uncertain, gives the note's first bytes (cut at a character) or,
 * asked for it whole, the whole note; the same request replays once the
 * effect is resolved, and a completed one is never run again. */
T_TEST(big_note_is_journaled_apart)
{
    char *note = big_note(BIG_NOTE + 1);
    lil_check_report rep = {.struct_size = sizeof(rep)};
    struct rec_list l = {0};
    struct lil_run_note got;
    struct fn_ctx c = {"R", 0};
    lil_bytes out = {0};
    lil_store *st;
    lil_run *run;

    crash_in_effect("big", note, BIG_NOTE + 1);
    st = open_store(NULL);
    run = open_run(st, "big", LIL_SYNC_FULL);
    T_REQUIRE(run);
    T_EQ_I64(lil_run_status(run), LIL_RUN_UNCERTAIN);
    T_OK(lil_run_foreach(run, list_fn, &l));
    T_EQ_STR(l.types[3], "request");
    T_EQ_I64((int64_t)l.payload_len[3], BIG_NOTE + 1);
    T_EQ_STR(l.types[4], "intent");
    T_EQ_I64((int64_t)l.flags[4], LIL_RECF_EFFECT | LIL_RECF_REQUEST);
    T_EQ_I64((int64_t)l.payload_len[4], 72 + 1023); /* the head ends at a character */
    T_CHECK(lil__run_intent_note(run, "charge", false, &got));
    T_CHECK(got.cut);
    T_EQ_I64((int64_t)got.full_len, BIG_NOTE + 1);
    T_EQ_MEM(got.text, got.len, note, 1023);
    T_CHECK(lil__run_intent_note(run, "charge", true, &got));
    T_CHECK(!got.cut);
    T_EQ_MEM(got.text, got.len, note, BIG_NOTE + 1);
    T_OK(lil_run_resolve(run, "charge", LIL_RESOLVE_RETRY, NULL, 0, "t", "again"));
    T_OK(lil_run_close(run));
    run = open_run(st, "big", LIL_SYNC_FULL);
    T_REQUIRE(run);
    T_OK(lil_step(run, "prep", fn_result, &c, NULL));
    T_OK(effect(run, "charge", REQ, note, BIG_NOTE + 1, fn_result, &c, &out));
    T_EQ_I64(c.calls, 1); /* the retry ran it */
    lil_free(out.data);
    T_OK(lil_run_close(run));
    run = open_run(st, "big", LIL_SYNC_FULL);
    T_REQUIRE(run);
    T_OK(lil_step(run, "prep", fn_result, &c, NULL));
    T_OK(effect(run, "charge", REQ, note, BIG_NOTE + 1, fn_result, &c, &out));
    T_EQ_I64(c.calls, 1); /* completed: replayed, not run again */
    T_EQ_MEM(out.data, out.len, "R", 1);
    lil_free(out.data);
    T_OK(lil_run_close(run));
    T_OK(lil_run_check(st, "big", 0, &rep));
    T_CHECK(rep.intact);
    lil_store_close(st);
    free(note);
}

/* The crash point between the request record and the intent: with sync
 * normal each is written by its own pwrite; the process dies before the
 * intent's.  The request record is left with no intent: the effect never
 * started, the run is not uncertain, and the effect runs once on resume. */
T_TEST(crash_between_request_and_intent)
{
    char *note = big_note(64 * 1024);
    struct rec_list l = {0};
    struct fn_ctx c = {"R", 0};
    struct t_fault f = {0};
    lil_store *st;
    lil_run *run;
    pid_t pid;

    fflush(NULL);
    pid = fork();
    T_REQUIRE(pid >= 0);
    if (pid == 0) {
        lil_env *env = t_env_faulty();
        lil_store *cst = NULL;
        lil_run *crun = NULL;
        lil_run_opts o = {sizeof(o), LIL_SYNC_NORMAL, 0, 0};

        if (lil_store_open(env, store_dir(), &cst) != LIL_OK ||
            lil_run_open(cst, "cut", &o, &crun) != LIL_OK)
            _exit(2);
        f.kind = T_K_PWRITE;
        f.nth = 2; /* the request record is the first pwrite, the intent the second */
        f.action = T_ACT_CRASH;
        t_faults_arm(&f);
        effect(crun, "charge", REQ, note, 64 * 1024, fn_die, NULL, NULL);
        _exit(3);
    }
    T_EQ_I64(wait_child(pid), T_CRASH_EXIT);
    st = open_store(NULL);
    run = open_run(st, "cut", LIL_SYNC_FULL);
    T_REQUIRE(run);
    T_EQ_I64(lil_run_status(run), LIL_RUN_RUNNING);
    T_OK(lil_run_foreach(run, list_fn, &l));
    T_EQ_STR(l.types[2], "request");
    T_EQ_STR(l.types[3], "open"); /* no intent */
    T_OK(effect(run, "charge", REQ, note, 64 * 1024, fn_result, &c, NULL));
    T_EQ_I64(c.calls, 1);
    T_OK(lil_run_close(run));
    run = open_run(st, "cut", LIL_SYNC_FULL);
    T_REQUIRE(run);
    T_OK(effect(run, "charge", REQ, note, 64 * 1024, fn_result, &c, NULL));
    T_EQ_I64(c.calls, 1); /* replayed */
    T_OK(lil_run_close(run));
    lil_store_close(st);
    free(note);
}

/* ---- lazy steps ---------------------------------------------------------- */

/* N lazy steps then one effect in mode sync: the fdatasyncs counted after
 * the lazy steps and after the effect. */
static void count_syncs(lil_sync sync, unsigned long *after_lazy,
                        unsigned long *after_effect)
{
    lil_env *env = t_env_faulty();
    lil_store *st = open_store(env);
    lil_run *run = open_run(st, "r", sync);
    struct fn_ctx c = {"snapshot", 0};
    char name[16];

    T_REQUIRE(run);
    t_faults_reset();
    for (int i = 0; i < 5; i++) {
        snprintf(name, sizeof(name), "snap%d", i);
        T_OK(lazy_step(run, name, &c));
    }
    *after_lazy = t_faults_count(T_K_FDATASYNC);
    T_CHECK(t_faults_count(T_K_PWRITE) >= 5); /* written, one by one */
    T_OK(effect(run, "fx", REQ, "n", 1, fn_result, &c, NULL));
    *after_effect = t_faults_count(T_K_FDATASYNC);
    T_OK(lil_run_close(run));
    lil_store_close(st);
    lil_env_free(env);
}

T_TEST(lazy_steps_are_synced_by_the_next_effect)
{
    unsigned long lazy, total;

    count_syncs(LIL_SYNC_FULL, &lazy, &total);
    T_EQ_I64(lazy, 0);
    T_EQ_I64(total, 2); /* the intent's sync (covering the lazy steps), the outcome's */
    t_rmtree(store_dir());
    count_syncs(LIL_SYNC_NORMAL, &lazy, &total);
    T_EQ_I64(lazy, 0);
    T_EQ_I64(total, 1); /* the intent's */
    t_rmtree(store_dir());
    count_syncs(LIL_SYNC_OFF, &lazy, &total);
    T_EQ_I64(lazy, 0);
    T_EQ_I64(total, 0);
}

/* For comparison: the same steps, not lazy, sync one by one in mode full. */
T_TEST(plain_steps_sync_each_in_mode_full)
{
    lil_env *env = t_env_faulty();
    lil_store *st = open_store(env);
    lil_run *run = open_run(st, "r", LIL_SYNC_FULL);
    struct fn_ctx c = {"s", 0};

    T_REQUIRE(run);
    t_faults_reset();
    T_OK(lil_step(run, "a", fn_result, &c, NULL));
    T_OK(lil_step(run, "b", fn_result, &c, NULL));
    T_EQ_I64(t_faults_count(T_K_FDATASYNC), 2);
    T_OK(lil_run_close(run));
    lil_store_close(st);
    lil_env_free(env);
}

T_TEST(lazy_step_survives_sigkill)
{
    pid_t pid;

    fflush(NULL);
    pid = fork();
    T_REQUIRE(pid >= 0);
    if (pid == 0) {
        lil_store *st = NULL;
        lil_run *run = NULL;
        lil_run_opts o = {sizeof(o), LIL_SYNC_FULL, 0, 0};
        struct fn_ctx c = {"S1", 0};
        if (lil_store_open(NULL, store_dir(), &st) != LIL_OK ||
            lil_run_open(st, "r", &o, &run) != LIL_OK ||
            lazy_step(run, "snap", &c) != LIL_OK)
            _exit(2);
        raise(SIGKILL);
        _exit(3);
    }
    T_EQ_I64(wait_child(pid), 128 + SIGKILL);
    lil_store *st = open_store(NULL);
    lil_run *run = open_run(st, "r", LIL_SYNC_FULL);
    T_REQUIRE(run);
    replayed(run, "snap", "S1");
    T_OK(lil_run_close(run));
    lil_store_close(st);
}

/* Threads mix lazy and synced steps, so lazy appends meet syncs in flight
 * (they wait for them, then write); then the process is killed. */
#define THREADS 4
#define PER     60

struct thr {
    lil_run *run;
    int t;
    int failed;
};

static void *thread_steps(void *ud)
{
    struct thr *th = ud;
    char name[32], result[32];

    for (int i = 0; i < PER; i++) {
        struct fn_ctx c = {result, 0};
        struct lil_step_req req = {0};
        struct lil_err err = {0};
        snprintf(name, sizeof(name), "t%d-%d", th->t, i);
        snprintf(result, sizeof(result), "v%d-%d", th->t, i);
        req.lazy = i % 2 == 0;
        if (lil__run_step_req(th->run, &err, name, &req, fn_result, &c, NULL) != LIL_OK)
            th->failed++;
    }
    return NULL;
}

T_TEST(lazy_steps_from_threads_survive_sigkill)
{
    char name[32], result[32];
    pid_t pid;

    fflush(NULL);
    pid = fork();
    T_REQUIRE(pid >= 0);
    if (pid == 0) {
        lil_store *st = NULL;
        lil_run *run = NULL;
        lil_run_opts o = {sizeof(o), LIL_SYNC_FULL, 0, 0};
        pthread_t tid[THREADS];
        struct thr th[THREADS];
        int failed = 0;
        if (lil_store_open(NULL, store_dir(), &st) != LIL_OK ||
            lil_run_open(st, "r", &o, &run) != LIL_OK)
            _exit(2);
        for (int t = 0; t < THREADS; t++) {
            th[t] = (struct thr){run, t, 0};
            pthread_create(&tid[t], NULL, thread_steps, &th[t]);
        }
        for (int t = 0; t < THREADS; t++) {
            pthread_join(tid[t], NULL);
            failed += th[t].failed;
        }
        if (failed)
            _exit(4);
        raise(SIGKILL);
        _exit(3);
    }
    T_EQ_I64(wait_child(pid), 128 + SIGKILL);
    lil_store *st = open_store(NULL);
    lil_run *run = open_run(st, "r", LIL_SYNC_FULL);
    T_REQUIRE(run);
    for (int t = 0; t < THREADS; t++)
        for (int i = 0; i < PER; i++) {
            snprintf(name, sizeof(name), "t%d-%d", t, i);
            snprintf(result, sizeof(result), "v%d-%d", t, i);
            replayed(run, name, result);
        }
    T_OK(lil_run_close(run));
    lil_store_close(st);
}

/* A child, through the fault table with change tracking on: step "a"
 * (synced), lazy steps "b" and "c", then, with_effect, effect "fx" whose
 * function dies (its intent is synced first); else it dies at once. */
static void lazy_then_die(const char *pclog, bool with_effect)
{
    pid_t pid;

    fflush(NULL);
    pid = fork();
    T_REQUIRE(pid >= 0);
    if (pid == 0) {
        lil_env *env = t_env_faulty();
        lil_store *st = NULL;
        lil_run *run = NULL;
        lil_run_opts o = {sizeof(o), LIL_SYNC_FULL, 0, 0};
        struct fn_ctx a = {"A", 0}, b = {"B", 0}, c = {"C", 0};
        t_faults_reset();
        t_pc_track(pclog);
        if (!env || lil_store_open(env, store_dir(), &st) != LIL_OK ||
            lil_run_open(st, "r", &o, &run) != LIL_OK ||
            lil_step(run, "a", fn_result, &a, NULL) != LIL_OK ||
            lazy_step(run, "b", &b) != LIL_OK || lazy_step(run, "c", &c) != LIL_OK)
            _exit(2);
        if (with_effect)
            effect(run, "fx", REQ, "n", 1, fn_die, NULL, NULL);
        _exit(9);
    }
    T_EQ_I64(wait_child(pid), 9);
}

T_TEST(lazy_steps_lost_in_a_power_cut_before_any_sync)
{
    struct t_pc_stats ps = {0};
    struct fn_ctx c = {"again", 0};
    char pclog[4200];

    snprintf(pclog, sizeof(pclog), "%s", t_path("pc.log"));
    t_store_prepare(store_dir());
    t_pc_forget(pclog);
    lazy_then_die(pclog, false);
    T_EQ_I64(t_pc_apply(pclog, 1, T_PC_DROP_ALL, &ps), 0);
    T_CHECK(ps.dropped > 0);
    lil_store *st = open_store(NULL);
    lil_run *run = open_run(st, "r", LIL_SYNC_FULL);
    T_REQUIRE(run);
    replayed(run, "a", "A");
    T_OK(lil_step(run, "b", fn_result, &c, NULL)); /* lost: runs again */
    T_EQ_I64(c.calls, 1);
    T_OK(lil_run_close(run));
    lil_store_close(st);
}

/* Lazy step name after a power cut: there with its bytes (1) or gone (0,
 * and its function runs again). */
static int kept_or_gone(lil_run *run, const char *name, const char *want)
{
    struct fn_ctx c = {"new", 0};
    lil_bytes out = {0};

    T_OK(lil_step(run, name, fn_result, &c, &out));
    if (c.calls == 0)
        T_EQ_MEM(out.data, out.len, want, strlen(want));
    lil_free(out.data);
    return c.calls == 0;
}

/* The cut chooses per write (kept, dropped, torn, garbled): the journal
 * opens, or is refused only as the recovery rule allows (intact records
 * that were never synced after a torn one) and opens after a repair; "a"
 * is there every time, "b" and "c" with their bytes or not at all. */
T_TEST(lazy_steps_random_power_cuts)
{
    int kept = 0, gone = 0, repaired = 0;
    char pclog[4200];

    snprintf(pclog, sizeof(pclog), "%s", t_path("pc.log"));
    for (uint64_t seed = 1; seed <= 40; seed++) {
        lil_check_report rep = {.struct_size = sizeof(rep)};
        lil_store *st;
        lil_run *run = NULL;
        lil_status rc;
        t_rmtree(store_dir());
        t_store_prepare(store_dir());
        t_pc_forget(pclog);
        lazy_then_die(pclog, false);
        T_EQ_I64(t_pc_apply(pclog, seed, T_PC_RANDOM, NULL), 0);
        st = open_store(NULL);
        rc = lil_run_open(st, "r", NULL, &run);
        if (rc == LIL_E_CORRUPT) {
            T_CONTAINS(lil_errmsg(), "never synced");
            T_OK(lil_run_check(st, "r", LIL_CHECK_REPAIR, &rep));
            T_CHECK(rep.repaired);
            repaired++;
            rc = lil_run_open(st, "r", NULL, &run);
        }
        T_EQ_I64(rc, LIL_OK);
        if (run) {
            replayed(run, "a", "A");
            int b = kept_or_gone(run, "b", "B"), c = kept_or_gone(run, "c", "C");
            kept += b + c;
            gone += 2 - b - c;
        }
        T_OK(lil_run_close(run));
        lil_store_close(st);
    }
    printf("lazy steps after 40 power cuts: %d kept, %d lost, %d repairs\n", kept, gone,
           repaired);
    T_CHECK(kept > 0 && gone > 0);
}

T_TEST(lazy_steps_kept_by_the_next_intents_sync)
{
    char pclog[4200];

    snprintf(pclog, sizeof(pclog), "%s", t_path("pc.log"));
    t_store_prepare(store_dir());
    t_pc_forget(pclog);
    lazy_then_die(pclog, true);
    T_EQ_I64(t_pc_apply(pclog, 1, T_PC_DROP_ALL, NULL), 0);
    lil_store *st = open_store(NULL);
    lil_run *run = open_run(st, "r", LIL_SYNC_FULL);
    T_REQUIRE(run);
    T_EQ_I64(lil_run_status(run), LIL_RUN_UNCERTAIN);
    T_OK(lil_run_resolve(run, "fx", LIL_RESOLVE_RETRY, NULL, 0, "test", "retry"));
    replayed(run, "a", "A");
    replayed(run, "b", "B");
    replayed(run, "c", "C");
    T_OK(lil_run_close(run));
    lil_store_close(st);
}

T_MAIN()
