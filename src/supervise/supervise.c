/*
 * supervise.c -- the supervisor's loop behind lil_supervise (lil.h,
 * "Supervision"; supervise.h).  Start a child (os/fork.h), wait for its death while
 * forwarding signals, read where in its journal it died (where.h), decide with the
 * policy (policy.h), wait the backoff, start the next one; or end the
 * process with the final status.
 *
 * One loop, one thread, one poll: the self-pipe of signals.h wakes it for
 * SIGCHLD (a death) and for every signal to forward; the backoff is the
 * poll's timeout.  The child is reaped last: first its exit is only seen
 * (waitid WNOWAIT), its process group is killed (SIGKILL: whatever it left
 * behind), and only then is it reaped, so that its pid -- the group's id --
 * cannot be reused by then.
 *
 * Every report goes to on_event; the library prints nothing.
 */
#include "supervise/supervise.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/alloc.h"
#include "base/clock.h"
#include "base/rng.h"
#include "os/child.h"
#include "os/fork.h"
#include "os/os.h"
#include "supervise/policy.h"
#include "supervise/signals.h"
#include "supervise/where.h"

#define MSG_MAX         1024
#define SAFETY_POLL_MS  1000 /* a look at the child even without a wake-up */
#define ATTEMPT_VAR_MAX 32

struct sv {
    struct lil_env own_env;
    struct lil_env *env;
    lil_supervise_options o; /* the caller's, copied */
    struct lil_sv_policy pol;
    struct lil_sv_signals sig;
    struct lil_err err;
    const char **envp; /* exec: this environment and the two LIL_ variables */
    char attempt_var[ATTEMPT_VAR_MAX];
    /* the child */
    unsigned attempt;
    pid_t pid;
    int64_t start_wall_ns, start_mono_ns;
    unsigned stops; /* the user's stop signals while it ran */
    int stop_sig;   /* the first of them */
    /* the policy's counters */
    unsigned restarts, streak;
    struct lil_sv_breaker breaker;
    struct lil_sv_same same;
    struct lil_rng rng; /* the backoff's jitter */
};

static const int stop_signals[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};
static const int forwarded[] = {SIGUSR1, SIGUSR2, SIGWINCH, SIGCONT};

/* ---- reports ------------------------------------------------------------- */

static void emit(struct sv *s, lil_supervise_event *ev)
{
    ev->time_ms = lil__wall_ns() / 1000000;
    ev->restarts = s->restarts;
    if (!ev->attempt)
        ev->attempt = s->attempt;
    if (s->o.on_event)
        s->o.on_event(s->o.ud, ev);
}

/* Flush stdio and end the process: the "exit" event is the last report. */
__attribute__((noreturn)) static void end(struct sv *s, int status, const char *why)
{
    char msg[MSG_MAX];
    lil_supervise_event ev = {.kind = "exit", .pid = s->pid, .exit_code = status};

    snprintf(msg, sizeof(msg), "exiting with %d (%s)", status, why);
    ev.message = msg;
    emit(s, &ev);
    lil__sv_signals_uninstall(s->env, &s->sig);
    (void)fflush(NULL); /* nothing to do about a failure: the process ends */
    _exit(status);
}

__attribute__((noreturn)) static void give_up(struct sv *s, int status, const char *why,
                                              const char *detail)
{
    char msg[MSG_MAX];
    lil_supervise_event ev = {.kind = "giveup", .pid = s->pid, .exit_code = status};

    snprintf(msg, sizeof(msg), "giving up: %s", detail);
    ev.message = msg;
    emit(s, &ev);
    end(s, status, why);
}

/* "a.out arg1 arg2" into buf, cut to fit. */
static void join_argv(const char *const *argv, char *buf, size_t cap)
{
    size_t n = 0;

    buf[0] = '\0';
    for (size_t i = 0; argv && argv[i] && n + 1 < cap; i++) {
        int w = snprintf(buf + n, cap - n, "%s%s", i ? " " : "", argv[i]);
        if (w < 0)
            break;
        n += (size_t)w;
    }
}

