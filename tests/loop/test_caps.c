/*
 * test_caps.c -- the loop's meters and caps (src/loop/caps.h) and the
 * retry policy of effects (src/loop/retry.h).
 *
 * Caps: each one trips exactly at its boundary (>=), the order when
 * several trip at once, the streak rule (undefined fingerprints ignored),
 * refusals that leave the meters unchanged, the limits read from a spec
 * (injected per pattern, or as written).  A small model of the runner
 * (struct sim) plays the worked examples of docs/loopspec.md, "Caps" --
 * no_progress, max_iterations, token and usd budgets, wallclock, each with
 * its approvals -- journaling what the runner journals; after every change
 * the meters rebuilt by folding that journal from the start equal the
 * live ones.  The summary line and the JSON form.
 *
 * Reservations: a call's worst case fits while spent + r <= budget (so a
 * budget can be spent exactly) and never when r alone passes it; what is
 * reserved counts as spent at every check; settling replaces it with the
 * real figure and leaves no rounding behind; approval rebases past it; a
 * call without a price takes the usd budget's rest.  The worked example of
 * docs/loops.md (calls of 272 billed 265 under 700) through the model of
 * the runner, and a seeded campaign of calls, crashes (a call left
 * reserved, written off when retried), failures and approvals in which
 * spent never passes the budget and the folded journal always equals the
 * live meters.
 *
 * Retry: attempts, which statuses are retried, delays within [ceil(d/2), d]
 * and under the ceiling, the same delays from the same seed, no overflow
 * for any k.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "json/json.h"
#include "loop/caps.h"
#include "loop/retry.h"
#include "loopspec/diag.h"
#include "loopspec/ir/ir.h"
#include "loopspec/node.h"
#include "t.h"

#define HOUR_MS 3600000

static lil_env *env(void)
{
    static lil_env *e;

    if (!e && lil_env_new(&e) != LIL_OK)
        abort();
    return e;
}

static struct lil_cap_limits limits(int64_t max_iterations, enum lil_ir_cap_action a)
{
    struct lil_cap_limits lim;

    memset(&lim, 0, sizeof(lim));
    lim.max_iterations = max_iterations;
    lim.action = a;
    return lim;
}

static struct lil_loop_meters meters(const struct lil_cap_limits *lim, int64_t start)
{
    struct lil_loop_meters m;
    struct lil_err err;

    if (lil__meters_init_limits(&m, &err, lim, start) != LIL_OK) {
        fprintf(stderr, "init: %s\n", err.msg);
        abort();
    }
    return m;
}

static void snap(struct lil_loop_meters *m, const char *fp)
{
    struct lil_err err;
    lil_status rc =
        lil__meters_note_snapshot(m, &err, m->iteration, fp, fp ? strlen(fp) : 0);

    if (rc != LIL_OK)
        fprintf(stderr, "snapshot: %s\n", err.msg);
    T_CHECK(rc == LIL_OK);
}

static void usage(struct lil_loop_meters *m, int64_t tokens, double usd)
{
    T_OK(lil__meters_add_usage(m, NULL, tokens, usd));
}

static char *summary(const struct lil_loop_meters *m, int64_t now)
{
    static char s[512];
    struct lil_buf b;

    lil__buf_init(&b, env(), 4096);
    s[0] = '\0';
    if (lil__meters_summary(m, now, &b) == LIL_OK && b.data)
        snprintf(s, sizeof(s), "%s", (const char *)b.data);
    lil__buf_free(&b);
    return s;
}

/* ------------------------------------------------------------------------ */
/* Names                                                                    */

T_TEST(reasons_and_actions_are_spelled_as_the_contract_spells_them)
{
    static const char *const want[] = {"max_iterations", "token-budget", "usd-budget",
                                       "wallclock-budget", "no_progress"};
    enum lil_cap c;
    enum lil_ir_cap_action a;

    for (int i = 0; i < 5; i++) {
        T_EQ_STR(lil__cap_reason((enum lil_cap)(i + 1)), want[i]);
        T_CHECK(lil__cap_from_reason(want[i], strlen(want[i]), &c));
        T_EQ_I64(c, i + 1);
    }
    T_EQ_STR(lil__cap_reason(LIL_CAP_NONE), "");
    T_EQ_STR(lil__cap_reason((enum lil_cap)99), "");
    T_CHECK(!lil__cap_from_reason("token_budget", 12, &c));
    T_CHECK(!lil__cap_from_reason("max_iteration", 13, &c));
    T_CHECK(!lil__cap_from_reason("", 0, &c));
    T_EQ_STR(lil__cap_action_name(LIL_CAPACT_FAIL), "fail");
    T_EQ_STR(lil__cap_action_name(LIL_CAPACT_EXIT_CLEAN), "exit-clean");
    T_EQ_STR(lil__cap_action_name(LIL_CAPACT_BREAKPOINT), "breakpoint");
    T_CHECK(lil__cap_action_from_name("exit-clean", 10, &a));
    T_EQ_I64(a, LIL_CAPACT_EXIT_CLEAN);
    T_CHECK(!lil__cap_action_from_name("exit_clean", 10, &a));
}

/* ------------------------------------------------------------------------ */
/* Boundaries                                                               */

T_TEST(max_iterations_trips_when_the_window_is_full)
{
    struct lil_cap_limits lim = limits(3, LIL_CAPACT_BREAKPOINT);
    struct lil_loop_meters m = meters(&lim, 0);

    snap(&m, NULL);
    snap(&m, NULL);
    T_EQ_I64(m.iteration, 2);
    T_EQ_I64(lil__meters_check_start(&m, 0).cap, LIL_CAP_NONE);
    snap(&m, NULL);
    T_EQ_I64(lil__meters_check_start(&m, 0).cap, LIL_CAP_MAX_ITERATIONS);
    T_EQ_STR(lil__meters_check_start(&m, 0).reason, "max_iterations");
    T_EQ_I64(lil__meters_check_start(&m, 0).action, LIL_CAPACT_BREAKPOINT);
    /* not a budget: never tripped after an agent call */
    T_EQ_I64(lil__meters_check_budgets(&m, 0).cap, LIL_CAP_NONE);
}

T_TEST(token_budget_trips_at_the_budget)
{
    struct lil_cap_limits lim = limits(100, LIL_CAPACT_FAIL);
    struct lil_loop_meters m;

    lim.has_tokens = true;
    lim.tokens = 100;
    m = meters(&lim, 0);
    usage(&m, 99, 0);
    T_EQ_I64(lil__meters_check_start(&m, 0).cap, LIL_CAP_NONE);
    T_EQ_I64(lil__meters_check_budgets(&m, 0).cap, LIL_CAP_NONE);
    usage(&m, 1, 0);
    T_EQ_I64(lil__meters_check_start(&m, 0).cap, LIL_CAP_TOKENS);
    T_EQ_STR(lil__meters_check_budgets(&m, 0).reason, "token-budget");
    T_EQ_I64(lil__meters_check_budgets(&m, 0).action, LIL_CAPACT_FAIL);
}

T_TEST(usd_budget_trips_at_the_budget)
{
    struct lil_cap_limits lim = limits(100, LIL_CAPACT_EXIT_CLEAN);
    struct lil_loop_meters m;

    lim.has_usd = true;
    lim.usd = 1.0;
    m = meters(&lim, 0);
    usage(&m, 0, 0.5);
    usage(&m, 0, 0.25);
    T_EQ_I64(lil__meters_check_start(&m, 0).cap, LIL_CAP_NONE);
    T_EQ_I64(lil__meters_check_budgets(&m, 0).cap, LIL_CAP_NONE);
    usage(&m, 0, 0.25);
    T_EQ_I64(lil__meters_check_start(&m, 0).cap, LIL_CAP_USD);
    T_EQ_STR(lil__meters_check_budgets(&m, 0).reason, "usd-budget");
}

T_TEST(wallclock_budget_trips_at_the_budget)
{
    struct lil_cap_limits lim = limits(100, LIL_CAPACT_BREAKPOINT);
    struct lil_loop_meters m;

    m = meters(&lim, 5000);
    T_EQ_I64(lil__meters_check_start(&m, INT64_MAX).cap, LIL_CAP_NONE);
    lim.has_wallclock = true;
    lim.wallclock_ms = 1000;
    m = meters(&lim, 5000);
    T_EQ_I64(lil__meters_check_start(&m, 5999).cap, LIL_CAP_NONE);
    T_EQ_I64(lil__meters_check_budgets(&m, 5999).cap, LIL_CAP_NONE);
    T_EQ_I64(lil__meters_check_start(&m, 6000).cap, LIL_CAP_WALLCLOCK);
    T_EQ_STR(lil__meters_check_budgets(&m, 6000).reason, "wallclock-budget");
    /* a clock before the start, or absurd values: no trip, no overflow */
    T_EQ_I64(lil__meters_check_start(&m, 0).cap, LIL_CAP_NONE);
    T_EQ_I64(lil__meters_check_start(&m, INT64_MIN).cap, LIL_CAP_NONE);
    T_EQ_I64(lil__meters_check_start(&m, INT64_MAX).cap, LIL_CAP_WALLCLOCK);
    /* a budget of 0 trips at once */
    lim.wallclock_ms = 0;
    m = meters(&lim, 5000);
    T_EQ_I64(lil__meters_check_start(&m, 5000).cap, LIL_CAP_WALLCLOCK);
}

