/*
 * workload.h -- the program that the crash and fault suites kill, and the
 * checks made after each death.
 *
 * PLAN.  A workload is a deterministic list of n steps: plain steps named
 * "fetch" / "work" (so identities repeat: work, work#2, ...), steps that
 * fail ("flaky", reason "boom-<i>"), one effect ("charge", request
 * "req-<i>").  Step i's result is "result-<i>-" followed by binary bytes,
 * 16 to 5000 bytes long, and one big step (big_size bytes) that makes the
 * journal grow past its first preallocated chunk.  lil_run_sync is called
 * before every sync_every-th step; before step marker_at the store-wide
 * marker "mark" is taken (lil_marker, policy retry, result
 * T_MARKER_RESULT); the run is completed with "done-<n>".
 *
 * EVENTS.  While it runs, the workload reports what happened, in order, as
 * (attempt, tag, step) -- to a pipe when it runs in a child, or to memory:
 *   O  the run was opened           U  an uncertain effect was resolved (retry)
 *   R  step i's function began      E  the effect's function began (its intent
 *                                      was committed: synced unless mode off)
 *   A  step i acknowledged (lil_step returned LIL_OK, the function ran now)
 *   P  step i acknowledged by replay (the function did not run)
 *   F  failing step i acknowledged (LIL_E_FAILED, the function ran now)
 *   G  failing step i acknowledged by replay
 *   Y  lil_run_sync returned LIL_OK  C  lil_run_complete returned LIL_OK
 *   D  the run had already completed Z  lil_run_close returned LIL_OK
 *   m  the marker's function began   K  lil_marker returned LIL_OK
 * An event is written after the call it reports returned, so the parent
 * may miss the last acknowledgement of a killed child, never invent one.
 *
 * MODEL.  The parent replays the events of each life of the run ("phase")
 * against what the journal held before and after it:
 *   - a function never runs for a step the journal held when the phase
 *     began (so an acknowledged step never runs twice);
 *   - after a process death (SIGKILL, _exit) every step acknowledged in the
 *     phase is in the journal with its exact bytes (the page cache survives);
 *   - after a power cut every step that was DURABLE is: a step becomes
 *     durable at a sync barrier -- an acknowledgement whose function ran
 *     under sync=full, Y, and E, C, Z unless sync=off -- which covers every
 *     step acknowledged before it and every step the journal held when the
 *     phase began (an fdatasync covers the whole file, whoever wrote it);
 *   - every outcome record in the journal has the plan's type and exact
 *     bytes, appears once, and the sequence numbers have no gap;
 *   - once lil_marker returned LIL_OK the marker is published (its .done
 *     file, docs/format.md) in every mode, and its function never runs
 *     again.
 */
#ifndef LIL_TESTS_WORKLOAD_H
#define LIL_TESTS_WORKLOAD_H

#include <lil/lil.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "faults.h"

#define T_WL_MAX        128
#define T_MARKER_NAME   "mark"
#define T_MARKER_RESULT "marker-result-42"

enum t_wl_kind { T_WL_STEP, T_WL_FAIL, T_WL_EFFECT };

struct t_plan {
    int n;
    int effect_at; /* -1: no effect */
    int big_at;    /* -1: no big step */
    size_t big_size;
    int sync_every; /* 0: never call lil_run_sync */
    int marker_at;  /* -1: no marker */
    char done[32];  /* the run's result, "done-<n>" */
    const char *name[T_WL_MAX];
    char ident[T_WL_MAX][32];
    enum t_wl_kind kind[T_WL_MAX];
};

/* The plan for n steps (n <= T_WL_MAX); big_size 0 means no big step. */
void t_plan_init(struct t_plan *p, int n, size_t big_size);
size_t t_plan_len(const struct t_plan *p, int i);
bool t_plan_result_ok(const struct t_plan *p, int i, const void *data, size_t len);
/* The step whose identity is key, or -1. */
int t_plan_find(const struct t_plan *p, const char *key, size_t key_len);

/* ---- events --------------------------------------------------------------- */

struct t_ev {
    int attempt;
    char tag;
    int i;
    int64_t us; /* from a child: when the parent read it, µs after the fork */
};

struct t_evlog {
    struct t_ev *ev;
    size_t n, cap;
};

void t_evlog_add(struct t_evlog *l, int attempt, char tag, int i);
void t_evlog_clear(struct t_evlog *l);
void t_evlog_free(struct t_evlog *l);
/* Number of events with tag (and step i, when i >= 0). */
size_t t_evlog_count(const struct t_evlog *l, char tag, int i);

/* ---- the workload ------------------------------------------------------------ */

struct t_callrec {
    char what; /* s step, y sync, c complete, u resolve, z close, o store, r run
                  open, k marker (store-wide: not part of the run's errors) */
    int i;
    lil_status rc;
};