static void report_start(struct sv *s)
{
    char msg[MSG_MAX], cmd[256];
    lil_supervise_event ev = {.kind = "start", .pid = s->pid};

    join_argv(s->o.argv, cmd, sizeof(cmd));
    snprintf(msg, sizeof(msg), "attempt %u: started pid %d%s%s", s->attempt,
             (int)s->pid, cmd[0] ? ": " : "", cmd);
    ev.message = msg;
    emit(s, &ev);
}

/* ", in run R at step S (started, not finished)" and the like. */
static void describe_place(const struct sv *s, const struct lil_sv_where *w, char *buf,
                           size_t cap)
{
    if (!s->o.dir || !w->store)
        buf[0] = '\0';
    else if (!w->run_id)
        snprintf(buf, cap, ", no run of store %s changed since its start", s->o.dir);
    else if (!w->step)
        snprintf(buf, cap, ", in run %s before its first step", w->run_id);
    else if (w->started)
        snprintf(buf, cap, ", in run %s at step %s (started, not finished)", w->run_id,
                 w->step);
    else
        snprintf(buf, cap, ", in run %s after step %s", w->run_id, w->step);
}

static void report_death(struct sv *s, const struct lil_sv_death *d,
                         const struct lil_sv_where *w)
{
    char msg[MSG_MAX], how[64], place[MSG_MAX / 2], name[32];
    bool clean = !d->signal && d->code == 0; /* an end, not a death */
    lil_supervise_event ev = {
        .kind = clean ? "done" : "death", .pid = s->pid, .exit_code = d->code};

    if (d->signal)
        snprintf(how, sizeof(how), "was killed by %s",
                 lil__sv_signame(d->signal, name, sizeof(name)));
    else
        snprintf(how, sizeof(how), "exited with %d", d->code);
    describe_place(s, w, place, sizeof(place));
    snprintf(msg, sizeof(msg), "attempt %u: pid %d %s after %.2fs%s", s->attempt,
             (int)s->pid, how, d->uptime_s, place);
    ev.signal = d->signal;
    ev.uptime_s = d->uptime_s;
    ev.run_id = w->run_id;
    ev.step = w->step;
    ev.step_started = w->step && w->started;
    ev.message = msg;
    emit(s, &ev);
}

/* ---- signals ------------------------------------------------------------- */

/* sig to the child's group; to the child alone if the group is gone (the
 * child moved itself out of it). */
static void forward(const struct sv *s, int sig)
{
    if (s->pid > 0)
        (void)lil__child_signal_group(s->env, s->pid, sig);
}

/* The user's stop: the first is forwarded, any later one kills. */
static void on_stop(struct sv *s, int sig, bool running)
{
    s->stops++;
    if (!s->stop_sig)
        s->stop_sig = sig;
    if (running)
        forward(s, s->stops == 1 ? sig : SIGKILL);
}

/* Act on the signals that arrived.  running: a child is alive (else the
 * supervisor is between children).  Returns a stop signal that came while
 * no child runs (the caller ends), else 0. */
static int handle_signals(struct sv *s, bool running)
{
    int stopped = 0;

    for (size_t i = 0; i < sizeof(stop_signals) / sizeof(stop_signals[0]); i++)
        for (unsigned n = lil__sv_signals_take(stop_signals[i]); n > 0; n--) {
            on_stop(s, stop_signals[i], running);
            if (!running && !stopped)
                stopped = stop_signals[i];
        }
    for (size_t i = 0; i < sizeof(forwarded) / sizeof(forwarded[0]); i++)
        if (lil__sv_signals_take(forwarded[i]) && running)
            forward(s, forwarded[i]);
    if (lil__sv_signals_take(SIGTSTP)) {
        if (running)
            forward(s, SIGTSTP);
        (void)raise(SIGSTOP); /* SIGCONT, forwarded, goes on */
    }
    (void)lil__sv_signals_take(SIGCHLD);
    return stopped;
}