T_TEST(no_progress_trips_after_max_repeats_identical_fingerprints)
{
    struct lil_cap_limits lim = limits(100, LIL_CAPACT_BREAKPOINT);
    struct lil_loop_meters m;

    lim.has_no_progress = true;
    lim.max_repeats = 2;
    m = meters(&lim, 0);
    snap(&m, "A");
    T_EQ_I64(m.repeats, 0);
    snap(&m, "A");
    T_EQ_I64(m.repeats, 1);
    T_EQ_I64(lil__meters_check_start(&m, 0).cap, LIL_CAP_NONE);
    snap(&m, "A"); /* the third identical one */
    T_EQ_I64(m.repeats, 2);
    T_EQ_I64(m.iteration, 3);
    T_EQ_I64(lil__meters_check_start(&m, 0).cap, LIL_CAP_NO_PROGRESS);
    T_EQ_STR(lil__meters_check_start(&m, 0).reason, "no_progress");
    T_EQ_I64(lil__meters_check_budgets(&m, 0).cap, LIL_CAP_NONE);
}

T_TEST(the_streak_ignores_undefined_fingerprints_and_resets_on_change)
{
    struct lil_cap_limits lim = limits(100, LIL_CAPACT_BREAKPOINT);
    struct lil_loop_meters m;

    lim.has_no_progress = true;
    lim.max_repeats = 5;
    m = meters(&lim, 0);
    snap(&m, NULL); /* no fingerprint yet: nothing to compare */
    T_EQ_I64(m.repeats, 0);
    T_CHECK(!m.has_fp);
    snap(&m, "A");
    snap(&m, NULL); /* ignored: A is still the last one */
    snap(&m, "A");
    T_EQ_I64(m.repeats, 1);
    snap(&m, "B");
    T_EQ_I64(m.repeats, 0);
    snap(&m, "B");
    snap(&m, "B");
    T_EQ_I64(m.repeats, 2);
    snap(&m, "BB"); /* another length */
    T_EQ_I64(m.repeats, 0);
    snap(&m, ""); /* the empty text is a fingerprint */
    snap(&m, "");
    T_EQ_I64(m.repeats, 1);
    T_EQ_I64(m.iteration, 10);
}

T_TEST(several_tripped_caps_come_in_the_contracts_order)
{
    struct lil_cap_limits lim = limits(2, LIL_CAPACT_BREAKPOINT);
    struct lil_loop_meters m;
    const int64_t now = 10 * HOUR_MS;

    lim.has_no_progress = true;
    lim.max_repeats = 1;
    lim.has_tokens = true;
    lim.tokens = 10;
    lim.has_usd = true;
    lim.usd = 1.0;
    lim.has_wallclock = true;
    lim.wallclock_ms = HOUR_MS;
    m = meters(&lim, 0);
    snap(&m, "x");
    snap(&m, "x");
    usage(&m, 10, 1.0);
    T_EQ_STR(lil__meters_check_start(&m, now).reason, "max_iterations");
    T_EQ_STR(lil__meters_check_budgets(&m, now).reason, "token-budget");
    m.iteration_base = m.iteration;
    T_EQ_STR(lil__meters_check_start(&m, now).reason, "token-budget");
    m.tokens_base = m.tokens;
    T_EQ_STR(lil__meters_check_start(&m, now).reason, "usd-budget");
    T_EQ_STR(lil__meters_check_budgets(&m, now).reason, "usd-budget");
    m.usd_base = m.usd;
    T_EQ_STR(lil__meters_check_start(&m, now).reason, "wallclock-budget");
    T_EQ_STR(lil__meters_check_budgets(&m, now).reason, "wallclock-budget");
    m.wallclock_base_ms = now;
    T_EQ_STR(lil__meters_check_start(&m, now).reason, "no_progress");
    T_EQ_I64(lil__meters_check_budgets(&m, now).cap, LIL_CAP_NONE);
    m.repeats = 0;
    T_EQ_I64(lil__meters_check_start(&m, now).cap, LIL_CAP_NONE);
    T_EQ_STR(lil__meters_check_start(&m, now).reason, "");
}

/* ------------------------------------------------------------------------ */
/* Refusals                                                                 */

T_TEST(impossible_changes_are_refused_and_change_nothing)
{
    struct lil_cap_limits lim = limits(5, LIL_CAPACT_BREAKPOINT);
    struct lil_loop_meters m, before;
    struct lil_err err;
    struct lil_meter_event ev;

    m = meters(&lim, 0);
    snap(&m, "A");
    before = m;
    T_EQ_I64(lil__meters_note_snapshot(&m, &err, 0, "A", 1), LIL_E_INVAL);
    T_CONTAINS(err.msg, "snapshot of iteration 0, expected 1");
    T_EQ_I64(lil__meters_note_snapshot(&m, &err, 2, "A", 1), LIL_E_INVAL);
    T_EQ_I64(lil__meters_add_usage(&m, &err, -1, 0), LIL_E_INVAL);
    T_EQ_I64(lil__meters_add_usage(&m, &err, 0, -0.5), LIL_E_INVAL);
    T_EQ_I64(lil__meters_add_usage(&m, &err, 0, (double)NAN), LIL_E_INVAL);
    T_EQ_I64(lil__meters_add_usage(&m, &err, 0, (double)INFINITY), LIL_E_INVAL);
    T_EQ_I64(lil__meters_clear(&m, &err, LIL_CAP_TOKENS, 1, 0), LIL_E_INVAL);
    T_CONTAINS(err.msg, "no cap is pending");
    T_EQ_I64(lil__meters_approve(&m, &err, 0, NULL), LIL_E_INVAL);
    T_EQ_I64(lil__meters_trip(&m, &err, LIL_CAP_NONE, LIL_CAPACT_FAIL), LIL_E_INVAL);
    T_EQ_I64(lil__meters_trip(&m, &err, LIL_CAP_TOKENS, (enum lil_ir_cap_action)7),
             LIL_E_INVAL);
    T_CHECK(lil__meters_equal(&m, &before));

    T_OK(lil__meters_trip(&m, &err, LIL_CAP_TOKENS, LIL_CAPACT_BREAKPOINT));
    before = m;
    T_EQ_I64(lil__meters_trip(&m, &err, LIL_CAP_USD, LIL_CAPACT_BREAKPOINT),
             LIL_E_INVAL);
    T_CONTAINS(err.msg, "token-budget awaits approval");
    T_EQ_I64(lil__meters_note_snapshot(&m, &err, 1, "A", 1), LIL_E_INVAL);
    T_EQ_I64(lil__meters_clear(&m, &err, LIL_CAP_USD, 1, 0), LIL_E_INVAL);
    T_CONTAINS(err.msg, "the pending cap is token-budget");
    T_EQ_I64(lil__meters_clear(&m, &err, LIL_CAP_TOKENS, 0, 0), LIL_E_INVAL);
    T_CHECK(lil__meters_equal(&m, &before));

    /* the same, folded from a journal: LIL_E_CORRUPT */
    memset(&ev, 0, sizeof(ev));
    ev.kind = LIL_METER_EV_SNAPSHOT;
    ev.iteration = 1;
    T_EQ_I64(lil__meters_fold(&m, &err, &ev), LIL_E_CORRUPT);
    T_EQ_I64(err.code, LIL_E_CORRUPT);
    T_CONTAINS(err.msg, "journal: snapshot while token-budget awaits approval");
    ev.kind = (enum lil_meter_ev_kind)42;
    T_EQ_I64(lil__meters_fold(&m, &err, &ev), LIL_E_CORRUPT);
    T_CHECK(lil__meters_equal(&m, &before));

    /* an ended run takes no more caps nor snapshots */
    T_OK(lil__meters_clear(&m, &err, LIL_CAP_TOKENS, 1, 0));
    T_OK(lil__meters_trip(&m, &err, LIL_CAP_WALLCLOCK, LIL_CAPACT_FAIL));
    T_EQ_I64(m.ended, LIL_CAP_WALLCLOCK);
    T_EQ_I64(m.pending, LIL_CAP_NONE);
    T_EQ_I64(lil__meters_trip(&m, &err, LIL_CAP_USD, LIL_CAPACT_BREAKPOINT),
             LIL_E_INVAL);
    T_CONTAINS(err.msg, "after the run ended on wallclock-budget");
    T_EQ_I64(lil__meters_note_snapshot(&m, &err, 1, NULL, 0), LIL_E_INVAL);
}

