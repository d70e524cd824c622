/*
 * policy.h -- what the supervisor decides, as pure functions: the options
 * checked and their defaults applied, whether a death is restarted, the
 * delay before a restart, the crash-loop breaker, the same-step count, and
 * the exit status of a death.
 *
 * Nothing here makes a system call or reads a clock: times come in as
 * arguments and the random part of the jitter as a number in [0, 1), so
 * tests/unit/test_supervise_policy.c checks each rule with exact numbers.
 * lil_supervise (supervise.c) and so `lil watch` use these, and only these:
 * one source of truth for every default (docs/supervise.md lists them).
 */
#ifndef LIL_SUPERVISE_POLICY_H
#define LIL_SUPERVISE_POLICY_H

#include <stdbool.h>
#include <stddef.h>

#include "base/err.h"

/* Defaults of lil_supervise_options' zero fields. */
#define LIL_SV_DEFAULT_MAX_RESTARTS 10u
#define LIL_SV_DEFAULT_BACKOFF_S    1.0
#define LIL_SV_DEFAULT_MAX_BACKOFF  60.0
#define LIL_SV_DEFAULT_JITTER       0.2
#define LIL_SV_DEFAULT_HEALTHY_S    30.0
#define LIL_SV_MAX_SECONDS          86400.0 /* one day: any longer is a mistake */
#define LIL_SV_EXIT_CODES           256     /* exit codes 0..255 */

/* The options with the defaults applied (lil__sv_policy_init). */
struct lil_sv_policy {
    lil_restart_policy restart;
    unsigned max_restarts; /* LIL_SUPERVISE_UNLIMITED: none */
    double backoff_s;      /* 0: restart at once */
    double max_backoff_s;
    double jitter; /* 0..1 */
    double healthy_s;
    unsigned crash_loop_k; /* 0: off */
    double crash_loop_t_s;
    unsigned same_step; /* 0: off */
    /* exit codes never restarted: bit c % 8 of no_restart[c / 8] */
    unsigned char no_restart[LIL_SV_EXIT_CODES / 8];
};

/* Check o (LIL_E_INVAL naming the field and the value) and fill *p. */
lil_status lil__sv_policy_init(struct lil_err *err, const lil_supervise_options *o,
                               struct lil_sv_policy *p);

/* How a child ended. */
struct lil_sv_death {
    int code;         /* exit code, -1 when killed by a signal */
    int signal;       /* the signal, else 0 */
    double uptime_s;  /* seconds from its start to its death */
    bool interrupted; /* the supervisor got the user's stop while it ran */
};

/* The status a shell would give: the exit code, or 128 + the signal. */
int lil__sv_exit_status(const struct lil_sv_death *d);

/* Is exit code `code` one of the policy's no-restart codes? */
bool lil__sv_no_restart_code(const struct lil_sv_policy *p, int code);

/* Why a death is not restarted, or NULL when the policy restarts it, in
 * this order: "stopped by the user" (interrupted), "interrupted by SIGINT"
 * (only a user sends it), a no-restart exit code ("the command was not
 * found: exit 127 is not restarted", the same for 126, else
 * "exit N is a no-restart code", formatted in buf), "the child exited with
 * 0" (unless always), "the child's non-zero exit is not a crash
 * (on-crash)".  Static text or buf. */
const char *lil__sv_no_restart(const struct lil_sv_policy *p,
                               const struct lil_sv_death *d, char *buf, size_t cap);

/* The delay before restart number `streak` (1 for the first restart since
 * the last healthy run): backoff_s * 2^(streak-1), at most max_backoff_s,
 * less jitter * u of it (u in [0, 1)). */
double lil__sv_backoff(const struct lil_sv_policy *p, unsigned streak, double u);

/* The doubling's streak after a death: it starts over (at 1) when the
 * child ran for healthy_s or longer. */
unsigned lil__sv_next_streak(const struct lil_sv_policy *p, unsigned streak,
                             double uptime_s);

/* The crash-loop breaker: quick deaths in a row. */
struct lil_sv_breaker {
    unsigned quick; /* deaths in a row each less than crash_loop_t_s after
                       their start */
};

/* Count one death; true when the breaker trips (crash_loop_k quick deaths
 * in a row).  Never trips when the breaker is off. */
bool lil__sv_breaker_note(const struct lil_sv_policy *p, struct lil_sv_breaker *b,
                          double uptime_s);

/* Deaths in a row at the same place of the journal: key identifies the
 * place (run, step, started or not); NULL when the death's place is not
 * known, which breaks the row.  The key is copied (at most
 * LIL_SV_KEY_MAX bytes compared). */
#define LIL_SV_KEY_MAX 1024

struct lil_sv_same {
    char key[LIL_SV_KEY_MAX];
    size_t len;
    unsigned count;
};

/* Count one death at key; true when same_step deaths in a row happened at
 * it.  Never true when same_step is off. */
bool lil__sv_same_note(const struct lil_sv_policy *p, struct lil_sv_same *s,
                       const void *key, size_t len);

/* "SIGKILL" for 9, "signal 77" for a number without a name (buf). */
const char *lil__sv_signame(int sig, char *buf, size_t cap);

/* The shell's status for a program that could not be executed: 127 when
 * it was not found (ENOENT, ENOTDIR), else 126. */
int lil__sv_exec_status(int exec_errno);

#endif
