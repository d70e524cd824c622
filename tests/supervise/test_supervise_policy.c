/*
 * test_supervise_policy.c -- the supervisor's decisions (supervise/policy.h)
 * with exact numbers: defaults, option checks, restart decisions, exit
 * statuses, the backoff's doubling, ceiling and jitter, the streak, the
 * crash-loop breaker and the same-step count.
 */
#include <errno.h>
#include <lil/lil.h>
#include <math.h>
#include <signal.h>
#include <stddef.h>
#include <string.h>

#include "supervise/policy.h"
#include "supervise/where.h"
#include "t.h"

static lil_supervise_options base(void)
{
    lil_supervise_options o;

    memset(&o, 0, sizeof(o));
    o.struct_size = sizeof(o);
    return o;
}

static bool near(double a, double b)
{
    return fabs(a - b) < 1e-9;
}

T_TEST(defaults_one_source)
{
    lil_supervise_options o = base();
    struct lil_sv_policy p;

    T_OK(lil__sv_policy_init(NULL, &o, &p));
    T_EQ_I64(p.restart, LIL_RESTART_ON_FAILURE);
    T_EQ_I64(p.max_restarts, 10);
    T_CHECK(near(p.backoff_s, 1.0));
    T_CHECK(near(p.max_backoff_s, 60.0));
    T_CHECK(near(p.jitter, 0.2));
    T_CHECK(near(p.healthy_s, 30.0));
    T_EQ_I64(p.crash_loop_k, 0);
    T_EQ_I64(p.same_step, 0);

    o.backoff_s = LIL_SUPERVISE_NONE;
    o.jitter = LIL_SUPERVISE_NONE;
    o.max_restarts = LIL_SUPERVISE_UNLIMITED;
    T_OK(lil__sv_policy_init(NULL, &o, &p));
    T_CHECK(near(p.backoff_s, 0));
    T_CHECK(near(p.jitter, 0));
    T_EQ_I64(p.max_restarts, LIL_SUPERVISE_UNLIMITED);
}

T_TEST(option_errors_name_the_field)
{
    struct lil_err err;
    struct lil_sv_policy p;
    lil_supervise_options o = base();

    o.max_backoff_s = -2;
    T_EQ_I64(lil__sv_policy_init(&err, &o, &p), LIL_E_INVAL);
    T_CONTAINS(err.msg, "max_backoff_s");
    o = base();
    o.max_backoff_s = LIL_SUPERVISE_NONE;
    T_EQ_I64(lil__sv_policy_init(&err, &o, &p), LIL_E_INVAL);
    o = base();
    o.jitter = -0.5;
    T_EQ_I64(lil__sv_policy_init(&err, &o, &p), LIL_E_INVAL);
    T_CONTAINS(err.msg, "jitter");
    o = base();
    o.crash_loop_k = 2;
    o.crash_loop_t_s = (double)INFINITY;
    T_EQ_I64(lil__sv_policy_init(&err, &o, &p), LIL_E_INVAL);
    T_CONTAINS(err.msg, "crash_loop_t_s");
    o = base();
    o.crash_loop_t_s = 5;
    T_EQ_I64(lil__sv_policy_init(&err, &o, &p), LIL_E_INVAL);
    T_CONTAINS(err.msg, "crash_loop_t_s needs crash_loop_k");
    o = base();
    o.struct_size = offsetof(lil_supervise_options, env) + sizeof(lil_env *) - 1;
    T_EQ_I64(lil__sv_policy_init(&err, &o, &p), LIL_E_INVAL);
    T_CONTAINS(err.msg, "struct_size");
}

/* The no-restart codes: 126 and 127 by default (also for a caller whose
 * struct ends before the field, whatever follows it), else exactly those
 * given; out of 0..255 or NULL with a count is refused. */