T_TEST(limits_out_of_range_are_refused)
{
    struct lil_cap_limits lim = limits(0, LIL_CAPACT_FAIL);
    struct lil_loop_meters m;
    struct lil_err err;

    T_EQ_I64(lil__meters_init_limits(&m, &err, &lim, 0), LIL_E_INVAL);
    T_CONTAINS(err.msg, "max_iterations");
    lim = limits(1, (enum lil_ir_cap_action)3);
    T_EQ_I64(lil__meters_init_limits(&m, &err, &lim, 0), LIL_E_INVAL);
    lim = limits(1, LIL_CAPACT_FAIL);
    lim.has_usd = true;
    lim.usd = (double)NAN;
    T_EQ_I64(lil__meters_init_limits(&m, &err, &lim, 0), LIL_E_INVAL);
    lim.usd = 0;
    T_EQ_I64(lil__meters_init_limits(&m, &err, &lim, 0), LIL_E_INVAL);
    lim = limits(1, LIL_CAPACT_FAIL);
    lim.has_no_progress = true;
    T_EQ_I64(lil__meters_init_limits(&m, &err, &lim, 0), LIL_E_INVAL);
    lim = limits(1, LIL_CAPACT_FAIL);
    lim.has_tokens = true;
    T_EQ_I64(lil__meters_init_limits(&m, &err, &lim, 0), LIL_E_INVAL);
    T_EQ_I64(lil__meters_init_limits(&m, &err, NULL, 0), LIL_E_INVAL);
    T_EQ_I64(lil__meters_init(&m, &err, NULL, 0), LIL_E_INVAL);
}

T_TEST(token_sums_saturate)
{
    struct lil_cap_limits lim = limits(1, LIL_CAPACT_FAIL);
    struct lil_loop_meters m = meters(&lim, 0);

    usage(&m, INT64_MAX - 1, 0);
    usage(&m, 5, 0);
    T_EQ_I64(m.tokens, INT64_MAX);
    T_EQ_I64(lil__meters_add_usage(&m, NULL, 0, 1e308), LIL_OK);
    T_EQ_I64(lil__meters_add_usage(&m, NULL, 0, 1e308), LIL_E_INVAL); /* inf */
}

/* ------------------------------------------------------------------------ */
/* Reservations                                                             */

static struct lil_reserve res(int64_t tokens, double usd)
{
    struct lil_reserve r;

    memset(&r, 0, sizeof(r));
    r.tokens = tokens;
    r.usd = usd;
    return r;
}

static struct lil_loop_meters budget_meters(int64_t tokens, double usd,
                                            enum lil_ir_cap_action a)
{
    struct lil_cap_limits lim = limits(100, a);

    lim.has_tokens = tokens > 0;
    lim.tokens = tokens;
    lim.has_usd = usd > 0;
    lim.usd = usd;
    return meters(&lim, 0);
}

T_TEST(a_reservation_fits_up_to_the_budget_and_never_past_the_whole_of_it)
{
    struct lil_loop_meters m = budget_meters(100, 0, LIL_CAPACT_FAIL);
    struct lil_reserve r = res(70, 0);
    struct lil_cap_trip t;
    bool never = true;

    usage(&m, 30, 0);
    t = lil__meters_check_reserve(&m, &r, &never);
    T_EQ_I64(t.cap, LIL_CAP_NONE); /* 30 + 70 = 100: the budget spent exactly */
    T_CHECK(!never);
    r.tokens = 71;
    t = lil__meters_check_reserve(&m, &r, &never);
    T_EQ_I64(t.cap, LIL_CAP_TOKENS);
    T_EQ_STR(t.reason, "token-budget");
    T_EQ_I64(t.action, LIL_CAPACT_FAIL);
    T_CHECK(!never); /* an approval would make room */
    r.tokens = 101;
    t = lil__meters_check_reserve(&m, &r, &never);
    T_EQ_I64(t.cap, LIL_CAP_TOKENS);
    T_CHECK(never);
    r.tokens = 100;
    m = budget_meters(100, 0, LIL_CAPACT_FAIL);
    T_EQ_I64(lil__meters_check_reserve(&m, &r, NULL).cap, LIL_CAP_NONE);
    /* no budget: anything fits */
    m = budget_meters(0, 0, LIL_CAPACT_FAIL);
    r.tokens = INT64_MAX;
    T_EQ_I64(lil__meters_check_reserve(&m, &r, &never).cap, LIL_CAP_NONE);
    T_CHECK(!never);
}

T_TEST(usd_reservations_and_the_rest_of_a_call_without_a_price)
{
    struct lil_loop_meters m = budget_meters(1000, 1.0, LIL_CAPACT_BREAKPOINT);
    struct lil_reserve r = res(10, 0.5);
    bool never = false;

    usage(&m, 0, 0.25);
    T_EQ_I64(lil__meters_check_reserve(&m, &r, &never).cap, LIL_CAP_NONE);
    r.usd = 0.875;
    T_EQ_I64(lil__meters_check_reserve(&m, &r, &never).cap, LIL_CAP_USD);
    T_CHECK(!never);
    r.usd = 1.5;
    T_EQ_I64(lil__meters_check_reserve(&m, &r, &never).cap, LIL_CAP_USD);
    T_CHECK(never);
    r.tokens = 2000; /* tokens come first, as at an iteration's start */
    T_EQ_I64(lil__meters_check_reserve(&m, &r, &never).cap, LIL_CAP_TOKENS);
    T_CHECK(never);
    /* no price: the rest of the budget, which fits while anything is left */
    r = res(10, lil__meters_usd_left(&m));
    r.usd_rest = true;
    T_CHECK(r.usd == 0.75);
    T_EQ_I64(lil__meters_check_reserve(&m, &r, &never).cap, LIL_CAP_NONE);
    T_OK(lil__meters_reserve(&m, NULL, &r));
    T_CHECK(lil__meters_spent_usd(&m) == 1.0);
    T_CHECK(lil__meters_usd_left(&m) == 0.0);
    T_EQ_I64(lil__meters_check_budgets(&m, 0).cap, LIL_CAP_USD); /* all reserved */
    r.usd = lil__meters_usd_left(&m);
    T_EQ_I64(lil__meters_check_reserve(&m, &r, &never).cap, LIL_CAP_USD);
    T_CHECK(!never);
    T_CHECK(lil__meters_usd_left(&(struct lil_loop_meters){0}) == 0.0); /* no budget */
}

T_TEST(reserved_counts_as_spent_until_settled_to_the_real_figure)
{
    struct lil_loop_meters m = budget_meters(500, 1.0, LIL_CAPACT_FAIL);
    struct lil_reserve a = res(272, 0.1), b = res(300, 0.2);

    T_OK(lil__meters_reserve(&m, NULL, &a));
    T_EQ_I64(m.reserved_tokens, 272);
    T_EQ_I64(lil__meters_spent_tokens(&m), 272);
    T_EQ_I64(m.tokens, 0);
    T_EQ_I64(lil__meters_check_start(&m, 0).cap, LIL_CAP_NONE);
    T_OK(lil__meters_reserve(&m, NULL, &b)); /* an uncertain call and its retry */
    T_EQ_I64(lil__meters_spent_tokens(&m), 572);
    T_EQ_I64(lil__meters_check_start(&m, 0).cap, LIL_CAP_TOKENS);
    T_EQ_I64(lil__meters_check_budgets(&m, 0).cap, LIL_CAP_TOKENS);
    T_OK(lil__meters_settle(&m, NULL, &a, 272, 0.1)); /* written off */
    T_OK(lil__meters_settle(&m, NULL, &b, 265, 0.0625));
    T_EQ_I64(m.reserved_tokens, 0);
    T_CHECK(m.reserved_usd == 0.0); /* exactly: no rounding left behind */
    T_EQ_I64(m.tokens, 537);
    T_CHECK(m.usd == 0.1625);
    /* refused, and nothing changes */
    T_EQ_I64(lil__meters_settle(&m, NULL, &a, 1, 0), LIL_E_INVAL); /* none reserved */
    T_EQ_I64(m.tokens, 537);
    T_OK(lil__meters_reserve(&m, NULL, &a));
    T_EQ_I64(lil__meters_settle(&m, NULL, &a, -1, 0), LIL_E_INVAL);
    T_EQ_I64(m.reserved_tokens, 272);
    T_EQ_I64(lil__meters_settle(&m, NULL, &b, 1, 0), LIL_E_INVAL); /* 300 > 272 */
    T_EQ_I64(m.reserved_tokens, 272);
    b = res(0, 0);
    T_EQ_I64(lil__meters_reserve(&m, NULL, &b), LIL_E_INVAL);
    b = res(1, -1);
    T_EQ_I64(lil__meters_reserve(&m, NULL, &b), LIL_E_INVAL);
    b = res(INT64_MAX, 0);
    T_EQ_I64(lil__meters_reserve(&m, NULL, &b), LIL_E_INVAL); /* overflow */
    T_EQ_I64(m.reserved_tokens, 272);
    /* a call that reported more than it reserved counts at its real figure */
    T_OK(lil__meters_settle(&m, NULL, &a, 2000000, 0));
    T_EQ_I64(lil__meters_spent_tokens(&m), 537 + 2000000);
}

