/*
 * policy.c -- the supervisor's decisions (policy.h): pure functions of the
 * options, the death and the numbers given.
 */
#include "supervise/policy.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

/* The size of the first layout of lil_supervise_options (lil 0.1): every
 * caller's struct holds at least this much. */
#define OPTS_V1_SIZE (offsetof(lil_supervise_options, env) + sizeof(lil_env *))
/* The size of a layout that holds no_restart_codes and no_restart_count. */
#define NO_RESTART_END \
    (offsetof(lil_supervise_options, no_restart_count) + sizeof(size_t))

/* ---- options ------------------------------------------------------------- */

/* A number of seconds: 0 (the default), LIL_SUPERVISE_NONE where allowed,
 * or in (0, LIL_SV_MAX_SECONDS]. */
static lil_status seconds(struct lil_err *err, const char *name, double v, double dflt,
                          bool none_ok, double *out)
{
    if (none_ok && v == LIL_SUPERVISE_NONE) {
        *out = 0;
        return LIL_OK;
    }
    if (v == 0) {
        *out = dflt;
        return LIL_OK;
    }
    if (!(v > 0 && v <= LIL_SV_MAX_SECONDS)) /* NaN fails too */
        return lil__seterr(
            err, LIL_E_INVAL, 0,
            "lil_supervise: %s must be between 0 and %.0f seconds, not %g", name,
            LIL_SV_MAX_SECONDS, v);
    *out = v;
    return LIL_OK;
}

static lil_status check_jitter(struct lil_err *err, double v, double *out)
{
    if (v == LIL_SUPERVISE_NONE) {
        *out = 0;
        return LIL_OK;
    }
    if (!(v >= 0 && v <= 1))
        return lil__seterr(err, LIL_E_INVAL, 0,
                           "lil_supervise: jitter must be between 0 and 1, not %g", v);
    *out = v == 0 ? LIL_SV_DEFAULT_JITTER : v;
    return LIL_OK;
}

static lil_status check_breakers(struct lil_err *err, const lil_supervise_options *o)
{
    if (o->crash_loop_k == 0 && o->crash_loop_t_s != 0)
        return lil__seterr(err, LIL_E_INVAL, 0,
                           "lil_supervise: crash_loop_t_s needs crash_loop_k (0: off)");
    if (o->crash_loop_k && o->crash_loop_t_s != 0 &&
        !(o->crash_loop_t_s > 0 && o->crash_loop_t_s <= LIL_SV_MAX_SECONDS))
        return lil__seterr(err, LIL_E_INVAL, 0,
                           "lil_supervise: crash_loop_t_s must be between 0 and %.0f "
                           "seconds, not %g",
                           LIL_SV_MAX_SECONDS, o->crash_loop_t_s);
    if (o->same_step && !o->dir)
        return lil__seterr(err, LIL_E_INVAL, 0,
                           "lil_supervise: same_step needs dir (the store to read)");
    return LIL_OK;
}

static lil_status check_shape(struct lil_err *err, const lil_supervise_options *o)
{
    if (!o)
        return lil__seterr(err, LIL_E_INVAL, 0, "lil_supervise: opts is NULL");
    if (o->struct_size < OPTS_V1_SIZE)
        return lil__seterr(err, LIL_E_INVAL, 0,
                           "lil_supervise: opts->struct_size is too small (set it to "
                           "sizeof(lil_supervise_options))");
    if ((unsigned)o->restart > (unsigned)LIL_RESTART_ALWAYS)
        return lil__seterr(err, LIL_E_INVAL, 0,
                           "lil_supervise: unknown restart policy %d", (int)o->restart);
    if (o->argv && !o->argv[0])
        return lil__seterr(err, LIL_E_INVAL, 0, "lil_supervise: argv holds no program");
    if (o->argv && !o->argv[0][0])
        return lil__seterr(err, LIL_E_INVAL, 0, "lil_supervise: the program is \"\"");
    return LIL_OK;
}

static void add_code(struct lil_sv_policy *p, int code)
{
    p->no_restart[code / 8] |= (unsigned char)(1u << (code % 8));
}

/* The no-restart codes: 126 and 127 unless the caller's struct has the
 * field and sets it. */
static lil_status check_codes(struct lil_err *err, const lil_supervise_options *o,
                              struct lil_sv_policy *p)
{
    if (o->struct_size < NO_RESTART_END || !o->no_restart_codes) {
        if (o->struct_size >= NO_RESTART_END && o->no_restart_count)
            return lil__seterr(err, LIL_E_INVAL, 0,
                               "lil_supervise: no_restart_count is %zu and "
                               "no_restart_codes is NULL",
                               o->no_restart_count);
        add_code(p, 126);
        add_code(p, 127);
        return LIL_OK;
    }
    for (size_t i = 0; i < o->no_restart_count; i++) {
        int c = o->no_restart_codes[i];
        if (c < 0 || c >= LIL_SV_EXIT_CODES)
            return lil__seterr(err, LIL_E_INVAL, 0,
                               "lil_supervise: no_restart_codes[%zu] is %d, not an "
                               "exit code (0 to 255)",
                               i, c);
        add_code(p, c);
    }
    return LIL_OK;
}

