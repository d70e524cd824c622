/*
 * cli.h -- what the verbs of the `lil` command share.
 *
 * The command uses only <lil/lil.h> (and jansson for --json output).  Each
 * verb lives in its own cmd_<verb>.c and exports one struct cli_verb; main.c
 * holds the table of verbs, the global flags and `lil --help`.
 *
 * Conventions:
 *  - A verb returns the process exit status (CLI_EXIT_*); it never calls
 *    exit() itself, so every handle it opened is closed on the way out.
 *  - Results go to stdout; errors go to stderr as "lil: <verb>: <message>",
 *    with the library's message (which names the file and the offset).
 *  - Usage errors (unknown flag, missing argument) exit CLI_EXIT_USAGE
 *    (64) and point to `lil <verb> --help`.
 *  - Exit statuses are the names of enum cli_exit, never bare numbers.
 *  - Every flag is accepted as `--flag value` and `--flag=value`; `--`
 *    ends the flags.
 */
#ifndef LIL_CLI_CLI_H
#define LIL_CLI_CLI_H

#include <lil/lil.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

/* The exit statuses of `lil`, the same for every verb: the one table, which
 * `lil --help` and docs/cli.md ("Exit status") print.  0 to 5 are also the
 * statuses of a loop run (completed, failed, uncertain, paused, waiting,
 * stopped); 3 to 5 are only for the loop verbs.  64 and 75 are the BSD
 * <sysexits.h> codes, so scripts and supervisors read them the usual way. */
enum cli_exit {
    CLI_EXIT_OK = 0,        /* success; a loop run completed */
    CLI_EXIT_FAIL = 1,      /* failure: a damaged journal, no such run or store,
                               a missing or wrong key, an I/O error, an invalid
                               loop spec; a loop run failed */
    CLI_EXIT_UNCERTAIN = 2, /* the run is uncertain: an effect's outcome is
                               unknown (inspect; a loop run) */
    CLI_EXIT_PAUSED = 3,    /* loop verbs: the run waits for an approval */
    CLI_EXIT_WAITING = 4,   /* loop verbs: the run is parked until its wakeAt */
    CLI_EXIT_STOPPED = 5,   /* loop verbs: the run was stopped */
    CLI_EXIT_USAGE = 64,    /* EX_USAGE: unknown verb or flag, missing or extra
                               argument, invalid id */
    CLI_EXIT_ROLLBACK = 65, /* EX_DATAERR: a journal behind its store's rollback
                               record (LIL_E_ROLLBACK) */
    CLI_EXIT_LOCKED = 75,   /* EX_TEMPFAIL: another process holds the run
                               (LIL_E_LOCKED); try again when it is done */
    /* watch: its own statuses (besides the program's, 128 + N for a death
     * by signal N, and 126 / 127 for a program that cannot be executed /
     * is not found) */
    CLI_EXIT_OSERR = LIL_SUPERVISE_EXIT_OSERR,           /* 71 EX_OSERR: cannot fork */
    CLI_EXIT_RESTARTS = LIL_SUPERVISE_EXIT_RESTARTS,     /* 80 restart limit */
    CLI_EXIT_CRASH_LOOP = LIL_SUPERVISE_EXIT_CRASH_LOOP, /* 81 crash loop */
    CLI_EXIT_SAME_STEP = LIL_SUPERVISE_EXIT_SAME_STEP,   /* 82 same step */
};

/* cli_parse's result when --help was given and the verb's help printed. */
#define CLI_PARSE_HELP (-1)

struct cli_verb;

/* State of one invocation: the verb and the global flags. */
struct cli_ctx {
    const struct cli_verb *verb;
    const char *dir;   /* --dir, or NULL: $LIL_DIR, else .lil */
    bool json;         /* --json */
    bool shared_store; /* --shared-store: LIL_STORE_SHARED */
};

