/*
 * test_env_store.c -- environments (allocator and log hooks) and stores
 * (open, path, default directory, messages, listing runs), and the run id
 * rules of lil_run_id_check.
 *
 * The counting allocator puts a header with a magic number in front of each
 * block, so that a block freed twice, freed by libc instead of the hook, or
 * never freed is seen.  The torture test fails the Nth allocation for every
 * N until the workload runs without a failure injected: every call must
 * then return LIL_OK or LIL_E_NOMEM and free everything it took.
 */
#include <lil/lil.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "api_util.h"
#include "t.h"

/* ---- counting allocator ------------------------------------------------ */

#define HDR        16
#define BLK_MAGIC  0x6b6c6231u
#define DEAD_MAGIC 0xdeadbeefu

struct counting {
    long live;     /* blocks allocated and not yet freed */
    long allocs;   /* successful mallocs and reallocs */
    long attempts; /* allocation attempts (for fail_at) */
    long fail_at;  /* fail the attempt with this number (0: never) */
    int fired;     /* fail_at was reached */
    int bad_free;  /* a pointer without our header was freed */
};

static int should_fail(struct counting *c)
{
    c->attempts++;
    if (c->fail_at && c->attempts == c->fail_at) {
        c->fired = 1;
        return 1;
    }
    return 0;
}

static void *c_malloc(void *ud, size_t n)
{
    struct counting *c = ud;
    if (should_fail(c))
        return NULL;
    unsigned char *p = malloc(n + HDR);
    if (!p)
        return NULL;
    uint32_t m = BLK_MAGIC;
    memcpy(p, &m, sizeof(m));
    c->live++;
    c->allocs++;
    return p + HDR;
}

static int has_magic(const unsigned char *base)
{
    uint32_t m;
    memcpy(&m, base, sizeof(m));
    return m == BLK_MAGIC;
}

static void *c_realloc(void *ud, void *p, size_t n)
{
    struct counting *c = ud;
    if (!p)
        return c_malloc(ud, n);
    unsigned char *base = (unsigned char *)p - HDR;
    if (!has_magic(base)) {
        c->bad_free++;
        return NULL;
    }
    if (should_fail(c))
        return NULL;
    unsigned char *q = realloc(base, n + HDR);
    if (!q)
        return NULL;
    c->allocs++;
    return q + HDR;
}

static void c_free(void *ud, void *p)
{
    struct counting *c = ud;
    if (!p)
        return;
    unsigned char *base = (unsigned char *)p - HDR;
    if (!has_magic(base)) {
        c->bad_free++;
        return;
    }
    uint32_t dead = DEAD_MAGIC;
    memcpy(base, &dead, sizeof(dead));
    c->live--;
    free(base);
}

static lil_env *counting_env(struct counting *c)
{
    lil_env *env = NULL;
    T_OK(lil_env_new(&env));
    if (env)
        T_OK(lil_env_set_allocator(env, c_malloc, c_realloc, c_free, c));
    return env;
}

static int fn_fail_step(lil_call *call, void *ud)
{
    (void)ud;
    lil_call_fail(call, "no %s", "luck");
    return 1;
}

/* Open, steps of every kind, outcome, inspection, marker, close. */
static void full_workload(lil_env *env)
{
    lil_store *st = NULL;
    lil_run *run = NULL;
    lil_bytes out = {0};
    struct fn_ctx c = {.result = "hello", .result_len = 5};
    T_OK(lil_store_open(env, "st", &st));
    T_REQUIRE(st);
    T_OK(lil_run_open(st, "r1", NULL, &run));
    T_REQUIRE(run);
    T_OK(lil_step(run, "a", fn_generic, &c, &out));
    T_EQ_MEM(out.data, out.len, "hello", 5);
    lil_free(out.data);
    T_EQ_I64(lil_step(run, "f", fn_fail_step, NULL, &out), LIL_E_FAILED);
    T_OK(lil_effect(run, "e", "req", 3, fn_generic, &c, &out));
    lil_free(out.data);
    struct u_recs rs;
    T_OK(u_collect(run, &rs));
    u_recs_free(&rs);
    lil_run_info info = {.struct_size = sizeof(info)};
    T_OK(lil_run_get_info(run, &info));
    T_OK(lil_run_complete(run, "done", 4));
    T_OK(lil_run_result(run, &out));
    lil_free(out.data);
    T_OK(lil_run_close(run));
    T_OK(lil_run_open(st, "r1", NULL, &run));
    T_OK(lil_step(run, "a", fn_generic, &c, &out));
    lil_free(out.data);
    T_OK(lil_run_close(run));
    T_OK(lil_marker(st, "m", LIL_MARKER_RETRY, fn_generic, &c, &out));
    lil_free(out.data);
    lil_store_close(st);
}