T_TEST(approval_rebases_past_what_is_reserved)
{
    struct lil_loop_meters m = budget_meters(700, 0, LIL_CAPACT_BREAKPOINT);
    struct lil_reserve r = res(272, 0);
    struct lil_cap_trip t;

    usage(&m, 265, 0);
    T_OK(lil__meters_reserve(&m, NULL, &r));     /* an uncertain call */
    t = lil__meters_check_reserve(&m, &r, NULL); /* its retry: 265+272+272 > 700 */
    T_EQ_I64(t.cap, LIL_CAP_TOKENS);
    T_OK(lil__meters_trip(&m, NULL, t.cap, t.action));
    T_OK(lil__meters_approve(&m, NULL, 5, NULL));
    T_EQ_I64(m.tokens_base, 537);
    T_EQ_I64(lil__meters_spent_tokens(&m), 0);
    T_EQ_I64(lil__meters_check_reserve(&m, &r, NULL).cap, LIL_CAP_NONE);
    T_OK(lil__meters_settle(&m, NULL, &r, 272, 0)); /* the retry writes it off */
    T_EQ_I64(lil__meters_spent_tokens(&m), 0);
    T_OK(lil__meters_reserve(&m, NULL, &r));
    T_EQ_I64(lil__meters_spent_tokens(&m), 272);
}

T_TEST(reservations_fold_and_show)
{
    struct lil_loop_meters m = budget_meters(1000, 1.0, LIL_CAPACT_FAIL);
    struct lil_loop_meters r = m;
    struct lil_meter_event ev;
    struct lil_err err;
    json_t *o = NULL, *t;

    memset(&ev, 0, sizeof(ev));
    ev.kind = LIL_METER_EV_RESERVE;
    ev.res = res(272, 0.25);
    T_OK(lil__meters_fold(&r, &err, &ev));
    T_OK(lil__meters_reserve(&m, NULL, &ev.res));
    T_CHECK(lil__meters_equal(&m, &r));
    T_EQ_STR(summary(&m, 0), "iteration 0/100, tokens 272/1000 (272 reserved), "
                             "usd 0.25/1.00 (0.25 reserved)");
    T_OK(lil__meters_json(env(), &err, &m, 0, &o));
    t = json_object_get(o, "tokens");
    T_EQ_I64(json_integer_value(json_object_get(t, "used")), 272);
    T_EQ_I64(json_integer_value(json_object_get(t, "reserved")), 272);
    t = json_object_get(o, "usd");
    T_CHECK(json_real_value(json_object_get(t, "reserved")) == 0.25);
    json_decref(o);
    ev.kind = LIL_METER_EV_SETTLE;
    ev.tokens = 300; /* more than reserved */
    ev.usd = 0.125;
    T_OK(lil__meters_fold(&r, &err, &ev));
    T_CHECK(!lil__meters_equal(&m, &r));
    T_OK(lil__meters_settle(&m, NULL, &ev.res, 300, 0.125));
    T_CHECK(lil__meters_equal(&m, &r));
    T_EQ_STR(summary(&m, 0), "iteration 0/100, tokens 300/1000, usd 0.12/1.00");
    /* the journal says what the runner never writes */
    T_EQ_I64(lil__meters_fold(&r, &err, &ev), LIL_E_CORRUPT);
    T_CHECK(strstr(err.msg, "journal:") != NULL);
    T_CHECK(lil__meters_equal(&m, &r));
}

/* ------------------------------------------------------------------------ */
/* A model of the runner: the worked examples, with the journal folded      */

#define SIM_MAX_EVENTS 256

enum outcome { OUT_PAUSED, OUT_FAILED, OUT_STOPPED };

struct sim {
    struct lil_cap_limits lim;
    int64_t start_ms, now_ms;
    struct lil_loop_meters live;
    struct lil_meter_event ev[SIM_MAX_EVENTS];
    size_t nev;
    /* the body: agent calls and what each reports; fingerprint; duration */
    int calls;
    int64_t tokens_per_call;
    double usd_per_call;
    struct lil_reserve reserve_per_call; /* tokens 0: no reservations */
    const char *fp;                      /* NULL: no fingerprint function */
    int64_t ms_per_iteration;
    /* what happened */
    int harness_calls;
    int snapshots;
    int rebuilds;
    enum lil_cap last_reason;
    bool seen[LIL_CAP_NO_PROGRESS + 1]; /* the caps that tripped */
    /* agent calls of the current iteration already journaled (replayed) */
    int64_t slots_iteration;
    int slots_done;
};

static void sim_init(struct sim *s, const struct lil_cap_limits *lim)
{
    memset(s, 0, sizeof(*s));
    s->lim = *lim;
    s->start_ms = 1700000000000LL;
    s->now_ms = s->start_ms;
    s->live = meters(lim, s->start_ms);
    s->slots_iteration = -1;
}

/* The meters a resumed run rebuilds from the journal equal the live ones. */
static void sim_check_rebuild(struct sim *s)
{
    struct lil_loop_meters r = meters(&s->lim, s->start_ms);
    struct lil_err err;

    for (size_t i = 0; i < s->nev; i++) {
        if (lil__meters_fold(&r, &err, &s->ev[i]) != LIL_OK) {
            fprintf(stderr, "fold of record %zu: %s\n", i, err.msg);
            t_fail();
            return;
        }
    }
    s->rebuilds++;
    if (!lil__meters_equal(&r, &s->live)) {
        fprintf(stderr, "rebuilt after %zu records: %s\n", s->nev,
                summary(&r, s->now_ms));
        fprintf(stderr, "live:                    %s\n", summary(&s->live, s->now_ms));
        t_fail();
    }
}

static struct lil_meter_event *sim_journal(struct sim *s, enum lil_meter_ev_kind kind)
{
    struct lil_meter_event *e;

    if (s->nev == SIM_MAX_EVENTS)
        abort();
    e = &s->ev[s->nev++];
    memset(e, 0, sizeof(*e));
    e->kind = kind;
    e->ts_ms = s->now_ms;
    return e;
}

static enum outcome outcome_of(enum lil_ir_cap_action a)
{
    return a == LIL_CAPACT_FAIL         ? OUT_FAILED
           : a == LIL_CAPACT_EXIT_CLEAN ? OUT_STOPPED
                                        : OUT_PAUSED;
}

/* capHit: journal cap{reason, action}, then the meters. */
static enum outcome sim_cap(struct sim *s, struct lil_cap_trip t)
{
    struct lil_meter_event *e = sim_journal(s, LIL_METER_EV_CAP);

    e->cap = t.cap;
    e->action = t.action;
    T_OK(lil__meters_trip(&s->live, NULL, t.cap, t.action));
    s->last_reason = t.cap;
    s->seen[t.cap] = true;
    sim_check_rebuild(s);
    return outcome_of(t.action);
}

/* One agent call: replayed (no metering) or fresh (usage, then budgets). */
static bool sim_agent(struct sim *s, int call, struct lil_cap_trip *t)
{
    struct lil_meter_event *e;

    if (s->slots_iteration == s->live.iteration && call < s->slots_done)
        return false; /* replayed: its usage was counted when it ran */
    if (s->reserve_per_call.tokens > 0) {
        *t = lil__meters_check_reserve(&s->live, &s->reserve_per_call, NULL);
        if (t->cap != LIL_CAP_NONE)
            return true; /* it does not start */
        e = sim_journal(s, LIL_METER_EV_RESERVE);
        e->res = s->reserve_per_call;
        T_OK(lil__meters_reserve(&s->live, NULL, &e->res));
        sim_check_rebuild(s);
    }
    s->harness_calls++;
    e = sim_journal(s, s->reserve_per_call.tokens > 0 ? LIL_METER_EV_SETTLE
                                                      : LIL_METER_EV_USAGE);
    e->tokens = s->tokens_per_call;
    e->usd = s->usd_per_call;
    e->res = s->reserve_per_call;
    if (e->kind == LIL_METER_EV_SETTLE)
        T_OK(lil__meters_settle(&s->live, NULL, &e->res, e->tokens, e->usd));
    else
        T_OK(
            lil__meters_add_usage(&s->live, NULL, s->tokens_per_call, s->usd_per_call));
    s->slots_iteration = s->live.iteration;
    s->slots_done = call + 1;
    sim_check_rebuild(s);
    *t = lil__meters_check_budgets(&s->live, s->now_ms);
    return t->cap != LIL_CAP_NONE;
}

