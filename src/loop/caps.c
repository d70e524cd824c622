/*
 * caps.c -- the loop's meters and caps (caps.h has the rules).
 *
 * Every change validates first and writes only when nothing is wrong, so a
 * refused call leaves the meters as they were.  Differences of times are
 * computed with overflow checks (a journal's times are the runner's, but a
 * wrong clock must not become undefined behaviour).
 */
#include "loop/caps.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "loopspec/values/duration.h"

static const char *const REASONS[] = {"",           "max_iterations",   "token-budget",
                                      "usd-budget", "wallclock-budget", "no_progress"};

static const char *const ACTIONS[] = {"fail", "breakpoint", "exit-clean"};

#define NREASONS (sizeof(REASONS) / sizeof(REASONS[0]))
#define NACTIONS (sizeof(ACTIONS) / sizeof(ACTIONS[0]))

/* ------------------------------------------------------------------------ */
/* Names                                                                    */

const char *lil__cap_reason(enum lil_cap cap)
{
    return (unsigned)cap < NREASONS ? REASONS[cap] : "";
}

const char *lil__cap_action_name(enum lil_ir_cap_action a)
{
    return (unsigned)a < NACTIONS ? ACTIONS[a] : "?";
}

static bool name_is(const char *name, const char *s, size_t len)
{
    return strlen(name) == len && memcmp(name, s, len) == 0;
}

bool lil__cap_from_reason(const char *s, size_t len, enum lil_cap *out)
{
    for (size_t i = 1; s && i < NREASONS; i++) {
        if (name_is(REASONS[i], s, len)) {
            *out = (enum lil_cap)i;
            return true;
        }
    }
    return false;
}

bool lil__cap_action_from_name(const char *s, size_t len, enum lil_ir_cap_action *out)
{
    for (size_t i = 0; s && i < NACTIONS; i++) {
        if (name_is(ACTIONS[i], s, len)) {
            *out = (enum lil_ir_cap_action)i;
            return true;
        }
    }
    return false;
}

static bool cap_valid(enum lil_cap cap)
{
    return cap > LIL_CAP_NONE && (unsigned)cap < NREASONS;
}

static bool action_valid(enum lil_ir_cap_action a)
{
    return (unsigned)a < NACTIONS;
}

/* ------------------------------------------------------------------------ */
/* Set-up                                                                   */

/* Whole milliseconds that an elapsed integer time must reach to be >= ms. */
static int64_t ms_ceil(double ms)
{
    int64_t w = (int64_t)ms;

    return (double)w < ms ? w + 1 : w;
}

static lil_status limits_from_budget(const struct lil_ir_spec *ir, struct lil_err *err,
                                     struct lil_cap_limits *out)
{
    const struct lil_ir_duration *wall = &ir->caps.budget.wallclock;

    if (!ir->caps.budget.present)
        return LIL_OK;
    out->has_tokens = ir->caps.budget.has_tokens;
    out->tokens = ir->caps.budget.tokens;
    out->has_usd = ir->caps.budget.has_usd;
    out->usd = ir->caps.budget.usd;
    if (!wall->text.s)
        return LIL_OK;
    if (!wall->ok || !(wall->ms >= 0 && wall->ms <= LIL_DURATION_MAX_MS))
        return lil__seterr(err, LIL_E_INVAL, 0,
                           "caps.budget.wallclock: invalid duration");
    out->has_wallclock = true;
    out->wallclock_ms = ms_ceil(wall->ms);
    return LIL_OK;
}

lil_status lil__cap_limits_from_ir(const struct lil_ir_spec *ir, struct lil_err *err,
                                   struct lil_cap_limits *out)
{
    lil_status rc;

    memset(out, 0, sizeof(*out));
    if (!ir)
        return lil__seterr(err, LIL_E_INVAL, 0, "no spec");
    out->max_iterations = ir->caps.max_iterations;
    out->action = ir->caps.on_cap_exceeded;
    if (ir->caps.no_progress.present) {
        out->has_no_progress = true;
        out->max_repeats = ir->caps.no_progress.max_repeats;
    }
    rc = limits_from_budget(ir, err, out);
    if (rc != LIL_OK)
        memset(out, 0, sizeof(*out));
    return rc;
}