struct cli_verb {
    const char *name;
    const char *summary; /* one line for `lil --help` */
    const char *help;    /* full text for `lil help <verb>` */
    int (*run)(struct cli_ctx *ctx, int argc, char **argv);
};

extern const struct cli_verb cli_verb_ls;
extern const struct cli_verb cli_verb_inspect;
extern const struct cli_verb cli_verb_log;
extern const struct cli_verb cli_verb_check;
extern const struct cli_verb cli_verb_resolve;
extern const struct cli_verb cli_verb_validate;
extern const struct cli_verb cli_verb_new;
extern const struct cli_verb cli_verb_explain;
extern const struct cli_verb cli_verb_run;
extern const struct cli_verb cli_verb_step;
extern const struct cli_verb cli_verb_resume;
extern const struct cli_verb cli_verb_stop;
extern const struct cli_verb cli_verb_approve;
extern const struct cli_verb cli_verb_recover;
extern const struct cli_verb cli_verb_doctor;
extern const struct cli_verb cli_verb_tick;
extern const struct cli_verb cli_verb_verify;
extern const struct cli_verb cli_verb_score;
extern const struct cli_verb cli_verb_watch;
extern const struct cli_verb cli_verb_db;
extern const struct cli_verb cli_verb_export;
extern const struct cli_verb cli_verb_import;
extern const struct cli_verb cli_verb_submit;
extern const struct cli_verb cli_verb_worker;
extern const struct cli_verb cli_verb_workers;
extern const struct cli_verb cli_verb_schedule;
extern const struct cli_verb cli_verb_fork;
extern const struct cli_verb cli_verb_diff;
extern const struct cli_verb cli_verb_rm;
extern const struct cli_verb cli_verb_gc;
extern const struct cli_verb cli_verb_mcp;
extern const struct cli_verb cli_verb_serve;

/* ------------------------------------------------------------------------ */
/* Arguments (args.c)                                                        */

/* One flag of a verb.  A flag without value sets *set; a flag with a value
 * stores it in *value (the last occurrence wins) and sets *set too. */
struct cli_flag {
    const char *name; /* without the leading "--"; NULL ends a table */
    bool has_value;
    const char **value;
    bool *set;
};

/* What a verb accepts besides the global flags (--dir, --json, --help). */
struct cli_args {
    const struct cli_flag *flags; /* may be NULL */
    const char *const *names;     /* required positionals, NULL-terminated */
    const char **pos;             /* receives them, same count as names */
};

/* Parse argv (the words after the verb).  Returns CLI_EXIT_OK,
 * CLI_PARSE_HELP (help printed), or CLI_EXIT_USAGE (message printed). */
int cli_parse(struct cli_ctx *ctx, int argc, char **argv, const struct cli_args *a);

/* For verbs whose positionals are optional or repeated: cli_parse accepts
 * only required ones.  cli_parse_any takes every positional word of argv
 * (in order) into *pos, a new array the caller frees (NULL when the call
 * fails), stores their count in *npos and lets cli_parse check the flags
 * (with a's flags; a->names must be NULL).  Same return values as
 * cli_parse.  Unlike cli_parse, a flag's value given as the next word may
 * not be another flag ("--out --force" is a usage error; "--out=--force" is
 * the way to say it), so a forgotten value is not silently a flag (the
 * reference's weakness; docs/cli.md, "lil new"). */
int cli_parse_any(struct cli_ctx *ctx, int argc, char **argv, const struct cli_args *a,
                  const char ***pos, size_t *npos);

