/*
 * test_markers.c -- lil_marker and lil_marker_reset: a function guarded by a
 * store-wide marker runs once across store handles, processes and
 * restarts; its result is handed to every later caller; a failing function
 * publishes nothing; concurrent callers in two processes run it exactly
 * once; a holder that dies inside it is handled by the caller's policy.
 *
 * Calls of the guarded function are counted in a file opened with
 * O_APPEND (one byte per call), which counts across processes.
 */
#include <fcntl.h>
#include <lil/lil.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "api_util.h"
#include "t.h"

#define COUNT_FILE "count"

struct mfn {
    const char *result; /* set as the result */
    int sleep_ms;       /* stay inside fn this long */
    int die;            /* _exit(0) inside fn, after counting */
    int fail;           /* fail instead of setting a result */
    char key[64];       /* idempotency key seen */
};

static void count_call(void)
{
    int fd = open(COUNT_FILE, O_WRONLY | O_CREAT | O_APPEND, 0600);
    if (fd >= 0) {
        if (write(fd, "x", 1) != 1)
            perror("count");
        close(fd);
    }
}

static void sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

static int fn_marker(lil_call *call, void *ud)
{
    struct mfn *m = ud;
    const char *key = lil_call_idempotency_key(call);
    snprintf(m->key, sizeof(m->key), "%s", key ? key : "(null)");
    count_call();
    if (m->key[0]) {
        int fd = open("marker.key", O_WRONLY | O_CREAT | O_TRUNC, 0600);
        if (fd >= 0) {
            if (write(fd, m->key, strlen(m->key)) < 0)
                perror("marker.key");
            close(fd);
        }
    }
    if (m->sleep_ms)
        sleep_ms(m->sleep_ms);
    if (m->die)
        _exit(0);
    if (m->fail) {
        lil_call_fail(call, "nope");
        return 1;
    }
    return lil_call_set_result(call, m->result, strlen(m->result)) != LIL_OK;
}

static long calls(void)
{
    long long n = u_file_size(COUNT_FILE);
    return n < 0 ? 0 : (long)n;
}

T_TEST(once_across_two_store_handles)
{
    lil_store *a = u_store(NULL), *b = u_store(NULL);
    T_REQUIRE(a && b);
    struct mfn m = {.result = "R1"};
    lil_bytes out = {0};
    T_OK(lil_marker(a, "m", LIL_MARKER_RETRY, fn_marker, &m, &out));
    T_EQ_MEM(out.data, out.len, "R1", 2);
    T_CHECK(out.data && ((char *)out.data)[out.len] == '\0');
    lil_free(out.data);
    T_EQ_I64(calls(), 1);
    int never = 0;
    T_OK(lil_marker(b, "m", LIL_MARKER_RETRY, fn_never, &never, &out));
    T_EQ_MEM(out.data, out.len, "R1", 2);
    lil_free(out.data);
    T_OK(lil_marker(a, "m", LIL_MARKER_RAISE, fn_never, &never, &out));
    T_EQ_MEM(out.data, out.len, "R1", 2);
    lil_free(out.data);
    T_EQ_I64(never, 0);
    lil_store_close(a);
    lil_store_close(b);
    /* durable: a new store handle after both are closed */
    a = u_store(NULL);
    T_REQUIRE(a);
    T_OK(lil_marker(a, "m", LIL_MARKER_ASSUME_DONE, fn_never, &never, &out));
    T_EQ_MEM(out.data, out.len, "R1", 2);
    lil_free(out.data);
    T_EQ_I64(never, 0);
    /* another name is another marker */
    struct mfn m2 = {.result = "R2"};
    T_OK(lil_marker(a, "m2", LIL_MARKER_RETRY, fn_marker, &m2, &out));
    T_EQ_MEM(out.data, out.len, "R2", 2);
    lil_free(out.data);
    T_EQ_I64(calls(), 2);
    lil_store_close(a);
}

struct child_marker {
    const char *name;
    struct u_pipe *go; /* wait for one byte before calling, if set */
    struct mfn m;
    int policy;
};

/* Child: call the marker; exit 0 if it returned "R" (or died inside). */
static int child_marker(void *ud)
{
    struct child_marker *c = ud;
    lil_store *st = NULL;
    lil_bytes out = {0};
    if (c->go && u_pipe_wait(c->go, 30) != 0)
        return 20;
    if (lil_store_open(NULL, U_STORE, &st) != LIL_OK)
        return 21;
    lil_status rc = lil_marker(st, c->name, c->policy, fn_marker, &c->m, &out);
    if (rc != LIL_OK)
        return 22;
    int ok = out.len == 1 && memcmp(out.data, "R", 1) == 0;
    lil_free(out.data);
    lil_store_close(st);
    return ok ? 0 : 23;
}

