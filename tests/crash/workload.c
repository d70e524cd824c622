/*
 * workload.c -- the plan, the workload, children, inspection and the model
 * described in workload.h.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "workload.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "base/hash.h"
#include "t.h"

/* ---- plan ---------------------------------------------------------------------- */

void t_plan_init(struct t_plan *p, int n, size_t big_size)
{
    int occ_fetch = 0, occ_work = 0, occ_flaky = 0, occ_charge = 0;

    memset(p, 0, sizeof(*p));
    if (n > T_WL_MAX)
        n = T_WL_MAX;
    p->n = n;
    p->effect_at = n >= 3 ? n / 2 : -1;
    p->big_at = big_size && n > 11 ? 11 : -1;
    p->big_size = big_size;
    p->sync_every = 8;
    p->marker_at = n >= 3 ? n / 3 : -1;
    snprintf(p->done, sizeof(p->done), "done-%d", n);
    for (int i = 0; i < n; i++) {
        int *occ;
        if (i == p->effect_at) {
            p->kind[i] = T_WL_EFFECT;
            p->name[i] = "charge";
            occ = &occ_charge;
        } else if (i % 7 == 3) {
            p->kind[i] = T_WL_FAIL;
            p->name[i] = "flaky";
            occ = &occ_flaky;
        } else {
            p->kind[i] = T_WL_STEP;
            p->name[i] = i % 3 == 0 ? "fetch" : "work";
            occ = i % 3 == 0 ? &occ_fetch : &occ_work;
        }
        ++*occ;
        if (*occ == 1)
            snprintf(p->ident[i], sizeof(p->ident[i]), "%s", p->name[i]);
        else
            snprintf(p->ident[i], sizeof(p->ident[i]), "%s#%d", p->name[i], *occ);
    }
}

size_t t_plan_len(const struct t_plan *p, int i)
{
    if (i == p->big_at)
        return p->big_size;
    if (i % 5 == 2)
        return 2000 + (size_t)(i * 131) % 3000;
    return 16 + (size_t)(i * 97) % 400;
}

static uint8_t plan_byte(int i, size_t j)
{
    return (uint8_t)((size_t)i * 31u + j * 7u + (j >> 8));
}

static void plan_fill(const struct t_plan *p, int i, uint8_t *buf)
{
    size_t len = t_plan_len(p, i);
    int k = snprintf((char *)buf, len, "result-%d-", i);

    for (size_t j = (size_t)k; j < len; j++)
        buf[j] = plan_byte(i, j);
}

bool t_plan_result_ok(const struct t_plan *p, int i, const void *data, size_t len)
{
    size_t want = t_plan_len(p, i);
    uint8_t *buf;
    bool ok;

    if (len != want || (len && !data))
        return false;
    buf = malloc(want);
    if (!buf)
        abort();
    plan_fill(p, i, buf);
    ok = memcmp(buf, data, want) == 0;
    free(buf);
    return ok;
}

int t_plan_find(const struct t_plan *p, const char *key, size_t key_len)
{
    for (int i = 0; i < p->n; i++)
        if (strlen(p->ident[i]) == key_len && memcmp(p->ident[i], key, key_len) == 0)
            return i;
    return -1;
}

/* ---- events ---------------------------------------------------------------------- */

void t_evlog_add(struct t_evlog *l, int attempt, char tag, int i)
{
    if (l->n == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 64;
        struct t_ev *ev = realloc(l->ev, cap * sizeof(*ev));
        if (!ev)
            abort();
        l->ev = ev;
        l->cap = cap;
    }
    l->ev[l->n++] = (struct t_ev){attempt, tag, i, 0};
}

void t_evlog_clear(struct t_evlog *l)
{
    l->n = 0;
}

void t_evlog_free(struct t_evlog *l)
{
    free(l->ev);
    memset(l, 0, sizeof(*l));
}

size_t t_evlog_count(const struct t_evlog *l, char tag, int i)
{
    size_t c = 0;

    for (size_t k = 0; k < l->n; k++)
        if (l->ev[k].tag == tag && (i < 0 || l->ev[k].i == i))
            c++;
    return c;
}

/* ---- the workload
 * -------------------------------------------------------------------- */