static void sim_snapshot(struct sim *s)
{
    struct lil_meter_event *e = sim_journal(s, LIL_METER_EV_SNAPSHOT);

    e->iteration = s->live.iteration;
    e->fp = s->fp;
    e->fp_len = s->fp ? strlen(s->fp) : 0;
    T_OK(lil__meters_note_snapshot(&s->live, NULL, e->iteration, e->fp, e->fp_len));
    s->snapshots++;
    sim_check_rebuild(s);
}

/* run(): until a cap stops it (the loop never terminates by itself). */
static enum outcome sim_run(struct sim *s, bool approve)
{
    struct lil_cap_trip t;

    if (s->live.ended != LIL_CAP_NONE)
        return outcome_of(s->live.ended_action);
    if (s->live.pending != LIL_CAP_NONE) {
        struct lil_meter_event *e;

        if (!approve)
            return OUT_PAUSED; /* journals nothing */
        e = sim_journal(s, LIL_METER_EV_CAP_CLEARED);
        e->cap = s->live.pending;
        e->iteration = s->live.iteration;
        T_OK(lil__meters_approve(&s->live, NULL, s->now_ms, &t));
        T_EQ_I64(t.cap, e->cap);
        sim_check_rebuild(s);
    }
    for (int guard = 0; guard < 100; guard++) {
        t = lil__meters_check_start(&s->live, s->now_ms);
        if (t.cap != LIL_CAP_NONE)
            return sim_cap(s, t);
        for (int c = 0; c < s->calls; c++)
            if (sim_agent(s, c, &t))
                return sim_cap(s, t);
        s->now_ms += s->ms_per_iteration;
        sim_snapshot(s);
    }
    fprintf(stderr, "the loop did not stop\n");
    t_fail();
    return OUT_FAILED;
}

T_TEST(no_progress_example_max_repeats_2_stops_at_iteration_3)
{
    struct lil_cap_limits lim = limits(25, LIL_CAPACT_EXIT_CLEAN);
    struct sim s;

    lim.has_no_progress = true;
    lim.max_repeats = 2;
    sim_init(&s, &lim);
    s.fp = "same";
    T_EQ_I64(sim_run(&s, false), OUT_STOPPED);
    T_EQ_I64(s.snapshots, 3); /* three iterations ran */
    T_EQ_I64(s.live.iteration, 3);
    T_EQ_I64(s.last_reason, LIL_CAP_NO_PROGRESS);
    /* terminal: a re-run (even approving) journals nothing */
    T_EQ_I64(sim_run(&s, true), OUT_STOPPED);
    T_EQ_I64(s.nev, 4);
}

T_TEST(no_progress_example_max_repeats_1_breakpoint_pauses_at_2_then_4)
{
    struct lil_cap_limits lim = limits(25, LIL_CAPACT_BREAKPOINT);
    struct sim s;
    size_t nev;

    lim.has_no_progress = true;
    lim.max_repeats = 1;
    sim_init(&s, &lim);
    s.fp = "same";
    T_EQ_I64(sim_run(&s, false), OUT_PAUSED);
    T_EQ_I64(s.live.iteration, 2);
    T_EQ_I64(s.live.pending, LIL_CAP_NO_PROGRESS);
    nev = s.nev;
    T_EQ_I64(sim_run(&s, false), OUT_PAUSED); /* same pause, nothing journaled */
    T_EQ_I64(s.nev, nev);
    T_EQ_I64(sim_run(&s, true), OUT_PAUSED);
    T_EQ_I64(s.live.iteration, 4);
    T_EQ_I64(s.last_reason, LIL_CAP_NO_PROGRESS);
    T_EQ_I64(s.live.fp_reset_at, 2);
    T_EQ_I64(s.ev[nev].kind, LIL_METER_EV_CAP_CLEARED);
    T_EQ_I64(s.ev[nev].iteration, 2);
}

T_TEST(max_iterations_example_2_pauses_at_2_then_4)
{
    struct lil_cap_limits lim = limits(2, LIL_CAPACT_BREAKPOINT);
    struct sim s;
    size_t nev;

    sim_init(&s, &lim);
    T_EQ_I64(sim_run(&s, false), OUT_PAUSED);
    T_EQ_I64(s.live.iteration, 2);
    T_EQ_I64(s.last_reason, LIL_CAP_MAX_ITERATIONS);
    nev = s.nev;
    T_EQ_I64(sim_run(&s, false), OUT_PAUSED);
    T_EQ_I64(s.nev, nev);
    T_EQ_I64(sim_run(&s, true), OUT_PAUSED);
    T_EQ_I64(s.ev[nev].kind, LIL_METER_EV_CAP_CLEARED);
    T_EQ_I64(s.ev[nev].cap, LIL_CAP_MAX_ITERATIONS);
    T_EQ_I64(s.ev[nev].iteration, 2);
    T_EQ_I64(s.live.iteration, 4);
    T_EQ_I64(s.live.iteration_base, 2);
    T_EQ_I64(s.snapshots, 4);
    T_EQ_I64(s.nev, nev + 4); /* cap_cleared, two snapshots, cap */
}

T_TEST(token_example_budget_150_fails_at_iteration_1_after_the_call)
{
    struct lil_cap_limits lim = limits(25, LIL_CAPACT_FAIL);
    struct sim s;

    lim.has_tokens = true;
    lim.tokens = 150;
    sim_init(&s, &lim);
    s.calls = 1;
    s.tokens_per_call = 100;
    T_EQ_I64(sim_run(&s, false), OUT_FAILED);
    T_EQ_I64(s.live.iteration, 1); /* iteration 0 completed */
    T_EQ_I64(s.snapshots, 1);
    T_EQ_I64(s.harness_calls, 2);
    T_EQ_I64(s.live.tokens, 200);
    T_EQ_I64(s.last_reason, LIL_CAP_TOKENS);
    T_EQ_I64(s.live.ended, LIL_CAP_TOKENS);
    T_EQ_I64(s.live.ended_action, LIL_CAPACT_FAIL);
    T_EQ_I64(s.ev[s.nev - 2].kind, LIL_METER_EV_USAGE); /* the call, then the cap */
    T_EQ_I64(sim_run(&s, true), OUT_FAILED);
}

T_TEST(token_example_budget_10_approved_meters_no_replayed_call)
{
    struct lil_cap_limits lim = limits(25, LIL_CAPACT_BREAKPOINT);
    struct sim s;

    lim.has_tokens = true;
    lim.tokens = 10;
    sim_init(&s, &lim);
    s.calls = 1;
    s.tokens_per_call = 5;
    T_EQ_I64(sim_run(&s, false), OUT_PAUSED);
    T_EQ_I64(s.live.iteration, 1);
    T_EQ_I64(sim_run(&s, false), OUT_PAUSED);
    T_EQ_I64(sim_run(&s, true), OUT_PAUSED); /* iteration 1's call replayed */
    T_EQ_I64(s.live.iteration, 3);
    T_EQ_I64(s.harness_calls, 4);
    T_EQ_I64(s.live.tokens, 20);
    T_EQ_I64(s.live.tokens_base, 10);
    T_EQ_I64(s.last_reason, LIL_CAP_TOKENS);
}

T_TEST(usd_example_quarter_dollar_calls_pause_then_rebase)
{
    struct lil_cap_limits lim = limits(25, LIL_CAPACT_BREAKPOINT);
    struct sim s;

    lim.has_usd = true;
    lim.usd = 1.0;
    sim_init(&s, &lim);
    s.calls = 2;
    s.usd_per_call = 0.125;
    T_EQ_I64(sim_run(&s, false), OUT_PAUSED); /* the 8th call reaches 1.00 */
    T_EQ_I64(s.live.iteration, 3);
    T_EQ_I64(s.harness_calls, 8);
    T_EQ_I64(s.last_reason, LIL_CAP_USD);
    T_EQ_I64(sim_run(&s, true), OUT_PAUSED); /* 8 fresh calls more */
    T_EQ_I64(s.harness_calls, 16);
    T_EQ_I64(s.live.iteration, 7);
    T_CHECK(s.live.usd_base == 1.0 && s.live.usd == 2.0);
}