T_TEST(once_across_processes)
{
    T_ONE_PROCESS(); /* its store is shared with another process */
    struct child_marker c = {.name = "m", .m = {.result = "R"}};
    pid_t pid = u_fork(child_marker, &c);
    T_REQUIRE(pid > 0);
    T_EQ_I64(u_wait(pid), 0);
    T_EQ_I64(calls(), 1);
    lil_store *st = u_store(NULL);
    T_REQUIRE(st);
    int never = 0;
    lil_bytes out = {0};
    T_OK(lil_marker(st, "m", LIL_MARKER_RETRY, fn_never, &never, &out));
    T_EQ_MEM(out.data, out.len, "R", 1);
    lil_free(out.data);
    T_EQ_I64(never, 0);
    lil_store_close(st);
    pid = u_fork(child_marker, &c); /* a second process does not run it */
    T_REQUIRE(pid > 0);
    T_EQ_I64(u_wait(pid), 0);
    T_EQ_I64(calls(), 1);
}

T_TEST(failing_fn_publishes_nothing)
{
    lil_store *st = u_store(NULL);
    T_REQUIRE(st);
    struct mfn bad = {.fail = 1};
    lil_bytes out = {(void *)"garbage", 7};
    T_EQ_I64(lil_marker(st, "m", LIL_MARKER_RETRY, fn_marker, &bad, &out),
             LIL_E_FAILED);
    T_CHECK(out.data == NULL && out.len == 0);
    T_CONTAINS(lil_store_errmsg(st), "nope");
    T_EQ_I64(calls(), 1);
    T_EQ_I64(lil_marker_reset(st, "m"), LIL_E_NOTFOUND); /* nothing to forget */
    struct mfn good = {.result = "ok"};
    T_OK(lil_marker(st, "m", LIL_MARKER_RAISE, fn_marker, &good, &out));
    T_EQ_MEM(out.data, out.len, "ok", 2);
    lil_free(out.data);
    T_EQ_I64(calls(), 2);
    int never = 0;
    T_OK(lil_marker(st, "m", LIL_MARKER_RETRY, fn_never, &never, &out));
    T_EQ_MEM(out.data, out.len, "ok", 2);
    lil_free(out.data);
    T_EQ_I64(never, 0);
    lil_store_close(st);
}

T_TEST(concurrent_callers_run_fn_once)
{
    T_ONE_PROCESS(); /* its store is shared with another process */
    for (int round = 0; round < 3; round++) {
        char name[16];
        snprintf(name, sizeof(name), "m%d", round);
        long before = calls();
        struct u_pipe go;
        T_REQUIRE(u_pipe_open(&go) == 0);
        struct child_marker c = {
            .name = name, .go = &go, .m = {.result = "R", .sleep_ms = 300}};
        pid_t p1 = u_fork(child_marker, &c);
        pid_t p2 = u_fork(child_marker, &c);
        T_REQUIRE(p1 > 0 && p2 > 0);
        T_EQ_I64(write(go.fd[1], "gg", 2), 2);
        T_EQ_I64(u_wait(p1), 0);
        T_EQ_I64(u_wait(p2), 0);
        u_pipe_close(&go);
        T_EQ_I64(calls() - before, 1);
    }
}

/* Child: enter the marker's fn and die there. */
static void holder_dies(const char *name)
{
    struct child_marker c = {.name = name, .m = {.result = "R", .die = 1}};
    pid_t pid = u_fork(child_marker, &c);
    T_CHECK(pid > 0);
    if (pid > 0)
        T_EQ_I64(u_wait(pid), 0);
    T_EQ_I64(calls(), 1);
}

T_TEST(holder_died_retry_runs_again)
{
    holder_dies("m");
    size_t n = 0;
    char *child_key = (char *)u_read_file("marker.key", &n);
    T_REQUIRE(child_key);
    T_CHECK(u_is_idem_key(child_key));
    lil_store *st = u_store(NULL);
    T_REQUIRE(st);
    struct mfn m = {.result = "again"};
    lil_bytes out = {0};
    T_OK(lil_marker(st, "m", LIL_MARKER_RETRY, fn_marker, &m, &out));
    T_EQ_MEM(out.data, out.len, "again", 5);
    lil_free(out.data);
    T_EQ_I64(calls(), 2);
    T_EQ_STR(m.key, child_key); /* same key for the remote service */
    int never = 0;
    T_OK(lil_marker(st, "m", LIL_MARKER_RAISE, fn_never, &never, &out));
    T_EQ_MEM(out.data, out.len, "again", 5);
    lil_free(out.data);
    T_EQ_I64(never, 0);
    lil_store_close(st);
    free(child_key);
}