/* The first limit out of range, or NULL. */
static const char *limits_problem(const struct lil_cap_limits *lim)
{
    if (lim->max_iterations < 1)
        return "max_iterations must be a positive integer";
    if (lim->has_no_progress && lim->max_repeats < 1)
        return "no_progress.max_repeats must be a positive integer";
    if (lim->has_tokens && lim->tokens < 1)
        return "budget.tokens must be a positive integer";
    if (lim->has_usd && !(lim->usd > 0 && isfinite(lim->usd)))
        return "budget.usd must be a positive number";
    if (lim->has_wallclock && lim->wallclock_ms < 0)
        return "budget.wallclock must not be negative";
    if (!action_valid(lim->action))
        return "on_cap_exceeded must be fail, breakpoint or exit-clean";
    return NULL;
}

lil_status lil__meters_init_limits(struct lil_loop_meters *m, struct lil_err *err,
                                   const struct lil_cap_limits *lim, int64_t start_ms)
{
    const char *why;

    memset(m, 0, sizeof(*m));
    if (!lim)
        return lil__seterr(err, LIL_E_INVAL, 0, "caps: no limits");
    why = limits_problem(lim);
    if (why)
        return lil__seterr(err, LIL_E_INVAL, 0, "caps: %s", why);
    m->lim = *lim;
    m->wallclock_base_ms = start_ms;
    m->pending = LIL_CAP_NONE;
    m->ended = LIL_CAP_NONE;
    return LIL_OK;
}

lil_status lil__meters_init(struct lil_loop_meters *m, struct lil_err *err,
                            const struct lil_ir_spec *ir, int64_t start_ms)
{
    struct lil_cap_limits lim;
    lil_status rc = lil__cap_limits_from_ir(ir, err, &lim);

    if (rc != LIL_OK) {
        memset(m, 0, sizeof(*m));
        return rc;
    }
    return lil__meters_init_limits(m, err, &lim, start_ms);
}

/* ---- the limits as the start record holds them ----------------------------- */

json_t *lil__cap_limits_json(const struct lil_cap_limits *lim)
{
    json_t *o =
        json_pack("{s:I, s:s}", "max_iterations", (json_int_t)lim->max_iterations,
                  "on_cap_exceeded", lil__cap_action_name(lim->action));

    if (o && lim->has_tokens)
        json_object_set_new(o, "tokens", json_integer((json_int_t)lim->tokens));
    if (o && lim->has_usd)
        json_object_set_new(o, "usd", json_real(lim->usd));
    if (o && lim->has_wallclock)
        json_object_set_new(o, "wallclock_ms",
                            json_integer((json_int_t)lim->wallclock_ms));
    if (o && lim->has_no_progress)
        json_object_set_new(o, "max_repeats",
                            json_integer((json_int_t)lim->max_repeats));
    return o;
}

/* Member key of caps as an integer: absent (*has false), or one. */
static bool int_member(const json_t *caps, const char *key, int64_t *out, bool *has)
{
    const json_t *v = json_object_get(caps, key);

    *has = v != NULL;
    if (!v)
        return true;
    *out = (int64_t)json_integer_value(v);
    return json_is_integer(v);
}

static bool action_member(const json_t *caps, enum lil_ir_cap_action *out)
{
    const json_t *v = json_object_get(caps, "on_cap_exceeded");
    const char *s = json_string_value(v);

    *out = LIL_CAPACT_BREAKPOINT;
    if (!v)
        return true;
    return s && lil__cap_action_from_name(s, strlen(s), out);
}

lil_status lil__cap_limits_from_json(const json_t *caps, struct lil_err *err,
                                     struct lil_cap_limits *out)
{
    const json_t *usd = json_object_get(caps, "usd");
    bool has_max = false, ok;
    const char *why;