T_TEST(no_restart_codes)
{
    static const int lil_codes[] = {2, 3, 4, 5, 126, 127};
    static const int bad[] = {3, 256};
    struct lil_err err;
    struct lil_sv_policy p;
    lil_supervise_options o = base();

    T_OK(lil__sv_policy_init(NULL, &o, &p));
    for (int c = 0; c < 256; c++)
        T_EQ_I64(lil__sv_no_restart_code(&p, c), c == 126 || c == 127);
    T_CHECK(!lil__sv_no_restart_code(&p, -1));
    T_CHECK(!lil__sv_no_restart_code(&p, 256));
    o.no_restart_codes = lil_codes;
    o.no_restart_count = 6;
    T_OK(lil__sv_policy_init(NULL, &o, &p));
    for (int c = 0; c < 256; c++)
        T_EQ_I64(lil__sv_no_restart_code(&p, c),
                 (c >= 2 && c <= 5) || c == 126 || c == 127);
    o.struct_size = offsetof(lil_supervise_options, env) + sizeof(lil_env *);
    T_OK(lil__sv_policy_init(NULL, &o, &p)); /* an older layout: the default */
    T_CHECK(!lil__sv_no_restart_code(&p, 3));
    T_CHECK(lil__sv_no_restart_code(&p, 127));
    o = base();
    o.no_restart_codes = lil_codes;
    o.no_restart_count = 0; /* none */
    T_OK(lil__sv_policy_init(NULL, &o, &p));
    T_CHECK(!lil__sv_no_restart_code(&p, 127));
    o.no_restart_codes = bad;
    o.no_restart_count = 2;
    T_EQ_I64(lil__sv_policy_init(&err, &o, &p), LIL_E_INVAL);
    T_CONTAINS(err.msg, "no_restart_codes[1] is 256");
    o.no_restart_codes = NULL;
    T_EQ_I64(lil__sv_policy_init(&err, &o, &p), LIL_E_INVAL);
    T_CONTAINS(err.msg, "no_restart_codes is NULL");
}

/* --max-rapid-failures: crash_loop_k without a time takes healthy_s. */
T_TEST(crash_loop_time_defaults_to_healthy)
{
    struct lil_sv_policy p;
    lil_supervise_options o = base();

    o.crash_loop_k = 3;
    T_OK(lil__sv_policy_init(NULL, &o, &p));
    T_CHECK(near(p.crash_loop_t_s, 30.0));
    o.healthy_s = 7;
    T_OK(lil__sv_policy_init(NULL, &o, &p));
    T_CHECK(near(p.crash_loop_t_s, 7.0));
    o.crash_loop_t_s = 2;
    T_OK(lil__sv_policy_init(NULL, &o, &p));
    T_CHECK(near(p.crash_loop_t_s, 2.0));
}

/* lil__sv_no_restart under a restart policy and the default codes. */
static const char *no_restart(lil_restart_policy policy, const struct lil_sv_death *d)
{
    static char buf[64];
    struct lil_sv_policy p;
    lil_supervise_options o = base();

    o.restart = policy;
    if (lil__sv_policy_init(NULL, &o, &p) != LIL_OK)
        return "(invalid options)";
    return lil__sv_no_restart(&p, d, buf, sizeof(buf));
}