T_TEST(allocator_every_block_freed)
{
    struct counting c = {0};
    lil_env *env = counting_env(&c);
    T_REQUIRE(env);
    full_workload(env);
    lil_env_free(env);
    T_CHECK(c.allocs > 0); /* the hook was used at all */
    T_EQ_I64(c.live, 0);
    T_EQ_I64(c.bad_free, 0);
}

T_TEST(allocator_failure_is_nomem)
{
    struct counting c = {.fail_at = 1};
    lil_env *env = counting_env(&c);
    T_REQUIRE(env);
    c.attempts = 0;
    c.fail_at = 1;
    lil_store *st = (lil_store *)&c; /* garbage: must be cleared */
    lil_status rc = lil_store_open(env, "st", &st);
    T_CHECK(c.fired); /* the store itself is allocated with the hook */
    T_EQ_I64(rc, LIL_E_NOMEM);
    T_CHECK(st == NULL);
    lil_store_close(rc == LIL_OK ? st : NULL);
    lil_env_free(env);
    T_EQ_I64(c.live, 0);
}

static int ok_or_nomem(lil_status rc)
{
    return rc == LIL_OK || rc == LIL_E_NOMEM;
}

/* A step may also find the run ended: an earlier pass completed it while
 * the step itself failed for lack of memory. */
static int step_ok(lil_status rc)
{
    return ok_or_nomem(rc) || rc == LIL_E_DONE;
}

static int fn_fail_torture(lil_call *call, void *ud)
{
    (void)ud;
    lil_call_fail(call, "expected %d", 1);
    return 1;
}

/* Steps, an effect, a failure, an outcome and inspection on an open run. */
static int torture_run(lil_run *run)
{
    struct fn_ctx c = {.result = "x", .result_len = 1};
    lil_bytes out = {0};
    lil_status rc;
    int good = 1;
    rc = lil_step(run, "a", fn_generic, &c, &out);
    good = good && step_ok(rc);
    lil_free(out.data);
    rc = lil_effect(run, "e", "q", 1, fn_generic, &c, &out);
    good = good && step_ok(rc);
    lil_free(out.data);
    rc = lil_step(run, "f", fn_fail_torture, NULL, NULL);
    good = good && (rc == LIL_E_FAILED || step_ok(rc));
    struct u_recs rs;
    rc = u_collect(run, &rs);
    u_recs_free(&rs);
    good = good && ok_or_nomem(rc);
    rc = lil_run_complete(run, "done", 4);
    good = good && (ok_or_nomem(rc) || rc == LIL_E_DONE);
    rc = lil_run_result(run, &out);
    good = good && (ok_or_nomem(rc) || rc == LIL_E_NOTFOUND);
    lil_free(out.data);
    return good;
}

/* One pass of the torture loop; returns 0 when some status was not allowed. */
static int torture_once(lil_env *env, const char *dir)
{
    lil_store *st = NULL;
    lil_run *run = NULL;
    lil_bytes out = {0};
    struct fn_ctx c = {.result = "m", .result_len = 1};
    lil_status rc = lil_store_open(env, dir, &st);
    if (rc != LIL_OK)
        return ok_or_nomem(rc) && st == NULL;
    int good = 1;
    for (int pass = 0; pass < 2; pass++) { /* create, then replay */
        rc = lil_run_open(st, "r", NULL, &run);
        good = good && ok_or_nomem(rc);
        if (rc == LIL_OK) {
            int g = torture_run(run); /* always run and close: no && here */
            rc = lil_run_close(run);
            good = good && g && ok_or_nomem(rc);
        }
    }
    rc = lil_marker(st, "m", LIL_MARKER_RETRY, fn_generic, &c, &out);
    good = good && ok_or_nomem(rc);
    lil_free(out.data);
    lil_store_close(st);
    return good;
}