    memset(out, 0, sizeof(*out));
    out->max_iterations = INT64_MAX;
    ok = json_is_object(caps) &&
         int_member(caps, "max_iterations", &out->max_iterations, &has_max) &&
         int_member(caps, "tokens", &out->tokens, &out->has_tokens) &&
         int_member(caps, "wallclock_ms", &out->wallclock_ms, &out->has_wallclock) &&
         int_member(caps, "max_repeats", &out->max_repeats, &out->has_no_progress) &&
         action_member(caps, &out->action) && (!usd || json_is_number(usd));
    if (!has_max)
        out->max_iterations = INT64_MAX;
    out->has_usd = usd != NULL;
    out->usd = json_number_value(usd);
    why = ok ? limits_problem(out) : "a member of the wrong type";
    if (!why)
        return LIL_OK;
    memset(out, 0, sizeof(*out));
    return lil__seterr(err, LIL_E_CORRUPT, 0, "the caps of the start record: %s", why);
}

/* ------------------------------------------------------------------------ */
/* Checks                                                                   */

/* now - base, saturated. */
static int64_t elapsed_ms(const struct lil_loop_meters *m, int64_t now_ms)
{
    int64_t d;

    if (__builtin_sub_overflow(now_ms, m->wallclock_base_ms, &d))
        return now_ms < 0 ? INT64_MIN : INT64_MAX;
    return d;
}

/* a + b, saturated at INT64_MAX (both >= 0 in practice; a journal's
 * figures must not become undefined behaviour either way). */
static int64_t sat_add(int64_t a, int64_t b)
{
    int64_t s;

    if (__builtin_add_overflow(a, b, &s))
        return b > 0 ? INT64_MAX : INT64_MIN;
    return s;
}

int64_t lil__meters_spent_tokens(const struct lil_loop_meters *m)
{
    int64_t spent;

    if (__builtin_sub_overflow(sat_add(m->tokens, m->reserved_tokens), m->tokens_base,
                               &spent))
        return m->tokens_base < 0 ? INT64_MAX : INT64_MIN;
    return spent;
}

double lil__meters_spent_usd(const struct lil_loop_meters *m)
{
    return m->usd + m->reserved_usd - m->usd_base;
}

static bool tripped(const struct lil_loop_meters *m, enum lil_cap cap, int64_t now_ms)
{
    const struct lil_cap_limits *lim = &m->lim;

    switch (cap) {
    case LIL_CAP_MAX_ITERATIONS:
        return m->iteration - m->iteration_base >= lim->max_iterations;
    case LIL_CAP_TOKENS:
        return lim->has_tokens && lil__meters_spent_tokens(m) >= lim->tokens;
    case LIL_CAP_USD:
        return lim->has_usd && lil__meters_spent_usd(m) >= lim->usd;
    case LIL_CAP_WALLCLOCK:
        return lim->has_wallclock && elapsed_ms(m, now_ms) >= lim->wallclock_ms;
    case LIL_CAP_NO_PROGRESS:
        return lim->has_no_progress && m->repeats >= lim->max_repeats;
    case LIL_CAP_NONE:
        break;
    }
    return false;
}

static struct lil_cap_trip first_tripped(const struct lil_loop_meters *m,
                                         enum lil_cap from, enum lil_cap to,
                                         int64_t now_ms)
{
    struct lil_cap_trip t = {LIL_CAP_NONE, m->lim.action, ""};

    for (int c = (int)from; c <= (int)to; c++) {
        if (tripped(m, (enum lil_cap)c, now_ms)) {
            t.cap = (enum lil_cap)c;
            t.reason = lil__cap_reason(t.cap);
            break;
        }
    }
    return t;
}

struct lil_cap_trip lil__meters_check_start(const struct lil_loop_meters *m,
                                            int64_t now_ms)
{
    return first_tripped(m, LIL_CAP_MAX_ITERATIONS, LIL_CAP_NO_PROGRESS, now_ms);
}

struct lil_cap_trip lil__meters_check_budgets(const struct lil_loop_meters *m,
                                              int64_t now_ms)
{
    return first_tripped(m, LIL_CAP_TOKENS, LIL_CAP_WALLCLOCK, now_ms);
}

double lil__meters_usd_left(const struct lil_loop_meters *m)
{
    double left;

    if (!m->lim.has_usd)
        return 0.0;
    left = m->lim.usd - lil__meters_spent_usd(m);
    return left > 0 ? left : 0.0;
}