static void write_all(int fd, const char *p, size_t n)
{
    while (n > 0) {
        ssize_t r = write(fd, p, n);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return;
        p += r;
        n -= (size_t)r;
    }
}

static void emit(struct t_wl *w, char tag, int i)
{
    if (w->emit_fd >= 0) {
        char line[64];
        int n = snprintf(line, sizeof(line), "%d %c %d\n", w->attempt, tag, i);
        write_all(w->emit_fd, line, (size_t)n);
    } else if (w->log) {
        t_evlog_add(w->log, w->attempt, tag, i);
    }
}

static void say(const struct t_wl *w, const char *fmt, ...) LIL_PRINTF(2, 3);

static void say(const struct t_wl *w, const char *fmt, ...)
{
    va_list ap;

    if (w->quiet)
        return;
    fprintf(stderr, "  workload run=%s attempt=%d: ", w->run_id, w->attempt);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
}

static void bad(struct t_wl *w, const char *fmt, ...) LIL_PRINTF(2, 3);

static void bad(struct t_wl *w, const char *fmt, ...)
{
    va_list ap;

    w->bad++;
    fprintf(stderr, "  workload run=%s attempt=%d: WRONG: ", w->run_id, w->attempt);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
}

static void note(struct t_wl *w, char what, int i, lil_status rc)
{
    if (w->ncalls < (int)(sizeof(w->calls) / sizeof(w->calls[0])))
        w->calls[w->ncalls++] = (struct t_callrec){what, i, rc};
}

/* An unexpected status: remember the first.  Returns true to go on. */
static bool unexpected(struct t_wl *w, const char *what, int i, lil_status rc)
{
    if (w->first_err == LIL_OK) {
        w->first_err = rc;
        w->first_err_call = w->ncalls - 1;
    }
    say(w, "%s %d: %s: %s", what, i, lil_status_name(rc), lil_errmsg());
    return w->keep_going != 0;
}

struct fnctx {
    struct t_wl *w;
    int i;
    int ran;
};

static int step_fn(lil_call *call, void *ud)
{
    struct fnctx *c = ud;
    const struct t_plan *p = c->w->plan;
    int i = c->i;
    uint8_t *buf;
    size_t len;
    lil_status rc;

    c->ran++;
    if (p->kind[i] == T_WL_EFFECT)
        emit(c->w, 'E', i);
    emit(c->w, 'R', i);
    if (c->w->step_delay_us > 0) {
        struct timespec ts = {c->w->step_delay_us / 1000000,
                              (c->w->step_delay_us % 1000000) * 1000};
        nanosleep(&ts, NULL);
    }
    if (strcmp(lil_call_identity(call), p->ident[i]) != 0)
        bad(c->w, "step %d runs as '%s', expected '%s'", i, lil_call_identity(call),
            p->ident[i]);
    if (p->kind[i] == T_WL_FAIL) {
        rc = lil_call_fail(call, "boom-%d", i);
        if (rc == LIL_E_NOMEM)
            c->w->fn_nomem[i] = 1; /* the reason may be lost */
        else if (rc != LIL_OK)
            bad(c->w, "lil_call_fail: %s", lil_status_name(rc));
        return 1;
    }
    len = t_plan_len(p, i);
    buf = malloc(len);
    if (!buf)
        abort();
    plan_fill(p, i, buf);
    rc = lil_call_set_result(call, buf, len);
    free(buf);
    if (rc != LIL_OK) {
        if (rc == LIL_E_NOMEM)
            c->w->fn_nomem[i] = 1;
        else
            bad(c->w, "lil_call_set_result: %s", lil_status_name(rc));
        lil_call_fail(call, "set_result: %s", lil_status_name(rc));
        return 1;
    }
    return 0;
}

static bool may_fail(const struct t_wl *w, int i)
{
    return w->fn_nomem[i] || (w->tolerate_fail && w->tolerate_fail[i]);
}

