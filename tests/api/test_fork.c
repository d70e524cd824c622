/*
 * test_fork.c -- a run handle and fork(2) without exec.
 *
 * The run's lock is an open-file-description lock, so a child forked while
 * a run is open shares it through the journal descriptor it inherits.  The
 * handle is the parent's: in the child every call on it fails with
 * LIL_E_INVAL naming the parent's pid, writes nothing, and lil_run_close
 * frees the child's copy without touching the parent's journal or lock.
 * What happens to the lock is shown as it is: while such a child lives the
 * run stays locked after its parent closed it and exited, and the refusal
 * says "held by another process" (the parent's pid is not named, since it no
 * longer has the journal open); once the child is gone the run opens and
 * the journal holds nothing the child did.
 *
 * The test process is a child subreaper, so the grandchild (the parent's
 * child) is reparented to it when the parent exits and can be waited for.
 */
#include <errno.h>
#include <lil/lil.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "api_util.h"
#include "t.h"

/* What the child saw, sent to the test process through a pipe. */
struct seen {
    int pid;
    lil_status step, effect, info, sync, foreach_rc, complete, resolve, result, close;
    int status;          /* lil_run_status */
    int id_null;         /* lil_run_id returned NULL */
    char msg[256];       /* lil_errmsg() after the refused step */
    char close_msg[256]; /* lil_errmsg() after the refused close */
};

struct roles {
    struct u_pipe report;  /* child -> test: struct seen */
    struct u_pipe to_test; /* parent -> test: a byte when it wants the test to look */
    struct u_pipe to_par;  /* test -> parent: a byte to go on */
    int child_closes;      /* the child closes the inherited handle and exits */
    int parent_closes;     /* the parent closes the run before it exits (else it
                              exits without closing, like a crash) */
};

static int count(lil_call *call, void *ud)
{
    (*(int *)ud)++;
    return lil_call_set_result(call, "B", 1) != LIL_OK;
}

static int walk_nothing(void *ud, const lil_record *rec)
{
    (void)ud;
    (void)rec;
    return 0;
}

/* In the forked child: every call on the parent's handle. */
static void child_calls(lil_run *run, struct seen *s, int do_close)
{
    int n = 0;
    lil_run_info info = {.struct_size = sizeof(info)};
    lil_bytes out = {0};

    memset(s, 0, sizeof(*s));
    s->pid = (int)getpid();
    s->step = lil_step(run, "b", count, &n, NULL);
    snprintf(s->msg, sizeof(s->msg), "%s", lil_errmsg());
    s->effect = lil_effect(run, "e", "req", 3, count, &n, NULL);
    s->info = lil_run_get_info(run, &info);
    s->sync = lil_run_sync(run);
    s->foreach_rc = lil_run_foreach(run, walk_nothing, NULL);
    s->complete = lil_run_complete(run, "x", 1);
    s->resolve = lil_run_resolve(run, "e", LIL_RESOLVE_RETRY, NULL, 0, "me", "why");
    s->result = lil_run_result(run, &out);
    s->status = (int)lil_run_status(run);
    s->id_null = lil_run_id(run) == NULL;
    if (do_close) {
        s->close = lil_run_close(run);
        snprintf(s->close_msg, sizeof(s->close_msg), "%s", lil_errmsg());
    }
    if (n != 0)
        s->step = LIL_OK; /* a function ran: reported as a failure */
}

static int parent_role(void *ud)
{
    struct roles *r = ud;
    lil_store *st = NULL;
    lil_run *run = NULL;
    struct seen s;
    pid_t child;

    if (lil_store_open(NULL, U_STORE, &st) != LIL_OK ||
        lil_run_open(st, "r", NULL, &run) != LIL_OK ||
        u_step_text(run, "a", "A") != LIL_OK)
        return 10;
    fflush(NULL);
    child = fork();
    if (child == 0) {
        child_calls(run, &s, r->child_closes);
        if (write(r->report.fd[1], &s, sizeof(s)) != (ssize_t)sizeof(s))
            _exit(20);
        if (r->child_closes)
            _exit(0);
        for (;;)
            pause(); /* holds the inherited descriptor until killed */
    }
    if (child < 0)
        return 11;
    if (r->child_closes && u_wait(child) != 0)
        return 12;
    u_pipe_signal(&r->to_test); /* the test looks while this process holds the run */
    if (u_pipe_wait(&r->to_par, 30) != 0)
        return 13;
    if (u_step_text(run, "c", "C") != LIL_OK) /* the handle still works here */
        return 14;
    if (!r->parent_closes)
        _exit(0); /* no close: the run is left as a crash leaves it */
    if (lil_run_close(run) != LIL_OK)
        return 15;
    lil_store_close(st);
    return 0;
}