/* Would the tokens of r pass the token budget?  *never: r alone would. */
static bool tokens_pass(const struct lil_loop_meters *m, const struct lil_reserve *r,
                        bool *never)
{
    if (!m->lim.has_tokens)
        return false;
    *never = r->tokens > m->lim.tokens;
    return *never || sat_add(lil__meters_spent_tokens(m), r->tokens) > m->lim.tokens;
}

static bool usd_passes(const struct lil_loop_meters *m, const struct lil_reserve *r,
                       bool *never)
{
    double spent = lil__meters_spent_usd(m);

    if (!m->lim.has_usd)
        return false;
    if (r->usd_rest)
        return spent >= m->lim.usd; /* it takes what is left: is anything? */
    *never = r->usd > m->lim.usd;
    return *never || spent + r->usd > m->lim.usd;
}

struct lil_cap_trip lil__meters_check_reserve(const struct lil_loop_meters *m,
                                              const struct lil_reserve *r, bool *never)
{
    struct lil_cap_trip t = {LIL_CAP_NONE, m->lim.action, ""};
    bool all = false;

    if (tokens_pass(m, r, &all))
        t.cap = LIL_CAP_TOKENS;
    else if (usd_passes(m, r, &all))
        t.cap = LIL_CAP_USD;
    else
        all = false;
    t.reason = lil__cap_reason(t.cap);
    if (never)
        *never = all;
    return t;
}

/* ------------------------------------------------------------------------ */
/* Changes                                                                  */

lil_status lil__meters_add_usage(struct lil_loop_meters *m, struct lil_err *err,
                                 int64_t tokens, double usd)
{
    double sum;

    if (tokens < 0)
        return lil__seterr(err, LIL_E_INVAL, 0, "usage: negative tokens (%lld)",
                           (long long)tokens);
    if (!(usd >= 0) || !isfinite(usd))
        return lil__seterr(err, LIL_E_INVAL, 0, "usage: usd is not a number >= 0");
    sum = m->usd + usd;
    if (!isfinite(sum))
        return lil__seterr(err, LIL_E_INVAL, 0, "usage: the usd total overflows");
    if (__builtin_add_overflow(m->tokens, tokens, &m->tokens))
        m->tokens = INT64_MAX;
    m->usd = sum;
    return LIL_OK;
}

static bool usd_ok(double usd)
{
    return usd >= 0 && isfinite(usd);
}

lil_status lil__meters_reserve(struct lil_loop_meters *m, struct lil_err *err,
                               const struct lil_reserve *r)
{
    int64_t tokens;
    double usd;

    if (r->tokens < 1)
        return lil__seterr(err, LIL_E_INVAL, 0,
                           "reservation: %lld tokens (a call reserves at least 1)",
                           (long long)r->tokens);
    if (!usd_ok(r->usd))
        return lil__seterr(err, LIL_E_INVAL, 0,
                           "reservation: usd is not a number >= 0");
    usd = m->reserved_usd + r->usd;
    if (__builtin_add_overflow(m->reserved_tokens, r->tokens, &tokens) ||
        !isfinite(usd))
        return lil__seterr(err, LIL_E_INVAL, 0, "reservation: the sum overflows");
    m->reserved_tokens = tokens;
    m->reserved_usd = usd;
    return LIL_OK;
}

lil_status lil__meters_settle(struct lil_loop_meters *m, struct lil_err *err,
                              const struct lil_reserve *r, int64_t tokens, double usd)
{
    struct lil_loop_meters next = *m;
    lil_status rc;

    if (r->tokens < 1 || r->tokens > m->reserved_tokens || !usd_ok(r->usd))
        return lil__seterr(err, LIL_E_INVAL, 0,
                           "settling a reservation of %lld tokens: %lld are reserved",
                           (long long)r->tokens, (long long)m->reserved_tokens);
    next.reserved_tokens -= r->tokens;
    next.reserved_usd = next.reserved_tokens == 0 ? 0.0 : next.reserved_usd - r->usd;
    if (next.reserved_usd < 0)
        next.reserved_usd = 0.0; /* rounding: never a negative reservation */
    rc = lil__meters_add_usage(&next, err, tokens, usd);
    if (rc == LIL_OK)
        *m = next;
    return rc;
}