struct t_wl {
    /* inputs */
    const struct t_plan *plan;
    lil_env *env; /* NULL: the store's private default env */
    const char *store;
    const char *run_id;
    lil_sync sync;
    int attempt;
    int stop_before; /* > 0: close after steps 0..stop_before-1, no complete */
    int keep_going;  /* go on calling after an unexpected status (fault tests) */
    int quiet;       /* do not print unexpected statuses */
    int emit_fd;     /* >= 0: events as lines to this fd; else to log */
    struct t_evlog *log;
    const unsigned char *tolerate_fail; /* may be LIL_E_FAILED (OOM: fn saw NOMEM) */
    long step_delay_us; /* each step function sleeps this long (kill window) */
    /* results */
    struct t_callrec calls[T_WL_MAX * 2 + 16];
    int ncalls;
    lil_status first_err; /* first unexpected status, LIL_OK if none */
    int first_err_call;   /* its index in calls */
    int bad;              /* wrong bytes, identity or kind of outcome */
    int completed;        /* the run is completed with the right result */
    unsigned char fn_nomem[T_WL_MAX];
    int marker_nomem; /* the marker's function saw LIL_E_NOMEM */
};

/* Fill w with defaults for plan/store/run/sync (events to memory log). */
void t_wl_init(struct t_wl *w, const struct t_plan *plan, const char *store,
               const char *run_id, lil_sync sync, struct t_evlog *log);
/* Run it.  0 when every call gave what the plan expects, else 1. */
int t_wl_run(struct t_wl *w);

/* ---- children ------------------------------------------------------------------ */

struct t_child {
    const struct t_fault *fault; /* armed in the child; NULL: none */
    const char *pc_log;          /* track changes for a power cut */
    long kill_after_us;          /* >= 0: SIGKILL this long after the fork */
};

struct t_child_res {
    int exited, code;  /* exit status */
    int signaled, sig; /* killed */
    int crashed;       /* exited with T_CRASH_EXIT (a crash point) */
};

/* Fork a child that runs w (w->env is replaced in the child: a faulty env
 * when fault or pc_log is set, else the default) with its events sent back
 * through a pipe into log; wait for it.  Returns 0, or -1 if fork failed. */
int t_child_run(struct t_wl *w, const struct t_child *c, struct t_evlog *log,
                struct t_child_res *res);

/* ---- inspecting a journal ------------------------------------------------------- */

struct t_seen {
    lil_status open_rc;
    char msg[320];
    lil_run_state state;
    int records;
    unsigned char has[T_WL_MAX]; /* an outcome record of step i is there */
    int outcomes[T_WL_MAX];
    int intents[T_WL_MAX];
    int run_done;
    int marker_done; /* <store>/markers/m-<h>.done exists */
    int bad;
    lil_status check_rc;
    lil_check_report rep;
};

/* Open the run read-only with a healthy env and read everything: the
 * outcome records (checked against the plan; problems counted in bad and
 * printed), the state, and lil_run_check's report.  A run that does not
 * exist is open_rc LIL_E_NOTFOUND with nothing seen.  tolerate (may be
 * NULL): steps whose outcome may be a failure (OOM). */
void t_inspect(const struct t_plan *p, const char *store, const char *run_id,
               const unsigned char *tolerate, struct t_seen *s);

/* ---- the model --------------------------------------------------------------------
 */

enum t_end { T_END_CLEAN, T_END_PROCESS, T_END_POWER };

struct t_model {
    const struct t_plan *plan;
    lil_sync sync;
    unsigned char durable[T_WL_MAX];
    unsigned char present[T_WL_MAX]; /* held when the phase began */
    unsigned char acked[T_WL_MAX];   /* acknowledged in this phase */
    int ran[T_WL_MAX];               /* function runs over all phases */
    int opened;                      /* a writable open succeeded (O) */
    int marker;                      /* lil_marker returned OK once (K) */
    int barrier;                     /* some sync barrier completed */
    int errors;
    char ctx[160]; /* printed with every violation */
};

void t_model_init(struct t_model *m, const struct t_plan *p, lil_sync sync,
                  const char *ctx);
/* A phase begins; s is what the journal held (NULL: nothing). */
void t_model_begin(struct t_model *m, const struct t_seen *s);
/* The events of the phase, in order. */
void t_model_feed(struct t_model *m, const struct t_evlog *log);
/* The phase ended (how) and the journal now holds s. */
void t_model_end(struct t_model *m, enum t_end how, const struct t_seen *s);

/* After the last phase: the run is completed, every step is there exactly
 * once with its bytes, the journal is intact, and a replay in this process
 * calls no step function.  Returns the number of problems (printed). */
int t_verify_final(const struct t_plan *p, const char *store, const char *run_id,
                   lil_sync sync, const char *ctx);

/* rm -rf path (a test's scratch store). */
void t_rmtree(const char *path);

/* Make store and store/markers as durable directories, with plain system
 * calls (not through the fault table, so no power cut undoes them).  The
 * campaigns start from a store that exists; whether lil makes the
 * directories it creates durable is a test of its own. */
void t_store_prepare(const char *store);

#endif
