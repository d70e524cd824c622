/*
 * loopcheck.h -- what the crash tests of loop runs share (test_loop_sigkill,
 * test_loop_powercut): the loop they run, the side file its effects write,
 * a summary of the run's journal, the checks made after every death, and
 * the orphans a killed runner leaves behind.
 *
 * THE LOOP (t_loop_spec_write).  Iteration I of a run with token TOK:
 *   slot I.0  a    shell  echo "TOK I a $$" >> side.txt   on_done: incr total
 *   slot I.1  nap  sleep  3ms
 *   slot I.2  b    shell  sleep 4ms; echo "TOK I b $$" >> side.txt; sleep 2ms
 *   slot I.3  c    shell  echo "TOK I c $$" >> side.txt   on_done: incr n,
 *                                                          append seen: n
 * until state.n >= N, so the final state is {"n": N, "seen": [1..N],
 * "total": N}.  Each attempt of an effect appends one line (one write(2)
 * with O_APPEND, and $$ tells attempts apart), so the side file is the
 * outside world's record of what ran: a line is an attempt that ran.
 *
 * THE JOURNAL SUMMARY (struct t_lj) is built from the run's records in
 * order, read through the API (t_lj_read_api) or from `lil log --jsonl`
 * (t_lj_read_cli).  Per effect slot it follows the only order the records
 * may come in,
 *     intent ( resolve:assume-done* resolve:retry intent )*
 *     [ outcome | resolve:assume-done+ outcome{"recovered":true} ]
 * and counts every record that breaks it: a second intent without a retry
 * resolution before it is an effect run again silently.  (An assume-done
 * followed by another resolution is one whose process died before it
 * journaled the outcome: it was never acknowledged, the effect stayed
 * uncertain and was decided again.)
 *
 * THE CHECKS (t_lj_check), after any death, with the side file read:
 *   - an effect never ran more often than the journal holds intents for it
 *     (lines <= intents): nothing ran without its intent, nothing that was
 *     uncertain ran again without a retry;
 *   - an effect with a real outcome ran (lines >= 1), so exactly once when
 *     it was never retried; one recovered with assume-done may have run or
 *     not (lines <= intents);
 *   - every name appears once: sleeps, snapshots, the start record;
 * and at the end (final): every effect of every iteration has its outcome,
 * every snapshot is there, the run is done, the last snapshot's state is
 * the expected one.
 *
 * ORPHANS.  A killed runner leaves the shell it was running alive (lil
 * puts each child in its own process group).  t_orphans_adopt makes this
 * process their subreaper; t_orphans_reap then either lets them finish or
 * kills their groups, and waits for all of them, so that the side file is
 * settled before it is read.
 */
#ifndef LIL_TESTS_LOOPCHECK_H
#define LIL_TESTS_LOOPCHECK_H

#include <lil/lil.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include <jansson.h>

#define T_LOOP_MAX_IT  16 /* iterations a test loop may have */
#define T_LOOP_SLOTS   4  /* slots per iteration: a, nap, b, c */
#define T_LOOP_EFFECTS 3  /* of them effects */
#define T_LOOP_RUN     "crashloop"
#define T_LOOP_ASSUMED "{\"code\":0,\"stdout\":\"\"}" /* assume-done result */

/* Write the loop's spec for n iterations (n <= T_LOOP_MAX_IT) to path.  Its
 * shell steps append to side.txt in their working directory.  0 or -1. */
int t_loop_spec_write(const char *path, int n);

/* Slot S of an iteration is an effect (0, 2, 3), and its step letter. */
bool t_loop_is_effect(int s);
char t_loop_step_of(int s);

/* ---- the journal summary -----------------------------------------------------------
 */

enum t_slot_at {
    T_SLOT_NONE,    /* no record yet */
    T_SLOT_INTENT,  /* an intent without its outcome: uncertain */
    T_SLOT_RETRY,   /* resolved with retry, the next intent not yet written */
    T_SLOT_ASSUMED, /* resolved with assume-done, its outcome not yet written */
    T_SLOT_DONE     /* its outcome is journaled */
};

struct t_slot {
    enum t_slot_at at;
    int intents, retries, assumed, outcomes;
    int assumed_lost; /* assume-done resolutions without their outcome */
    bool recovered;   /* the outcome came from assume-done */
    int lines;        /* lines of the side file (t_side_read) */
};

struct t_lj {
    lil_status open_rc; /* of the read (LIL_E_NOTFOUND: no run yet) */
    char msg[320];
    int n; /* iterations of the loop */
    struct t_slot slot[T_LOOP_MAX_IT][T_LOOP_SLOTS];
    int snaps[T_LOOP_MAX_IT];
    int starts, terminated, run_done, parked, records;
    int bad;              /* records out of order or unexpected (printed) */
    json_t *state;        /* the last snapshot's state, or NULL */
    lil_check_report rep; /* t_lj_read_api: lil_run_check's report */
    lil_status check_rc;
};

void t_lj_init(struct t_lj *j, int n);
void t_lj_free(struct t_lj *j);
/* Feed one record (type as lil_record_type_name says, effect flag, key and
 * payload); problems are printed with ctx. */
void t_lj_feed(struct t_lj *j, const char *type, bool effect, const char *key,
               const char *payload, size_t len, const char *ctx);
/* Read the run through the API with a healthy env: read-only open, every
 * record, and lil_run_check.  j->open_rc says whether the journal opened. */
void t_lj_read_api(struct t_lj *j, const char *store, const char *run_id,
                   const char *ctx);
/* Read the run from `lil --dir store log run_id --jsonl`.  0, or -1 when the
 * command failed or printed something that is not a record (printed). */
int t_lj_read_cli(struct t_lj *j, const char *store, const char *run_id,
                  const char *ctx);

/* Count the side file's lines of token tok into j's slots.  Returns the
 * number of lines that belong to no effect of the loop (printed). */
int t_side_read(struct t_lj *j, const char *path, const char *tok, const char *ctx);

/* The checks above; final: the run must be completed.  Returns the number
 * of problems (printed with ctx). */
int t_lj_check(const struct t_lj *j, bool final, const char *ctx);

/* Statistics of a summary: effects that were retried, assumed done,
 * retried ones whose interrupted attempt had run too (lines > 1), and
 * assume-done resolutions that lost their outcome. */
struct t_lj_stats {
    long retried, assumed, ran_twice, uncertain_left, assumed_lost;
};

void t_lj_stats_add(const struct t_lj *j, struct t_lj_stats *st);

/* ---- processes ----------------------------------------------------------------------
 */

/* Become the subreaper of this process's descendants (prctl). */
void t_orphans_adopt(void);
/* Reap every child left (call after the direct child was reaped): kill
 * their process groups first (kill), or wait for them to end (after 5 s
 * they are killed anyway).  Returns how many there were. */
int t_orphans_reap(bool kill);

struct t_exec_res {
    int exited, code;
    int killed; /* SIGKILLed by t_exec */
    int sig;
    int64_t us; /* from the fork to the end */
};

/* Run argv (argv[0] a path) in directory cwd with stdout and stderr to
 * out_path, and SIGKILL it kill_after_us after the fork unless it ended
 * first (kill_after_us < 0: never).  Waits for it; its orphans are left to
 * t_orphans_reap.  0, or -1 if it could not be started. */
int t_exec(char *const argv[], const char *cwd, const char *out_path,
           int64_t kill_after_us, struct t_exec_res *res);

/* Monotonic microseconds. */
int64_t t_mono_us(void);

/* Print a file to stderr (a failing command's output). */
void t_dump_file(const char *path);

#endif