T_TEST(holder_died_assume_done_does_not_run)
{
    T_ONE_PROCESS(); /* its store is shared with another process */
    holder_dies("m");
    lil_store *st = u_store(NULL);
    T_REQUIRE(st);
    int never = 0;
    lil_bytes out = {(void *)"garbage", 7};
    T_OK(lil_marker(st, "m", LIL_MARKER_ASSUME_DONE, fn_never, &never, &out));
    T_EQ_I64(out.len, 0);
    T_CHECK(out.data != NULL);
    lil_free(out.data);
    T_EQ_I64(never, 0);
    /* published: a RETRY caller does not run it either */
    T_OK(lil_marker(st, "m", LIL_MARKER_RETRY, fn_never, &never, &out));
    T_EQ_I64(out.len, 0);
    lil_free(out.data);
    T_EQ_I64(never, 0);
    T_EQ_I64(calls(), 1);
    lil_store_close(st);
}

T_TEST(holder_died_raise_until_reset)
{
    T_ONE_PROCESS(); /* its store is shared with another process */
    holder_dies("m");
    lil_store *st = u_store(NULL);
    T_REQUIRE(st);
    int never = 0;
    lil_bytes out = {(void *)"garbage", 7};
    T_EQ_I64(lil_marker(st, "m", LIL_MARKER_RAISE, fn_never, &never, &out),
             LIL_E_UNCERTAIN);
    T_CHECK(out.data == NULL && out.len == 0);
    T_EQ_I64(lil_marker(st, "m", LIL_MARKER_RAISE, fn_never, &never, &out),
             LIL_E_UNCERTAIN);
    T_EQ_I64(never, 0);
    T_OK(lil_marker_reset(st, "m"));
    struct mfn m = {.result = "fresh"};
    T_OK(lil_marker(st, "m", LIL_MARKER_RAISE, fn_marker, &m, &out));
    T_EQ_MEM(out.data, out.len, "fresh", 5);
    lil_free(out.data);
    T_EQ_I64(calls(), 2);
    lil_store_close(st);
}

T_TEST(marker_reset_forgets)
{
    lil_store *st = u_store(NULL);
    T_REQUIRE(st);
    struct mfn m1 = {.result = "one"}, m2 = {.result = "two"};
    lil_bytes out = {0};
    T_EQ_I64(lil_marker_reset(st, "m"), LIL_E_NOTFOUND);
    T_OK(lil_marker(st, "m", LIL_MARKER_RETRY, fn_marker, &m1, &out));
    lil_free(out.data);
    T_OK(lil_marker_reset(st, "m"));
    T_EQ_I64(lil_marker_reset(st, "m"), LIL_E_NOTFOUND);
    T_OK(lil_marker(st, "m", LIL_MARKER_RETRY, fn_marker, &m2, &out));
    T_EQ_MEM(out.data, out.len, "two", 3);
    lil_free(out.data);
    T_EQ_I64(calls(), 2);
    lil_store_close(st);
}

T_TEST(marker_name_rules)
{
    char ctl[] = "m\x02";
    const char *bad[] = {"", "a#b", "#", ctl, u_repeat('m', 201)};
    lil_store *st = u_store(NULL);
    T_REQUIRE(st);
    int never = 0;
    lil_bytes out = {0};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        lil_status rc =
            lil_marker(st, bad[i], LIL_MARKER_RETRY, fn_never, &never, &out);
        T_CHECK(rc == LIL_E_INVAL || (i == 4 && rc == LIL_E_TOOBIG));
        rc = lil_marker_reset(st, bad[i]);
        T_CHECK(rc == LIL_E_INVAL || (i == 4 && rc == LIL_E_TOOBIG));
    }
    T_EQ_I64(never, 0);
    struct mfn m = {.result = "u"};
    T_OK(lil_marker(st, "\xc3\xa9t\xc3\xa9 2024", LIL_MARKER_RETRY, fn_marker, &m,
                    NULL));
    T_OK(lil_marker(st, u_repeat('m', 200), LIL_MARKER_RETRY, fn_marker, &m, NULL));
    T_EQ_I64(calls(), 2);
    lil_store_close(st);
}

