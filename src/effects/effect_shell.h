/*
 * effect_shell.h -- the `shell` effect of the loop runner: run a rendered
 * command and give the result a LoopSpec step sees (docs/loopspec.md,
 * "Effects"), plus the effect's identity.
 *
 * The command.  A string is run as `/bin/sh -c STRING` (Node's exec); a
 * program with arguments ({command, args}) is run directly, without a
 * shell (Node's execFile): "$HOME" in an argument stays as it is.  A
 * program without a slash is looked up in lil's PATH (os/proc.h; Node
 * looks in the child's, which the scrubbed environment keeps the same).
 *
 * How it runs (os/proc.h): stdin is /dev/null (Node leaves an open pipe
 * that nobody writes, so a command that reads stdin waits for its
 * timeout); stdout and stderr are captured, each up to out_cap bytes; the
 * child leads a new session, so a new process group, with no controlling
 * terminal (a command that asks the terminal for a password fails at once
 * instead of stopping until its timeout); the working directory and the
 * environment are the options' (the runner passes a scrubbed one:
 * effects/effect_env.h).  The wait ends when the command's process exits:
 * what it left running in its process group (`sleep 1000 &`, `nohup x &`)
 * is then killed (SIGKILL) with the group, never waited for; a daemon that
 * must outlive its step leaves the group itself (`setsid -f daemon`).
 * When the time runs out, or a stream passes its cap, the whole
 * group gets SIGTERM, then SIGKILL after grace_ms (the reference kills
 * only /bin/sh, with SIGKILL, and its grandchildren live on).
 *
 * The result (a new JSON value; every shape of the reference is kept, and
 * the cases it leaves ambiguous get an extra key):
 *
 *   exit 0, trimmed stdout is JSON   the parsed value
 *   exit 0, otherwise (empty too)    {stdout: trimmed stdout, code: 0}
 *   exit N (not 0)                   {stdout, stderr, code: N}  (raw, untrimmed)
 *   timeout                          {stdout, stderr, code: 1, timedOut: true}
 *   killed by a signal               {stdout, stderr, code: 1, signal: "SIGSEGV"}
 *   a stream over out_cap            {stdout, stderr,
 *                                     code: "ERR_CHILD_PROCESS_STDIO_MAXBUFFER"}
 *   the program cannot be started    {stdout: "", stderr: "", code: "ENOENT"}
 *
 * - Trimmed is JavaScript's String.prototype.trim (lang/value.h: ASCII
 *   blanks, NBSP, U+FEFF, U+2028, ...).  JSON is JSON.parse's: any value
 *   at the top, the last of duplicate keys wins, "\u0000" allowed; numbers
 *   are read as JavaScript reads them (doubles: 12345678901234567890 loses
 *   digits) and stored as JSON.stringify prints them (1.0 and 1e2 become
 *   the integers 1 and 100, -0 becomes 0).  Two texts JSON.parse accepts
 *   are not JSON here and give {stdout, code: 0}: a number past the range
 *   of a double (1e400, Infinity in JavaScript) and a lone surrogate
 *   escape ("\ud800").
 * - stdout and stderr are decoded as Node decodes UTF-8 (effects/text.h):
 *   invalid bytes become U+FFFD, so the strings are always valid.
 * - A signal death gives code 1 like the reference (Node's exec reports
 *   code null and the runtime stores 1), with the signal's name added.  A
 *   timeout also gives code 1, with timedOut: true added (the reference's
 *   timeout is indistinguishable from exit 1).
 * - Over the cap: like Node's maxBuffer (1 MiB a stream by default), a
 *   stream is over when the command wrote more than out_cap bytes to it;
 *   the command is then stopped at once (as Node kills it), whatever its
 *   exit status, and the stream keeps its first out_cap bytes (an
 *   incomplete UTF-8 sequence cut at the cap is dropped).  This case wins
 *   over the timeout when both happen.
 * - Cannot be started: the exec failed for a reason that belongs to the
 *   program (ENOENT, EACCES, ENOEXEC, ENOTDIR, ELOOP, ENAMETOOLONG, EISDIR,
 *   ETXTBSY, EPERM, E2BIG, ELIBBAD): code is the errno's name, as Node
 *   gives it.  In string mode /bin/sh itself runs, so a command it cannot
 *   find is its exit 127 with its "not found" message.
 *
 * Errors (lil_status, message in err): only lil's own problems, never the
 * command's.  LIL_E_INVAL (no command, invalid options), LIL_E_NOMEM,
 * LIL_E_CHILD (the working directory cannot be entered -- checked before
 * the spawn, so that it is never reported as the program's ENOENT -- or the
 * exec failed for a reason of lil's: EAGAIN, ENOMEM, EMFILE, ...; the
 * child was reaped by someone else), LIL_E_IO (a system call of the wait).
 * On an error *out is NULL and no child is left running.
 *
 * Thread rules: none of its own; calls on different threads run different
 * children (os/proc.h).
 */