/* LIL_E_INVAL when the run is paused on a cap or has ended on one. */
static lil_status check_running(const struct lil_loop_meters *m, struct lil_err *err,
                                const char *what)
{
    if (m->ended != LIL_CAP_NONE)
        return lil__seterr(err, LIL_E_INVAL, 0, "%s after the run ended on %s", what,
                           lil__cap_reason(m->ended));
    if (m->pending != LIL_CAP_NONE)
        return lil__seterr(err, LIL_E_INVAL, 0, "%s while %s awaits approval", what,
                           lil__cap_reason(m->pending));
    return LIL_OK;
}

lil_status lil__meters_note_snapshot(struct lil_loop_meters *m, struct lil_err *err,
                                     int64_t iteration, const void *fp, size_t fp_len)
{
    uint8_t digest[LIL_SHA256_LEN];
    lil_status rc = check_running(m, err, "snapshot");

    if (rc != LIL_OK)
        return rc;
    if (iteration != m->iteration)
        return lil__seterr(err, LIL_E_INVAL, 0,
                           "snapshot of iteration %lld, expected %lld",
                           (long long)iteration, (long long)m->iteration);
    if (m->iteration == INT64_MAX)
        return lil__seterr(err, LIL_E_INVAL, 0, "iteration count overflows");
    if (fp && iteration >= m->fp_reset_at) {
        lil__sha256(fp, fp_len, digest);
        if (m->has_fp && memcmp(digest, m->fp, sizeof(digest)) == 0) {
            m->repeats++;
        } else {
            m->repeats = 0;
            memcpy(m->fp, digest, sizeof(digest));
            m->has_fp = true;
        }
    }
    m->iteration = iteration + 1;
    return LIL_OK;
}

lil_status lil__meters_trip(struct lil_loop_meters *m, struct lil_err *err,
                            enum lil_cap cap, enum lil_ir_cap_action action)
{
    lil_status rc;

    if (!cap_valid(cap))
        return lil__seterr(err, LIL_E_INVAL, 0, "cap: no such cap (%d)", (int)cap);
    if (!action_valid(action))
        return lil__seterr(err, LIL_E_INVAL, 0, "cap: no such action (%d)",
                           (int)action);
    rc = check_running(m, err, "cap");
    if (rc != LIL_OK)
        return rc;
    if (action == LIL_CAPACT_BREAKPOINT) {
        m->pending = cap;
    } else {
        m->ended = cap;
        m->ended_action = action;
    }
    return LIL_OK;
}

void lil__meters_reopen(struct lil_loop_meters *m)
{
    m->ended = LIL_CAP_NONE;
    m->ended_action = LIL_CAPACT_FAIL; /* as fresh meters have it */
}

static void rebase(struct lil_loop_meters *m, enum lil_cap cap, int64_t at_iteration,
                   int64_t ts_ms)
{
    switch (cap) {
    case LIL_CAP_MAX_ITERATIONS:
        m->iteration_base = at_iteration;
        break;
    case LIL_CAP_NO_PROGRESS:
        m->fp_reset_at = at_iteration;
        m->repeats = 0;
        m->has_fp = false;
        memset(m->fp, 0, sizeof(m->fp));
        break;
    case LIL_CAP_TOKENS:
        m->tokens_base = sat_add(m->tokens, m->reserved_tokens);
        break;
    case LIL_CAP_USD:
        m->usd_base = m->usd + m->reserved_usd;
        break;
    case LIL_CAP_WALLCLOCK:
        m->wallclock_base_ms = ts_ms;
        break;
    case LIL_CAP_NONE:
        break;
    }
}

lil_status lil__meters_clear(struct lil_loop_meters *m, struct lil_err *err,
                             enum lil_cap cap, int64_t at_iteration, int64_t ts_ms)
{
    if (m->pending == LIL_CAP_NONE || cap != m->pending)
        return lil__seterr(err, LIL_E_INVAL, 0, "cap_cleared %s: %s%s",
                           cap_valid(cap) ? lil__cap_reason(cap) : "(no such cap)",
                           m->pending == LIL_CAP_NONE ? "no cap is pending"
                                                      : "the pending cap is ",
                           lil__cap_reason(m->pending));
    if (at_iteration != m->iteration)
        return lil__seterr(err, LIL_E_INVAL, 0,
                           "cap_cleared at iteration %lld, the run is at %lld",
                           (long long)at_iteration, (long long)m->iteration);
    rebase(m, cap, at_iteration, ts_ms);
    m->pending = LIL_CAP_NONE;
    return LIL_OK;
}

