/*
 * proc.h -- child processes: start a program, feed its stdin, capture its
 * output, wait for it with a timeout, kill it with everything it started.
 *
 * Everything in lil that runs another program (the loop's shell and agent
 * effects, through lil__proc_run) goes through this module, so that each
 * of them gets the same
 * guarantees (the supervisor's children, which need a parent-death signal
 * set before the exec, are forked by fork.h, which keeps those that apply):
 *
 * - No shell.  argv is executed as given; argv[0] without a slash is looked
 *   up in this process's PATH (posix_spawnp), even when envp is given.  A
 *   caller that wants a shell passes "/bin/sh", "-c", script itself.
 *
 * - A program that cannot be started is an error, never an exit status of
 *   127.  The child is started with posix_spawnp, and glibc (2.24 on) runs
 *   the exec in a vfork-like child that shares the parent's memory, so the
 *   exec's errno comes back as posix_spawnp's result: lil__proc_spawn then
 *   fails with LIL_E_CHILD, errno in err->sys_errno and a message naming
 *   the program ("exec nosuch: No such file or directory").  The working
 *   directory is opened by the parent before the spawn, so a bad cwd is an
 *   error of its own that names the directory.
 *
 * - The child starts clean: it holds exactly descriptors 0, 1 and 2 (all
 *   others are closed in the child, the host's descriptors without
 *   O_CLOEXEC too; every descriptor lil opens has O_CLOEXEC anyway), its
 *   signal mask is empty, and SIGPIPE and SIGXFSZ have their default action
 *   even when the host ignores them (as Python's subprocess does).
 *
 * - Process group.  By default (LIL_PROC_NEW_GROUP) the child leads a new
 *   process group in the caller's session, so that a kill reaches every
 *   process it started that stayed in the group (grandchildren included).
 *   LIL_PROC_NEW_SESSION also gives it a session of its own with no
 *   controlling terminal: a program that opens /dev/tty then fails at once
 *   instead of stopping on SIGTTIN.  LIL_PROC_SAME_GROUP leaves it in the
 *   caller's group (a supervisor that keeps its child in the foreground);
 *   then only the child itself is signalled.
 *
 * - Waiting never blocks the child.  While waiting, lil writes the stdin
 *   bytes and reads stdout and stderr.  A captured stream keeps at most its
 *   cap; bytes beyond it are read and dropped, counted in total, and
 *   truncated is set.  A wait ends when the child exits: output that its
 *   descendants write later is not waited for (a background process that
 *   holds the pipe does not hang the caller).  With end_group, what the
 *   child left running in its group (`sleep 1000 &`) is killed (SIGKILL)
 *   when it exits, before it is reaped; a process that left the group
 *   (setsid, setpgid) is not reached.
 *
 * - The exit is watched through a pidfd (pidfd_open, Linux 5.3) polled
 *   together with the pipes.  Where pidfd_open fails (an older kernel, a
 *   seccomp filter, no descriptor left), waitid(WNOHANG) is polled between
 *   poll() sleeps of 1 to 32 ms instead: slower to notice, equally correct.
 *   The library installs no signal handler.  Writing to a child that has
 *   closed its stdin raises SIGPIPE in the writing thread: lil blocks it
 *   around the write and consumes it (libpq does the same), so it never
 *   reaches the host.
 *
 * - Nothing is left behind.  A kill sends SIGTERM to the group, waits up to
 *   the grace period for the child to exit, then sends SIGKILL to the group
 *   (which ends the grandchildren that outlived the child) and reaps the
 *   child.  The child is not reaped before that last SIGKILL, so its pid,
 *   which is the group's id, cannot have been reused by then.
 *   lil__proc_free kills (SIGKILL) and reaps a child still running and
 *   closes every descriptor: no zombie, no descriptor leak.
 *
 * The host must leave lil's children to lil: with SIGCHLD set to SIG_IGN,
 * or a handler that calls waitpid(-1), the exit status is lost and the wait
 * fails with LIL_E_CHILD (the status then says ended, code -1, signal 0).
 *
 * Tests (tests/proc, docs/testing.md): test_proc checks each promise above
 * from outside, through /proc, once with a pidfd and once with pidfd_open
 * failing; test_proc_faults fails every system call and every allocation
 * of this module in turn and checks that nothing is left behind.
 *
 * Needs glibc 2.34 or later (posix_spawn_file_actions_addclosefrom_np;
 * addfchdir_np is 2.29) and Linux; pidfd_open is optional.
 *
 * Thread rules: one struct lil_proc is used by one thread at a time;
 * distinct children may be waited for from distinct threads at once (they
 * share only the env, which is read-only).
 *
 * Errors (struct lil_err, message naming the call): LIL_E_INVAL (bad
 * options, a closed handle), LIL_E_NOMEM, LIL_E_IO (a system call failed;
 * errno kept), LIL_E_CHILD (the program could not be started, or the child
 * was reaped by someone else).  What the child itself does -- a non-zero
 * exit, death by a signal -- is not an error: struct lil_proc_status says
 * it.  Every system call goes through the env's table (os.h): pipe2,
 * fcntl_int, open, spawn, pidfd_open, poll, read, write, waitid, kill,
 * close.
 */
#ifndef LIL_OS_PROC_H
#define LIL_OS_PROC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "base/env.h"

/* Where a standard descriptor of the child goes. */
enum lil_proc_io {
    LIL_PROC_NULL = 0, /* /dev/null */
    LIL_PROC_PIPE,     /* stdin: the bytes of stdin_data; stdout, stderr: captured */
    LIL_PROC_INHERIT,  /* this process's own descriptor */
};