T_TEST(reservation_example_700_tokens_calls_of_272_billed_265)
{
    struct lil_cap_limits lim = limits(25, LIL_CAPACT_FAIL);
    struct sim s;

    lim.has_tokens = true;
    lim.tokens = 700;
    sim_init(&s, &lim);
    s.calls = 1;
    s.tokens_per_call = 265;
    s.reserve_per_call = res(272, 0);
    T_EQ_I64(sim_run(&s, false), OUT_FAILED); /* the third call does not start */
    T_EQ_I64(s.harness_calls, 2);
    T_EQ_I64(s.live.iteration, 2);
    T_EQ_I64(s.live.tokens, 530);
    T_EQ_I64(s.live.reserved_tokens, 0);
    T_EQ_I64(s.last_reason, LIL_CAP_TOKENS);
    T_EQ_I64(s.ev[s.nev - 2].kind, LIL_METER_EV_SNAPSHOT); /* no reservation first */

    lim.action = LIL_CAPACT_BREAKPOINT;
    sim_init(&s, &lim);
    s.calls = 1;
    s.tokens_per_call = 265;
    s.reserve_per_call = res(272, 0);
    T_EQ_I64(sim_run(&s, false), OUT_PAUSED);
    T_EQ_I64(s.harness_calls, 2);
    T_EQ_I64(sim_run(&s, true), OUT_PAUSED); /* two more in the new window */
    T_EQ_I64(s.harness_calls, 4);
    T_EQ_I64(s.live.tokens_base, 530);
    T_EQ_I64(lil__meters_spent_tokens(&s.live), 530);
}

/* The world of a seeded campaign: what the provider billed. */
struct campaign {
    struct lil_rng rng;
    struct lil_loop_meters live, folded;
    struct lil_reserve held; /* an uncertain call's reservation */
    bool has_held;
    int64_t billed; /* tokens the provider billed */
    int64_t events, calls, crashes, trips, approvals;
};

/* Journal one event: the live change, then the same record folded. */
static void camp_event(struct campaign *c, const struct lil_meter_event *ev)
{
    struct lil_err err;

    T_OK(lil__meters_fold(&c->live, &err, ev)); /* the live call, through fold */
    if (lil__meters_fold(&c->folded, &err, ev) != LIL_OK) {
        fprintf(stderr, "fold: %s\n", err.msg);
        t_fail();
    }
    c->events++;
}

static void camp_reserve_event(struct campaign *c, enum lil_meter_ev_kind kind,
                               const struct lil_reserve *r, int64_t tokens)
{
    struct lil_meter_event ev;

    memset(&ev, 0, sizeof(ev));
    ev.kind = kind;
    ev.res = *r;
    ev.tokens = tokens;
    ev.usd = (double)tokens / 1024; /* exact in binary */
    camp_event(c, &ev);
}

/* A cap tripped: breakpoint approved at once, fail ends the run. */
static bool camp_trip(struct campaign *c, struct lil_cap_trip t)
{
    struct lil_meter_event ev;

    memset(&ev, 0, sizeof(ev));
    ev.kind = LIL_METER_EV_CAP;
    ev.cap = t.cap;
    ev.action = t.action;
    camp_event(c, &ev);
    c->trips++;
    if (t.action != LIL_CAPACT_BREAKPOINT)
        return false;
    ev.kind = LIL_METER_EV_CAP_CLEARED;
    ev.iteration = c->live.iteration;
    camp_event(c, &ev);
    c->approvals++;
    return true;
}

/* One agent call (or its retry after a crash): false when the run ended. */
static bool camp_call(struct campaign *c)
{
    int64_t tokens = 1 + (int64_t)lil__rng_below(&c->rng, 400);
    struct lil_reserve r = res(tokens, (double)tokens / 1024);
    struct lil_cap_trip t = lil__meters_check_reserve(&c->live, &r, NULL);
    uint64_t how = lil__rng_below(&c->rng, 4);
    int64_t real = (int64_t)lil__rng_below(&c->rng, (uint64_t)tokens + 1);

    if (t.cap != LIL_CAP_NONE)
        return camp_trip(c, t);
    if (c->has_held) /* the retry's intent writes the crashed attempt off */
        camp_reserve_event(c, LIL_METER_EV_SETTLE, &c->held, c->held.tokens);
    c->has_held = false;
    camp_reserve_event(c, LIL_METER_EV_RESERVE, &r, 0);
    c->calls++;
    c->billed += real; /* whatever happens next, the provider billed this */
    if (how == 0) {    /* killed: its outcome is unknown */
        c->held = r;
        c->has_held = true;
        c->crashes++;
    } else { /* its outcome: a failure (no usage: counted in full), or usage */
        camp_reserve_event(c, LIL_METER_EV_SETTLE, &r, how == 1 ? tokens : real);
    }
    return true;
}

static void camp_check(struct campaign *c, const struct lil_cap_limits *lim)
{
    int64_t total = c->live.tokens + c->live.reserved_tokens;

    if (!lil__meters_equal(&c->live, &c->folded)) {
        fprintf(stderr, "folded: %s\nlive:   %s\n", summary(&c->folded, 0),
                summary(&c->live, 0));
        t_fail();
    }
    T_CHECK(lil__meters_spent_tokens(&c->live) <= lim->tokens);
    T_CHECK(lil__meters_spent_usd(&c->live) <= lim->usd);
    T_CHECK(c->billed <= total); /* lil never counts less than was billed */
    if (c->approvals == 0)
        T_CHECK(c->billed <= lim->tokens);
}

T_TEST(no_sequence_of_calls_crashes_and_retries_passes_the_budget)
{
    struct campaign c;
    int64_t calls = 0, crashes = 0, trips = 0;

    for (uint64_t seed = 1; seed <= 300; seed++) {
        struct lil_cap_limits lim =
            limits(1000000, seed % 2 ? LIL_CAPACT_BREAKPOINT : LIL_CAPACT_FAIL);

        lim.has_tokens = true;
        lim.tokens = 500 + (int64_t)(seed % 7) * 300;
        lim.has_usd = true;
        lim.usd = (double)lim.tokens / 1024 * 0.75; /* usd trips first, sometimes */
        memset(&c, 0, sizeof(c));
        lil__rng_seed(&c.rng, seed);
        c.live = c.folded = meters(&lim, 0);
        for (int step = 0; step < 60; step++) {
            bool go_on = camp_call(&c);

            camp_check(&c, &lim);
            if (!go_on)
                break;
            if (!c.has_held && lil__rng_below(&c.rng, 3) == 0) {
                struct lil_meter_event ev;

                memset(&ev, 0, sizeof(ev));
                ev.kind = LIL_METER_EV_SNAPSHOT;
                ev.iteration = c.live.iteration;
                camp_event(&c, &ev);
            }
        }
        calls += c.calls;
        crashes += c.crashes;
        trips += c.trips;
    }
    printf("campaign: %lld calls, %lld crashes, %lld caps tripped\n", (long long)calls,
           (long long)crashes, (long long)trips);
    T_CHECK(calls > 1000 && crashes > 100 && trips > 100);
}

T_TEST(wallclock_example_counts_from_the_start_then_from_the_approval)
{
    struct lil_cap_limits lim = limits(25, LIL_CAPACT_BREAKPOINT);
    struct sim s;
    int64_t approved_at;

    lim.has_wallclock = true;
    lim.wallclock_ms = HOUR_MS;
    sim_init(&s, &lim);
    s.ms_per_iteration = 20 * 60000; /* 20 min */
    T_EQ_I64(sim_run(&s, false), OUT_PAUSED);
    T_EQ_I64(s.live.iteration, 3); /* 0, 20, 40 min ran; 60 min: the cap */
    T_EQ_I64(s.last_reason, LIL_CAP_WALLCLOCK);
    s.now_ms += 7 * HOUR_MS; /* downtime counts, until the approval */
    approved_at = s.now_ms;
    T_EQ_I64(sim_run(&s, true), OUT_PAUSED);
    T_EQ_I64(s.live.wallclock_base_ms, approved_at);
    T_EQ_I64(s.live.iteration, 6);
}

T_TEST(every_cap_in_turn_with_all_meters_moving)
{
    struct lil_cap_limits lim = limits(6, LIL_CAPACT_BREAKPOINT);
    struct sim s;
    int paused = 0;

    lim.has_no_progress = true;
    lim.max_repeats = 3;
    lim.has_tokens = true;
    lim.tokens = 700;
    lim.has_usd = true;
    lim.usd = 0.5;
    lim.has_wallclock = true;
    lim.wallclock_ms = 90 * 60000;
    sim_init(&s, &lim);
    s.calls = 2;
    s.tokens_per_call = 60;
    s.usd_per_call = 0.03125;
    s.fp = "flat";
    s.ms_per_iteration = 600000;
    while (s.live.iteration < 40 && paused < 200) {
        T_EQ_I64(sim_run(&s, paused > 0), OUT_PAUSED);
        paused++;
    }
    T_CHECK(s.live.iteration >= 40);
    for (int c = LIL_CAP_MAX_ITERATIONS; c <= LIL_CAP_NO_PROGRESS; c++)
        T_CHECK(s.seen[c]);
    T_CHECK(s.rebuilds > 100);
}