lil_status lil__meters_approve(struct lil_loop_meters *m, struct lil_err *err,
                               int64_t now_ms, struct lil_cap_trip *cleared)
{
    enum lil_cap cap = m->pending;
    lil_status rc;

    if (cap == LIL_CAP_NONE)
        return lil__seterr(err, LIL_E_INVAL, 0, "approve: no cap is pending");
    rc = lil__meters_clear(m, err, cap, m->iteration, now_ms);
    if (rc == LIL_OK && cleared) {
        cleared->cap = cap;
        cleared->action = m->lim.action;
        cleared->reason = lil__cap_reason(cap);
    }
    return rc;
}

/* ------------------------------------------------------------------------ */
/* Rebuilding                                                               */

static lil_status fold_one(struct lil_loop_meters *m, struct lil_err *err,
                           const struct lil_meter_event *ev)
{
    switch (ev->kind) {
    case LIL_METER_EV_SNAPSHOT:
        return lil__meters_note_snapshot(m, err, ev->iteration, ev->fp, ev->fp_len);
    case LIL_METER_EV_USAGE:
        return lil__meters_add_usage(m, err, ev->tokens, ev->usd);
    case LIL_METER_EV_CAP:
        return lil__meters_trip(m, err, ev->cap, ev->action);
    case LIL_METER_EV_CAP_CLEARED:
        return lil__meters_clear(m, err, ev->cap, ev->iteration, ev->ts_ms);
    case LIL_METER_EV_RESERVE:
        return lil__meters_reserve(m, err, &ev->res);
    case LIL_METER_EV_SETTLE:
        return lil__meters_settle(m, err, &ev->res, ev->tokens, ev->usd);
    }
    return lil__seterr(err, LIL_E_INVAL, 0, "no such record kind (%d)", (int)ev->kind);
}

lil_status lil__meters_fold(struct lil_loop_meters *m, struct lil_err *err,
                            const struct lil_meter_event *ev)
{
    char msg[LIL_ERRMSG_MAX];
    lil_status rc = fold_one(m, err, ev);

    if (rc != LIL_E_INVAL)
        return rc;
    if (!err)
        return LIL_E_CORRUPT;
    memcpy(msg, err->msg, sizeof(msg));
    return lil__seterr(err, LIL_E_CORRUPT, 0, "journal: %s", msg);
}

static bool same_double(double a, double b)
{
    return !(a < b || a > b);
}

static bool limits_equal(const struct lil_cap_limits *a, const struct lil_cap_limits *b)
{
    return a->max_iterations == b->max_iterations &&
           a->has_no_progress == b->has_no_progress &&
           a->max_repeats == b->max_repeats && a->has_tokens == b->has_tokens &&
           a->tokens == b->tokens && a->has_usd == b->has_usd &&
           same_double(a->usd, b->usd) && a->has_wallclock == b->has_wallclock &&
           a->wallclock_ms == b->wallclock_ms && a->action == b->action;
}

bool lil__meters_equal(const struct lil_loop_meters *a, const struct lil_loop_meters *b)
{
    return limits_equal(&a->lim, &b->lim) && a->iteration == b->iteration &&
           a->iteration_base == b->iteration_base && a->tokens == b->tokens &&
           a->tokens_base == b->tokens_base && same_double(a->usd, b->usd) &&
           same_double(a->usd_base, b->usd_base) &&
           a->reserved_tokens == b->reserved_tokens &&
           same_double(a->reserved_usd, b->reserved_usd) &&
           a->wallclock_base_ms == b->wallclock_base_ms &&
           a->fp_reset_at == b->fp_reset_at && a->repeats == b->repeats &&
           a->has_fp == b->has_fp &&
           (!a->has_fp || memcmp(a->fp, b->fp, sizeof(a->fp)) == 0) &&
           a->pending == b->pending && a->ended == b->ended &&
           (a->ended == LIL_CAP_NONE || a->ended_action == b->ended_action);
}