T_TEST(allocator_torture_nth_failure)
{
    int done = 0;
    for (long k = 1; k <= 2000 && !done; k++) {
        struct counting c = {0};
        char dir[64];
        lil_env *env = counting_env(&c);
        T_REQUIRE(env);
        c.attempts = 0;
        c.fail_at = k;
        snprintf(dir, sizeof(dir), "t%ld", k);
        int good = torture_once(env, dir);
        lil_env_free(env);
        if (!good || c.live != 0 || c.bad_free) {
            fprintf(stderr, "allocation #%ld failed: good=%d live=%ld bad_free=%d\n", k,
                    good, c.live, c.bad_free);
            t_fail();
            return;
        }
        done = !c.fired;
    }
    T_CHECK(done);
}

T_TEST(allocator_after_store_open_refused)
{
    struct counting c = {0};
    lil_env *env = NULL;
    lil_store *st = NULL;
    T_OK(lil_env_new(&env));
    T_REQUIRE(env);
    T_OK(lil_store_open(env, "st", &st));
    T_EQ_I64(lil_env_set_allocator(env, c_malloc, c_realloc, c_free, &c), LIL_E_INVAL);
    T_EQ_I64(lil_env_set_allocator(env, NULL, c_realloc, c_free, &c), LIL_E_INVAL);
    lil_store_close(st);
    lil_env_free(env);
    T_EQ_I64(c.allocs, 0);
}

/* ---- log hook ------------------------------------------------------------ */

struct logs {
    int n;
    int bad_level;
    int below_min;
    int newline;
    int run_named;
    int run_missing; /* lines without run=logrun (all of them concern it) */
    int min;
};

static void log_fn(void *ud, int level, const char *msg)
{
    struct logs *l = ud;
    l->n++;
    if (level != LIL_LOG_DEBUG && level != LIL_LOG_INFO && level != LIL_LOG_WARN &&
        level != LIL_LOG_ERROR)
        l->bad_level++;
    if (level < l->min)
        l->below_min++;
    if (!msg || strchr(msg, '\n'))
        l->newline++;
    if (msg && strstr(msg, "run=logrun"))
        l->run_named++;
    else {
        l->run_missing++;
        fprintf(stderr, "log line without run=logrun: %s\n", msg ? msg : "(null)");
    }
}

/* Create a run, tear its tail, reopen it (a truncation that is logged).
 * Everything it does concerns run "logrun", so every line must say so. */
static void log_workload(lil_env *env)
{
    lil_store *st = NULL;
    lil_run *run = NULL;
    T_OK(lil_store_open(env, "st", &st));
    T_REQUIRE(st);
    run = u_run(st, "logrun");
    T_REQUIRE(run);
    T_OK(u_step_text(run, "a", "1"));
    lil_run_info info = {.struct_size = sizeof(info)};
    T_OK(lil_run_get_info(run, &info));
    T_OK(lil_run_close(run));
    T_EQ_I64(u_write_at(u_journal_path("st", "logrun"), info.journal_bytes,
                        "\xff\xee\xdd\xcc junk junk junk", 19),
             0);
    run = u_run(st, "logrun");
    T_CHECK(run != NULL);
    if (run)
        T_OK(u_step_text(run, "b", "2"));
    T_OK(lil_run_close(run));
    lil_store_close(st);
}

T_TEST(log_hook_lines)
{
    struct logs l = {.min = LIL_LOG_DEBUG};
    lil_env *env = NULL;
    T_OK(lil_env_new(&env));
    T_REQUIRE(env);
    T_OK(lil_env_set_log(env, log_fn, &l, LIL_LOG_DEBUG));
    log_workload(env);
    lil_env_free(env);
    T_CHECK(l.n > 0);
    T_CHECK(l.run_named > 0);
    T_EQ_I64(l.run_missing, 0);
    T_EQ_I64(l.bad_level, 0);
    T_EQ_I64(l.newline, 0);
}