/* ------------------------------------------------------------------------ */
/* Showing                                                                  */

T_TEST(the_summary_line)
{
    struct lil_cap_limits lim = limits(10, LIL_CAPACT_BREAKPOINT);
    struct lil_loop_meters m;

    lim.has_no_progress = true;
    lim.max_repeats = 2;
    lim.has_tokens = true;
    lim.tokens = 1000;
    lim.has_usd = true;
    lim.usd = 1.0;
    lim.has_wallclock = true;
    lim.wallclock_ms = HOUR_MS;
    m = meters(&lim, 1000);
    T_EQ_STR(summary(&m, 1000), "iteration 0/10, no progress 0/2, wallclock 0s/1h, "
                                "tokens 0/1000, usd 0.00/1.00");
    snap(&m, "a");
    snap(&m, "b");
    snap(&m, "b");
    T_EQ_STR(summary(&m, 13999), "iteration 3/10, no progress 1/2, wallclock 12s/1h, "
                                 "tokens 0/1000, usd 0.00/1.00");
    usage(&m, 250, 0.375);
    T_OK(lil__meters_trip(&m, NULL, LIL_CAP_TOKENS, LIL_CAPACT_BREAKPOINT));
    T_EQ_STR(summary(&m, 1000 + 5400000 + 999),
             "iteration 3/10, no progress 1/2, wallclock 1h30m/1h, tokens 250/1000, "
             "usd 0.38/1.00; paused on token-budget");
    T_OK(lil__meters_approve(&m, NULL, 2000, NULL)); /* tokens only: not wallclock */
    T_EQ_STR(summary(&m, 2500), "iteration 3/10, no progress 1/2, wallclock 1s/1h, "
                                "tokens 0/1000, usd 0.38/1.00");
    m.iteration_base = 2;
    m.pending = LIL_CAP_NONE;
    T_OK(lil__meters_trip(&m, NULL, LIL_CAP_USD, LIL_CAPACT_EXIT_CLEAN));
    T_EQ_STR(summary(&m, 1000 + 90061000),
             "iteration 3 (1/10 since 2), no progress 1/2, wallclock 1d1h1m1s/1h, "
             "tokens 0/1000, usd 0.38/1.00; ended by usd-budget (exit-clean)");

    /* only the caps the spec sets; usage without a budget; exact limits */
    lim = limits(25, LIL_CAPACT_BREAKPOINT);
    m = meters(&lim, 0);
    T_EQ_STR(summary(&m, 0), "iteration 0/25");
    usage(&m, 120, 0.5);
    T_EQ_STR(summary(&m, 0), "iteration 0/25, tokens 120, usd 0.50");
    lim.has_wallclock = true;
    lim.wallclock_ms = 1500;
    m = meters(&lim, 0);
    T_EQ_STR(summary(&m, 250), "iteration 0/25, wallclock 250ms/1.5s");
    lim.wallclock_ms = 500;
    m = meters(&lim, 0);
    T_EQ_STR(summary(&m, -5), "iteration 0/25, wallclock 0s/500ms");
    lim.wallclock_ms = 60000 + 20;
    m = meters(&lim, 0);
    T_EQ_STR(summary(&m, 1999), "iteration 0/25, wallclock 1s/1m0.02s");
}

T_TEST(the_summary_respects_the_buffer_cap)
{
    struct lil_cap_limits lim = limits(25, LIL_CAPACT_BREAKPOINT);
    struct lil_loop_meters m = meters(&lim, 0);
    struct lil_buf b;

    lil__buf_init(&b, env(), 8);
    T_OK(lil__buf_add(&b, "ab", 2));
    T_EQ_I64(lil__meters_summary(&m, 0, &b), LIL_E_TOOBIG);
    T_EQ_I64(b.len, 2);
    lil__buf_free(&b);
}

T_TEST(the_json_form)
{
    struct lil_cap_limits lim = limits(10, LIL_CAPACT_FAIL);
    struct lil_loop_meters m;
    struct lil_err err;
    json_t *o = NULL, *t;

    lim.has_no_progress = true;
    lim.max_repeats = 2;
    lim.has_tokens = true;
    lim.tokens = 1000;
    lim.has_wallclock = true;
    lim.wallclock_ms = HOUR_MS;
    m = meters(&lim, 1000);
    snap(&m, "a");
    snap(&m, "a");
    usage(&m, 40, 0.25);
    T_OK(lil__meters_trip(&m, NULL, LIL_CAP_NO_PROGRESS, LIL_CAPACT_FAIL));
    T_OK(lil__meters_json(env(), &err, &m, 13000, &o));
    T_REQUIRE(o != NULL);
    T_EQ_I64(json_integer_value(json_object_get(o, "iteration")), 2);
    T_EQ_I64(json_integer_value(json_object_get(o, "iteration_base")), 0);
    T_EQ_I64(json_integer_value(json_object_get(o, "max_iterations")), 10);
    t = json_object_get(o, "no_progress");
    T_EQ_I64(json_integer_value(json_object_get(t, "repeats")), 1);
    T_EQ_I64(json_integer_value(json_object_get(t, "max_repeats")), 2);
    T_EQ_I64(json_integer_value(json_object_get(t, "reset_at")), 0);
    t = json_object_get(o, "tokens");
    T_EQ_I64(json_integer_value(json_object_get(t, "used")), 40);
    T_EQ_I64(json_integer_value(json_object_get(t, "budget")), 1000);
    t = json_object_get(o, "usd");
    T_CHECK(json_real_value(json_object_get(t, "used")) == 0.25);
    T_CHECK(json_object_get(t, "budget") == NULL);
    t = json_object_get(o, "wallclock");
    T_EQ_I64(json_integer_value(json_object_get(t, "elapsed_ms")), 12000);
    T_EQ_I64(json_integer_value(json_object_get(t, "base_ms")), 1000);
    T_EQ_I64(json_integer_value(json_object_get(t, "budget_ms")), HOUR_MS);
    T_EQ_STR(json_string_value(json_object_get(o, "on_cap_exceeded")), "fail");
    T_CHECK(json_is_null(json_object_get(o, "pending")));
    T_EQ_STR(json_string_value(json_object_get(o, "ended")), "no_progress");
    T_EQ_STR(json_string_value(json_object_get(o, "ended_action")), "fail");
    json_decref(o);
}

/* ------------------------------------------------------------------------ */
/* Limits from a spec                                                       */

/* The IR of a YAML text (NULL when it does not build). */
static struct lil_ir_spec *ir_of(const char *yaml)
{
    const struct lil_env *e = env();
    struct lil_json_scope sc;
    struct lil_diags d;
    struct lil_doc doc;
    struct lil_ir_spec *ir = NULL;

    memset(&doc, 0, sizeof(doc));
    lil__diags_init(&d, e, "t.yaml");
    lil__json_begin(&sc, e);
    if (lil__doc_parse(&doc, e, "t.yaml", yaml, strlen(yaml), NULL, &d) == LIL_OK &&
        doc.root)
        T_OK(lil__ir_build_text(e, doc.root, yaml, strlen(yaml), &d, &ir));
    lil__doc_free(&doc);
    T_OK(lil__json_end(&sc));
    T_EQ_I64(d.nerrors, 0);
    lil__diags_free(&d);
    return ir;
}

#define SPEC_HEAD                               \
    "loopspec: \"0.1\"\n"                       \
    "id: t\n"                                   \
    "state:\n"                                  \
    "  vars: {n: {type: int, init: 0}}\n"       \
    "body:\n"                                   \
    "  - {id: s, kind: shell, cmd: \"true\"}\n" \
    "terminate: {signal: state-predicate, until: \"${state.n > 3}\"}\n"