/* ------------------------------------------------------------------------ */
/* Showing                                                                  */

#define LINE_MAX_LEN 512

/* A line being built in a fixed buffer (snprintf cuts, never overflows). */
struct line {
    char s[LINE_MAX_LEN];
    size_t len;
};

static void line_add(struct line *l, const char *fmt, ...) LIL_PRINTF(2, 3);

static void line_add(struct line *l, const char *fmt, ...)
{
    va_list ap;
    int n;

    if (l->len >= sizeof(l->s) - 1)
        return;
    va_start(ap, fmt);
    n = vsnprintf(l->s + l->len, sizeof(l->s) - l->len, fmt, ap);
    va_end(ap);
    if (n > 0)
        l->len =
            l->len + (size_t)n < sizeof(l->s) ? l->len + (size_t)n : sizeof(l->s) - 1;
}

/* Append ms as whole units ("1d2h", "1h30m", "45s"; "500ms" below a
 * second, "0s" for 0).  exact: a part of a second is kept ("1.5s"), else
 * dropped. */
static void add_duration(struct line *l, int64_t ms, bool exact)
{
    static const struct {
        int64_t ms;
        char unit;
    } units[] = {{86400000, 'd'}, {3600000, 'h'}, {60000, 'm'}};

    int64_t rest = ms < 0 ? 0 : ms, frac;

    if (rest < 1000) {
        if (rest == 0)
            line_add(l, "0s");
        else
            line_add(l, "%lldms", (long long)rest);
        return;
    }
    for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
        if (rest >= units[i].ms)
            line_add(l, "%lld%c", (long long)(rest / units[i].ms), units[i].unit);
        rest %= units[i].ms;
    }
    frac = rest % 1000;
    if (exact && frac) {
        int digits = 3; /* of the fraction, without trailing zeros */

        while (frac % 10 == 0) {
            frac /= 10;
            digits--;
        }
        line_add(l, "%lld.%0*llds", (long long)(rest / 1000), digits, (long long)frac);
    } else if (rest >= 1000) {
        line_add(l, "%llds", (long long)(rest / 1000));
    }
}

static void summary_iteration(const struct lil_loop_meters *m, struct line *l)
{
    long long used = (long long)(m->iteration - m->iteration_base);

    if (m->iteration_base == 0)
        line_add(l, "iteration %lld/%lld", used, (long long)m->lim.max_iterations);
    else
        line_add(l, "iteration %lld (%lld/%lld since %lld)", (long long)m->iteration,
                 used, (long long)m->lim.max_iterations, (long long)m->iteration_base);
}

static void summary_budgets(const struct lil_loop_meters *m, int64_t now_ms,
                            struct line *l)
{
    if (m->lim.has_wallclock) {
        line_add(l, ", wallclock ");
        add_duration(l, elapsed_ms(m, now_ms), false);
        line_add(l, "/");
        add_duration(l, m->lim.wallclock_ms, true);
    }
    if (m->lim.has_tokens)
        line_add(l, ", tokens %lld/%lld", (long long)lil__meters_spent_tokens(m),
                 (long long)m->lim.tokens);
    else if (m->tokens > 0 || m->reserved_tokens > 0)
        line_add(l, ", tokens %lld", (long long)lil__meters_spent_tokens(m));
    if (m->reserved_tokens > 0)
        line_add(l, " (%lld reserved)", (long long)m->reserved_tokens);
    if (m->lim.has_usd)
        line_add(l, ", usd %.2f/%.2f", lil__meters_spent_usd(m), m->lim.usd);
    else if (m->usd > 0 || m->reserved_usd > 0)
        line_add(l, ", usd %.2f", lil__meters_spent_usd(m));
    if (m->reserved_usd > 0)
        line_add(l, " (%.2f reserved)", m->reserved_usd);
}

lil_status lil__meters_summary(const struct lil_loop_meters *m, int64_t now_ms,
                               struct lil_buf *out)
{
    struct line l = {.len = 0};