T_TEST(log_hook_min_level_and_removal)
{
    struct logs l = {.min = LIL_LOG_ERROR};
    lil_env *env = NULL;
    T_OK(lil_env_new(&env));
    T_REQUIRE(env);
    T_OK(lil_env_set_log(env, log_fn, &l, LIL_LOG_ERROR));
    log_workload(env);
    lil_env_free(env);
    T_EQ_I64(l.below_min, 0);

    struct logs none = {.min = 0};
    T_OK(lil_env_new(&env));
    T_REQUIRE(env);
    T_OK(lil_env_set_log(env, log_fn, &none, LIL_LOG_DEBUG));
    T_OK(lil_env_set_log(env, NULL, NULL, LIL_LOG_DEBUG));
    T_OK(mkdir("other", 0700));
    T_OK(chdir("other"));
    log_workload(env);
    T_OK(chdir(".."));
    lil_env_free(env);
    T_EQ_I64(none.n, 0);
}

/* ---- stores ----------------------------------------------------------- */

static int is_dir(const char *p)
{
    struct stat sb;
    return stat(p, &sb) == 0 && S_ISDIR(sb.st_mode);
}

T_TEST(store_open_creates_dir_0700)
{
    T_FILE_ONLY();
    lil_store *st = u_store("st");
    T_REQUIRE(st);
    struct stat sb;
    T_EQ_I64(stat("st", &sb), 0);
    T_CHECK(S_ISDIR(sb.st_mode));
    T_EQ_I64(sb.st_mode & 0777, 0700);
    T_EQ_STR(lil_store_path(st), "st");
    lil_store_close(st);
    /* an existing directory opens too */
    st = u_store("st");
    T_CHECK(st != NULL);
    T_EQ_STR(lil_store_path(st), "st");
    lil_store_close(st);
}

T_TEST(store_default_dir_is_dot_lil)
{
    lil_store *st = NULL;
    T_OK(lil_store_open(NULL, NULL, &st));
    T_REQUIRE(st);
    T_CHECK(is_dir(".lil"));
    const char *p = lil_store_path(st);
    T_REQUIRE(p);
    T_CHECK(strlen(p) >= 4 && strcmp(p + strlen(p) - 4, ".lil") == 0);
    lil_run *run = u_run(st, "r");
    T_REQUIRE(run);
    T_OK(lil_run_close(run));
    T_CHECK(u_file_size(".lil/r.lil") > 64);
    lil_store_close(st);
}

T_TEST(store_lil_dir_env)
{
    char dir[4096];
    snprintf(dir, sizeof(dir), "%s", t_path("from-env"));
    setenv("LIL_DIR", dir, 1);
    lil_store *st = NULL;
    T_OK(lil_store_open(NULL, NULL, &st));
    T_REQUIRE(st);
    T_EQ_STR(lil_store_path(st), dir);
    T_CHECK(is_dir(dir));
    T_CHECK(!is_dir(".lil"));
    lil_store_close(st);

    setenv("LIL_DIR", "", 1); /* empty means unset */
    T_OK(lil_store_open(NULL, NULL, &st));
    T_CHECK(is_dir(".lil"));
    lil_store_close(st);
    unsetenv("LIL_DIR");
}

T_TEST(store_open_io_error)
{
    T_EQ_I64(u_write_file("afile", "x", 1), 0);
    lil_store *st = (lil_store *)"garbage";
    T_EQ_I64(lil_store_open(NULL, "afile", &st), LIL_E_IO);
    T_CHECK(st == NULL);
    T_CONTAINS(lil_errmsg(), "afile");
    st = (lil_store *)"garbage";
    T_EQ_I64(lil_store_open(NULL, "afile/sub", &st), LIL_E_IO);
    T_CHECK(st == NULL);
    T_CONTAINS(lil_errmsg(), "afile");
}