/* One step.  Returns false to stop. */
static bool do_step(struct t_wl *w, lil_run *run, int i)
{
    const struct t_plan *p = w->plan;
    struct fnctx c = {w, i, 0};
    lil_bytes out = {0};
    lil_status rc;
    char req[32], want[32];

    if (p->kind[i] == T_WL_EFFECT) {
        int n = snprintf(req, sizeof(req), "req-%d", i);
        rc = lil_effect(run, p->name[i], req, (size_t)n, step_fn, &c, &out);
    } else {
        rc = lil_step(run, p->name[i], step_fn, &c, &out);
    }
    note(w, 's', i, rc);
    if (c.ran > 1)
        bad(w, "step %d: function ran %d times in one call", i, c.ran);
    if (rc == LIL_OK && p->kind[i] != T_WL_FAIL) {
        if (!t_plan_result_ok(p, i, out.data, out.len))
            bad(w, "step %d (%s): wrong result (%zu bytes, want %zu)", i, p->ident[i],
                out.len, t_plan_len(p, i));
        emit(w, c.ran ? 'A' : 'P', i);
        lil_free(out.data);
        return true;
    }
    lil_free(out.data);
    if (rc != LIL_OK && strstr(lil_errmsg(), "(null)"))
        bad(w, "step %d: message formats a NULL string: '%s'", i, lil_errmsg());
    if (rc == LIL_E_FAILED && p->kind[i] == T_WL_FAIL) {
        snprintf(want, sizeof(want), "boom-%d", i);
        if (!strstr(lil_errmsg(), want) && !may_fail(w, i))
            bad(w, "step %d: failure message '%s' lacks '%s'", i, lil_errmsg(), want);
        emit(w, c.ran ? 'F' : 'G', i);
        return true;
    }
    if (rc == LIL_E_FAILED && may_fail(w, i))
        return true; /* OOM inside the function: journaled as failed */
    if (rc == LIL_OK || rc == LIL_E_FAILED) {
        bad(w, "step %d (%s): %s, the plan says otherwise", i, p->ident[i],
            lil_status_name(rc));
        return w->keep_going != 0;
    }
    return unexpected(w, "step", i, rc);
}

struct markctx {
    struct t_wl *w;
    int ran;
};

static int marker_fn(lil_call *call, void *ud)
{
    struct markctx *c = ud;
    lil_status rc;

    c->ran++;
    emit(c->w, 'm', c->w->plan->marker_at);
    rc = lil_call_set_result(call, T_MARKER_RESULT, strlen(T_MARKER_RESULT));
    if (rc == LIL_E_NOMEM)
        c->w->marker_nomem = 1;
    else if (rc != LIL_OK)
        bad(c->w, "marker: lil_call_set_result: %s", lil_status_name(rc));
    return rc == LIL_OK ? 0 : 1;
}

/* The store-wide marker.  Returns false to stop. */
static bool do_marker(struct t_wl *w, lil_store *st)
{
    struct markctx c = {w, 0};
    lil_bytes out = {0};
    lil_status rc =
        lil_marker(st, T_MARKER_NAME, LIL_MARKER_RETRY, marker_fn, &c, &out);

    note(w, 'k', w->plan->marker_at, rc);
    if (c.ran > 1)
        bad(w, "marker function ran %d times in one call", c.ran);
    if (rc == LIL_OK) {
        if (out.len != strlen(T_MARKER_RESULT) ||
            memcmp(out.data, T_MARKER_RESULT, out.len) != 0)
            bad(w, "marker: wrong result (%zu bytes)", out.len);
        emit(w, 'K', w->plan->marker_at);
    }
    lil_free(out.data);
    if (rc == LIL_OK || (rc == LIL_E_FAILED && w->marker_nomem))
        return true;
    return unexpected(w, "marker", w->plan->marker_at, rc);
}

static bool resolve_uncertain(struct t_wl *w, lil_run *run)
{
    const struct t_plan *p = w->plan;

    for (int k = 0; k < 4 && lil_run_status(run) == LIL_RUN_UNCERTAIN; k++) {
        char id[64];
        const char *u = lil_run_uncertain_at(run, 0);
        lil_status rc;
        if (!u) {
            bad(w, "run is uncertain but lists no uncertain effect");
            return false;
        }
        snprintf(id, sizeof(id), "%s", u);
        if (p->effect_at < 0 || strcmp(id, p->ident[p->effect_at]) != 0)
            bad(w, "uncertain effect '%s' is not the plan's effect", id);
        rc = lil_run_resolve(run, id, LIL_RESOLVE_RETRY, NULL, 0, "crash-test",
                             "the process died inside the effect");
        note(w, 'u', -1, rc);
        if (rc != LIL_OK)
            return unexpected(w, "resolve", -1, rc);
        emit(w, 'U', p->effect_at);
    }
    return true;
}