lil_status lil__sv_policy_init(struct lil_err *err, const lil_supervise_options *o,
                               struct lil_sv_policy *p)
{
    lil_status rc = check_shape(err, o);

    memset(p, 0, sizeof(*p));
    if (rc == LIL_OK)
        rc = check_breakers(err, o);
    if (rc == LIL_OK)
        rc = seconds(err, "backoff_s", o->backoff_s, LIL_SV_DEFAULT_BACKOFF_S, true,
                     &p->backoff_s);
    if (rc == LIL_OK)
        rc = seconds(err, "max_backoff_s", o->max_backoff_s, LIL_SV_DEFAULT_MAX_BACKOFF,
                     false, &p->max_backoff_s);
    if (rc == LIL_OK)
        rc = seconds(err, "healthy_s", o->healthy_s, LIL_SV_DEFAULT_HEALTHY_S, false,
                     &p->healthy_s);
    if (rc == LIL_OK)
        rc = check_jitter(err, o->jitter, &p->jitter);
    if (rc == LIL_OK)
        rc = check_codes(err, o, p);
    if (rc != LIL_OK)
        return rc;
    p->restart = o->restart;
    p->max_restarts = o->max_restarts ? o->max_restarts : LIL_SV_DEFAULT_MAX_RESTARTS;
    p->crash_loop_k = o->crash_loop_k;
    p->crash_loop_t_s = o->crash_loop_t_s != 0 ? o->crash_loop_t_s : p->healthy_s;
    p->same_step = o->same_step;
    return LIL_OK;
}

/* ---- deaths -------------------------------------------------------------- */

int lil__sv_exit_status(const struct lil_sv_death *d)
{
    return d->signal ? 128 + d->signal : d->code;
}

bool lil__sv_no_restart_code(const struct lil_sv_policy *p, int code)
{
    return code >= 0 && code < LIL_SV_EXIT_CODES &&
           (p->no_restart[code / 8] & (1u << (code % 8))) != 0;
}

const char *lil__sv_no_restart(const struct lil_sv_policy *p,
                               const struct lil_sv_death *d, char *buf, size_t cap)
{
    if (d->interrupted)
        return "stopped by the user";
    if (d->signal == SIGINT)
        return "interrupted by SIGINT";
    if (d->signal)
        return NULL; /* a crash: every policy restarts it */
    if (lil__sv_no_restart_code(p, d->code)) {
        if (d->code == 127)
            return "the command was not found: exit 127 is not restarted";
        if (d->code == 126)
            return "the command is not executable: exit 126 is not restarted";
        snprintf(buf, cap, "exit %d is a no-restart code", d->code);
        return buf;
    }
    if (d->code == 0)
        return p->restart == LIL_RESTART_ALWAYS ? NULL : "the child exited with 0";
    return p->restart == LIL_RESTART_ON_CRASH
               ? "the child's non-zero exit is not a crash (on-crash)"
               : NULL;
}

double lil__sv_backoff(const struct lil_sv_policy *p, unsigned streak, double u)
{
    double d = p->backoff_s;

    for (unsigned i = 1; i < streak && d < p->max_backoff_s; i++)
        d *= 2;
    if (d > p->max_backoff_s)
        d = p->max_backoff_s;
    if (u < 0)
        u = 0;
    if (u >= 1)
        u = 0.999999;
    return d - d * p->jitter * u;
}

unsigned lil__sv_next_streak(const struct lil_sv_policy *p, unsigned streak,
                             double uptime_s)
{
    if (uptime_s >= p->healthy_s || streak == 0)
        return 1;
    return streak < 64 ? streak + 1 : streak; /* 2^63 s is past any ceiling */
}

bool lil__sv_breaker_note(const struct lil_sv_policy *p, struct lil_sv_breaker *b,
                          double uptime_s)
{
    if (!p->crash_loop_k)
        return false;
    b->quick = uptime_s < p->crash_loop_t_s ? b->quick + 1 : 0;
    return b->quick >= p->crash_loop_k;
}

bool lil__sv_same_note(const struct lil_sv_policy *p, struct lil_sv_same *s,
                       const void *key, size_t len)
{
    if (len > sizeof(s->key))
        len = sizeof(s->key);
    if (!key) {
        s->count = 0;
        s->len = 0;
        return false;
    }
    if (s->count && s->len == len && memcmp(s->key, key, len) == 0) {
        s->count++;
    } else {
        memcpy(s->key, key, len);
        s->len = len;
        s->count = 1;
    }
    return p->same_step && s->count >= p->same_step;
}

const char *lil__sv_signame(int sig, char *buf, size_t cap)
{
    const char *abbrev = sig > 0 ? sigabbrev_np(sig) : NULL;

    if (abbrev)
        snprintf(buf, cap, "SIG%s", abbrev);
    else
        snprintf(buf, cap, "signal %d", sig);
    return buf;
}

int lil__sv_exec_status(int exec_errno)
{
    return exec_errno == ENOENT || exec_errno == ENOTDIR ? 127 : 126;
}