T_TEST(markers_belong_to_their_store)
{
    lil_store *a = u_store("sa"), *b = u_store("sb");
    T_REQUIRE(a && b);
    struct mfn ma = {.result = "A"}, mb = {.result = "B"};
    lil_bytes out = {0};
    T_OK(lil_marker(a, "m", LIL_MARKER_RETRY, fn_marker, &ma, &out));
    T_EQ_MEM(out.data, out.len, "A", 1);
    lil_free(out.data);
    T_OK(lil_marker(b, "m", LIL_MARKER_RETRY, fn_marker, &mb, &out));
    T_EQ_MEM(out.data, out.len, "B", 1);
    lil_free(out.data);
    T_EQ_I64(calls(), 2);
    lil_store_close(a);
    lil_store_close(b);
}

T_TEST(in_doubt_marker_retry_caller_runs)
{
    T_ONE_PROCESS(); /* its store is shared with another process */
    holder_dies("m");
    lil_store *st = u_store(NULL);
    T_REQUIRE(st);
    int never = 0;
    T_EQ_I64(lil_marker(st, "m", LIL_MARKER_RAISE, fn_never, &never, NULL),
             LIL_E_UNCERTAIN);
    struct mfn m = {.result = "R"};
    lil_bytes out = {0};
    T_OK(lil_marker(st, "m", LIL_MARKER_RETRY, fn_marker, &m, &out));
    T_EQ_MEM(out.data, out.len, "R", 1);
    lil_free(out.data);
    T_EQ_I64(calls(), 2);
    T_EQ_I64(never, 0);
    lil_store_close(st);
}

/* The idempotency key identifies the marker for a remote service: it must
 * not equal the key of a step of some run, even a run named "marker". */
T_TEST(marker_key_differs_from_step_keys)
{
    lil_store *st = u_store(NULL);
    T_REQUIRE(st);
    struct mfn m = {.result = "R"};
    T_OK(lil_marker(st, "m", LIL_MARKER_RETRY, fn_marker, &m, NULL));
    T_CHECK(u_is_idem_key(m.key));
    const char *ids[] = {"marker", "m", "r"};
    for (int i = 0; i < 3; i++) {
        lil_run *run = u_run(st, ids[i]);
        T_REQUIRE(run);
        struct fn_ctx c = {0};
        T_OK(lil_step(run, "m", fn_generic, &c, NULL));
        T_CHECK(u_is_idem_key(c.key));
        if (strcmp(c.key, m.key) == 0) {
            fprintf(stderr, "step 'm' of run '%s' has the key of marker 'm': %s\n",
                    ids[i], c.key);
            t_fail();
        }
        T_OK(lil_run_close(run));
    }
    lil_store_close(st);
}

struct holder_ctx {
    struct u_pipe *inside;
};

static int fn_hold_forever(lil_call *call, void *ud)
{
    struct holder_ctx *h = ud;
    (void)call;
    count_call();
    u_pipe_signal(h->inside);
    for (;;)
        pause();
}

static int child_holds_marker(void *ud)
{
    lil_store *st = NULL;
    if (lil_store_open(NULL, U_STORE, &st) != LIL_OK)
        return 10;
    lil_marker(st, "m", LIL_MARKER_RETRY, fn_hold_forever, ud, NULL);
    return 11;
}

struct waiter {
    lil_status rc;
    struct mfn m;
    lil_bytes out;
};

static void *waiter_main(void *ud)
{
    struct waiter *w = ud;
    lil_store *st = NULL;
    w->rc = lil_store_open(NULL, U_STORE, &st);
    if (w->rc == LIL_OK)
        w->rc = lil_marker(st, "m", LIL_MARKER_RETRY, fn_marker, &w->m, &w->out);
    lil_store_close(st);
    return NULL;
}

T_TEST(waiter_takes_over_when_holder_is_killed)
{
    T_ONE_PROCESS(); /* its store is shared with another process */
    struct u_pipe inside;
    T_REQUIRE(u_pipe_open(&inside) == 0);
    struct holder_ctx h = {.inside = &inside};
    pid_t pid = u_fork(child_holds_marker, &h);
    T_REQUIRE(pid > 0);
    T_EQ_I64(u_pipe_wait(&inside, 30), 0);
    struct waiter w = {.m = {.result = "W"}};
    pthread_t th;
    T_REQUIRE(pthread_create(&th, NULL, waiter_main, &w) == 0);
    struct timespec ts = {0, 200 * 1000000L};
    nanosleep(&ts, NULL); /* the waiter is blocked on the holder */
    T_EQ_I64(calls(), 1);
    kill(pid, SIGKILL);
    T_EQ_I64(u_wait(pid), 128 + SIGKILL);
    pthread_join(th, NULL);
    u_pipe_close(&inside);
    T_EQ_I64(w.rc, LIL_OK);
    T_EQ_MEM(w.out.data, w.out.len, "W", 1);
    lil_free(w.out.data);
    T_EQ_I64(calls(), 2);
}

T_MAIN()