/* ---- the child ----------------------------------------------------------- */

static void set_attempt_var(struct sv *s)
{
    snprintf(s->attempt_var, sizeof(s->attempt_var), "LIL_ATTEMPT=%u", s->attempt);
}

/* In a returning child: LIL_SUPERVISED and LIL_ATTEMPT in its environment. */
static void child_environment(const struct sv *s)
{
    char n[16];

    snprintf(n, sizeof(n), "%u", s->attempt);
    /* In the child that returns: one thread (fork) */
    (void)setenv("LIL_SUPERVISED", "1", 1); /* NOLINT(concurrency-mt-unsafe) */
    (void)setenv("LIL_ATTEMPT", n, 1);      /* NOLINT(concurrency-mt-unsafe) */
}

/* Start attempt s->attempt + 1.  *in_child: this is the child (fork mode). */
static lil_status start_child(struct sv *s, bool *in_child)
{
    struct lil_fork_opts fo = {
        .argv = s->o.argv,
        .envp = s->envp,
        .new_group = true,
        .death_signal = SIGTERM,
        .child_mask = s->o.argv ? NULL : &s->sig.saved_mask,
        .in_child = s->o.argv ? lil__sv_signals_child_exec : lil__sv_signals_child_fork,
        .ud = &s->sig,
    };
    pid_t pid = -1;
    lil_status rc;

    *in_child = false;
    s->attempt++;
    set_attempt_var(s);
    s->stops = 0;
    s->stop_sig = 0;
    s->start_wall_ns = lil__wall_ns();
    s->start_mono_ns = lil__mono_ns();
    rc = lil__fork(s->env, &s->err, &fo, &pid);
    if (rc != LIL_OK)
        return rc;
    if (pid == 0) {
        child_environment(s);
        *in_child = true;
        return LIL_OK;
    }
    s->pid = pid;
    report_start(s);
    return LIL_OK;
}

/* A child that could not be started ends the supervision. */
__attribute__((noreturn)) static void start_failed(struct sv *s, lil_status rc)
{
    char detail[MSG_MAX];
    int status = LIL_SUPERVISE_EXIT_OSERR;

    s->pid = 0;
    if (rc == LIL_E_CHILD) {
        status = lil__sv_exec_status(s->err.sys_errno);
        snprintf(detail, sizeof(detail), "cannot run %s: %s", s->o.argv[0],
                 lil__errstr(s->err.sys_errno));
        give_up(s, status,
                status == 127 ? "command not found" : "command not executable", detail);
    }
    snprintf(detail, sizeof(detail), "cannot start attempt %u: %s", s->attempt,
             s->err.msg);
    give_up(s, status, "cannot fork", detail);
}

/* Has the child exited?  Seen only (WNOWAIT): it stays a zombie. */
static bool has_exited(const struct sv *s)
{
    siginfo_t info;
    int r = lil__child_waitid(s->env, s->pid, WNOHANG | WNOWAIT, &info);

    return r < 0 || info.si_pid == s->pid; /* ECHILD: gone all the same */
}

/* Kill what it left in its group, reap it, say how it ended. */
static void reap_child(struct sv *s, struct lil_sv_death *d)
{
    siginfo_t info;
    bool core;
    int r;

    (void)s->env->os->kill(-s->pid, SIGKILL);
    r = lil__child_waitid(s->env, s->pid, 0, &info);
    memset(d, 0, sizeof(*d));
    d->code = -1;
    if (r == 0)
        lil__child_how(&info, &d->code, &d->signal, &core);
    d->uptime_s = (double)(lil__mono_ns() - s->start_mono_ns) / 1e9;
    d->interrupted = s->stops > 0;
}