/* Print "lil: <verb>: <message>" to stderr. */
void cli_err(const struct cli_ctx *ctx, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Print a usage error and the --help hint; returns CLI_EXIT_USAGE. */
int cli_usage(const struct cli_ctx *ctx, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* The edit distance between a and b (insertions, deletions,
 * substitutions), for names of at most 31 bytes; 99 for longer ones. */
size_t cli_edit_distance(const char *a, const char *b);

/* The usage error of an unknown flag word ("--dri", "--dri=x", "-x"): its
 * name is the len bytes after "--" (len 0: the whole word is named).  When
 * a name of names (NULL-terminated, without "--") is close -- at most 2 edits, fewer
 * than the name's length -- the message asks "did you mean '--dir'?", as for a mistyped
 * verb.  Returns CLI_EXIT_USAGE. */
int cli_unknown_flag(const struct cli_ctx *ctx, const char *word, size_t len,
                     const char *const *names);

/* Print the verb's help text to stdout. */
void cli_print_help(const struct cli_verb *verb);

/* ------------------------------------------------------------------------ */
/* Store and runs (open.c)                                                   */

/* Report a library error s: "lil: <verb>: <message>" on stderr (the
 * message formatted from fmt, with the library's message), and return its
 * exit status.  LIL_E_LOCKED is CLI_EXIT_LOCKED, and the line ends with
 * "; try again when it is done"; any other error is CLI_EXIT_FAIL.  Every
 * verb maps library errors through here, so a held run is 75 whatever the
 * verb. */
int cli_fail(const struct cli_ctx *ctx, lil_status s, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Report that run_id is held by another process when the library's
 * message does not name the holder (lil_run_check names only the file): a
 * read-only open (no lock) reads the holder's pid, and the message is
 * "run R is held by pid P", or "run R is held by another process" when the
 * pid is not known.  Returns CLI_EXIT_LOCKED (through cli_fail). */
int cli_held(const struct cli_ctx *ctx, lil_store *st, const char *run_id);

/* The store location of ctx, by the library's rule (lil_store_location):
 * --dir, else $LIL_DIR when set and not empty, else ".lil".  Valid until
 * the process exits. */
const char *cli_store_dir(const struct cli_ctx *ctx);

/* $USER as the library reads it (lil_setting) when set and not empty, else
 * dflt: the actor of a verb run without --actor. */
const char *cli_user(const char *dflt);

/* The status word `lil ls` (and `lil mcp`'s list_runs) shows for a run
 * that could not be opened read-only: "locked", "damaged", "key?",
 * "version?", "unborn" (listed, but no complete record) or "error". */
const char *cli_failure_word(lil_status rc);

/* The status a queued run shows while the PostgreSQL queue has it (q: its
 * row of lil_queue_list): queued, claimed (a worker holds it, or held it
 * and is gone: its lease decides who takes it next), parked, error (a
 * worker could not run it); NULL once the run's own status says where it
 * is (paused, uncertain, stopped, ended).  `lil ls` and `lil serve`. */
const char *cli_queue_word(const json_t *q);

/* What a server verb (`lil mcp`, `lil serve`) needs before it starts: root
 * (PATH_MAX bytes) the real path of spec_root (NULL: the current
 * directory), exe (PATH_MAX bytes) this binary, which its children run.
 * 0, or -1 with the error printed. */
int cli_server_paths(const struct cli_ctx *ctx, const char *spec_root, char *root,
                     char *exe);

/* Whether a store location is a PostgreSQL URI, as the library tells
 * (lil_store_location). */
bool cli_store_is_url(const char *where);

/* submit and worker (cmd_submit.c): CLI_EXIT_OK when the store of ctx is a
 * PostgreSQL store, else a usage error (64) saying that a store directory
 * keeps no queue and what to use. */
int cli_need_queue(const struct cli_ctx *ctx);

/* Open the store of ctx without creating it: a missing directory is an
 * error (CLI_EXIT_FAIL).  Returns an exit status; *out is set on CLI_EXIT_OK. */
int cli_store_open(const struct cli_ctx *ctx, lil_store **out);

/* Open the store of ctx, creating its directory when missing (the loop
 * verbs that start runs).  Returns an exit status. */
int cli_store_create(const struct cli_ctx *ctx, lil_store **out);

/* Check a run id given on the command line (CLI_EXIT_USAGE if invalid). */
int cli_run_id_ok(const struct cli_ctx *ctx, const char *run_id);

/* Is a stop requested for run_id and not yet honoured (lil_loop_stop_pending:
 * also for a run that has not started)?  Then "a stop is requested for it
 * (by ACTOR: REASON)" in out. */
bool cli_stop_pending(lil_store *st, const char *run_id, char *out, size_t cap);

/* Open an existing run, read-only (no lock) or for writing.  Prints the
 * error and returns its exit status on failure (CLI_EXIT_LOCKED, with the
 * holder's pid in the message, when another process holds the run). */
int cli_run_open(const struct cli_ctx *ctx, lil_store *st, const char *run_id,
                 bool readonly, lil_run **out);

/* The start of every verb that takes one RUN: parse argv into a (whose
 * first positional is the run id), check the id, open the store and, when
 * run is not NULL, open the run read-only.  Returns an exit status; *help
 * is set when --help was printed and the verb has nothing more to do.  The
 * caller closes *run and *st (NULL-safe) whatever it returns. */
int cli_open_run_arg(struct cli_ctx *ctx, int argc, char **argv,
                     const struct cli_args *a, lil_store **st, lil_run **run,
                     bool *help);

/* A new temporary file "<prefix>.<16 random hex digits>.tmp" (its name into
 * tmp, cap bytes), opened for writing with O_CREAT | O_EXCL | O_NOFOLLOW and
 * mode (then the umask): never a file or a link that was there.  The
 * descriptor, or -1 with errno (tmpfile.c). */
int cli_create_temp(const char *prefix, mode_t mode, char *tmp, size_t cap);

/* fn (NULL: the default) for SIGINT and SIGTERM (signals.c). */
void cli_catch_signals(void (*fn)(int));

/* A server's poll loop and SIGINT and SIGTERM (signals.c): open installs a
 * handler that sets the request and writes a byte to a self-pipe whose
 * read end (cli_stop_pipe_fd) the loop polls; drain empties it; close puts
 * the old handlers back and closes the pipe.  One at a time per process. */
struct cli_stop_pipe {
    struct sigaction old_int, old_term;
};

int cli_stop_pipe_open(struct cli_stop_pipe *sp); /* 0, or -1: no pipe */
int cli_stop_pipe_fd(void);
void cli_stop_pipe_drain(void);
bool cli_stop_requested(void);
void cli_stop_pipe_close(const struct cli_stop_pipe *sp);

/* A verb on one RUN of the store and its flags: cli_open_run_arg (no run
 * opened), then fn on the store and the run id unless --help was printed,
 * then the store closed.  ud is fn's (flags' values are set by then). */
typedef int (*cli_run_verb_fn)(const struct cli_ctx *ctx, lil_store *st,
                               const char *run_id, void *ud);
int cli_on_run_arg(struct cli_ctx *ctx, int argc, char **argv,
                   const struct cli_flag *flags, cli_run_verb_fn fn, void *ud);

/* Fill *info for run; prints the error on failure. */
int cli_run_info(const struct cli_ctx *ctx, lil_run *run, lil_run_info *info);

/* "full", "normal", "off" or "default". */
const char *cli_sync_name(lil_sync sync);

/* ------------------------------------------------------------------------ */
/* Formatting (fmt.c).  Each writes a NUL-terminated string into buf.       */

/* Length of the valid UTF-8 sequence at p (n bytes left: 1 to 4) with its
 * code point in *cp; 0 when invalid (overlong, surrogate, > U+10FFFF,
 * truncated). */
size_t cli_utf8_decode(const unsigned char *p, size_t n, uint32_t *cp);

/* True for a code point that steers a terminal instead of showing: C0 and
 * C1 controls, DEL, the bidirectional marks (U+061C, U+200E-U+200F,
 * U+202A-U+202E, U+2066-U+2069).  The same list as lil's run ids refuse. */
bool cli_is_control_cp(uint32_t cp);

/* The C-style escape of \n, \t, \r and backslash ("\\n", ...), or NULL for
 * any other character. */
const char *cli_c_escape(uint32_t c);

/* Now, ns since the Unix epoch (CLOCK_REALTIME). */
int64_t cli_now_ns(void);

/* Epoch milliseconds as nanoseconds, saturated at the ends of int64 (a
 * journal's times are checked to 2^53 ms, past what ns can hold). */
int64_t cli_ms_to_ns(int64_t ms);

/* "2024-05-01T10:00:00Z", or with nine digits of ns when with_ns. */
void cli_fmt_iso(int64_t ns, bool with_ns, char *buf, size_t cap);

/* "12s ago", "3m ago", "5h ago", "2d ago", "in 4s" (clock skew). */
void cli_fmt_ago(int64_t ns, int64_t now_ns, char *buf, size_t cap);

/* A time relative to another: "+1.234s". */
void cli_fmt_rel(int64_t delta_ns, char *buf, size_t cap);

/* A duration in µs: "850us", "12.3ms", "1.23s", "2m03s", or "-" for 0. */
void cli_fmt_dur(uint64_t us, char *buf, size_t cap);

/* Bytes as text that is safe on a terminal: printable ASCII and valid
 * UTF-8 (C1 controls excepted) are kept; '\\' and the other bytes are
 * escaped (\n, \t, \xNN).  The result is always valid UTF-8.  At most
 * max bytes of input are shown; "..." marks a cut. */
void cli_fmt_printable(const void *data, size_t len, size_t max, char *buf, size_t cap);

/* A payload for a human: text (valid UTF-8) as cli_fmt_printable, other
 * bytes as hex ("0xbaf627...", at most max bytes of input). */
void cli_fmt_payload(const void *data, size_t len, size_t max, char *buf, size_t cap);

/* Lower-case hex of the first bytes of data, as many as fit in cap. */
void cli_fmt_hex(const void *data, size_t len, char *buf, size_t cap);

/* An INTENT record's payload (docs/format.md): the SHA-256 of the effect's
 * request, then an optional note (UTF-8 text naming the effect).  The
 * hash's length; the note of rec (*note, *len into rec's payload), false
 * when rec is no intent or has no note. */
#define CLI_INTENT_HASH_LEN 32
bool cli_intent_note(const lil_record *rec, const char **note, size_t *len);
/* An intent whose note is in the request record before it
 * (LIL_RECF_REQUEST, docs/format.md): true, with the whole note's size in
 * *full_len; cli_intent_note then gives its first bytes only. */
bool cli_intent_note_cut(const lil_record *rec, uint64_t *full_len);

/* ------------------------------------------------------------------------ */
/* JSON output (json.c)                                                      */

/* Print v (indented, or one line when compact) and a newline, then release
 * it.  v NULL means an allocation failed.  Returns an exit status. */
int cli_json_print(const struct cli_ctx *ctx, json_t *v, bool compact);

/* Set key to a new value, ignoring NULL (allocation failure is caught when
 * the document is printed: json_object_set_new fails and the key is
 * missing, which never crashes). */
void cli_json_set(json_t *obj, const char *key, json_t *v);

/* A JSON integer from a uint64 (values above INT64_MAX are clamped). */
json_t *cli_json_u64(uint64_t v);

/* Put payload bytes in obj: "payload" as a string when they are valid
 * UTF-8 without NUL, else "payload_b64" (standard base64). */
void cli_json_payload(json_t *obj, const void *data, size_t len);

/* A JSON string of len bytes of text: as is when valid UTF-8 without NUL,
 * else escaped like cli_fmt_printable (run ids and keys are bytes). */
json_t *cli_json_str(const void *data, size_t len);

/* An ISO-8601 time string (see cli_fmt_iso). */
json_t *cli_json_time(int64_t ns, bool with_ns);

#endif