    summary_iteration(m, &l);
    if (m->lim.has_no_progress)
        line_add(&l, ", no progress %lld/%lld", (long long)m->repeats,
                 (long long)m->lim.max_repeats);
    summary_budgets(m, now_ms, &l);
    if (m->ended != LIL_CAP_NONE)
        line_add(&l, "; ended by %s (%s)", lil__cap_reason(m->ended),
                 lil__cap_action_name(m->ended_action));
    else if (m->pending != LIL_CAP_NONE)
        line_add(&l, "; paused on %s", lil__cap_reason(m->pending));
    return lil__buf_add(out, l.s, l.len);
}

static json_t *reason_or_null(enum lil_cap cap)
{
    return cap == LIL_CAP_NONE ? json_null() : json_string(lil__cap_reason(cap));
}

static json_t *token_meter(const struct lil_loop_meters *m)
{
    json_t *o = json_object();

    json_object_set_new(o, "used",
                        json_integer((json_int_t)lil__meters_spent_tokens(m)));
    json_object_set_new(o, "base", json_integer((json_int_t)m->tokens_base));
    json_object_set_new(o, "reserved", json_integer((json_int_t)m->reserved_tokens));
    if (m->lim.has_tokens)
        json_object_set_new(o, "budget", json_integer((json_int_t)m->lim.tokens));
    return o;
}

static json_t *usd_meter(const struct lil_loop_meters *m)
{
    json_t *o = json_object();

    json_object_set_new(o, "used", json_real(lil__meters_spent_usd(m)));
    json_object_set_new(o, "base", json_real(m->usd_base));
    json_object_set_new(o, "reserved", json_real(m->reserved_usd));
    if (m->lim.has_usd)
        json_object_set_new(o, "budget", json_real(m->lim.usd));
    return o;
}

static json_t *progress_meter(const struct lil_loop_meters *m)
{
    json_t *o = json_object();

    json_object_set_new(o, "repeats", json_integer((json_int_t)m->repeats));
    json_object_set_new(o, "max_repeats", json_integer((json_int_t)m->lim.max_repeats));
    json_object_set_new(o, "reset_at", json_integer((json_int_t)m->fp_reset_at));
    return o;
}

static json_t *wall_meter(const struct lil_loop_meters *m, int64_t now_ms)
{
    json_t *o = json_object();

    json_object_set_new(o, "elapsed_ms",
                        json_integer((json_int_t)elapsed_ms(m, now_ms)));
    json_object_set_new(o, "base_ms", json_integer((json_int_t)m->wallclock_base_ms));
    if (m->lim.has_wallclock)
        json_object_set_new(o, "budget_ms",
                            json_integer((json_int_t)m->lim.wallclock_ms));
    return o;
}

static json_t *meters_object(const struct lil_loop_meters *m, int64_t now_ms)
{
    json_t *o = json_object();

    json_object_set_new(o, "iteration", json_integer((json_int_t)m->iteration));
    json_object_set_new(o, "iteration_base",
                        json_integer((json_int_t)m->iteration_base));
    json_object_set_new(o, "max_iterations",
                        json_integer((json_int_t)m->lim.max_iterations));
    if (m->lim.has_no_progress)
        json_object_set_new(o, "no_progress", progress_meter(m));
    json_object_set_new(o, "tokens", token_meter(m));
    json_object_set_new(o, "usd", usd_meter(m));
    json_object_set_new(o, "wallclock", wall_meter(m, now_ms));
    json_object_set_new(o, "on_cap_exceeded",
                        json_string(lil__cap_action_name(m->lim.action)));
    json_object_set_new(o, "pending", reason_or_null(m->pending));
    json_object_set_new(o, "ended", reason_or_null(m->ended));
    if (m->ended != LIL_CAP_NONE)
        json_object_set_new(o, "ended_action",
                            json_string(lil__cap_action_name(m->ended_action)));
    return o;
}

lil_status lil__meters_json(const struct lil_env *env, struct lil_err *err,
                            const struct lil_loop_meters *m, int64_t now_ms,
                            json_t **out)
{
    struct lil_json_scope sc;
    json_t *o;

    *out = NULL;
    lil__json_begin(&sc, env);
    o = meters_object(m, now_ms);
    if (lil__json_end(&sc) != LIL_OK || !o) {
        json_decref(o);
        return lil__seterr(err, LIL_E_NOMEM, 0, "out of memory");
    }
    *out = o;
    return LIL_OK;
}