T_TEST(store_env_shared_by_two_stores)
{
    lil_env *env = NULL;
    lil_store *a = NULL, *b = NULL;
    T_OK(lil_env_new(&env));
    T_REQUIRE(env);
    T_OK(lil_store_open(env, "sa", &a));
    T_OK(lil_store_open(env, "sb", &b));
    T_REQUIRE(a && b);
    T_EQ_STR(lil_store_path(a), "sa");
    T_EQ_STR(lil_store_path(b), "sb");
    lil_store_close(a);
    lil_store_close(b);
    lil_env_free(env);
    lil_env_free(NULL);
    lil_store_close(NULL);
}

T_TEST(store_errmsg_after_failed_open)
{
    lil_store *st = u_store(NULL);
    T_REQUIRE(st);
    lil_run *run = (lil_run *)st;
    T_EQ_I64(lil_run_open(st, "a/b", NULL, &run), LIL_E_INVAL);
    T_CHECK(run == NULL);
    T_CHECK(lil_store_errmsg(st) != NULL && lil_store_errmsg(st)[0] != '\0');
    T_CHECK(lil_errmsg()[0] != '\0');
    lil_store_close(st);
}

static void *errmsg_thread(void *ud)
{
    const char *m = lil_errmsg();
    *(int *)ud = m != NULL && m[0] == '\0';
    return NULL;
}

T_TEST(errmsg_is_per_thread)
{
    T_EQ_I64(lil_run_id_check(""), LIL_E_INVAL);
    T_CHECK(lil_errmsg() != NULL);
    int empty = 0;
    pthread_t th;
    T_EQ_I64(pthread_create(&th, NULL, errmsg_thread, &empty), 0);
    pthread_join(th, NULL);
    T_CHECK(empty);
}

/* ---- run ids ---------------------------------------------------------- */

struct bad_id {
    const char *id;
    lil_status want;
};

T_TEST(run_id_rules)
{
    char ctl[] = "ab\x01"
                 "cd";
    char del[] = "ab\x7f";
    char tab[] = "a\tb";
    char unit[] = "a\x1f";
    char nl[] = "a\nb";
    const struct bad_id bad[] = {
        {"", LIL_E_INVAL},   {".", LIL_E_INVAL},   {"..", LIL_E_INVAL},
        {"/", LIL_E_INVAL},  {"a/b", LIL_E_INVAL}, {"/abs", LIL_E_INVAL},
        {ctl, LIL_E_INVAL},  {del, LIL_E_INVAL},   {tab, LIL_E_INVAL},
        {unit, LIL_E_INVAL}, {nl, LIL_E_INVAL},    {u_repeat('x', 201), LIL_E_TOOBIG},
    };
    lil_store *st = u_store(NULL);
    T_REQUIRE(st);
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        lil_run *run = (lil_run *)st;
        T_EQ_I64(lil_run_id_check(bad[i].id), bad[i].want);
        T_EQ_I64(lil_run_open(st, bad[i].id, NULL, &run), bad[i].want);
        T_CHECK(run == NULL);
    }
    T_EQ_I64(lil_run_id_check(NULL), LIL_E_INVAL);
    T_EQ_I64(lil_run_id_check(u_repeat('y', 1000)), LIL_E_TOOBIG);
    const char *good[] = {"a",
                          "...",
                          ".hidden",
                          "with space",
                          "x-_.~+=@",
                          "caf\xc3\xa9-\xe6\x97\xa5\xe6\x9c\xac-\xf0\x9f\x9a\x80",
                          u_repeat('z', 200)};
    for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++)
        T_OK(lil_run_id_check(good[i]));
    lil_store_close(st);
}