static void wait_death(struct sv *s, struct lil_sv_death *d)
{
    for (;;) {
        (void)handle_signals(s, true);
        if (has_exited(s))
            break;
        /* A failing poll (it cannot, short of EFAULT) only makes this loop
         * look again after SAFETY_POLL_MS. */
        (void)lil__sv_signals_wait(s->env, NULL, &s->sig, SAFETY_POLL_MS);
    }
    (void)handle_signals(s, true);
    reap_child(s, d);
}

/* ---- decisions ----------------------------------------------------------- */

static void check_same_step(struct sv *s, const struct lil_sv_where *w)
{
    char key[LIL_SV_KEY_MAX], detail[MSG_MAX];
    size_t len = lil__sv_where_key(w, key, sizeof(key));

    if (!lil__sv_same_note(&s->pol, &s->same, len ? key : NULL, len))
        return;
    snprintf(detail, sizeof(detail),
             "the child died %u times in a row in run %s %s step %s: a poison input, "
             "not bad luck (same-step %u)",
             s->same.count, w->run_id, w->started ? "at" : "after",
             w->step ? w->step : "(none yet)", s->pol.same_step);
    give_up(s, LIL_SUPERVISE_EXIT_SAME_STEP, "same step", detail);
}

static void check_limits(struct sv *s, const struct lil_sv_death *d, bool tripped)
{
    char detail[MSG_MAX];

    if (tripped) {
        snprintf(detail, sizeof(detail),
                 "crash loop: %u deaths in a row, each less than %gs after its start "
                 "(crash-loop %u/%g)",
                 s->breaker.quick, s->pol.crash_loop_t_s, s->pol.crash_loop_k,
                 s->pol.crash_loop_t_s);
        give_up(s, LIL_SUPERVISE_EXIT_CRASH_LOOP, "crash loop", detail);
    }
    if (s->pol.max_restarts != LIL_SUPERVISE_UNLIMITED &&
        s->restarts >= s->pol.max_restarts) {
        snprintf(detail, sizeof(detail),
                 "restart limit: %u restarts made (last death: %s %d)", s->restarts,
                 d->signal ? "signal" : "exit", d->signal ? d->signal : d->code);
        give_up(s, LIL_SUPERVISE_EXIT_RESTARTS, "restart limit", detail);
    }
}

/* Report the death and end the supervision unless it restarts. */
static void decide(struct sv *s, const struct lil_sv_death *d)
{
    struct lil_sv_where w = {0};
    char code_why[64];
    const char *why;
    bool tripped;

    if (s->o.dir &&
        lil__sv_where(s->env, NULL, s->o.dir, s->start_wall_ns, &w) != LIL_OK)
        memset(&w, 0, sizeof(w)); /* the report goes without the place */
    report_death(s, d, &w);
    why = lil__sv_no_restart(&s->pol, d, code_why, sizeof(code_why));
    if (why) {
        char stop[64], name[32];
        lil__sv_where_free(s->env, &w);
        if (d->interrupted) { /* name the signal the user sent */
            snprintf(stop, sizeof(stop), "stopped by %s",
                     lil__sv_signame(s->stop_sig, name, sizeof(name)));
            why = stop;
        }
        end(s, lil__sv_exit_status(d), why);
    }
    tripped = lil__sv_breaker_note(&s->pol, &s->breaker, d->uptime_s);
    check_same_step(s, &w);
    lil__sv_where_free(s->env, &w);
    check_limits(s, d, tripped);
}

/* ---- backoff ------------------------------------------------------------- */

static void report_backoff(struct sv *s, double delay)
{
    char msg[MSG_MAX], limit[32] = "";
    lil_supervise_event ev = {.kind = "backoff", .pid = s->pid, .delay_s = delay};

    if (s->pol.max_restarts != LIL_SUPERVISE_UNLIMITED)
        snprintf(limit, sizeof(limit), " of %u", s->pol.max_restarts);
    snprintf(msg, sizeof(msg), "restart %u%s in %.2fs", s->restarts, limit, delay);
    ev.message = msg;
    emit(s, &ev);
}