#ifndef LIL_LOOP_EFFECT_SHELL_H
#define LIL_LOOP_EFFECT_SHELL_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/buf.h"
#include "base/env.h"
#include "json/json.h"

#define LIL_SHELL_TIMEOUT_DEFAULT_MS 300000 /* the reference's effectTimeoutMs */
#define LIL_SHELL_GRACE_DEFAULT_MS   1000   /* SIGTERM to SIGKILL */
#define LIL_SHELL_CAP_DEFAULT        ((size_t)1 << 20) /* Node's maxBuffer */
#define LIL_SHELL_MAXBUFFER_CODE     "ERR_CHILD_PROCESS_STDIO_MAXBUFFER"

/* A rendered command: script (string mode), or command with n_args args
 * (argv mode; args may be NULL when n_args is 0).  Exactly one of script
 * and command is set.  Borrowed for the call. */
struct lil_shell_cmd {
    const char *script;
    const char *command;
    const char *const *args;
    size_t n_args;
};

struct lil_shell_opts {
    const char *cwd;         /* NULL: lil's working directory */
    const char *const *envp; /* "NAME=value", NULL-terminated; NULL: lil's
                                environment, unscrubbed (the reference's
                                default; the runner passes effect_env's) */
    int timeout_ms;          /* 0: LIL_SHELL_TIMEOUT_DEFAULT_MS; < 0: none */
    int grace_ms;            /* 0: LIL_SHELL_GRACE_DEFAULT_MS; < 0: none (SIGKILL) */
    size_t out_cap;          /* bytes kept per stream; 0: LIL_SHELL_CAP_DEFAULT */
    int *running_pgid;       /* NULL, or set (an atomic store) to the child's process
                                group while it runs, 0 after: a signal handler or
                                another thread may kill the group */
};

/* What happened, for logs (the result says it the reference's way). */
struct lil_shell_info {
    int exec_errno;     /* the program could not be started: its errno, else 0 */
    int exit_code;      /* -1 unless it exited */
    int signal;         /* the signal that ended it, else 0 */
    bool timed_out;     /* killed when the time ran out */
    bool over_cap;      /* killed when a stream passed out_cap */
    uint64_t out_bytes; /* bytes written to stdout, to stderr (all, kept or not) */
    uint64_t err_bytes;
    int64_t elapsed_ms;
};

/* Run cmd as above; *out is a new reference (release with json_decref),
 * allocated from env.  opts may be NULL (all defaults); info may be NULL. */
lil_status lil__shell_run(const struct lil_env *env, struct lil_err *err,
                          const struct lil_shell_cmd *cmd,
                          const struct lil_shell_opts *opts,
                          struct lil_shell_info *info, json_t **out);

/* Append the effect's identity to out: the canonical JSON (json/canon.c)
 * of {"cmd": script} or {"cmd": {"args": [...], "command": command}} --
 * compared byte for byte on replay.  LIL_E_INVAL (no command, a string
 * that is not UTF-8), LIL_E_NOMEM, LIL_E_TOOBIG (out's cap). */
lil_status lil__shell_identity(const struct lil_env *env, struct lil_err *err,
                               const struct lil_shell_cmd *cmd, struct lil_buf *out);

/* The name of signal sig ("SIGSEGV"; "SIG34" for one without a name). */
void lil__shell_signal_name(int sig, char buf[16]);

#endif