T_TEST(restart_decisions)
{
    const struct lil_sv_death ok = {0, 0, 1, false}, one = {1, 0, 1, false},
                              kill9 = {-1, SIGKILL, 1, false},
                              intr = {-1, SIGINT, 1, false}, stop = {1, 0, 1, true},
                              e126 = {126, 0, 1, false}, e127 = {127, 0, 1, false},
                              e3 = {3, 0, 1, false};
    static const int three[] = {3};
    struct lil_sv_policy p;
    lil_supervise_options o = base();
    char buf[64];

    T_EQ_STR(no_restart(LIL_RESTART_ON_FAILURE, &ok), "the child exited with 0");
    T_CHECK(no_restart(LIL_RESTART_ON_FAILURE, &one) == NULL);
    T_CHECK(no_restart(LIL_RESTART_ON_FAILURE, &kill9) == NULL);
    T_EQ_STR(no_restart(LIL_RESTART_ON_CRASH, &ok), "the child exited with 0");
    T_CONTAINS(no_restart(LIL_RESTART_ON_CRASH, &one), "not a crash");
    T_CHECK(no_restart(LIL_RESTART_ON_CRASH, &kill9) == NULL);
    T_CHECK(no_restart(LIL_RESTART_ALWAYS, &ok) == NULL);
    T_CHECK(no_restart(LIL_RESTART_ALWAYS, &one) == NULL);
    for (int pol = 0; pol <= 2; pol++) {
        T_EQ_STR(no_restart((lil_restart_policy)pol, &intr), "interrupted by SIGINT");
        T_EQ_STR(no_restart((lil_restart_policy)pol, &stop), "stopped by the user");
    }
    for (int pol = 0; pol <= 2; pol++) {
        T_EQ_STR(no_restart((lil_restart_policy)pol, &e127),
                 "the command was not found: exit 127 is not restarted");
        T_EQ_STR(no_restart((lil_restart_policy)pol, &e126),
                 "the command is not executable: exit 126 is not restarted");
        T_CHECK(no_restart((lil_restart_policy)pol, &e3) == NULL ||
                pol == LIL_RESTART_ON_CRASH);
    }
    o.restart = LIL_RESTART_ALWAYS;
    o.no_restart_codes = three;
    o.no_restart_count = 1;
    T_OK(lil__sv_policy_init(NULL, &o, &p));
    T_EQ_STR(lil__sv_no_restart(&p, &e3, buf, sizeof(buf)),
             "exit 3 is a no-restart code");
    T_CHECK(lil__sv_no_restart(&p, &e127, buf, sizeof(buf)) == NULL);
    T_EQ_I64(lil__sv_exit_status(&ok), 0);
    T_EQ_I64(lil__sv_exit_status(&one), 1);
    T_EQ_I64(lil__sv_exit_status(&kill9), 137);
    T_EQ_I64(lil__sv_exit_status(&intr), 130);
    T_EQ_I64(lil__sv_exec_status(ENOENT), 127);
    T_EQ_I64(lil__sv_exec_status(ENOTDIR), 127);
    T_EQ_I64(lil__sv_exec_status(EACCES), 126);
    T_EQ_I64(lil__sv_exec_status(ENOEXEC), 126);
}

T_TEST(backoff_doubles_to_ceiling)
{
    static const double want[] = {1, 2, 4, 8, 16, 32, 60, 60, 60};
    lil_supervise_options o = base();
    struct lil_sv_policy p;

    o.jitter = LIL_SUPERVISE_NONE;
    T_OK(lil__sv_policy_init(NULL, &o, &p));
    for (unsigned k = 1; k <= 9; k++)
        T_CHECK(near(lil__sv_backoff(&p, k, 0.7), want[k - 1]));
    T_CHECK(near(lil__sv_backoff(&p, 1000, 0), 60));
    o.backoff_s = LIL_SUPERVISE_NONE;
    T_OK(lil__sv_policy_init(NULL, &o, &p));
    T_CHECK(near(lil__sv_backoff(&p, 5, 0.5), 0));
}

T_TEST(jitter_takes_off_up_to_its_part)
{
    lil_supervise_options o = base();
    struct lil_sv_policy p;

    o.backoff_s = 2;
    o.jitter = 0.5;
    T_OK(lil__sv_policy_init(NULL, &o, &p));
    T_CHECK(near(lil__sv_backoff(&p, 1, 0), 2));
    T_CHECK(near(lil__sv_backoff(&p, 1, 0.5), 1.5));
    T_CHECK(lil__sv_backoff(&p, 1, 0.9999999) > 1.0);
    T_CHECK(lil__sv_backoff(&p, 1, 7) > 1.0 - 1e-9); /* clamped to [0, 1) */
    T_CHECK(near(lil__sv_backoff(&p, 1, -3), 2));
}