/* What the child saw: every call refused with LIL_E_INVAL naming the
 * parent's pid, nothing run. */
static void expect_refused(const struct seen *s, pid_t parent, int closed)
{
    char want[64];

    T_EQ_STR(lil_status_name(s->step), "LIL_E_INVAL");
    T_EQ_STR(lil_status_name(s->effect), "LIL_E_INVAL");
    T_EQ_STR(lil_status_name(s->info), "LIL_E_INVAL");
    T_EQ_STR(lil_status_name(s->sync), "LIL_E_INVAL");
    T_EQ_STR(lil_status_name(s->foreach_rc), "LIL_E_INVAL");
    T_EQ_STR(lil_status_name(s->complete), "LIL_E_INVAL");
    T_EQ_STR(lil_status_name(s->resolve), "LIL_E_INVAL");
    T_EQ_STR(lil_status_name(s->result), "LIL_E_INVAL");
    T_EQ_I64(s->status, 0);
    T_EQ_I64(s->id_null, 1);
    snprintf(want, sizeof(want), "belongs to pid %d", (int)parent);
    T_CONTAINS(s->msg, want);
    snprintf(want, sizeof(want), "this process (pid %d)", s->pid);
    T_CONTAINS(s->msg, want);
    if (closed) {
        T_EQ_STR(lil_status_name(s->close), "LIL_E_INVAL");
        T_CONTAINS(s->close_msg, "frees its copy only");
    }
}

static pid_t start_parent(struct roles *r, int child_closes, int parent_closes)
{
    memset(r, 0, sizeof(*r));
    r->child_closes = child_closes;
    r->parent_closes = parent_closes;
    if (u_pipe_open(&r->report) != 0 || u_pipe_open(&r->to_test) != 0 ||
        u_pipe_open(&r->to_par) != 0)
        return -1;
    return u_fork(parent_role, r);
}

static void close_pipes(struct roles *r)
{
    u_pipe_close(&r->report);
    u_pipe_close(&r->to_test);
    u_pipe_close(&r->to_par);
}

/* The records of run r, opened read-only: how many OPEN records, and
 * whether b (the child's step) is there. */
static void expect_journal(lil_store *st, int opens, int closes)
{
    lil_run *run = u_run_opts(st, "r", LIL_SYNC_DEFAULT, LIL_OPEN_READONLY, 0);
    struct u_recs rs;
    int o = 0, c = 0;

    T_REQUIRE(run);
    T_OK(u_collect(run, &rs));
    for (size_t i = 0; i < rs.n; i++) {
        o += rs.r[i].type == LIL_REC_OPEN;
        c += rs.r[i].type == LIL_REC_CLOSE;
    }
    T_EQ_I64(o, opens);
    T_EQ_I64(c, closes);
    T_CHECK(u_find(&rs, LIL_REC_STEP, "a") != NULL);
    T_CHECK(u_find(&rs, LIL_REC_STEP, "c") != NULL);
    T_CHECK(u_find(&rs, LIL_REC_STEP, "b") == NULL);
    T_CHECK(u_find(&rs, LIL_REC_INTENT, "e") == NULL);
    u_recs_free(&rs);
    T_OK(lil_run_close(run));
}

/* The child keeps its inherited descriptor; the parent closes the run (or
 * dies without closing) and exits.  The run stays locked while the child
 * lives, and the refusal names no pid it cannot vouch for. */