static void finish(struct t_wl *w, lil_run *run)
{
    const struct t_plan *p = w->plan;
    lil_bytes out = {0};
    lil_status rc;

    /* A step that failed for lack of memory has no outcome: completing the
     * run would leave it out for good (that is the caller's choice, and
     * not what a program does). */
    if (w->first_err == LIL_E_NOMEM)
        return;
    rc = lil_run_complete(run, p->done, strlen(p->done));

    note(w, 'c', -1, rc);
    if (rc == LIL_OK) {
        w->completed = 1;
        emit(w, 'C', -1);
        return;
    }
    if (rc != LIL_E_DONE) {
        unexpected(w, "complete", -1, rc);
        return;
    }
    rc = lil_run_result(run, &out);
    if (rc != LIL_OK || out.len != strlen(p->done) ||
        memcmp(out.data, p->done, out.len) != 0)
        bad(w, "run already ended but its result is not '%s' (%s)", p->done,
            lil_status_name(rc));
    else
        w->completed = 1;
    lil_free(out.data);
    emit(w, 'D', -1);
}

static void run_steps(struct t_wl *w, lil_store *st, lil_run *run)
{
    const struct t_plan *p = w->plan;
    int end = w->stop_before > 0 && w->stop_before < p->n ? w->stop_before : p->n;

    if (!resolve_uncertain(w, run))
        return;
    for (int i = 0; i < end; i++) {
        if (p->sync_every && i > 0 && i % p->sync_every == 0) {
            lil_status rc = lil_run_sync(run);
            note(w, 'y', i, rc);
            if (rc == LIL_OK)
                emit(w, 'Y', i);
            else if (!unexpected(w, "sync", i, rc))
                return;
        }
        if (i == p->marker_at && !do_marker(w, st))
            return;
        if (!do_step(w, run, i))
            return;
    }
    if (end == p->n)
        finish(w, run);
}

void t_wl_init(struct t_wl *w, const struct t_plan *plan, const char *store,
               const char *run_id, lil_sync sync, struct t_evlog *log)
{
    memset(w, 0, sizeof(*w));
    w->plan = plan;
    w->store = store;
    w->run_id = run_id;
    w->sync = sync;
    w->attempt = 1;
    w->emit_fd = -1;
    w->log = log;
    w->first_err_call = -1;
}

int t_wl_run(struct t_wl *w)
{
    lil_store *st = NULL;
    lil_run *run = NULL;
    lil_run_opts o;
    lil_status rc;

    w->ncalls = 0;
    w->first_err = LIL_OK;
    w->first_err_call = -1;
    w->bad = 0;
    w->completed = 0;
    memset(w->fn_nomem, 0, sizeof(w->fn_nomem));
    w->marker_nomem = 0;
    rc = lil_store_open(w->env, w->store, &st);
    note(w, 'o', -1, rc);
    if (rc != LIL_OK) {
        unexpected(w, "store open", -1, rc);
        return 1;
    }
    memset(&o, 0, sizeof(o));
    o.struct_size = sizeof(o);
    o.sync = w->sync;
    rc = lil_run_open(st, w->run_id, &o, &run);
    note(w, 'r', -1, rc);
    if (rc != LIL_OK) {
        unexpected(w, "run open", -1, rc);
    } else {
        emit(w, 'O', -1);
        run_steps(w, st, run);
        rc = lil_run_close(run);
        note(w, 'z', -1, rc);
        if (rc == LIL_OK)
            emit(w, 'Z', -1);
        else if (w->first_err == LIL_OK || w->keep_going)
            unexpected(w, "close", -1, rc);
    }
    lil_store_close(st);
    return w->first_err == LIL_OK && w->bad == 0 ? 0 : 1;
}

/* ---- children ----------------------------------------------------------------------
 */

