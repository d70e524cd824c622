/*
 * faults.h -- a fault-injecting system-call table, a simulated power cut and
 * a failing allocator, for the crash and fault suites (docs/testing.md).
 *
 * 1. The table (t_faults_os) wraps lil__os_posix.  It counts the calls of
 *    each kind and, when a fault is armed, acts at the nth call of one kind:
 *    fail it with an errno (EIO, ENOSPC), write only the first half (pwrite),
 *    or end the process with _exit(T_CRASH_EXIT) before the call, after it,
 *    or in the middle of it (a torn pwrite: a random prefix is written).
 *    The calls of child processes (read, write, pipe2, fcntl, spawn,
 *    pidfd_open, poll, waitid, kill) change no file: they only fail (spawn
 *    returns the errno, as posix_spawn does) or end the process.
 *
 * 2. Power cut (SQLite test6.c, but across processes).  With tracking on
 *    (t_pc_track), every write, size change, create, mkdir, link and rename
 *    made through the table first appends an undo entry to a log file
 *    outside the store: offset, the old bytes, the old size.  An fdatasync
 *    or fsync of a file marks its entries durable; an fsync of a directory
 *    makes the creates, mkdirs, links and renames in it durable.  The log
 *    lives in a file, not in memory, because the page cache outlives a
 *    process: a write made by a process that was killed is still lost by a
 *    later power cut unless some process synced the file in between.
 *    t_pc_apply (called by the parent after the crashed child is gone,
 *    standing for the reboot) replays the log backwards and, for each entry
 *    that is not durable, chooses with a seeded generator: keep it, drop it
 *    (old bytes back), keep only a prefix (torn), garble a random part; a
 *    size change is kept or undone; a create, mkdir, link or rename that no
 *    directory fsync covered is undone half the time (a directory vanishes
 *    with everything in it); finally the file may shrink back to its synced
 *    size.  Then the log is emptied (the disk is what it is after the
 *    reboot).  An unlink counts as durable at once.  LIL_PC_TRACE=1 prints
 *    every entry of the log and what the cut did with it.
 *
 * 3. Allocator (curl torture): t_alloc_install puts a counting allocator in
 *    an env that fails the nth allocation (or every one from the nth) and
 *    counts live blocks, so a test can assert that nothing leaked.
 *
 * State is process-global (the table's functions take no user data); tests
 * are single-threaded and each forked child has its own copy.
 */
#ifndef LIL_TESTS_FAULTS_H
#define LIL_TESTS_FAULTS_H

#include <lil/lil.h>
#include <stddef.h>
#include <stdint.h>

struct lil_os;

/* Exit status of a child that stopped at a crash point. */
#define T_CRASH_EXIT 77

enum t_kind {
    T_K_OPEN,
    T_K_PWRITE,
    T_K_FDATASYNC,
    T_K_FSYNC,
    T_K_FTRUNCATE,
    T_K_FALLOCATE,
    T_K_RENAME,
    T_K_LINK,
    T_K_UNLINK,
    T_K_MKDIR,
    /* child processes (os/proc.c) */
    T_K_READ,
    T_K_WRITE,
    T_K_PIPE2,
    T_K_FCNTL,
    T_K_SPAWN,
    T_K_PIDFD_OPEN,
    T_K_POLL,
    T_K_WAITID,
    T_K_KILL,
    T_K_COUNT
};

enum t_action {
    T_ACT_NONE,
    T_ACT_ERR,         /* return -1 with errno = err */
    T_ACT_SHORT,       /* pwrite: write the first half, return that count */
    T_ACT_CRASH,       /* _exit(T_CRASH_EXIT) instead of making the call */
    T_ACT_CRASH_AFTER, /* make the call, then _exit(T_CRASH_EXIT) */
    T_ACT_CRASH_TORN,  /* pwrite: write a random prefix, then _exit */
};

struct t_fault {
    enum t_kind kind;
    unsigned long nth; /* 1-based number of the call of kind that acts */
    enum t_action action;
    int err;       /* errno for T_ACT_ERR */
    int sticky;    /* act on every later call of kind too */
    uint64_t seed; /* for the torn prefix length */
};

const char *t_kind_name(enum t_kind k);
const char *t_action_name(enum t_action a);

/* The wrapping table.  Install with lil__env_set_os(env, t_faults_os()). */
const struct lil_os *t_faults_os(void);

/* Zero the counters and disarm; tracking is left as it is. */
void t_faults_reset(void);
/* Arm one fault (replaces an earlier one) and zero the counters. */
void t_faults_arm(const struct t_fault *f);
/* How many times the armed fault acted. */
unsigned long t_faults_fired(void);
/* Calls of kind k since the last reset/arm. */
unsigned long t_faults_count(enum t_kind k);

/* A new env whose system calls go through t_faults_os(). */
lil_env *t_env_faulty(void);

/* ---- power cut ---------------------------------------------------------- */

enum t_pc_policy {
    T_PC_RANDOM,   /* seeded choice per entry (the power-cut tests) */
    T_PC_DROP_ALL, /* every unsynced change is lost (the fault tests) */
};

struct t_pc_stats {
    unsigned long entries;                      /* entries in the log */
    unsigned long unsynced;                     /* entries not covered by a sync */
    unsigned long kept, dropped, torn, garbled; /* writes */
    unsigned long size_undone;                  /* ftruncate/fallocate/growth undone */
    unsigned long names_undone;                 /* creates, links, renames undone */
};

/* Start logging undo entries to log_path (created; appended to). */
void t_pc_track(const char *log_path);
/* Stop logging (closes the log). */
void t_pc_untrack(void);
/* Simulate the power cut: undo unsynced changes recorded in log_path as
 * the policy says, then empty the log.  Returns 0, or -1 if the log cannot
 * be read.  st may be NULL. */
int t_pc_apply(const char *log_path, uint64_t seed, enum t_pc_policy policy,
               struct t_pc_stats *st);
/* Empty the log (a fresh disk). */
void t_pc_forget(const char *log_path);

/* ---- allocator ---------------------------------------------------------- */

struct t_alloc {
    unsigned long fail_at; /* 1-based allocation that fails; 0 = none */
    int sticky;            /* fail every allocation from fail_at on */
    unsigned long calls;   /* allocations asked for (malloc and realloc) */
    unsigned long failed;  /* allocations refused */
    long live;             /* blocks handed out and not freed */
};

/* Install the counting allocator in env (before any store is opened).
 * a must outlive every block: free it after lil_env_free and after the
 * last lil_free of a result. */
lil_status t_alloc_install(lil_env *env, struct t_alloc *a);

/* ---- small seeded generator (xorshift64*) -------------------------------- */

uint64_t t_rand(uint64_t *state);
/* Uniform in [0, n) (n > 0). */
uint64_t t_rand_below(uint64_t *state, uint64_t n);

#endif