static void child_outlives_parent(int parent_closes)
{
    struct roles r;
    struct seen s;
    pid_t parent;
    lil_store *st = u_store(NULL);
    lil_run *run = NULL;
    lil_run_info info = {.struct_size = sizeof(info)};
    char want[128];
    int never = 0;

    T_REQUIRE(prctl(PR_SET_CHILD_SUBREAPER, 1) == 0);
    parent = start_parent(&r, 0, parent_closes);
    T_REQUIRE(parent > 0);
    T_REQUIRE(read(r.report.fd[0], &s, sizeof(s)) == (ssize_t)sizeof(s));
    expect_refused(&s, parent, 0);
    T_REQUIRE(u_pipe_wait(&r.to_test, 30) == 0);
    /* the parent holds the run and has it open: it is named */
    snprintf(want, sizeof(want), "run r is held by pid %d", (int)parent);
    T_EQ_I64(lil_run_open(st, "r", NULL, &run), LIL_E_LOCKED);
    T_CONTAINS(lil_store_errmsg(st), want);
    u_pipe_signal(&r.to_par);
    T_EQ_I64(u_wait(parent), 0);

    /* the parent is gone; its child still holds the open file description */
    T_EQ_I64(lil_run_open(st, "r", NULL, &run), LIL_E_LOCKED);
    T_CONTAINS(lil_store_errmsg(st), "run r is held by another process");
    snprintf(want, sizeof(want), "held by pid %d", (int)parent);
    T_CHECK(strstr(lil_store_errmsg(st), want) == NULL);
    if (!parent_closes) { /* its OPEN is the last: it is named as gone */
        snprintf(want, sizeof(want), "(pid %d, the last to open it, no longer has it",
                 (int)parent);
        T_CONTAINS(lil_store_errmsg(st), want);
    }
    run = u_run_opts(st, "r", LIL_SYNC_DEFAULT, LIL_OPEN_READONLY, 0);
    T_REQUIRE(run);
    T_OK(lil_run_get_info(run, &info));
    T_EQ_I64(info.holder_pid, -1); /* held, by a process whose pid is not known */
    T_OK(lil_run_close(run));

    /* once the child is gone the lock is free */
    kill(s.pid, SIGKILL);
    T_EQ_I64(u_wait(s.pid), 128 + SIGKILL);
    expect_journal(st, 1, parent_closes);
    run = u_run(st, "r");
    T_REQUIRE(run);
    T_OK(lil_step(run, "a", fn_never, &never, NULL));
    T_OK(lil_step(run, "c", fn_never, &never, NULL));
    T_EQ_I64(never, 0);
    T_OK(lil_run_close(run));
    lil_check_report rep = {.struct_size = sizeof(rep)};
    T_OK(lil_run_check(st, "r", 0, &rep));
    T_EQ_I64(rep.intact, 1);
    close_pipes(&r);
    lil_store_close(st);
}

T_TEST(forked_child_keeps_the_lock_after_parent_closes)
{
    T_FILE_ONLY();
    child_outlives_parent(1);
}

T_TEST(forked_child_keeps_the_lock_after_parent_dies)
{
    T_FILE_ONLY();
    child_outlives_parent(0);
}

/* The child closes the inherited handle: LIL_E_INVAL, and nothing of the
 * parent's is released: the parent still holds the run (named), appends to
 * it and closes it normally. */
T_TEST(close_in_forked_child_releases_nothing_of_the_parent)
{
    struct roles r;
    struct seen s;
    pid_t parent;
    lil_store *st = u_store(NULL);
    lil_run *run = NULL;
    char want[64];

    parent = start_parent(&r, 1, 1);
    T_REQUIRE(parent > 0);
    T_REQUIRE(read(r.report.fd[0], &s, sizeof(s)) == (ssize_t)sizeof(s));
    expect_refused(&s, parent, 1);
    T_REQUIRE(u_pipe_wait(&r.to_test, 30) == 0); /* the child has exited */
    snprintf(want, sizeof(want), "run r is held by pid %d", (int)parent);
    T_EQ_I64(lil_run_open(st, "r", NULL, &run), LIL_E_LOCKED);
    T_CONTAINS(lil_store_errmsg(st), want);
    u_pipe_signal(&r.to_par);
    T_EQ_I64(u_wait(parent), 0); /* it appended c and closed with LIL_OK */
    expect_journal(st, 1, 1);
    run = u_run(st, "r");
    T_CHECK(run != NULL);
    T_OK(lil_run_close(run));
    close_pipes(&r);
    lil_store_close(st);
}

T_MAIN()