T_TEST(limits_come_from_the_spec_injected_or_written)
{
    struct lil_ir_spec *ir;
    struct lil_loop_meters m;
    struct lil_err err;
    struct lil_retry_policy p;

    ir = ir_of(SPEC_HEAD "pattern: poll-until\nschedule: {mode: watch}\n");
    T_REQUIRE(ir != NULL);
    T_OK(lil__meters_init(&m, &err, ir, 77));
    T_EQ_I64(m.lim.max_iterations, 288);
    T_CHECK(m.lim.has_tokens && m.lim.tokens == 200000);
    T_CHECK(m.lim.has_usd && m.lim.usd == 5.0);
    T_CHECK(m.lim.has_wallclock && m.lim.wallclock_ms == 24LL * HOUR_MS);
    T_CHECK(!m.lim.has_no_progress);
    T_EQ_I64(m.lim.action, LIL_CAPACT_BREAKPOINT);
    T_EQ_I64(m.wallclock_base_ms, 77);
    lil__retry_policy_from_ir(ir, &p);
    T_EQ_I64(lil__retry_attempts(&p), 1);
    T_EQ_I64(p.base_ms, 1000);
    T_EQ_I64(p.ceiling_ms, LIL_RETRY_CEILING_MS);
    lil__ir_free(env(), ir);

    ir = ir_of(SPEC_HEAD "pattern: react\n");
    T_REQUIRE(ir != NULL);
    T_OK(lil__meters_init(&m, &err, ir, 0));
    T_EQ_I64(m.lim.max_iterations, 25);
    T_EQ_I64(m.lim.wallclock_ms, HOUR_MS);
    lil__ir_free(env(), ir);

    ir =
        ir_of(SPEC_HEAD "pattern: react\n"
                        "caps:\n"
                        "  max_iterations: 7\n"
                        "  no_progress: {fingerprint: \"${state.n}\", max_repeats: 3}\n"
                        "  budget: {usd: 0.5, wallclock: \"1.0005s\"}\n"
                        "  on_cap_exceeded: exit-clean\n"
                        "retry: {max: 3, backoff_ms: 120000}\n");
    T_REQUIRE(ir != NULL);
    T_OK(lil__meters_init(&m, &err, ir, 0));
    T_EQ_I64(m.lim.max_iterations, 7);
    T_CHECK(m.lim.has_no_progress && m.lim.max_repeats == 3);
    T_CHECK(!m.lim.has_tokens);
    T_CHECK(m.lim.has_usd && m.lim.usd == 0.5);
    T_EQ_I64(m.lim.wallclock_ms, 1001); /* 1000.5 ms: reached at 1001 */
    T_EQ_I64(m.lim.action, LIL_CAPACT_EXIT_CLEAN);
    lil__retry_policy_from_ir(ir, &p);
    T_EQ_I64(lil__retry_attempts(&p), 4);
    T_EQ_I64(p.base_ms, 120000);
    T_EQ_I64(p.ceiling_ms, 120000); /* never below the spec's first wait */
    lil__ir_free(env(), ir);

    ir = ir_of(SPEC_HEAD "pattern: react\ncaps: {max_iterations: 3}\n");
    T_REQUIRE(ir != NULL);
    T_OK(lil__meters_init(&m, &err, ir, 0));
    T_EQ_I64(m.lim.action, LIL_CAPACT_BREAKPOINT); /* the default */
    T_CHECK(!m.lim.has_tokens && !m.lim.has_usd && !m.lim.has_wallclock);
    lil__ir_free(env(), ir);
}

/* ------------------------------------------------------------------------ */
/* Retry                                                                    */

T_TEST(retry_attempts_and_retryable_statuses)
{
    struct lil_retry_policy p = {2, 100, LIL_RETRY_CEILING_MS};

    T_EQ_I64(lil__retry_attempts(&p), 3);
    T_CHECK(lil__retry_is_retryable(LIL_E_HTTP));
    T_CHECK(lil__retry_is_retryable(LIL_E_CHILD));
    T_CHECK(!lil__retry_is_retryable(LIL_OK));
    for (int s = LIL_E_DONE; s <= LIL_E_INVAL; s++)
        if (s != LIL_E_HTTP && s != LIL_E_CHILD)
            T_CHECK(!lil__retry_is_retryable((lil_status)s));
    T_CHECK(lil__retry_again(&p, 1, LIL_E_HTTP));
    T_CHECK(lil__retry_again(&p, 2, LIL_E_HTTP));
    T_CHECK(!lil__retry_again(&p, 3, LIL_E_HTTP)); /* 1 + 2 attempts made */
    T_CHECK(!lil__retry_again(&p, 1, LIL_E_IO));
    p.retries = 0;
    T_EQ_I64(lil__retry_attempts(&p), 1);
    T_CHECK(!lil__retry_again(&p, 1, LIL_E_HTTP));
    p.retries = INT64_MAX;
    T_EQ_I64(lil__retry_attempts(&p), INT64_MAX);
}

T_TEST(retry_backoff_doubles_up_to_the_ceiling_without_overflow)
{
    struct lil_retry_policy p = {5, 100, LIL_RETRY_CEILING_MS};

    T_EQ_I64(lil__retry_backoff_ms(&p, 0), 100); /* the reference's 100, 200, 400 */
    T_EQ_I64(lil__retry_backoff_ms(&p, 1), 200);
    T_EQ_I64(lil__retry_backoff_ms(&p, 2), 400);
    T_EQ_I64(lil__retry_backoff_ms(&p, 9), 51200);
    T_EQ_I64(lil__retry_backoff_ms(&p, 10), 60000);
    for (uint64_t k = 10; k < 200; k++)
        T_EQ_I64(lil__retry_backoff_ms(&p, k), 60000);
    T_EQ_I64(lil__retry_backoff_ms(&p, UINT64_MAX), 60000);
    p.base_ms = INT64_MAX;
    p.ceiling_ms = INT64_MAX;
    T_EQ_I64(lil__retry_backoff_ms(&p, 0), INT64_MAX);
    T_EQ_I64(lil__retry_backoff_ms(&p, 1), INT64_MAX);
    p.base_ms = 1;
    T_EQ_I64(lil__retry_backoff_ms(&p, 62), INT64_C(1) << 62);
    T_EQ_I64(lil__retry_backoff_ms(&p, 63), INT64_MAX);
    p.base_ms = 0;
    T_EQ_I64(lil__retry_backoff_ms(&p, 3), 0);
    T_EQ_I64(lil__retry_delay_ms(&p, 3, NULL), 0);
}

T_TEST(retry_delays_stay_within_equal_jitter_bounds)
{
    struct lil_retry_policy p = {5, 1000, LIL_RETRY_CEILING_MS};
    struct lil_rng rng;

    lil__rng_seed(&rng, 42);
    for (uint64_t k = 0; k < 70; k++) {
        int64_t d = lil__retry_backoff_ms(&p, k), lo = d, hi = 0;

        for (int i = 0; i < 400; i++) {
            int64_t x = lil__retry_delay_ms(&p, k, &rng);

            T_CHECK(x >= (d + 1) / 2 && x <= d && x <= LIL_RETRY_CEILING_MS);
            lo = x < lo ? x : lo;
            hi = x > hi ? x : hi;
        }
        /* spread over the range, not stuck at one end */
        T_CHECK(lo < (d + 1) / 2 + d / 8 && hi > d - d / 8);
    }
    T_EQ_I64(lil__retry_delay_ms(&p, 3, NULL), 8000);
    p.base_ms = 1; /* d = 1: the range [1, 1] */
    T_EQ_I64(lil__retry_delay_ms(&p, 0, &rng), 1);
    p.base_ms = INT64_MAX;
    p.ceiling_ms = INT64_MAX;
    for (int i = 0; i < 100; i++)
        T_CHECK(lil__retry_delay_ms(&p, 5, &rng) >= INT64_MAX / 2 + 1);
}

T_TEST(retry_delays_are_the_same_from_the_same_seed)
{
    struct lil_retry_policy p = {8, 250, LIL_RETRY_CEILING_MS};
    const char *run = "run-2024-abc";
    struct lil_rng a, b, c;
    int64_t first[8];
    int differ = 0;

    lil__rng_seed(&a, lil__rng_key(run, strlen(run), 3));
    lil__rng_seed(&b, lil__rng_key(run, strlen(run), 3));
    lil__rng_seed(&c, lil__rng_key(run, strlen(run), 4));
    for (uint64_t k = 0; k < 8; k++) {
        first[k] = lil__retry_delay_ms(&p, k, &a);
        T_EQ_I64(lil__retry_delay_ms(&p, k, &b), first[k]);
        differ += lil__retry_delay_ms(&p, k, &c) != first[k];
    }
    T_CHECK(differ > 0); /* another attempt, other delays */
    T_CHECK(lil__rng_key(run, strlen(run), 3) != lil__rng_key("run-2024-abd", 12, 3));
    T_CHECK(lil__rng_key(NULL, 0, 0) == lil__rng_key("", 0, 0));
    /* splitmix64's published first output for seed 0 */
    lil__rng_seed(&a, 0);
    T_CHECK(lil__rng_next(&a) == UINT64_C(0xE220A8397B1DCDAF));
}

T_TEST(rng_below_is_in_range_and_unbiased_enough)
{
    struct lil_rng rng;
    int counts[3] = {0, 0, 0};

    lil__rng_seed(&rng, 7);
    T_EQ_I64(lil__rng_below(&rng, 0), 0);
    T_EQ_I64(lil__rng_below(&rng, 1), 0);
    for (int i = 0; i < 30000; i++)
        counts[lil__rng_below(&rng, 3)]++;
    for (int i = 0; i < 3; i++)
        T_CHECK(counts[i] > 9500 && counts[i] < 10500);
    for (int i = 0; i < 1000; i++)
        T_CHECK(lil__rng_below(&rng, UINT64_MAX) < UINT64_MAX);
}

T_MAIN()