/* Wait the delay; the user's stop meanwhile ends the supervision. */
static void backoff(struct sv *s, double uptime_s)
{
    double delay;
    int64_t until;

    s->restarts++;
    s->streak = lil__sv_next_streak(&s->pol, s->streak, uptime_s);
    delay = lil__sv_backoff(&s->pol, s->streak, lil__rng_unit(&s->rng));
    report_backoff(s, delay);
    until = lil__mono_ns() + (int64_t)(delay * 1e9);
    for (;;) {
        int64_t left = until - lil__mono_ns();
        int sig = handle_signals(s, false);
        char name[32], why[64];
        if (sig) {
            snprintf(why, sizeof(why), "stopped by %s during the backoff",
                     lil__sv_signame(sig, name, sizeof(name)));
            end(s, 128 + sig, why);
        }
        if (left <= 0)
            return;
        (void)lil__sv_signals_wait(s->env, NULL, &s->sig,
                                   (int)((left + 999999) / 1000000));
    }
}

/* ---- set-up -------------------------------------------------------------- */

/* exec: the child's environment, this one without LIL_SUPERVISED and
 * LIL_ATTEMPT, then both (the attempt's text is rewritten in place). */
static lil_status build_envp(struct sv *s)
{
    size_t n = 0, k = 0;

    while (environ && environ[n])
        n++;
    s->envp = lil__calloc(s->env, n + 3, sizeof(*s->envp));
    if (!s->envp)
        return lil__seterr(&s->err, LIL_E_NOMEM, 0, "out of memory");
    for (size_t i = 0; i < n; i++)
        if (strncmp(environ[i], "LIL_SUPERVISED=", 15) != 0 &&
            strncmp(environ[i], "LIL_ATTEMPT=", 12) != 0)
            s->envp[k++] = environ[i];
    s->envp[k++] = "LIL_SUPERVISED=1";
    s->envp[k] = s->attempt_var;
    return LIL_OK;
}

static lil_status sv_init(struct sv *s, const lil_supervise_options *opts)
{
    lil_status rc;

    memset(s, 0, sizeof(*s));
    rc = lil__sv_policy_init(&s->err, opts, &s->pol);
    if (rc != LIL_OK)
        return rc;
    memcpy(&s->o, opts,
           opts->struct_size < sizeof(s->o) ? opts->struct_size : sizeof(s->o));
    if (s->o.env && __atomic_load_n(&s->o.env->runs_open, __ATOMIC_SEQ_CST) > 0)
        return lil__seterr(&s->err, LIL_E_INVAL, 0,
                           "lil_supervise: runs are open with this env; call it before "
                           "opening any (a forked child would share their locks)");
    if (s->o.env) {
        s->env = s->o.env;
    } else {
        lil__os_env_init(&s->own_env);
        s->env = &s->own_env;
    }
    lil__rng_seed(&s->rng, (uint64_t)lil__wall_ns() ^ ((uint64_t)getpid() << 32));
    return s->o.argv ? build_envp(s) : LIL_OK;
}

lil_status lil__supervise(const lil_supervise_options *opts)
{
    struct sv s;
    struct lil_sv_death d;
    bool in_child = false;
    lil_status rc = sv_init(&s, opts);

    if (rc == LIL_OK)
        rc = lil__sv_signals_install(s.env, &s.err, &s.sig);
    if (rc != LIL_OK) {
        if (s.envp)
            lil__free(s.env, s.envp);
        lil__publish_err(&s.err);
        return rc;
    }
    for (;;) {
        rc = start_child(&s, &in_child);
        if (in_child)
            return LIL_OK;
        if (rc != LIL_OK)
            start_failed(&s, rc);
        wait_death(&s, &d);
        decide(&s, &d);
        backoff(&s, d.uptime_s);
    }
}