T_TEST(streak_starts_over_after_a_healthy_run)
{
    lil_supervise_options o = base();
    struct lil_sv_policy p;
    unsigned s = 0;

    o.healthy_s = 10;
    T_OK(lil__sv_policy_init(NULL, &o, &p));
    s = lil__sv_next_streak(&p, s, 0.1);
    T_EQ_I64(s, 1);
    s = lil__sv_next_streak(&p, s, 9.9);
    T_EQ_I64(s, 2);
    s = lil__sv_next_streak(&p, s, 0);
    T_EQ_I64(s, 3);
    s = lil__sv_next_streak(&p, s, 10);
    T_EQ_I64(s, 1);
    for (int i = 0; i < 100; i++)
        s = lil__sv_next_streak(&p, s, 0);
    T_EQ_I64(s, 64);
}

T_TEST(crash_loop_breaker)
{
    lil_supervise_options o = base();
    struct lil_sv_policy p;
    struct lil_sv_breaker b = {0};

    o.crash_loop_k = 3;
    o.crash_loop_t_s = 5;
    T_OK(lil__sv_policy_init(NULL, &o, &p));
    T_CHECK(!lil__sv_breaker_note(&p, &b, 1));
    T_CHECK(!lil__sv_breaker_note(&p, &b, 4.9));
    T_CHECK(!lil__sv_breaker_note(&p, &b, 5)); /* not less than T: the row breaks */
    T_EQ_I64(b.quick, 0);
    T_CHECK(!lil__sv_breaker_note(&p, &b, 0));
    T_CHECK(!lil__sv_breaker_note(&p, &b, 0));
    T_CHECK(lil__sv_breaker_note(&p, &b, 0));
    o = base();
    T_OK(lil__sv_policy_init(NULL, &o, &p));
    b.quick = 0;
    for (int i = 0; i < 100; i++)
        T_CHECK(!lil__sv_breaker_note(&p, &b, 0));
}

T_TEST(same_step_count)
{
    lil_supervise_options o = base();
    struct lil_sv_policy p;
    struct lil_sv_same s;

    memset(&s, 0, sizeof(s));
    o.same_step = 3;
    o.dir = "x";
    T_OK(lil__sv_policy_init(NULL, &o, &p));
    T_CHECK(!lil__sv_same_note(&p, &s, "a", 1));
    T_CHECK(!lil__sv_same_note(&p, &s, "a", 1));
    T_CHECK(!lil__sv_same_note(&p, &s, "b", 1)); /* another place: a new row */
    T_EQ_I64(s.count, 1);
    T_CHECK(!lil__sv_same_note(&p, &s, "b", 1));
    T_CHECK(!lil__sv_same_note(&p, &s, NULL, 0)); /* unknown: breaks the row */
    T_EQ_I64(s.count, 0);
    T_CHECK(!lil__sv_same_note(&p, &s, "b", 1));
    T_CHECK(!lil__sv_same_note(&p, &s, "b", 1));
    T_CHECK(lil__sv_same_note(&p, &s, "b", 1));
    T_EQ_I64(s.count, 3);
}

T_TEST(place_keys_differ)
{
    char run[] = "r", step[] = "s#2";
    struct lil_sv_where a = {true, run, step, true, 0};
    struct lil_sv_where b = a;
    struct lil_sv_where none = {true, NULL, NULL, false, 0};
    char ka[64], kb[64];
    size_t la, lb;

    b.started = false;
    la = lil__sv_where_key(&a, ka, sizeof(ka));
    lb = lil__sv_where_key(&b, kb, sizeof(kb));
    T_CHECK(la > 0 && la == lb);
    T_CHECK(memcmp(ka, kb, la) != 0);
    T_EQ_I64(lil__sv_where_key(&none, ka, sizeof(ka)), 0);
    T_EQ_I64(lil__sv_where_key(&a, ka, 3), 0);
}

T_TEST(signal_names)
{
    char buf[32];

    T_EQ_STR(lil__sv_signame(SIGKILL, buf, sizeof(buf)), "SIGKILL");
    T_EQ_STR(lil__sv_signame(SIGSEGV, buf, sizeof(buf)), "SIGSEGV");
    T_EQ_STR(lil__sv_signame(0, buf, sizeof(buf)), "signal 0");
}

T_MAIN()