enum lil_proc_group {
    LIL_PROC_NEW_GROUP = 0, /* own process group (setpgid), caller's session */
    LIL_PROC_NEW_SESSION,   /* own session (setsid): no controlling terminal */
    LIL_PROC_SAME_GROUP,    /* caller's group: kills reach the child only */
};

/* Bytes kept per captured stream when the options say 0. */
#define LIL_PROC_CAP_DEFAULT ((size_t)1 << 20)

struct lil_proc_opts {
    const char *const *argv; /* program and arguments, NULL-terminated */
    const char *const *envp; /* NULL: this process's environment */
    const char *cwd;         /* NULL: this process's working directory */
    enum lil_proc_io in, out, err;
    const void *stdin_data; /* with in == LIL_PROC_PIPE; copied by spawn */
    size_t stdin_len;
    size_t out_cap, err_cap; /* bytes kept of stdout, stderr; 0: the default */
    enum lil_proc_group group;
    /* Read by lil__proc_run only (spawn ignores them): */
    bool stop_at_cap;  /* a captured stream passing its cap kills the child */
    int *running_pgid; /* the child's group id stored here while it runs, 0 after */
    /* Read by spawn: once the child has exited, SIGKILL what is left of its
       group (not with LIL_PROC_SAME_GROUP) before it is reaped. */
    bool end_group;
};

/* One captured stream. */
struct lil_proc_output {
    char *data;     /* NUL-terminated (not counted in len); NULL if empty */
    size_t len;     /* bytes kept, at most the cap */
    uint64_t total; /* bytes the child wrote */
    bool truncated; /* total > len: the rest was read and dropped */
};

struct lil_proc_status {
    bool ended;       /* the child has exited and is reaped */
    bool timed_out;   /* wait: the time ran out first; run: and it was killed */
    int code;         /* exit code; -1 when ended by a signal or not ended */
    int signal;       /* the signal that ended it, else 0 */
    bool core_dumped; /* ... and it dumped core */
};

struct lil_proc;

/* Start opts->argv.  env must outlive the handle; opts and everything it
 * points to may be released when this returns.  Errors: LIL_E_INVAL,
 * LIL_E_NOMEM, LIL_E_IO, LIL_E_CHILD (exec or cwd failed). */
lil_status lil__proc_spawn(const struct lil_env *env, struct lil_err *err,
                           const struct lil_proc_opts *opts, struct lil_proc **out);

/* The child's pid (also its process group's id unless LIL_PROC_SAME_GROUP). */
pid_t lil__proc_pid(const struct lil_proc *p);

/* Wait up to timeout_ms (-1: for ever; 0: just look) for the child to exit,
 * feeding stdin and draining the pipes meanwhile.  On LIL_OK, st says
 * either ended (reaped) or timed_out (still running: wait again, kill or
 * free).  After an error the child keeps running and the handle stays
 * usable.  Waiting for an ended child returns its status again. */
lil_status lil__proc_wait(struct lil_proc *p, struct lil_err *err, int timeout_ms,
                          struct lil_proc_status *st);

/* SIGTERM to the group, up to grace_ms (-1: for ever) for the child to
 * exit, SIGKILL to the group, reap.  An ended child is not signalled.  On
 * LIL_OK the child is reaped and st says how it ended.  LIL_E_IO if a
 * signal could not be sent; the child is still reaped whenever it has
 * ended, so only a child that could not be signalled at all remains. */
lil_status lil__proc_kill(struct lil_proc *p, struct lil_err *err, int grace_ms,
                          struct lil_proc_status *st);

/* What stdout (fd 1) or stderr (fd 2) has given so far; all zero for a
 * stream that is not captured.  Borrowed: valid until the next wait, kill,
 * take or free on p. */
const struct lil_proc_output *lil__proc_output(const struct lil_proc *p, int fd);

/* Move the captured bytes of fd (1 or 2) to *out (the handle keeps an empty
 * stream).  Release with lil__proc_output_free. */
void lil__proc_take_output(struct lil_proc *p, int fd, struct lil_proc_output *out);
void lil__proc_output_free(const struct lil_env *env, struct lil_proc_output *o);

/* Kill (SIGKILL to the group) and reap a child still running, close every
 * descriptor, free p.  NULL is a no-op. */
void lil__proc_free(struct lil_proc *p);

/* ---- run to completion (proc_run.c) -------------------------------------- */

/* What every caller that runs a program to its end uses (the shell effect,
 * the agent CLIs, the hooks through the shell effect). */
struct lil_proc_result {
    struct lil_proc_status status;
    struct lil_proc_output out, err; /* owned: lil__proc_result_free */
    bool over_cap; /* killed because a stream passed its cap (stop_at_cap) */
};

/* Spawn, wait up to timeout_ms (< 0: for ever) and, if the time runs out,
 * kill with grace_ms (status.timed_out and status.ended are then both
 * set).  With opts->stop_at_cap the wait looks at the captured streams
 * every LIL_PROC_CAP_SLICE_MS and kills the child (grace_ms, over_cap set,
 * timed_out not) as soon as one has passed its cap.  With
 * opts->running_pgid (and a group of its own) the child's process group
 * id is stored there (atomically, release order) from the spawn until the
 * child has ended, so that another thread can signal the group (the
 * loop's interrupt), then 0.  The child is always reaped.  On an error
 * *res holds nothing to free (and lil__proc_result_free on it is
 * harmless); a program that could not be started is LIL_E_CHILD with the
 * exec's errno in err->sys_errno. */
#define LIL_PROC_CAP_SLICE_MS 50
lil_status lil__proc_run(const struct lil_env *env, struct lil_err *err,
                         const struct lil_proc_opts *opts, int64_t timeout_ms,
                         int grace_ms, struct lil_proc_result *res);
void lil__proc_result_free(const struct lil_env *env, struct lil_proc_result *res);

#endif