T_TEST(run_id_200_bytes_and_unicode_usable)
{
    char id200[201];
    snprintf(id200, sizeof(id200), "%s", u_repeat('z', 200));
    const char *uni = "caf\xc3\xa9-\xe6\x97\xa5\xe6\x9c\xac-\xf0\x9f\x9a\x80";
    const char *ids[] = {id200, uni};
    lil_store *st = u_store(NULL);
    T_REQUIRE(st);
    for (int i = 0; i < 2; i++) {
        lil_run *run = u_run(st, ids[i]);
        T_REQUIRE(run);
        T_EQ_STR(lil_run_id(run), ids[i]);
        T_OK(u_step_text(run, "s", "v"));
        T_OK(lil_run_close(run));
        int never = 0;
        lil_bytes out = {0};
        run = u_run(st, ids[i]);
        T_REQUIRE(run);
        T_OK(lil_step(run, "s", fn_never, &never, &out));
        T_EQ_MEM(out.data, out.len, "v", 1);
        T_EQ_I64(never, 0);
        lil_free(out.data);
        T_OK(lil_run_close(run));
    }
    lil_store_close(st);
}

T_TEST(open_existing_and_readonly_missing)
{
    lil_store *st = u_store(NULL);
    T_REQUIRE(st);
    lil_run *run = NULL;
    lil_run_opts o = {.struct_size = sizeof(o), .flags = LIL_OPEN_EXISTING};
    T_EQ_I64(lil_run_open(st, "missing", &o, &run), LIL_E_NOTFOUND);
    T_CHECK(run == NULL);
    o.flags = LIL_OPEN_READONLY;
    T_EQ_I64(lil_run_open(st, "missing", &o, &run), LIL_E_NOTFOUND);
    T_CHECK(run == NULL);
    T_EQ_I64(u_file_size(u_journal_path(NULL, "missing")), -1);
    run = u_run(st, "there");
    T_REQUIRE(run);
    T_OK(lil_run_close(run));
    o.flags = LIL_OPEN_EXISTING;
    T_OK(lil_run_open(st, "there", &o, &run));
    T_CHECK(run != NULL);
    T_OK(lil_run_close(run));
    lil_store_close(st);
}

/* ---- listing runs ------------------------------------------------------- */

struct ids {
    int n;
    int stop_after;
    char id[16][256];
};

static int collect_id(void *ud, const char *run_id)
{
    struct ids *s = ud;
    if (s->n < 16)
        snprintf(s->id[s->n], sizeof(s->id[0]), "%s", run_id);
    s->n++;
    return s->stop_after && s->n >= s->stop_after ? 7 : 0;
}

T_TEST(foreach_run_byte_order_skips_other_files)
{
    T_FILE_ONLY();
    const char *mk[] = {"b", "a", "\xc3\xa9t\xc3\xa9", "B", "c"};
    lil_store *st = u_store(NULL);
    T_REQUIRE(st);
    for (size_t i = 0; i < 5; i++) {
        lil_run *run = u_run(st, mk[i]);
        T_REQUIRE(run);
        T_OK(lil_run_close(run));
    }
    struct fn_ctx c = {0};
    lil_bytes out = {0};
    T_OK(lil_marker(st, "mark", LIL_MARKER_RETRY, fn_generic, &c, &out));
    lil_free(out.data);
    T_EQ_I64(u_write_file("st/notes.txt", "hello", 5), 0);
    T_EQ_I64(mkdir("st/subdir", 0700), 0);

    struct ids s = {0};
    T_OK(lil_store_foreach_run(st, collect_id, &s));
    T_EQ_I64(s.n, 5);
    T_EQ_STR(s.id[0], "B");
    T_EQ_STR(s.id[1], "a");
    T_EQ_STR(s.id[2], "b");
    T_EQ_STR(s.id[3], "c");
    T_EQ_STR(s.id[4], "\xc3\xa9t\xc3\xa9");

    struct ids one = {.stop_after = 2};
    T_OK(lil_store_foreach_run(st, collect_id, &one));
    T_EQ_I64(one.n, 2);
    lil_store_close(st);
}

T_TEST(foreach_run_empty_store)
{
    lil_store *st = u_store(NULL);
    T_REQUIRE(st);
    struct ids s = {0};
    T_OK(lil_store_foreach_run(st, collect_id, &s));
    T_EQ_I64(s.n, 0);
    lil_store_close(st);
}

/* A store directory others may write in, or owned by another user, is
 * refused unless shared on purpose (the second-user cases are in
 * tests/loop/t_files.py, which runs lil as another user). */