static int64_t now_us(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

static void child_main(struct t_wl *w, const struct t_child *c, int fd)
{
    lil_env *env = NULL;
    int code;

    if (c->fault || c->pc_log) {
        env = t_env_faulty();
        if (!env)
            _exit(2);
        if (c->fault)
            t_faults_arm(c->fault);
        else
            t_faults_reset();
        if (c->pc_log)
            t_pc_track(c->pc_log);
    }
    w->env = env;
    w->emit_fd = fd;
    w->log = NULL;
    code = t_wl_run(w);
    lil_env_free(env);
    _exit(w->bad ? 3 : code);
}

/* Read what is in the pipe; false at end of file. */
static bool pump(int fd, char *acc, size_t *len, size_t cap, struct t_evlog *log,
                 int64_t t0)
{
    ssize_t r = read(fd, acc + *len, cap - *len - 1);
    char *line, *nl;

    if (r < 0 && errno == EINTR)
        return true;
    if (r <= 0)
        return false;
    *len += (size_t)r;
    acc[*len] = '\0';
    line = acc;
    while ((nl = strchr(line, '\n')) != NULL) {
        int a, i;
        char tag;
        *nl = '\0';
        if (sscanf(line, "%d %c %d", &a, &tag, &i) == 3) {
            t_evlog_add(log, a, tag, i);
            log->ev[log->n - 1].us = now_us() - t0;
        }
        line = nl + 1;
    }
    *len = (size_t)(acc + *len - line);
    memmove(acc, line, *len);
    return true;
}

int t_child_run(struct t_wl *w, const struct t_child *c, struct t_evlog *log,
                struct t_child_res *res)
{
    int fds[2], st = 0;
    char acc[8192];
    size_t len = 0;
    bool killed = false, open = true;
    int64_t t0;
    pid_t pid;

    memset(res, 0, sizeof(*res));
    if (pipe2(fds, O_CLOEXEC) != 0)
        return -1;
    fflush(NULL);
    t0 = now_us();
    pid = fork();
    if (pid < 0) {
        close(fds[0]);
        close(fds[1]);
        return -1;
    }
    if (pid == 0) {
        close(fds[0]);
        child_main(w, c, fds[1]);
    }
    close(fds[1]);
    while (open) {
        int timeout = -1;
        struct pollfd pfd = {fds[0], POLLIN, 0};
        if (c->kill_after_us >= 0 && !killed) {
            int64_t left = t0 + c->kill_after_us - now_us();
            if (left <= 0) {
                kill(pid, SIGKILL);
                killed = true;
                continue;
            }
            timeout = (int)((left + 999) / 1000);
            if (left < 1000) {
                struct timespec ts = {0, (long)left * 1000};
                nanosleep(&ts, NULL);
                continue;
            }
        }
        if (poll(&pfd, 1, timeout) > 0)
            open = pump(fds[0], acc, &len, sizeof(acc), log, t0);
    }
    close(fds[0]);
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
        ;
    res->exited = WIFEXITED(st);
    res->code = res->exited ? WEXITSTATUS(st) : -1;
    res->signaled = WIFSIGNALED(st);
    res->sig = res->signaled ? WTERMSIG(st) : 0;
    res->crashed = res->exited && res->code == T_CRASH_EXIT;
    return 0;
}

/* ---- inspection
 * ---------------------------------------------------------------------- */

struct insp {
    const struct t_plan *p;
    const char *run_id;
    const unsigned char *tolerate;
    struct t_seen *s;
    uint64_t seq;
};

static void seen_bad(struct insp *x, const lil_record *r, const char *fmt, ...)
    LIL_PRINTF(3, 4);

static void seen_bad(struct insp *x, const lil_record *r, const char *fmt, ...)
{
    va_list ap;

    x->s->bad++;
    fprintf(stderr,
            "  journal of %s, record seq=%llu offset=%llu key='%.*s': ", x->run_id,
            (unsigned long long)r->seq, (unsigned long long)r->offset, (int)r->key_len,
            r->key);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
}

static void seen_outcome(struct insp *x, const lil_record *r, int i)
{
    const struct t_plan *p = x->p;
    bool effect = (r->flags & LIL_RECF_EFFECT) != 0;
    char want[32];

    x->s->has[i] = 1;
    if (++x->s->outcomes[i] > 1)
        seen_bad(x, r, "a second outcome for step %d", i);
    if (effect != (p->kind[i] == T_WL_EFFECT))
        seen_bad(x, r, "effect flag is %d for a step of kind %d", effect, p->kind[i]);
    if (r->type == LIL_REC_STEP_FAILED) {
        snprintf(want, sizeof(want), "boom-%d", i);
        if (x->tolerate && x->tolerate[i])
            return;
        if (p->kind[i] != T_WL_FAIL)
            seen_bad(x, r, "step %d is journaled as failed", i);
        else if (!memmem(r->payload, r->payload_len, want, strlen(want)))
            seen_bad(x, r, "failure reason lacks '%s'", want);
        return;
    }
    if (p->kind[i] == T_WL_FAIL)
        seen_bad(x, r, "failing step %d is journaled as done", i);
    else if (!t_plan_result_ok(p, i, r->payload, r->payload_len))
        seen_bad(x, r, "step %d has wrong bytes (%zu bytes, want %zu)", i,
                 r->payload_len, t_plan_len(p, i));
}

static int seen_record(void *ud, const lil_record *r)
{
    struct insp *x = ud;
    int i = t_plan_find(x->p, r->key, r->key_len);

    x->s->records++;
    if (r->seq != x->seq + 1)
        seen_bad(x, r, "seq %llu after %llu", (unsigned long long)r->seq,
                 (unsigned long long)x->seq);
    x->seq = r->seq;
    switch (r->type) {
    case LIL_REC_BEGIN:
        if (r->key_len != strlen(x->run_id) || memcmp(r->key, x->run_id, r->key_len))
            seen_bad(x, r, "BEGIN does not name the run");
        break;
    case LIL_REC_OPEN:
    case LIL_REC_RESOLVE:
    case LIL_REC_CLOSE:
        break;
    case LIL_REC_STEP:
    case LIL_REC_STEP_FAILED:
        if (i < 0)
            seen_bad(x, r, "an outcome for an identity the plan does not have");
        else
            seen_outcome(x, r, i);
        break;
    case LIL_REC_INTENT:
        if (i < 0 || x->p->kind[i] != T_WL_EFFECT)
            seen_bad(x, r, "an intent for something that is not the effect");
        else
            x->s->intents[i]++;
        break;
    case LIL_REC_RUN_DONE:
        if (++x->s->run_done > 1)
            seen_bad(x, r, "a second RUN_DONE");
        if (r->payload_len != strlen(x->p->done) ||
            memcmp(r->payload, x->p->done, r->payload_len) != 0)
            seen_bad(x, r, "RUN_DONE with the wrong result");
        break;
    default:
        seen_bad(x, r, "unexpected record type %d", r->type);
        break;
    }
    return 0;
}

/* <store>/markers/m-<first 32 hex digits of SHA-256(name)>.done */
static bool marker_done(const char *store)
{
    uint8_t digest[LIL_SHA256_LEN];
    char hex[2 * LIL_SHA256_LEN + 1], path[4200];
    struct stat st;

    lil__sha256(T_MARKER_NAME, strlen(T_MARKER_NAME), digest);
    lil__hex(digest, LIL_SHA256_LEN, hex);
    snprintf(path, sizeof(path), "%s/markers/m-%.32s.done", store, hex);
    return stat(path, &st) == 0;
}

void t_inspect(const struct t_plan *p, const char *store, const char *run_id,
               const unsigned char *tolerate, struct t_seen *s)
{
    struct insp x = {p, run_id, tolerate, s, 0};
    lil_store *st = NULL;
    lil_run *run = NULL;
    lil_run_opts o;
    lil_status rc;

    memset(s, 0, sizeof(*s));
    s->marker_done = marker_done(store);
    rc = lil_store_open(NULL, store, &st);
    if (rc != LIL_OK) {
        s->open_rc = rc;
        snprintf(s->msg, sizeof(s->msg), "store: %s", lil_errmsg());
        return;
    }
    memset(&o, 0, sizeof(o));
    o.struct_size = sizeof(o);
    o.flags = LIL_OPEN_READONLY | LIL_OPEN_EXISTING;
    s->open_rc = lil_run_open(st, run_id, &o, &run);
    snprintf(s->msg, sizeof(s->msg), "%s", s->open_rc ? lil_store_errmsg(st) : "");
    if (s->open_rc == LIL_OK) {
        s->state = lil_run_status(run);
        rc = lil_run_foreach(run, seen_record, &x);
        if (rc != LIL_OK) {
            s->bad++;
            fprintf(stderr, "  lil_run_foreach(%s): %s: %s\n", run_id,
                    lil_status_name(rc), lil_run_errmsg(run));
        }
        lil_run_close(run);
    }
    s->rep.struct_size = sizeof(s->rep);
    s->check_rc = lil_run_check(st, run_id, 0, &s->rep);
    lil_store_close(st);
}

/* ---- the model ----------------------------------------------------------------------
 */

static void violation(struct t_model *m, const char *fmt, ...) LIL_PRINTF(2, 3);

static void violation(struct t_model *m, const char *fmt, ...)
{
    va_list ap;

    m->errors++;
    fprintf(stderr, "  VIOLATION [%s]: ", m->ctx);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
}

void t_model_init(struct t_model *m, const struct t_plan *p, lil_sync sync,
                  const char *ctx)
{
    memset(m, 0, sizeof(*m));
    m->plan = p;
    m->sync = sync;
    snprintf(m->ctx, sizeof(m->ctx), "%s", ctx);
}

void t_model_begin(struct t_model *m, const struct t_seen *s)
{
    for (int i = 0; i < m->plan->n; i++)
        m->present[i] = s && s->open_rc == LIL_OK ? s->has[i] : 0;
    memset(m->acked, 0, sizeof(m->acked));
}

static void barrier(struct t_model *m)
{
    m->barrier = 1;
    for (int i = 0; i < m->plan->n; i++)
        if (m->present[i] || m->acked[i])
            m->durable[i] = 1;
}

static void feed_one(struct t_model *m, const struct t_ev *e)
{
    int i = e->i;
    bool step = i >= 0 && i < m->plan->n;
    bool synced_modes = m->sync != LIL_SYNC_OFF;

    switch (e->tag) {
    case 'R':
        if (!step)
            break;
        m->ran[i]++;
        if (m->present[i])
            violation(m,
                      "step %d (%s) ran in attempt %d although the journal held its "
                      "outcome when the attempt began",
                      i, m->plan->ident[i], e->attempt);
        else if (m->durable[i])
            violation(m, "step %d (%s) ran again in attempt %d after it was durable", i,
                      m->plan->ident[i], e->attempt);
        break;
    case 'A':
    case 'F':
    case 'P':
    case 'G':
        if (!step)
            break;
        m->acked[i] = 1;
        if ((e->tag == 'A' || e->tag == 'F') && m->sync == LIL_SYNC_FULL)
            barrier(m);
        break;
    case 'O':
        m->opened = 1;
        break;
    case 'm':
        if (m->marker)
            violation(m,
                      "the marker's function ran in attempt %d after lil_marker "
                      "had returned LIL_OK",
                      e->attempt);
        break;
    case 'K':
        m->marker = 1;
        break;
    case 'Y':
        barrier(m);
        break;
    case 'E':
    case 'C':
    case 'Z':
        if (synced_modes)
            barrier(m);
        break;
    default:
        break;
    }
}

void t_model_feed(struct t_model *m, const struct t_evlog *log)
{
    for (size_t k = 0; k < log->n; k++)
        feed_one(m, &log->ev[k]);
}

void t_model_end(struct t_model *m, enum t_end how, const struct t_seen *s)
{
    const struct t_plan *p = m->plan;
    bool open = s->open_rc == LIL_OK;

    if (s->bad)
        violation(m, "the journal holds %d wrong record(s)", s->bad);
    for (int i = 0; i < p->n; i++) {
        bool need = m->durable[i] || (how != T_END_POWER && m->acked[i]);
        if (need && !(open && s->has[i]))
            violation(m,
                      "step %d (%s) was %s but is not in the journal after a %s "
                      "(open: %s %s)",
                      i, p->ident[i], m->durable[i] ? "durable" : "acknowledged",
                      how == T_END_POWER ? "power cut" : "process death",
                      lil_status_name(s->open_rc), s->msg);
    }
    if (m->marker && !s->marker_done)
        violation(m,
                  "lil_marker returned LIL_OK but the marker is not published "
                  "after a %s",
                  how == T_END_POWER ? "power cut" : "process death");
    if (how == T_END_POWER) {
        /* What survived is on disk now: a later cut cannot take it. */
        for (int i = 0; i < p->n; i++)
            m->durable[i] = open && s->has[i];
    }
}

/* ---- final verification
 * ------------------------------------------------------------------ */

int t_verify_final(const struct t_plan *p, const char *store, const char *run_id,
                   lil_sync sync, const char *ctx)
{
    struct t_seen s;
    struct t_evlog log = {0};
    struct t_wl w;
    int errors = 0;

    t_inspect(p, store, run_id, NULL, &s);
    if (s.open_rc != LIL_OK || s.state != LIL_RUN_COMPLETED || s.bad ||
        s.run_done != 1) {
        fprintf(stderr, "  FINAL [%s]: open=%s state=%d bad=%d run_done=%d %s\n", ctx,
                lil_status_name(s.open_rc), s.state, s.bad, s.run_done, s.msg);
        errors++;
    }
    for (int i = 0; i < p->n; i++)
        if (s.outcomes[i] != 1) {
            fprintf(stderr, "  FINAL [%s]: step %d (%s) has %d outcomes\n", ctx, i,
                    p->ident[i], s.outcomes[i]);
            errors++;
        }
    if (s.check_rc != LIL_OK || !s.rep.intact) {
        fprintf(stderr, "  FINAL [%s]: check %s intact=%d: %s\n", ctx,
                lil_status_name(s.check_rc), s.rep.intact, s.rep.message);
        errors++;
    }
    t_wl_init(&w, p, store, run_id, sync, &log);
    w.attempt = 999;
    if (t_wl_run(&w) != 0 || !w.completed) {
        fprintf(stderr, "  FINAL [%s]: replay failed: %s\n", ctx,
                lil_status_name(w.first_err));
        errors++;
    }
    if (p->marker_at >= 0 &&
        (t_evlog_count(&log, 'm', -1) != 0 || t_evlog_count(&log, 'K', -1) != 1)) {
        fprintf(stderr,
                "  FINAL [%s]: replay: marker ran %zu times, acknowledged %zu\n", ctx,
                t_evlog_count(&log, 'm', -1), t_evlog_count(&log, 'K', -1));
        errors++;
    }
    if (t_evlog_count(&log, 'R', -1) != 0) {
        fprintf(stderr, "  FINAL [%s]: replay of a completed run ran %zu functions\n",
                ctx, t_evlog_count(&log, 'R', -1));
        errors++;
    }
    if (t_evlog_count(&log, 'P', -1) + t_evlog_count(&log, 'G', -1) != (size_t)p->n) {
        fprintf(stderr, "  FINAL [%s]: replay acknowledged %zu of %d steps\n", ctx,
                t_evlog_count(&log, 'P', -1) + t_evlog_count(&log, 'G', -1), p->n);
        errors++;
    }
    t_evlog_free(&log);
    return errors;
}

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st;
    (void)ftw;
    if (flag == FTW_DP)
        return rmdir(path) == 0 || errno == ENOENT ? 0 : -1;
    return unlink(path) == 0 || errno == ENOENT ? 0 : -1;
}

void t_rmtree(const char *path)
{
    if (nftw(path, rm_one, 16, FTW_DEPTH | FTW_PHYS) != 0 && errno != ENOENT)
        fprintf(stderr, "warning: could not remove %s: %s\n", path, strerror(errno));
}

static void mkdir_durable(const char *dir)
{
    char parent[4200];
    char *slash;
    int fd;

    if (mkdir(dir, 0700) != 0 && errno != EEXIST)
        fprintf(stderr, "warning: mkdir %s: %s\n", dir, strerror(errno));
    snprintf(parent, sizeof(parent), "%s", dir);
    slash = strrchr(parent, '/');
    if (slash && slash != parent)
        *slash = '\0';
    fd = open(slash ? parent : ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd >= 0) {
        fsync(fd);
        close(fd);
    }
}

void t_store_prepare(const char *store)
{
    char markers[4200];

    snprintf(markers, sizeof(markers), "%s/markers", store);
    mkdir_durable(store);
    mkdir_durable(markers);
}