T_TEST(store_others_may_write_is_refused)
{
    T_FILE_ONLY();
    lil_store *st = NULL;
    lil_store_opts so = {sizeof(so), LIL_STORE_SHARED};
    lil_store_opts bad = {sizeof(so), 0x80u};
    lil_store_opts small = {4, LIL_STORE_SHARED};

    T_EQ_I64(mkdir("ww", 0700), 0);
    T_EQ_I64(chmod("ww", 01777), 0);
    T_EQ_I64(lil_store_open(NULL, "ww", &st), LIL_E_IO);
    T_CHECK(st == NULL);
    T_CONTAINS(lil_errmsg(), "writable by every user (mode 1777, sticky or not)");
    T_CONTAINS(lil_errmsg(), "LIL_STORE_SHARED");
    T_EQ_I64(chmod("ww", 0770), 0);
    T_EQ_I64(lil_store_open(NULL, "ww", &st), LIL_E_IO);
    T_CONTAINS(lil_errmsg(), "writable by its group");
    T_EQ_I64(lil_store_open_with(NULL, "ww", &bad, &st), LIL_E_INVAL);
    T_EQ_I64(lil_store_open_with(NULL, "ww", &small, &st), LIL_E_INVAL);
    T_OK(lil_store_open_with(NULL, "ww", &so, &st));
    T_REQUIRE(st);
    lil_store_close(st);
    setenv("LIL_SHARED_STORE", "yes", 1);
    T_OK(lil_store_open(NULL, "ww", &st));
    lil_store_close(st);
    unsetenv("LIL_SHARED_STORE");
    T_EQ_I64(chmod("ww", 0755), 0);
    T_OK(lil_store_open_with(NULL, "ww", NULL, &st)); /* only the owner writes */
    lil_store_close(st);
}

/* A FIFO or a link named like a journal is never listed, opened through or
 * waited on; a link where the markers go is refused. */
T_TEST(store_fifo_and_links_refused)
{
    T_FILE_ONLY();
    lil_store *st = u_store(NULL);
    lil_run *run = NULL;
    lil_run_opts ro = {sizeof(ro), LIL_SYNC_DEFAULT,
                       LIL_OPEN_EXISTING | LIL_OPEN_READONLY, 0};
    struct fn_ctx c = {0};
    lil_bytes out = {0};
    struct ids s = {0};

    T_REQUIRE(st);
    run = u_run(st, "a");
    T_REQUIRE(run);
    T_OK(lil_run_close(run));
    T_EQ_I64(mkfifo("st/f.lil", 0600), 0);
    T_EQ_I64(symlink("a.lil", "st/l.lil"), 0);
    T_OK(lil_store_foreach_run(st, collect_id, &s));
    T_EQ_I64(s.n, 1);
    T_EQ_STR(s.id[0], "a");
    run = (lil_run *)"garbage";
    T_EQ_I64(lil_run_open(st, "f", &ro, &run), LIL_E_IO);
    T_CONTAINS(lil_store_errmsg(st), "it is a FIFO, not a regular file");
    T_EQ_I64(lil_run_open(st, "f", NULL, &run), LIL_E_IO);
    T_EQ_I64(lil_run_open(st, "l", NULL, &run), LIL_E_IO);
    T_CONTAINS(lil_store_errmsg(st), "symbolic link");
    lil_store_close(st);

    T_EQ_I64(mkdir("elsewhere", 0700), 0);
    st = u_store("st2");
    T_REQUIRE(st);
    T_EQ_I64(symlink("../elsewhere", "st2/markers"), 0);
    T_CHECK(lil_marker(st, "m", LIL_MARKER_RETRY, fn_generic, &c, &out) != LIL_OK);
    T_CONTAINS(lil_store_errmsg(st), "symbolic link");
    T_EQ_I64(c.calls, 0);
    T_CHECK(rmdir("elsewhere") == 0); /* nothing was made there */
    lil_store_close(st);
}

T_TEST(version_string)
{
    T_EQ_STR(lil_version(), LIL_VERSION);
}

T_MAIN()
