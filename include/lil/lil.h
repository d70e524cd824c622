/*
 * lil.h -- durable execution in C.  The only installed header of liblil.
 *
 * A program that is killed (SIGKILL, OOM, power cut) resumes from its last
 * durable step, and a completed step never runs twice.  Each run is one
 * append-only journal, kept by a store: in the file store, one file in a
 * store directory.
 *
 *     lil_store *st;  lil_run *run;  lil_bytes out;
 *     lil_store_open(NULL, NULL, &st);             // ./.lil or $LIL_DIR
 *     lil_run_open(st, "invoice-42", NULL, &run);  // creates or resumes
 *     lil_step(run, "fetch", fetch_fn, ud, &out);  // runs once, ever
 *     lil_free(out.data);
 *     lil_run_complete(run, "ok", 2);
 *     lil_run_close(run);
 *     lil_store_close(st);
 *
 * Conventions (they hold for every call below unless its comment says
 * otherwise):
 *
 *  - Every call that can fail returns a lil_status.  LIL_OK is 0, errors are
 *    negative.  The library never aborts, exits or prints.
 *  - Out-parameters come last.  On entry they are cleared (NULL, 0); they are
 *    assigned only when the call returns LIL_OK.
 *  - A failing call leaves a message on the handle it was made on
 *    (lil_store_errmsg, lil_run_errmsg) and in the calling thread's own slot
 *    (lil_errmsg).  Messages name the run, the step, the file and the byte
 *    offset where there is one.
 *  - Inputs are copied.  Memory the library hands out (lil_bytes.data, char *)
 *    belongs to the caller and is released with lil_free().
 *  - Closing or freeing NULL is harmless.  Using a closed handle returns
 *    LIL_E_INVAL where the library can tell (handles carry a magic number),
 *    but is a bug in the caller all the same.
 *  - Strings are NUL-terminated UTF-8 unless a length is given.
 *
 * Thread rules: an env may be shared by all threads.  A store may be shared by
 * all threads.  A run may be used by many threads at once: lil_step and
 * lil_effect from several threads proceed in parallel and their syncs are
 * shared (group commit).  Threads that run steps concurrently must give them
 * distinct names: the occurrence number of a name (see lil_step) follows call
 * order, which concurrent threads do not fix.  Closing a handle while another
 * thread uses it is a bug in the caller.
 */
#ifndef LIL_LIL_H
#define LIL_LIL_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(LIL_BUILDING) && defined(__GNUC__)
#define LIL_API __attribute__((visibility("default")))
#else
#define LIL_API
#endif

#if defined(__GNUC__)
#define LIL_PRINTF(f, a) __attribute__((format(printf, f, a)))
#else
#define LIL_PRINTF(f, a)
#endif

#define LIL_VERSION_MAJOR 0
#define LIL_VERSION_MINOR 1
#define LIL_VERSION_PATCH 0
#define LIL_VERSION       "0.1.0"

/* The version of the library actually linked, e.g. "0.1.0". */
LIL_API const char *lil_version(void);

/* ------------------------------------------------------------------------ */
/* Status codes                                                              */

typedef enum lil_status {
    LIL_OK = 0,
    LIL_E_INVAL = -1,      /* caller misuse: NULL, bad id or name, closed handle */
    LIL_E_NOMEM = -2,      /* an allocation failed */
    LIL_E_IO = -3,         /* a system call failed; errno in lil_run_errno() */
    LIL_E_CORRUPT = -4,    /* journal damaged before its tail; offset in message */
    LIL_E_LOCKED = -5,     /* another process holds the run (pid in message) */
    LIL_E_POISONED = -6,   /* a write or sync failed earlier; reopen the run */
    LIL_E_TOOBIG = -7,     /* a configured limit was hit (record size, id) */
    LIL_E_SPEC = -8,       /* a loop spec has errors (see its diagnostics) */
    LIL_E_HTTP = -9,       /* reserved for HTTP effects */
    LIL_E_CHILD = -10,     /* reserved for child processes */
    LIL_E_PG = -11,        /* the PostgreSQL server failed or refused */
    LIL_E_VERSION = -12,   /* journal written by a newer format than this library */
    LIL_E_FAILED = -13,    /* the step's function failed (now or in a past run) */
    LIL_E_UNCERTAIN = -14, /* an effect started and its outcome is unknown */
    LIL_E_NONDET = -15,    /* replay found another kind or request at this step */
    LIL_E_KEY = -16,       /* journal key (LIL_JOURNAL_KEY) missing or wrong */
    LIL_E_NOTFOUND = -17,  /* no such run (or record) */
    LIL_E_DONE = -18,      /* the run has ended (completed, failed or stopped) */
    LIL_E_ROLLBACK = -19,  /* journal behind the store's record of it (older copy,
                              cut, emptied or deleted); seqs in message */
} lil_status;

/* Static text for a status code, e.g. "journal is damaged".  Never NULL. */
LIL_API const char *lil_strerror(lil_status s);

/* The name of a status code, e.g. "LIL_E_CORRUPT".  Never NULL. */
LIL_API const char *lil_status_name(lil_status s);

/* The message of the calling thread's last failing call on any handle.
 * Valid until the thread's next failing call.  "" when there was none. */
LIL_API const char *lil_errmsg(void);

/* ------------------------------------------------------------------------ */
/* Memory                                                                    */

/* Bytes handed out by the library.  data is owned by the caller, released
 * with lil_free(), and always followed by one NUL byte that len does not
 * count, so a text or JSON result can be used as a C string directly. */
typedef struct lil_bytes {
    void *data;
    size_t len;
} lil_bytes;

/* Release memory the library handed out.  lil_free(NULL) does nothing.
 * Works whichever env allocated it, but the allocator installed in that env
 * (and its ud) must still be valid. */
LIL_API void lil_free(void *p);

/* ------------------------------------------------------------------------ */
/* Environment: allocator, logging.                                          */

typedef struct lil_env lil_env;

/* Create an environment with malloc/realloc/free and no logging. */
LIL_API lil_status lil_env_new(lil_env **out);

/* Free an environment.  Every store opened with it must be closed first. */
LIL_API void lil_env_free(lil_env *env);

typedef void *(*lil_malloc_fn)(void *ud, size_t n);
typedef void *(*lil_realloc_fn)(void *ud, void *p, size_t n);
typedef void (*lil_free_fn)(void *ud, void *p);

/* Install an allocator.  Must be called before the env opens any store.
 * All three functions are required.  A failing allocation becomes
 * LIL_E_NOMEM; the library never aborts on it. */
LIL_API lil_status lil_env_set_allocator(lil_env *env, lil_malloc_fn malloc_fn,
                                         lil_realloc_fn realloc_fn, lil_free_fn free_fn,
                                         void *ud);

typedef enum lil_log_level {
    LIL_LOG_DEBUG = 10,
    LIL_LOG_INFO = 20,
    LIL_LOG_WARN = 30,
    LIL_LOG_ERROR = 40,
} lil_log_level;

/* Called for each log line at or above min_level: one line of key=value
 * pairs, always with run= where a run is concerned.  It may be called from
 * any thread that uses the env; it must not call back into lil. */
typedef void (*lil_log_fn)(void *ud, int level, const char *msg);

/* Install a log callback (NULL removes it).  The default logs nothing. */
LIL_API lil_status lil_env_set_log(lil_env *env, lil_log_fn fn, void *ud,
                                   int min_level);

/* ------------------------------------------------------------------------ */
/* Store: where runs (one journal each) and markers live: a directory,      */
/* or a PostgreSQL database.                                                */

typedef struct lil_store lil_store;

/* Open the store in directory dir, creating it (mode 0700) if it is
 * missing.  dir NULL means $LIL_DIR, or ".lil" in the working directory
 * when LIL_DIR is unset or empty.  env NULL means a private default env that
 * the store owns.  An env passed in must outlive the store.
 *
 * A dir that starts with "postgresql://" or "postgres://" is a libpq
 * connection URI instead: the PostgreSQL store (docs/postgres.md), whose
 * tables lil_store_schema creates (`lil db init`).  Its runs behave as the
 * file store's (steps, effects, markers, stop requests, the hash chain,
 * group commit), each record committed before the call that appends it
 * returns.  The query parameter schema=NAME picks the schema of lil's
 * tables (default "lil").  libpq.so.5 is loaded on the first such open.
 * Opening it connects and checks the schema: LIL_E_PG when the server
 * cannot be reached or refuses (the message has the server's words and
 * what to do: a missing schema says to run `lil db init`), LIL_E_VERSION
 * when the schema is newer than this library, LIL_E_INVAL for a connection
 * string libpq cannot parse.  lil_store_path gives the location with its
 * password, if any, replaced by "***".
 *
 * A dir "mem:NAME" is a store in this process's memory: its runs, markers
 * and stop requests stay until the process exits (a store opened again
 * under the same NAME finds them), and no other process sees them.  It has
 * no queue (lil_loop_submit).  For tests and for programs that need
 * replay within one process only.
 *
 * The store reads its settings from the environment here, once: LIL_SYNC
 * (the sync mode of runs opened with LIL_SYNC_DEFAULT; an unknown value
 * fails those opens with LIL_E_INVAL), LIL_JOURNAL_KEY (the journal key,
 * see lil_store_set_key) and LIL_SHARED_STORE (below).  Changing the
 * environment later does not affect an open store.
 *
 * A store directory must belong to this process's effective user and be
 * writable by nobody else (not by its group, not by every user, sticky bit
 * or not), as ssh asks of ~/.ssh: whoever may write in it can plant runs,
 * stop requests, markers, links or FIFOs there.  Another directory fails
 * with LIL_E_IO (errno EPERM) and a message saying why, unless the store
 * is shared on purpose: LIL_STORE_SHARED (lil_store_open_with) or
 * LIL_SHARED_STORE=1 (also true, yes, on) in the environment.  Whether
 * shared or not, files of a store are opened only when they are regular
 * files and never through a symbolic link (docs/security.md, "Files and
 * children").
 *
 * A store handle may be used in a child forked after it was opened (to open
 * runs of the child's own), but a run handle may not: runs are locked per
 * open file, and a child forked while a run is open shares its lock until
 * it exits (see lil_run_open).  Fork before opening runs.
 * Errors: LIL_E_IO (cannot create or open dir; a directory refused as
 * above), LIL_E_NOMEM; for PostgreSQL also LIL_E_PG, LIL_E_VERSION,
 * LIL_E_INVAL (above). */
LIL_API lil_status lil_store_open(lil_env *env, const char *dir, lil_store **out);

/* Flags of lil_store_opts. */
#define LIL_STORE_SHARED                                  \
    0x1u /* accept a store directory another user owns or \
            may write in (the check of lil_store_open) */

typedef struct lil_store_opts {
    size_t struct_size; /* sizeof(lil_store_opts) */
    unsigned flags;     /* LIL_STORE_* */
} lil_store_opts;

/* lil_store_open with options (opts NULL: as lil_store_open).  Errors as
 * lil_store_open's, and LIL_E_INVAL for a struct_size or flags this
 * library does not know. */
LIL_API lil_status lil_store_open_with(lil_env *env, const char *dir,
                                       const lil_store_opts *opts, lil_store **out);

/* The store lil_store_open(env, dir, ...) opens, without opening it: dir
 * when it is not NULL (an empty dir: ".lil"), else $LIL_DIR when it is set
 * and not empty, else ".lil" (relative to the current directory).  *out
 * gets a copy (free with lil_free); *is_pg (may be NULL) gets 1 when it is
 * a PostgreSQL connection URI (postgresql:// or postgres://), else 0 (a
 * directory).  Tools that take --dir ask this instead of reading LIL_DIR.
 * Errors: LIL_E_INVAL (out NULL), LIL_E_NOMEM. */
LIL_API lil_status lil_store_location(const char *dir, char **out, int *is_pg);

/* The value in force of one of the environment variables the library
 * reads (docs/api.md, "Settings"), as the library reads it: name is its
 * LIL_ name, its LOOPY_ alias (the LIL_ one wins when set and not empty)
 * or a host variable the library consults (USER, TMPDIR, PATH, VIRTUAL_ENV).  *value
 * gets a copy (free with lil_free) of the variable's value, or of the
 * default when it is unset or empty, or NULL when it has no default.
 * Errors: LIL_E_NOTFOUND (no such setting), LIL_E_INVAL (name or value
 * NULL; a value the library would refuse, the message saying why, e.g.
 * "LIL_SPEC_MAX_BYTES must be a positive number of bytes, not '1MB'"; a
 * secret such as LIL_JOURNAL_KEY, whose value is never given),
 * LIL_E_NOMEM. */
LIL_API lil_status lil_setting(const char *name, char **value);

/* Set the journal key (any bytes, len > 0) for the runs this store opens
 * and checks from now on, in place of $LIL_JOURNAL_KEY; key NULL (or len
 * 0) means none.  A new run is then created keyed (HMAC-SHA-256 chain) and
 * a keyed run opens only with its key (LIL_E_KEY otherwise).  The bytes are
 * copied; runs already open are not affected.  A program that holds its
 * key need not put it in the environment.
 * Errors: LIL_E_INVAL (bad handle), LIL_E_NOMEM. */
LIL_API lil_status lil_store_set_key(lil_store *st, const void *key, size_t len);

/* Whether this file store makes a journal key of its own (on: 1, the
 * default unless LIL_STORE_KEY=off; off: 0).  A file store without a key
 * file, without a key given (LIL_JOURNAL_KEY, lil_store_set_key) and
 * holding no journal and no marker yet makes one the first time it creates
 * a run, a marker or an imported run: <dir>/journal.key, 32 random bytes,
 * mode 0600, never printed (docs/format.md, docs/security.md).  From then
 * on its journals are keyed (HMAC-SHA-256 chain), its markers' done files
 * authenticated and a rollback record (<dir>/<run id>.head) kept of each
 * keyed run: an open that finds a journal behind it fails with
 * LIL_E_ROLLBACK.  A store that already holds journals without a key file
 * makes none: its runs open as before.  A key file present is always used
 * (unless a key is given), whatever this says.  Other stores (PostgreSQL,
 * mem:) have no key of their own: their key is the caller's.  Call before
 * the first run is created.  Errors: LIL_E_INVAL (bad handle). */
LIL_API lil_status lil_store_set_own_key(lil_store *st, int on);

/* Close the store.  Every run opened from it must be closed first. */
LIL_API void lil_store_close(lil_store *st);

/* Where the store is, as opened (the file store: its directory).  Valid
 * until lil_store_close. */
LIL_API const char *lil_store_path(const lil_store *st);

/* Message of the last failing call on the store (including lil_run_open and
 * lil_marker).  Valid until the next call on the store. */
LIL_API const char *lil_store_errmsg(const lil_store *st);

/* Call fn once for each run in the store, in byte order of the ids.  fn
 * returns 0 to go on, anything else to stop (that value is then ignored and
 * LIL_OK returned).  Files that are not journals are skipped. */
typedef int (*lil_run_id_fn)(void *ud, const char *run_id);
LIL_API lil_status lil_store_foreach_run(lil_store *st, lil_run_id_fn fn, void *ud);

/* A cheap look at whether the store's runs may have been created or removed
 * since *stamp (the caller's: 0 before the first look), for a client that
 * follows the list (a server telling its clients the list changed) without
 * listing it each time: *changed is 1 when they may have (never 0 when one
 * was), and *stamp is brought up to date.  The store directory: its
 * modification time, one fstat (a time so recent that the kernel's coarse
 * clock could hide a later change counts as changed); PostgreSQL: one query
 * of the runs' count and newest creation; a memory store: always 1.  A run
 * that only grew does not count (lil_run_poll).  Errors (the message on
 * the store): LIL_E_INVAL (bad handle, stamp or changed NULL; *changed is
 * then 1), LIL_E_IO, LIL_E_PG. */
LIL_API lil_status lil_store_poll(lil_store *st, int64_t *stamp, int *changed);

/* LIL_OK if run_id is acceptable, else LIL_E_INVAL (or LIL_E_TOOBIG when
 * it is longer than LIL_RUN_ID_MAX bytes).  A run id is 1 to 200 bytes of
 * UTF-8 (RFC 3629: no overlong forms, no surrogates), not "." or "..", and
 * holds no '/', no control character (0x00-0x1f, 0x7f, U+0080-U+009F) and
 * no bidirectional mark (U+061C, U+200E-U+200F, U+202A-U+202E,
 * U+2066-U+2069). */
#define LIL_RUN_ID_MAX 200
LIL_API lil_status lil_run_id_check(const char *run_id);

/* ------------------------------------------------------------------------ */
/* Runs                                                                      */

typedef struct lil_run lil_run;

typedef enum lil_sync {
    LIL_SYNC_DEFAULT = 0, /* $LIL_SYNC if set ("full", "normal", "off"), else full */
    LIL_SYNC_FULL = 1,    /* every commit is fdatasync'd before lil returns */
    LIL_SYNC_NORMAL = 2,  /* commits are grouped; a sync always happens before an
                             effect starts, before the run records an outcome,
                             on lil_run_sync, and at close */
    LIL_SYNC_OFF = 3,     /* never sync: survives a process crash, not a power cut */
} lil_sync;

/* The name of a sync mode: "full", "normal", "off", or "default" for
 * LIL_SYNC_DEFAULT; NULL for a value outside the enum.  Static text. */
LIL_API const char *lil_sync_name(lil_sync sync);

/* The sync mode a name gives ("full", "normal", "off" or "default", as
 * lil_sync_name prints them): LIL_OK and *out set, else LIL_E_INVAL. */
LIL_API lil_status lil_sync_from_name(const char *name, lil_sync *out);

enum {
    /* Inspect only: take no lock, create nothing, repair nothing, and refuse
     * every call that would write.  May be used while another process holds
     * the run; records it is still writing may not be seen. */
    LIL_OPEN_READONLY = 1u << 0,
    /* Fail with LIL_E_NOTFOUND instead of creating a missing run. */
    LIL_OPEN_EXISTING = 1u << 1,
    /* Verify the hash chain of every record at open, as lil_run_check does
     * (a keyed journal's chain is always verified at open). */
    LIL_OPEN_VERIFY_CHAIN = 1u << 2,
};

typedef struct lil_run_opts {
    size_t struct_size; /* sizeof(lil_run_opts): lets the struct grow */
    lil_sync sync;      /* LIL_SYNC_DEFAULT if zero */
    unsigned flags;     /* LIL_OPEN_*; any other bit is LIL_E_INVAL */
    size_t max_record;  /* largest record accepted; 0 = 64 MiB */
} lil_run_opts;

/* Open run run_id of the store, creating its journal when it does not exist
 * (unless LIL_OPEN_EXISTING).  Opening scans the journal once: it checks
 * every record's length, checksum and sequence number (so a record damaged,
 * removed or moved is found) and truncates a torn last record (a crash in
 * the middle of an append).  Replay then follows the journal in order; the
 * index of every step is built only when a call leaves that order (threads,
 * changed code) or the journal holds effects.  opts NULL means defaults.
 *
 * Recovery (docs/format.md has the rule): at the first invalid record the
 * scan looks on for intact records.  When there are none (a torn tail), or
 * only OPEN and CLOSE records, a writable open truncates the journal there
 * and logs it (WARN, event=torn_tail); nothing acknowledged is lost.  When
 * anything else follows (a step, an intent, a resolution, an outcome), the
 * bad bytes are damage, or a power cut that made later unsynced writes
 * durable but not an earlier one: lil cannot tell which, and dropping those
 * records would run completed steps again.  The open refuses with
 * LIL_E_CORRUPT (logged at WARN, event=damaged), naming the offset and how
 * many records and steps follow; `lil check` shows them, and `lil check
 * --repair` (lil_run_check with LIL_CHECK_REPAIR) drops them when asked.  A
 * power cut can need that repair too: with sync full only in the first
 * commit after an open (the OPEN record is not synced on its own), with
 * normal and off, whose commits are not all synced, more often.
 *
 * A journal with no complete record (its creation was cut short, so no
 * open ever returned on it) counts as not created: a read-only open, or one
 * with LIL_OPEN_EXISTING, fails with LIL_E_NOTFOUND and writes nothing; a
 * writable open starts it afresh (header and BEGIN, synced).
 *
 * The hash chain of a plain journal is verified by lil_run_check (`lil
 * check`), or at open with LIL_OPEN_VERIFY_CHAIN: without a key anyone can
 * recompute it, so it proves integrity against deliberate edits only when
 * checked against a chain value kept elsewhere, and checksums already catch
 * accidental damage.  A journal written with a key (lil_store_set_key, or
 * $LIL_JOURNAL_KEY when the store was opened) needs the same key to open;
 * its chain is HMAC-SHA-256, verified at every open, and a wrong or missing
 * key is LIL_E_KEY.  The shared liblil loads OpenSSL's
 * libcrypto.so.3 for HMAC-SHA-256 on the first keyed open in the process; if
 * it cannot, that open fails with LIL_E_IO and a message naming the library.
 *
 * Processes and fork: the run's lock is an open-file-description lock, so a
 * child that forks without exec shares it through the journal descriptor
 * it inherits (journal descriptors are close-on-exec, so exec drops it).
 * Such a child keeps the run locked after its parent closed the run or
 * died, until it exits or closes its copy; another opener then gets
 * LIL_E_LOCKED "held by another process" (the pid that last opened the run
 * is named only while it still has the journal open).  The handle itself
 * belongs to the process that opened it: in a forked child every call on
 * it fails with LIL_E_INVAL ("... belongs to pid P"), and lil_run_close
 * there frees the child's copy and writes nothing, leaving the parent's
 * journal and lock alone.  A process that forks without exec (a
 * supervisor, workers) must do so before it opens runs: a child forked
 * while runs are open holds their locks for as long as it lives.
 *
 * Errors: LIL_E_INVAL (bad id, see lil_run_id_check; unknown flags; an
 * unreadable $LIL_SYNC with LIL_SYNC_DEFAULT), LIL_E_LOCKED ("run R is
 * held by pid P" or "by another process": one process at a time writes a
 * run; the lock dies with its process, see fork above), LIL_E_CORRUPT
 * (damage before the tail, see above; the message names the byte offset;
 * `lil check --repair` truncates it), LIL_E_VERSION, LIL_E_KEY,
 * LIL_E_NOTFOUND, LIL_E_IO, LIL_E_NOMEM.  The message is on the store. */
LIL_API lil_status lil_run_open(lil_store *st, const char *run_id,
                                const lil_run_opts *opts, lil_run **out);

/* Sync what is not yet synced, append a CLOSE record (sync modes full and
 * normal: it spares the next open a sync; docs/format.md), release the lock
 * and free the handle.  Returns the status of that last sync and write
 * (LIL_OK, LIL_E_IO, LIL_E_POISONED); the handle is freed whatever it
 * returns.  lil_run_close(NULL) is LIL_OK.  In a child forked after the
 * open it frees the child's copy only, writes nothing and returns
 * LIL_E_INVAL (see lil_run_open). */
LIL_API lil_status lil_run_close(lil_run *run);

/* The run's id.  Valid until lil_run_close. */
LIL_API const char *lil_run_id(const lil_run *run);

/* Message of the last failing call on the run by any thread.  Valid until
 * the next call on the run.  Threads sharing a run should use lil_errmsg(). */
LIL_API const char *lil_run_errmsg(const lil_run *run);

/* errno of the last LIL_E_IO on the run, else 0. */
LIL_API int lil_run_errno(const lil_run *run);

typedef enum lil_run_state {
    LIL_RUN_RUNNING = 1,   /* open for more steps */
    LIL_RUN_COMPLETED = 2, /* lil_run_complete was called; result in lil_run_result */
    LIL_RUN_FAILED = 3,    /* lil_run_fail was called */
    LIL_RUN_UNCERTAIN = 4, /* an effect has an intent and no outcome: resolve it */
    LIL_RUN_STOPPED = 5,   /* an uncertain effect was resolved with abort */
} lil_run_state;

/* The run's state.  0 for NULL or a closed handle. */
LIL_API lil_run_state lil_run_status(const lil_run *run);

/* "running", "completed", "failed", "uncertain", "stopped", or "unknown". */
LIL_API const char *lil_run_state_name(lil_run_state state);

/* Make the run durable now: write and fdatasync everything appended so far,
 * whatever the sync mode (with LIL_SYNC_OFF too). */
LIL_API lil_status lil_run_sync(lil_run *run);

/* ------------------------------------------------------------------------ */
/* Steps                                                                     */

/* The context a step function receives.  Valid only during that call. */
typedef struct lil_call lil_call;

/* A step function.  Return 0 for success; any other value means the step
 * failed (give the reason with lil_call_fail).  The result is what was set
 * with lil_call_set_result / lil_call_set_json (empty if nothing was set). */
typedef int (*lil_fn)(lil_call *call, void *ud);

/* Set the step's result to len bytes at data (copied; replaces an earlier
 * result).  Errors: LIL_E_TOOBIG (over the run's max_record), LIL_E_NOMEM. */
LIL_API lil_status lil_call_set_result(lil_call *call, const void *data, size_t len);

/* Set the step's result to the JSON text json, validated and stored compact
 * with sorted keys (so equal values give equal bytes).  Errors: LIL_E_INVAL
 * with the line and column of the syntax error, LIL_E_TOOBIG, LIL_E_NOMEM. */
LIL_API lil_status lil_call_set_json(lil_call *call, const char *json);

/* Like lil_call_set_json, but build the value from a jansson pack format,
 * e.g. lil_call_set_jsonf(call, "{s:i, s:s}", "n", 3, "who", name). */
LIL_API lil_status lil_call_set_jsonf(lil_call *call, const char *fmt, ...);

/* Record why the step failed (printf format).  The function should then
 * return non-zero.  The message is journaled and replayed. */
LIL_API lil_status lil_call_fail(lil_call *call, const char *fmt, ...) LIL_PRINTF(2, 3);

/* The step's identity, e.g. "fetch" or "fetch#2".  Valid during the call. */
LIL_API const char *lil_call_identity(const lil_call *call);

/* A key that identifies this step or marker for a remote service and stays
 * the same when the step is run again after a crash: "lil-" followed by 32
 * hex digits of SHA-256(run id, identity).  Pass it as an idempotency key
 * (Idempotency-Key header, client message id, ...).  Valid during the call. */
LIL_API const char *lil_call_idempotency_key(const lil_call *call);

/* 1 for the first attempt; 2, 3, ... when the step runs again after an
 * uncertain outcome was resolved with retry. */
LIL_API unsigned lil_call_attempt(const lil_call *call);

/* Step names: 1 to 200 bytes, no control characters and no '#' (which
 * separates the occurrence number). */
#define LIL_STEP_NAME_MAX 200

/* Run a memoized step.  Its identity is name plus its occurrence in this
 * execution of the program: the first lil_step(run, "fetch", ...) is "fetch",
 * the second "fetch#2", and so on, so a loop may reuse a name.
 *
 * If the journal holds that identity completed, fn is not called and *out
 * receives the journaled result.  If it holds it failed, fn is not called
 * and the journaled error is returned again (LIL_E_FAILED, message
 * "step 'fetch' failed: <reason>").  Otherwise fn runs, and its result or
 * failure is appended to the journal; with LIL_SYNC_FULL it is synced
 * before lil_step returns.
 *
 * out may be NULL when the result is not wanted.  Calls from several threads
 * run their functions in parallel.
 *
 * Errors: LIL_E_FAILED, LIL_E_NONDET (the journal holds an effect at this
 * identity), LIL_E_UNCERTAIN (the run is uncertain), LIL_E_DONE (the run
 * has ended and this step was never run), LIL_E_POISONED, LIL_E_IO,
 * LIL_E_TOOBIG, LIL_E_NOMEM, LIL_E_INVAL. */
LIL_API lil_status lil_step(lil_run *run, const char *name, lil_fn fn, void *ud,
                            lil_bytes *out);

/* Run a step that has an external side effect (an HTTP call, a payment, a
 * message).  Like lil_step, and in addition an intent record carrying
 * SHA-256(request) is appended and synced before fn runs.  If the process
 * dies after the intent and before the outcome is journaled, the outcome is
 * unknown: on reopen the run is LIL_RUN_UNCERTAIN and every step returns
 * LIL_E_UNCERTAIN until lil_run_resolve decides.
 *
 * request (len bytes, may be NULL/0) describes what the effect will do.  A
 * replay whose request differs from the journaled one, or that finds a plain
 * step at this identity, fails with LIL_E_NONDET instead of reusing it. */
LIL_API lil_status lil_effect(lil_run *run, const char *name, const void *request,
                              size_t request_len, lil_fn fn, void *ud, lil_bytes *out);

/* Steps in two calls, for a host whose step code cannot run inside a
 * callback (an event loop awaiting a coroutine, a language binding).
 * lil_step_begin does what lil_step does up to calling fn: the identity is
 * counted, and a journaled outcome is returned at once (LIL_OK with *call
 * NULL and *out set, or LIL_E_FAILED and the other errors of lil_step).
 * When the step must run, it returns LIL_OK with *call set (and *out
 * empty): the host does the work, sets the result on call
 * (lil_call_set_result, lil_call_set_json, ...) or its failure
 * (lil_call_fail), and then lil_call_end journals it exactly as lil_step
 * does when fn returns (returning LIL_E_FAILED for a failure, the result
 * in *out, which may be NULL), or lil_call_cancel journals nothing.
 * lil_effect_begin is the same for lil_effect: its intent is journaled
 * (and synced) before it returns a call.
 *
 * Cancelling a plain step leaves it as if never run (its occurrence is
 * still counted in this execution: the next call of the name is the next
 * occurrence); cancelling an effect leaves its intent without an outcome,
 * so the run is uncertain (lil_run_resolve), as after a crash.
 *
 * A begun call may be used, ended and cancelled from any thread, once;
 * lil_call_end and lil_call_cancel free it whatever they return.  Every
 * begun call must be ended or cancelled before lil_run_close. */
LIL_API lil_status lil_step_begin(lil_run *run, const char *name, lil_call **call,
                                  lil_bytes *out);
LIL_API lil_status lil_effect_begin(lil_run *run, const char *name, const void *request,
                                    size_t request_len, lil_call **call,
                                    lil_bytes *out);

/* Journal (or, for a marker, publish) the outcome set on a call begun with
 * lil_step_begin, lil_effect_begin or lil_marker_begin, and free it.  A
 * call inside a step function is LIL_E_INVAL.  Errors: those of lil_step
 * (lil_marker for a marker). */
LIL_API lil_status lil_call_end(lil_call *call, lil_bytes *out);

/* Give up a begun call without an outcome, and free it (see lil_step_begin;
 * a marker is left as when its function fails: the next caller runs it). */
LIL_API lil_status lil_call_cancel(lil_call *call);

/* ------------------------------------------------------------------------ */
/* Uncertain effects                                                         */

/* Number of effects of the run whose outcome is unknown. */
LIL_API size_t lil_run_uncertain_count(const lil_run *run);

/* The identity of the i-th uncertain effect (0-based), e.g. "charge#2".
 * Valid until the next call on the run.  NULL if i is out of range. */
LIL_API const char *lil_run_uncertain_at(const lil_run *run, size_t i);

typedef enum lil_resolution {
    LIL_RESOLVE_RETRY = 1,       /* run the effect again (at-least-once) */
    LIL_RESOLVE_ASSUME_DONE = 2, /* take result as its outcome; do not run it */
    LIL_RESOLVE_ABORT = 3,       /* the effect fails and the run is stopped */
} lil_resolution;

/* Resolve the uncertain effect identity.  The decision is journaled (synced)
 * with actor and reason (both required, non-empty, at most 200 and 1000
 * bytes).  result/result_len are the outcome for ASSUME_DONE and must be
 * NULL/0 otherwise.  When no uncertain effect remains the run is running
 * again (or stopped, after ABORT).
 * Errors: LIL_E_NOTFOUND (identity is not uncertain), LIL_E_INVAL (also an
 * actor or reason that is not UTF-8), LIL_E_NOMEM, I/O. */
LIL_API lil_status lil_run_resolve(lil_run *run, const char *identity,
                                   lil_resolution how, const void *result,
                                   size_t result_len, const char *actor,
                                   const char *reason);

/* ------------------------------------------------------------------------ */
/* Run outcome                                                               */

/* Record that the run completed with result (len bytes; may be NULL/0).
 * Synced before returning in every sync mode except LIL_SYNC_OFF.  Later
 * lil_step calls replay completed steps but run nothing new (LIL_E_DONE).
 * Errors: LIL_E_DONE (already ended), LIL_E_UNCERTAIN, I/O. */
LIL_API lil_status lil_run_complete(lil_run *run, const void *result, size_t len);

/* Record that the run failed, with a reason.  Synced like lil_run_complete. */
LIL_API lil_status lil_run_fail(lil_run *run, const char *reason);

/* The result of a completed run (LIL_OK) or the reason of a failed one
 * (LIL_E_FAILED, reason in the message).  LIL_E_NOTFOUND while the run has
 * no outcome. */
LIL_API lil_status lil_run_result(lil_run *run, lil_bytes *out);

/* ------------------------------------------------------------------------ */
/* Markers: a local side effect done exactly once across processes.         */

typedef enum lil_marker_policy {
    /* A previous holder died inside fn: run fn again (its effect must be
     * idempotent or atomic; use lil_call_idempotency_key for remote ones). */
    LIL_MARKER_RETRY = 0,
    /* A previous holder died inside fn: assume it finished; publish the
     * marker with an empty result and do not run fn (at-most-once). */
    LIL_MARKER_ASSUME_DONE = 1,
    /* A previous holder died inside fn: return LIL_E_UNCERTAIN and leave
     * the marker in doubt for a person to decide (lil_marker_reset). */
    LIL_MARKER_RAISE = 2,
} lil_marker_policy;

/* Run fn once for the store-wide marker name.  The first caller to finish
 * fn publishes the marker (with fn's result) atomically and durably; every
 * later caller, in any process, gets that result without running fn.
 * Concurrent callers wait for the one inside fn (a lock that dies with its
 * process).  If fn fails, nothing is published and the next caller runs fn.
 * If a holder died inside fn, policy decides (see lil_marker_policy).
 * Names follow the step-name rules.  Errors on the store. */
LIL_API lil_status lil_marker(lil_store *st, const char *name, int policy, lil_fn fn,
                              void *ud, lil_bytes *out);

/* lil_marker in two calls (see lil_step_begin): a published result is
 * returned at once (LIL_OK, *call NULL, *out set); when the caller must do
 * the work, *call is set and the marker stays held -- every other caller,
 * in any process, waits -- until lil_call_end publishes the result set on
 * call (nothing when lil_call_fail was called: LIL_E_FAILED) or
 * lil_call_cancel gives up.  A process that dies holding it leaves the
 * marker in doubt (policy).  Errors on the store. */
LIL_API lil_status lil_marker_begin(lil_store *st, const char *name, int policy,
                                    lil_call **call, lil_bytes *out);

/* Forget marker name (published or in doubt), so that fn runs again.
 * LIL_E_NOTFOUND if there is nothing to forget. */
LIL_API lil_status lil_marker_reset(lil_store *st, const char *name);

/* ------------------------------------------------------------------------ */
/* Inspection                                                                */

/* Record types of the journal (docs/format.md). */
typedef enum lil_record_type {
    LIL_REC_BEGIN = 1,       /* first record: the run id */
    LIL_REC_OPEN = 2,        /* a process opened the run: {"pid":P} */
    LIL_REC_STEP = 3,        /* a step completed: result */
    LIL_REC_STEP_FAILED = 4, /* a step failed: reason */
    LIL_REC_INTENT = 5,      /* an effect is about to start: SHA-256(request) */
    LIL_REC_RESOLVE = 6,     /* an uncertain effect was resolved: JSON */
    LIL_REC_RUN_DONE = 7,    /* the run completed: result */
    LIL_REC_RUN_FAILED = 8,  /* the run failed: reason */
    LIL_REC_CLOSE = 9,       /* a process closed the run after its last sync */
    LIL_REC_REQUEST = 10,    /* an effect's note over 4 KiB, in full: the
                                intent after it (LIL_RECF_REQUEST) holds its
                                SHA-256, length and first bytes */
    LIL_REC_FORK = 11,       /* record 2 of a fork (lil_run_fork): key the
                                source run, payload its provenance (JSON) */
} lil_record_type;

/* "begin", "open", "step", "step-failed", "intent", "resolve", "run-done",
 * "run-failed", "close", "request", "fork", or "unknown". */
LIL_API const char *lil_record_type_name(int type);

/* Record flag: the step is an effect (its intent precedes it). */
#define LIL_RECF_EFFECT 0x01u
/* Record flag of an intent whose note is in the LIL_REC_REQUEST record
 * before it: its payload is SHA-256(request), SHA-256(note), the note's
 * length (8 bytes, little-endian) and the note's first bytes
 * (docs/format.md). */
#define LIL_RECF_REQUEST 0x02u

typedef struct lil_record {
    uint64_t seq;    /* 1, 2, 3, ... */
    uint64_t offset; /* where the record is: in the file store, its byte
                        offset in the journal file; in another store, a
                        position that orders the run's records */
    uint32_t size;   /* bytes of the whole record as stored (on disk) */
    int64_t ts_ns;   /* when it was written, ns since the Unix epoch */
    uint32_t dur_us; /* time the step's function took, µs (0 if none) */
    int type;        /* lil_record_type */
    unsigned flags;  /* LIL_RECF_* */
    const char *key; /* identity ("fetch#2"), run id, or ""; NUL-terminated */
    size_t key_len;
    const void *payload; /* result, reason, request hash, JSON */
    size_t payload_len;
} lil_record;

/* Called for each record in journal order; return 0 to go on, non-zero to
 * stop.  The record and its pointers are valid during the call only. */
typedef int (*lil_record_fn)(void *ud, const lil_record *rec);

/* Walk the run's records, including those this handle appended. */
LIL_API lil_status lil_run_foreach(lil_run *run, lil_record_fn fn, void *ud);

typedef struct lil_run_info {
    size_t struct_size; /* sizeof(lil_run_info), set by the caller */
    lil_run_state state;
    uint64_t records;       /* records in the journal */
    uint64_t steps_done;    /* completed steps and effects */
    uint64_t steps_failed;  /* failed steps */
    uint64_t journal_bytes; /* bytes of valid journal as stored (the file store:
                               preallocated space excluded) */
    int64_t created_ns;     /* time of the first record */
    int64_t last_ns;        /* time of the last record */
    int holder_pid;         /* pid holding the run, 0 if none; -1 if another
                               process holds it whose pid is not known (see
                               lil_run_open on fork) */
    lil_sync sync;          /* sync mode of this handle */
    int keyed;              /* 1 if the chain is HMAC (a key was needed) */
    uint64_t torn_offset;   /* the open found a torn tail starting here (a
                               writable open has truncated it); 0 if none */
    uint64_t torn_records;  /* intact records after that torn tail: OPEN and
                               CLOSE records only (anything more and the
                               open refuses, see lil_run_open) */
} lil_run_info;

/* Fill *info (caller sets info->struct_size first). */
LIL_API lil_status lil_run_get_info(lil_run *run, lil_run_info *info);

/* ------------------------------------------------------------------------ */
/* Reading runs: facts, events, waiting (docs/api.md, "Reading runs")       */
/*                                                                          */
/* What a client that shows runs needs -- `lil ls`, `lil inspect`, a JSON-   */
/* RPC server, a web page -- without decoding records itself.  Each call    */
/* opens run_id read-only (no hold taken, nothing written: a run that       */
/* another process holds is read all the same), on any store, and closes    */
/* it before returning.  Documents are compact JSON in *json, owned by the  */
/* caller (lil_free).  Errors (the message on the store): LIL_E_INVAL (bad  */
/* store handle, bad run id, json NULL, a bad argument), LIL_E_NOTFOUND (no */
/* such run), and the open's: LIL_E_CORRUPT, LIL_E_KEY, LIL_E_VERSION,      */
/* LIL_E_IO, LIL_E_PG, LIL_E_NOMEM.                                         */

/* What run_id is now: {"run", "kind": "loop" | "program", "status",
 * "ended", "reason"?, "result"?, "steps": {"done", "failed"}, "records",
 * "last_seq", "journal_bytes", "created_ns", "last_ns", "keyed",
 * "holder": {"pid", "host"} or null, "uncertain": [{"step", "request"?}],
 * "iteration", "meters", "budget", "paused", "wake_at_ms", "usage" (what
 * its agent calls reported: {"calls", "estimated_calls", "unpriced_calls",
 * "tokens", "usd"}) (a loop run's, else null), "stop_request" (a pending request, or
 * null), "queue" (the PostgreSQL queue's state of the run, or null) and "loop": the
 * document of lil_loop_facts for a loop run, else null}.  status is the engine's
 * ("running", "completed", "failed", "uncertain", "stopped"; "running"
 * also for an uncertain run that another process holds: its effect is in
 * flight) or, for a loop run, the runner's (lil_loop_facts' "status";
 * "damaged" when its fold refuses the journal, the reason saying why).
 * "in_flight": the effect a process holding the run is in, {"step",
 * "started_ns", "elapsed_ms", and in a loop run "iteration", "kind"}, or
 * null (not held, or no effect without an outcome). */
LIL_API lil_status lil_run_facts(lil_store *st, const char *run_id, lil_bytes *json);

/* The run's history as typed, decoded events, from the record at seq
 * from_seq (0 or 1: the first), at most max events (0: 10000; a page may
 * pass max by the few events of its last record, never splitting one):
 *   {"run", "kind", "events": [...], "next", "more", "last_seq"}.
 * Each event has "seq" (the record that gave it: its position), "ts_ns",
 * "type" and "record": {"type", "key"}, then its type's fields (docs/api.md
 * has the table): run_start, process_open, process_close, step,
 * effect_start, effect, recovery, run_end, and in a loop run loop_start,
 * iteration_start, iteration_end, sleep, approval, pause, park, wake,
 * cap_tripped, stop, stop_cleared, terminated, observer, reserve, control
 * (each with "loop": the record's decoded name).  "next" is the seq to ask
 * from for the rest; "more" says a further record exists now; "last_seq" is
 * the run's last record. */
LIL_API lil_status lil_run_events(lil_store *st, const char *run_id, uint64_t from_seq,
                                  size_t max, lil_bytes *json);

/* A page of events that holds only what a reader needs (lil_run_events_with). */
typedef struct lil_events_opts {
    size_t struct_size;     /* sizeof(lil_events_opts), set by the caller */
    uint64_t from_seq;      /* as lil_run_events' */
    size_t max;             /* as lil_run_events' */
    unsigned flags;         /* LIL_EVENTS_*; any other bit is LIL_E_INVAL */
    const char *types;      /* NULL or "": every type; else the types wanted,
                               comma-separated ("effect,reserve"): no other
                               event is made (nor counted in max) */
    size_t last_iterations; /* > 0, a loop run: the page starts at the record
                               that starts the run's last N iterations (at
                               from_seq if that is later; at from_seq when
                               the run has fewer), and the page adds
                               "iterations_before": the iterations that
                               started before its first record */
} lil_events_opts;

enum {
    /* One event per record, {"seq", "type", "loop"?} only: no
     * "iteration_start" or "wake" before a record's own event, no "ts_ns",
     * "record" or type fields -- what each record is, cheaply. */
    LIL_EVENTS_BRIEF = 1u << 0,
    /* Each "iteration_end" event also holds "state" and "meters": the
     * snapshot's own, as journaled (docs/loops.md, "Records"), the state
     * the iteration committed -- what a reader shows of the run at that
     * iteration.  Together with LIL_EVENTS_BRIEF: LIL_E_INVAL (a brief
     * event holds no fields). */
    LIL_EVENTS_STATE = 1u << 1,
};

/* lil_run_events with options (opts NULL: as lil_run_events(st, run_id, 0,
 * 0, json)).  The page and the errors are lil_run_events'; LIL_E_INVAL also
 * for a bad struct_size or an unknown flag. */
LIL_API lil_status lil_run_events_with(lil_store *st, const char *run_id,
                                       const lil_events_opts *opts, lil_bytes *json);

/* Wait until run_id has a record after after_seq, or until timeout_ms (0
 * to 86400000) have passed: LIL_OK either way, *last_seq the run's last
 * seq (more than after_seq: it grew, read lil_run_events from
 * after_seq + 1).  Cheap while nothing happens: the file store looks at
 * the journal's modification time every 20 ms and reads the run only when
 * it changed; PostgreSQL asks for the run's last seq every 200 ms.  A new
 * record is seen within about that time of its commit.  Blocks the
 * calling thread only. */
LIL_API lil_status lil_run_wait(lil_store *st, const char *run_id, uint64_t after_seq,
                                int timeout_ms, uint64_t *last_seq);

/* Where a reader last saw a run (lil_run_poll): zero it before the first
 * look.  last_seq: the run's last seq then; stamp: the store's own mark of
 * when the run last changed (the file store: the journal's modification
 * time, ns), opaque to the caller. */
typedef struct lil_run_mark {
    uint64_t last_seq;
    int64_t stamp;
} lil_run_mark;

/* One look at run_id, without waiting: *changed = 1 when its last seq is no
 * longer mark->last_seq (it grew; mark updated: read lil_run_events from the
 * old last_seq + 1), else 0.  Cheap while nothing changes: the file store
 * looks at the journal's modification time (one open and fstat) and reads
 * the run only when it moved; PostgreSQL asks for the run's last seq (one
 * indexed query).  The first look of a zeroed mark reports any run with
 * records as changed.  Errors: LIL_E_INVAL (bad handle or run id, mark or
 * changed NULL), LIL_E_NOTFOUND (no such run), and the open's. */
LIL_API lil_status lil_run_poll(lil_store *st, const char *run_id, lil_run_mark *mark,
                                int *changed);

/* The journaled failure of the latest call of step name in this execution
 * of run (after lil_step, lil_effect, their _begin forms or lil_call_end
 * returned LIL_E_FAILED for it): its identity ("fetch#2", a string) and
 * its reason, whole, as journaled (the message of LIL_E_FAILED holds at
 * most 200 bytes of it) -- for a binding that raises a replayed failure
 * again.  Both are the caller's (lil_free), set only on success.  Errors:
 * LIL_E_INVAL (bad handle, name NULL or not 1 to LIL_STEP_NAME_MAX bytes,
 * identity or reason NULL), LIL_E_NOTFOUND (name was not called in this
 * execution, or that call has not failed), LIL_E_IO, LIL_E_NOMEM; the
 * message on the run. */
LIL_API lil_status lil_run_step_failure(lil_run *run, const char *name, char **identity,
                                        lil_bytes *reason);

/* ------------------------------------------------------------------------ */
/* Checking and repair                                                       */

enum {
    LIL_CHECK_REPAIR = 1u << 0, /* truncate the journal at the first damage */
};

typedef struct lil_check_report {
    size_t struct_size;     /* sizeof(lil_check_report), set by the caller */
    int intact;             /* 1: framing and chain verified; the journal
                               opens (a torn tail is allowed, see below) */
    int torn_tail;          /* 1: an unsynced last record was torn; the next
                               writable open truncates it */
    int repaired;           /* 1: the journal was truncated at damage_offset */
    uint64_t records;       /* valid records before the damage (or all) */
    uint64_t valid_bytes;   /* end of the last valid record */
    uint64_t damage_offset; /* first damaged byte; meaningful when !intact */
    uint64_t file_bytes;    /* size of the file (preallocation included) */
    char message[256];      /* what was found, in words */
    /* Intact records found after the first bad byte (the search goes on
     * past it): what truncating there drops besides the bad bytes
     * themselves.  0 for a true torn tail. */
    uint64_t records_after_damage;
    uint64_t steps_after_damage; /* of them, step outcomes (steps and effects,
                                    completed or failed) */
    /* A compacted run (docs/format.md, "Segments"): every segment kept is
     * verified, and the links between them.  Offsets above are bytes of
     * the segment damage_segment names. */
    uint32_t live_segment;   /* the live segment's number; 0: never compacted */
    uint32_t first_segment;  /* the oldest kept (> 0: the ones before were
                                dropped, lil_run_drop_segments) */
    uint32_t damage_segment; /* the segment the damage is in (when !intact) */
    int old_damage;          /* 1: the damage is in an older segment: the run
                                goes on from its live one all the same, and
                                LIL_CHECK_REPAIR does not touch it */
} lil_check_report;

/* Verify a run's journal: header, every record's framing and checksum, the
 * sequence and the hash chain.  Offsets and sizes in the report are bytes of
 * the journal file in the file store (positions of lil_record.offset in
 * another store).  Returns LIL_OK when the check itself ran
 * (see report->intact for the verdict) or the error that stopped it
 * (LIL_E_LOCKED with LIL_CHECK_REPAIR while another process holds the run,
 * LIL_E_KEY, LIL_E_VERSION, LIL_E_NOTFOUND, LIL_E_IO).  Without
 * LIL_CHECK_REPAIR nothing is written.
 *
 * The verdicts follow the open's recovery rule (lil_run_open): intact; a
 * torn tail (intact and torn_tail: nothing valid after the first bad byte,
 * or only OPEN and CLOSE records; also a journal with no complete record,
 * with records 0); or damaged (intact 0: the open refuses the journal), and
 * then records_after_damage and steps_after_damage say what truncating at
 * damage_offset would drop.
 * With LIL_CHECK_REPAIR a torn tail or damage is truncated at
 * damage_offset; the report still says what was dropped. */
LIL_API lil_status lil_run_check(lil_store *st, const char *run_id, unsigned flags,
                                 lil_check_report *report);

/* ------------------------------------------------------------------------ */
/* Stores: schemas, and moving runs between stores                          */

typedef enum lil_schema_action {
    LIL_SCHEMA_STATUS = 0,  /* read what is there; change nothing */
    LIL_SCHEMA_INIT = 1,    /* create the store when missing (the directory,
                               or the PostgreSQL schema and its tables) */
    LIL_SCHEMA_MIGRATE = 2, /* upgrade an older schema to this library's */
} lil_schema_action;

typedef struct lil_schema_info {
    size_t struct_size; /* sizeof(lil_schema_info), set by the caller */
    char backend[16];   /* "file" or "postgresql" */
    int version;        /* the store's schema version after the action (the
                           file store: its journal format, 1); 0: none yet */
    int latest;         /* the version this library creates and reads */
    int changed;        /* 1: the action created or upgraded something */
    char message[256];  /* what was found or done, in words */
} lil_schema_info;

/* Create, upgrade or inspect the store at where (dir as lil_store_open
 * takes it; NULL: $LIL_DIR, else ".lil"), without opening it.  A PostgreSQL
 * store needs its schema created once (LIL_SCHEMA_INIT, `lil db init`) by a
 * role that may create it, and upgraded by LIL_SCHEMA_MIGRATE (`lil db
 * migrate`) after a newer lil changed it; both take a lock so that two
 * callers at once do the work once.  INIT on a schema that is there already
 * changes nothing (and says so); on an older one it refuses (LIL_E_PG: run
 * migrate).  A file store has no schema: INIT creates its directory,
 * MIGRATE does nothing.  STATUS of a store not created yet is LIL_OK with
 * version 0.  Errors: LIL_E_PG (the server, permissions, MIGRATE of a
 * missing schema), LIL_E_NOTFOUND (MIGRATE of a missing directory),
 * LIL_E_VERSION (a schema newer than this library), LIL_E_INVAL, LIL_E_IO;
 * the message in lil_errmsg(). */
LIL_API lil_status lil_store_schema(lil_env *env, const char *where, int action,
                                    lil_schema_info *info);

/* Called with the bytes of an export, in order; return 0 to go on, anything
 * else to stop (the export then fails with LIL_E_IO). */
typedef int (*lil_write_fn)(void *ud, const void *data, size_t len);

/* Write run run_id as a journal file (docs/format.md): the file header and
 * every valid record, byte for byte as the file store keeps them, hash
 * chain and all, whichever store holds the run.  The run is verified first
 * (framing, sequence and chain; a keyed run needs the store's key) and
 * read as it is, without its hold: a run another process holds exports the
 * records committed so far.  A torn tail is left out.  Errors:
 * LIL_E_NOTFOUND, LIL_E_CORRUPT (damage: `lil check`), LIL_E_KEY,
 * LIL_E_VERSION, LIL_E_IO (also fn's stop), LIL_E_PG, LIL_E_NOMEM. */
LIL_API lil_status lil_run_export(lil_store *st, const char *run_id, lil_write_fn fn,
                                  void *ud);

/* Add a run to the store from a journal file's bytes (an export, or a
 * journal of a file store): verified first as lil_run_check does (a keyed
 * journal under the store's key: lil_run_import_keyed takes the key it was
 * written with), a torn tail left out.  The run is sealed with the store's
 * key (a new file store makes its own first, see lil_store_set_own_key):
 * a journal written under another key, or none, gets its header's key
 * check and every chain value computed anew under this store's key.  run_id NULL keeps
 * the run's id (its BEGIN record); another id renames the run: BEGIN then holds the new
 * id and the chain is computed anew from there (the records' bytes and times are kept).
 * The run must not exist in the store yet.  *imported_id, when not NULL, receives the
 * run's id (lil_free).  Errors: LIL_E_INVAL (a run with that id exists, a bad id, not a
 * journal), LIL_E_CORRUPT, LIL_E_KEY, LIL_E_VERSION, LIL_E_IO, LIL_E_PG, LIL_E_NOMEM;
 * the message on the store. */
LIL_API lil_status lil_run_import(lil_store *st, const void *journal, size_t len,
                                  const char *run_id, char **imported_id);

/* lil_run_import, the journal verified under source_key (source_key_len
 * bytes: the key of the store it was exported from, e.g. the 32 bytes of
 * that store's journal.key, docs/format.md) instead of this store's key.
 * A source key given for a journal that is not keyed is LIL_E_KEY (an
 * unkeyed journal in place of the keyed one expected).  source_key NULL:
 * lil_run_import. */
LIL_API lil_status lil_run_import_keyed(lil_store *st, const void *journal, size_t len,
                                        const char *run_id, const void *source_key,
                                        size_t source_key_len, char **imported_id);

/* Removing runs (`lil rm`, `lil gc`). */
enum {
    /* Remove a run that has not ended too (running, waiting, paused,
     * uncertain); a run a live process holds is refused all the same. */
    LIL_REMOVE_FORCE = 1u << 0,
};

/* Remove run run_id from st: its journal and everything the store keeps
 * for it (the file store: <run id>.lil, .head and .stop; PostgreSQL: its
 * rows, its stop request and its place in the queue), durably.  Markers
 * are the store's, named by the program, not a run's: they stay.  Unless
 * flags hold LIL_REMOVE_FORCE the run must have ended (lil_run_facts'
 * "status" completed, failed or stopped), else LIL_E_INVAL naming its
 * status, nothing removed.  Errors: LIL_E_NOTFOUND (no such run),
 * LIL_E_LOCKED (a live process holds it: nothing removed), LIL_E_INVAL
 * (bad handle, id or flags; not ended), the facts' errors (LIL_E_CORRUPT,
 * LIL_E_KEY: a run whose journal cannot be read is removed only with
 * LIL_REMOVE_FORCE), LIL_E_IO, LIL_E_PG, LIL_E_NOMEM; the message on the
 * store. */
LIL_API lil_status lil_run_remove(lil_store *st, const char *run_id, unsigned flags);

/* Segments (docs/api.md, "Segments").  A long loop run goes on in a new
 * journal segment now and then (docs/loops.md, "Compaction"); the older
 * ones stay beside it, read only by the calls that walk the whole history
 * (lil_run_records on a read-only handle, lil_run_facts, `lil log`). */
typedef struct lil_segments_info {
    size_t struct_size; /* sizeof(lil_segments_info), set by the caller */
    uint32_t live;      /* the live segment's number; 0: never compacted */
    uint32_t first;     /* the oldest segment kept; > 0: the history before
                           it was dropped (lil_run_drop_segments) */
    uint64_t first_seq; /* seq of the first record of the history kept; 1:
                           nothing was dropped */
} lil_segments_info;

/* Fill *info for run_id (opened read-only: no hold taken, nothing
 * written).  A store that keeps runs in one piece reports live 0, first 0,
 * first_seq 1.  LIL_E_INVAL (bad handle, id or info), LIL_E_NOTFOUND,
 * LIL_E_CORRUPT, LIL_E_KEY, LIL_E_IO; the message on the store. */
LIL_API lil_status lil_run_segments(lil_store *st, const char *run_id,
                                    lil_segments_info *info);

/* Drop the oldest segments of run_id, keeping the newest keep (the live one
 * counts: keep >= 1), oldest first, so a crash in the middle leaves the
 * newest.  *dropped gets how many went (0: nothing older than the newest
 * keep, or a store that keeps runs in one piece).  The run may be held
 * meanwhile: what it goes on from is its live segment, never dropped.  A
 * reader walking the whole history while segments are dropped may fail
 * with LIL_E_NOTFOUND; read again.  Errors: LIL_E_INVAL (bad handle, id, keep
 * 0, dropped NULL), LIL_E_NOTFOUND, LIL_E_CORRUPT, LIL_E_KEY, LIL_E_IO. */
LIL_API lil_status lil_run_drop_segments(lil_store *st, const char *run_id,
                                         unsigned keep, unsigned *dropped);

/* ------------------------------------------------------------------------ */
/* Forking and comparing runs (docs/api.md, "Forking and comparing runs")   */

/* Where lil_run_fork cuts (lil_run_fork_opts.at_kind). */
enum {
    LIL_FORK_AT_ITERATION = 1, /* a loop run: iteration N and after dropped */
    LIL_FORK_AT_SEQ = 2,       /* records from seq N on dropped */
    LIL_FORK_AT_STEP = 3,      /* an ordinary run: step N (1, 2, ...) and
                                  after dropped */
};

typedef struct lil_run_fork_opts {
    size_t struct_size; /* sizeof(lil_run_fork_opts), set by the caller */
    int at_kind;        /* LIL_FORK_AT_* */
    uint64_t at;        /* the iteration (0, 1, ...), seq (2, ...) or step */
    const char *actor;  /* who forks (journaled); NULL: "unknown" */
    const char *reason; /* why (journaled); NULL: "" */
} lil_run_fork_opts;

/* Fork run_id of store from into a new run new_id of store to (the same
 * store or another, any backend): the records of run_id before the cut,
 * with a provenance record (type LIL_REC_FORK, key run_id, payload
 * {"source", "sourceStore", "cut", "sourceRecords", "sourceHead", "actor",
 * "osUser", "reason", "at"}: docs/format.md) added after BEGIN as record 2,
 * the records after it one seq higher, every chain value computed anew for
 * new_id under to's key.  run_id is read as lil_run_export reads it
 * (verified under from's key, never written); the cut must sit between
 * iterations of a loop run, or outside an effect of an ordinary run
 * (docs/cli.md, "lil fork"); new_id must not exist.  *json, when not NULL,
 * receives {"run", "store", "source", "sourceStore", "kind": "loop" |
 * "program", "cut": {"seq", "iteration" | "step"}, "records", "dropped",
 * "sourceHead"} (lil_free).  Errors (the message on to): LIL_E_INVAL (bad
 * handles, ids or options, a cut at no valid point -- the message names the
 * nearest valid ones --, new_id exists), LIL_E_NOTFOUND (no run_id),
 * LIL_E_CORRUPT, LIL_E_KEY, LIL_E_VERSION, LIL_E_IO, LIL_E_PG, LIL_E_NOMEM. */
LIL_API lil_status lil_run_fork(lil_store *from, const char *run_id,
                                const lil_run_fork_opts *opts, lil_store *to,
                                const char *new_id, lil_bytes *json);

/* Compare run a (in store sa) with run b (in store sb): where their
 * journals stop agreeing and how their steps' results differ, as
 * {"identical", "a": {"run", "store", "records"}, "b": {...}, "common": the
 * records both have alike before the first divergence, "divergence": null
 * or {"iteration" (a loop run's, else null), "step": the identity there,
 * "a": {"seq", "type", "key"} or null (the run ended), "b": ...}, "steps":
 * [{"step", "iteration"?, "change": "differs" | "only_a" | "only_b", "a":
 * {"seq", "type", "sha256", "result"} or null, "b": ...}]} in *json
 * (lil_free).  Records are compared by type, effect flag, key and payload;
 * BEGIN, OPEN, CLOSE and FORK records are left out (docs/api.md).  Errors
 * (the message on sa): LIL_E_INVAL, LIL_E_NOTFOUND, LIL_E_CORRUPT,
 * LIL_E_KEY, LIL_E_VERSION, LIL_E_IO, LIL_E_PG, LIL_E_NOMEM. */
LIL_API lil_status lil_run_diff(lil_store *sa, const char *a, lil_store *sb,
                                const char *b, lil_bytes *json);

/* ------------------------------------------------------------------------ */
/* Loop specs (LoopSpec v0.1)                                                */
/*
 * A loop spec is a YAML (or JSON) file describing an agent loop; docs/
 * loopspec.md says what lil accepts.  lil_spec_load reads, parses,
 * normalizes and validates one in a single call and keeps every diagnostic
 * (all problems of a stage at once, the way a compiler reports them; the
 * validation rules run once the structure is sound).  A spec with errors is
 * still returned: inspect its diagnostics.
 */
typedef struct lil_spec lil_spec;

typedef enum lil_severity {
    LIL_SEV_ERROR = 0,   /* blocks running the spec */
    LIL_SEV_WARNING = 1, /* likely a mistake; the spec still runs */
    LIL_SEV_INFO = 2     /* what normalization did (e.g. caps injected) */
} lil_severity;

/* One diagnostic.  Strings are owned by the spec and live until
 * lil_spec_free. */
typedef struct lil_diag {
    lil_severity severity;
    const char *code;        /* stable identifier: "bad-ref", "yaml", ... */
    const char *message;     /* one sentence, no trailing newline */
    const char *path;        /* spec path ("body[1]:fix.when"), or "" */
    const char *file;        /* the file name given to the loader */
    unsigned line, column;   /* 1-based; 0 when there is no position; the
                                column counts characters (UTF-8 sequences;
                                a tab is one), as an editor shows them */
    const char *source_line; /* text of that line (no newline), or "" */
    size_t offset;           /* byte offset of the position in the file,
                                0-based (0 when there is no position) */
} lil_diag;

/* Limits of the loader; a field left 0 takes its default. */
typedef struct lil_spec_limits {
    size_t max_bytes;   /* largest file, default 1 MiB */
    unsigned max_depth; /* deepest nesting of YAML collections, default 64 */
    size_t max_scalar;  /* longest scalar, default 256 KiB */
} lil_spec_limits;

/* Read the file at path and load it (see lil_spec_parse).  A file that
 * cannot be read is LIL_E_IO (message names the path); one larger than the
 * limit is read no further and loaded as a spec with a diagnostic. */
LIL_API lil_status lil_spec_load(lil_env *env, const char *path,
                                 const lil_spec_limits *lim, lil_spec **out);

/* Load a spec from len bytes of text.  name is used in diagnostics; a name
 * ending in ".json" selects JSON syntax.  env and lim may be NULL.  Returns
 * LIL_OK with *out set whenever the text could be examined, valid or not;
 * LIL_E_NOMEM or LIL_E_INVAL (NULL text with len > 0, NULL out) otherwise. */
LIL_API lil_status lil_spec_parse(lil_env *env, const char *name, const char *text,
                                  size_t len, const lil_spec_limits *lim,
                                  lil_spec **out);

/* 1 if the spec has no diagnostic of severity error, else 0 (and 0 for
 * NULL). */
LIL_API int lil_spec_ok(const lil_spec *spec);

/* Diagnostics, sorted by position.  lil_spec_diag returns NULL past the
 * end. */
LIL_API size_t lil_spec_diag_count(const lil_spec *spec);
LIL_API const lil_diag *lil_spec_diag(const lil_spec *spec, size_t i);

/* The normalized spec as compact JSON, keys in the order of the schema (not
 * sorted): defaults filled in, caps in force (injected per pattern when
 * absent), durations also in milliseconds.
 * LIL_E_SPEC if the spec has errors. */
LIL_API lil_status lil_spec_json(const lil_spec *spec, lil_bytes *out);

/* What the loop will do, as JSON (the source of `lil explain`): caps in
 * force and where they came from, the exit predicate, the state it reads,
 * the steps that write that state and how the exit is grounded, the steps
 * in order with what each runs, gates, the completion hook, the schedule
 * (for cron, the next three fire times in UTC, counted from now), and the
 * warnings and notes of validation.  docs/loopspec.md describes the
 * document.  LIL_E_SPEC if the spec has errors. */
LIL_API lil_status lil_spec_explain(const lil_spec *spec, lil_bytes *out);

/* lil_spec_explain with the fire times counted from now_ms (milliseconds
 * since the Unix epoch, up to the end of year 9999) instead of the clock;
 * LIL_E_INVAL outside that range. */
LIL_API lil_status lil_spec_explain_at(const lil_spec *spec, int64_t now_ms,
                                       lil_bytes *out);

/* The spec's `id` (the default run id of its loop runs); NULL for an
 * invalid handle or a spec without one.  Lives as long as the spec. */
LIL_API const char *lil_spec_id(const lil_spec *spec);

/* The spec's digest: the SHA-256 of its normalized JSON (lil_spec_json),
 * as 64 lowercase hex digits and a NUL in out -- what a loop run journals
 * in its start record ("spec") and lil_loop_facts calls "spec_sha256", so
 * a program can tell whether a spec file is still the one a run is bound
 * to (`lil tick` does).  Errors: LIL_E_INVAL (bad handle, out NULL),
 * LIL_E_SPEC (the spec has errors), LIL_E_NOMEM. */
LIL_API lil_status lil_spec_digest(const lil_spec *spec, char out[65]);

/* Release a spec (NULL is harmless). */
LIL_API void lil_spec_free(lil_spec *spec);

/* ------------------------------------------------------------------------ */
/* Loop runs: running a loop spec durably                                   */
/*
 * A loop run executes a valid spec (lil_spec_ok) as the journaled run
 * run_id of a store: docs/loops.md describes the iteration, the records it
 * journals and how each status comes about.  Every effect of the loop
 * (shell, http, agent) goes through lil_effect's protocol: a write-ahead
 * intent, then the outcome; a completed effect is never run again, an
 * effect whose process died after its intent makes the run uncertain until
 * lil_loop_recover decides.  State is committed by one snapshot record per
 * iteration; a resumed run restarts the iteration it was in from the last
 * snapshot, replaying the journaled effects of that iteration.
 *
 * One process at a time runs a loop (the run's lock, as lil_run_open);
 * lil_loop_request_stop needs no lock and may be called from any process.
 */
typedef struct lil_loop lil_loop;

typedef enum lil_loop_status {
    LIL_LOOP_COMPLETED = 1, /* terminate held: the run is over (exit code 0) */
    LIL_LOOP_FAILED = 2,    /* a cap with on_cap_exceeded fail, an error, a
                               divergent replay, exhausted retries (1) */
    LIL_LOOP_UNCERTAIN = 3, /* an effect started and its outcome is unknown;
                               lil_loop_recover decides (2) */
    LIL_LOOP_PAUSED = 4,    /* waiting for an approval: a breakpoint, a gate,
                               a cap with on_cap_exceeded breakpoint (3) */
    LIL_LOOP_WAITING = 5,   /* parked until wake_at_ms, or lil_loop_step did
                               one iteration and there is more to do (4) */
    LIL_LOOP_STOPPED = 6,   /* a stop request was honoured (resumable), a cap
                               with exit-clean or an abort recovery (final) (5) */
} lil_loop_status;

/* "completed", "failed", "uncertain", "paused", "waiting", "stopped";
 * "unknown" for another value. */
LIL_API const char *lil_loop_status_name(lil_loop_status s);

/* The exit code of `lil` for a status: 0, 1, 2, 3, 4, 5 as listed above. */
LIL_API int lil_loop_exit_code(lil_loop_status s);

enum {
    /* Approve a pending cap-breakpoint at the start (`--approve`): journals
     * cap_cleared and rebases only the meter that tripped.  With
     * lil_loop_recover's retry: approve the token or usd budget's
     * breakpoint cap that the retried call trips (at its iteration's start
     * or at the call), once, journaled with the recovery's actor and
     * reason. */
    LIL_LOOP_APPROVE_CAPS = 1u << 0,
    /* Approve every breakpoint and gate this call reaches (`--yes`); each
     * approval is journaled with the actor and the reason. */
    LIL_LOOP_YES = 1u << 1,
    /* Sleep in-process until a parked run's wake time instead of returning
     * waiting (`--wait`). */
    LIL_LOOP_WAIT = 1u << 2,
    /* A run of the store's queue (lil_loop_submit): lil_loop_approve,
     * lil_loop_recover and lil_loop_resume journal their decision and hand
     * the run back to the queue, for a worker to run, instead of running it
     * here; the result is the run's status then (waiting when a worker will
     * go on, with "queued": true in its json).  A run that is not queued
     * runs as without the flag.  `lil approve`, `recover` and `resume` set
     * it. */
    LIL_LOOP_REQUEUE = 1u << 3,
    /* The spec given differs from the one the run is bound to (its digest
     * or loop id; docs/loops.md, "What a run is bound to"): accept it
     * instead of refusing the open.  The change is journaled
     * (spec_changed.N: actor, reason, both digests, the parts that
     * differ); the new spec applies from the iteration in flight on, whose
     * effects and approvals journaled before the change replay as
     * journaled.  Refused still for a run that has ended, is uncertain or
     * is in the store's queue (`--accept-spec-change`). */
    LIL_LOOP_ACCEPT_SPEC_CHANGE = 1u << 4,
    /* Nobody asked for this run by hand (`lil tick`): refuse a run
     * imported into the store (lil_run_import) that no operator has run
     * since, verify the journal's chain at open, and refuse a journal
     * without a key when the store has one.  A loop opened without the
     * flag that finds an imported run journals that an operator took it
     * over (adopted.N). */
    LIL_LOOP_UNATTENDED = 1u << 5,
    /* The run must be new (`lil tick` firing a schedule's slot): a run
     * whose start is journaled already fails the open with LIL_E_DONE
     * ("exists already") and nothing is written; one held by another
     * process is LIL_E_LOCKED as ever. */
    LIL_LOOP_NEW_RUN = 1u << 6,
    /* The open is for lil_loop_retry_failed: with
     * LIL_LOOP_ACCEPT_SPEC_CHANGE, a failed run's change of spec is kept
     * instead of refused, and journaled by the retry (spec_changed.N after
     * retried.N); nothing is written when the run is not retried (`lil
     * resume --retry-failed`). */
    LIL_LOOP_RETRY_FAILED = 1u << 7,
};

/* What the progress callback is told. */
typedef enum lil_loop_event_kind {
    LIL_LOOP_EV_ITERATION = 1, /* an iteration starts */
    LIL_LOOP_EV_EFFECT = 2,    /* an effect starts (fresh, not replayed) */
    LIL_LOOP_EV_SLEEP = 3,     /* the runner sleeps in-process (ms in value) */
    /* An effect ended (fresh, not replayed): value its milliseconds; text
     * NULL when it did its work, else what a person must know of it --
     * "command not found: NAME" (a shell step's exit 127), "not
     * executable: NAME" (126), "exit N", "failed: REASON", "uncertain". */
    LIL_LOOP_EV_EFFECT_END = 4,
    LIL_LOOP_EV_PAUSE = 5, /* the run pauses at an approval: text the reason */
    LIL_LOOP_EV_CAP = 6,   /* a cap tripped: text what it says */
    /* A streamed agent call (llm with LLM_STREAM) is under way: value its
     * running tokens, the prompt's and the reply's so far at about 4 bytes
     * a token (the provider's count once it reports one); told at the
     * first token and then each time they grew by LIL_LOOP_TOKENS_STEP.
     * The meters (tokens, usd) count the call only when its outcome is
     * journaled. */
    LIL_LOOP_EV_TOKENS = 7,
} lil_loop_event_kind;

/* How many more running tokens a streamed call needs before the next
 * LIL_LOOP_EV_TOKENS. */
#define LIL_LOOP_TOKENS_STEP 100

typedef struct lil_loop_event {
    lil_loop_event_kind kind;
    int64_t iteration;  /* -1 for terminate.on_exit's effects */
    const char *step;   /* step id, or NULL */
    const char *effect; /* "shell", "http", "agent", or NULL */
    int64_t value;      /* LIL_LOOP_EV_SLEEP: milliseconds; LIL_LOOP_EV_TOKENS:
                           the call's running tokens */
    int64_t tokens;     /* meters at that moment */
    double usd;
    int64_t elapsed_ms; /* since the run started (wallclock meter) */
    const char *text;   /* EFFECT_END, PAUSE, CAP: see their kinds; else NULL */
} lil_loop_event;

typedef void (*lil_loop_progress_fn)(void *ud, const lil_loop_event *ev);

typedef struct lil_loop_opts {
    size_t struct_size; /* sizeof(lil_loop_opts): lets the struct grow */
    const char *run_id; /* NULL: the spec's id */
    lil_sync sync;      /* LIL_SYNC_DEFAULT if zero */
    unsigned flags;     /* LIL_LOOP_*; any other bit is LIL_E_INVAL */
    /* Inputs: an object as JSON text (`--inputs FILE.json`) and "NAME=VALUE"
     * strings converted to the declared types (`--input`, which win), over
     * the spec's defaults.  Journaled when the run starts; when the run
     * exists, inputs given here must equal the journaled ones (else
     * LIL_E_INVAL naming the input), and none given means the journaled. */
    const char *inputs_json;
    const char *const *input_pairs;
    size_t n_input_pairs;
    /* Variables shell steps and agent CLIs get besides the base set and a
     * CLI's own provider variables (comma-separated names, `NAME*`
     * patterns; `--env-allow`); $LIL_EFFECT_ENV is added to it.  lil's own
     * secrets (the journal key, LIL_DIR, the llm key and headers) pass
     * only when named exactly (docs/loops.md, "Effects"). */
    const char *env_allow;
    const char *cwd;           /* shell steps' working directory; NULL: the process's */
    const char *actor;         /* who: journaled with approvals, resumes, recoveries;
                                  NULL: $USER, else "unknown" */
    const char *reason;        /* why (approvals by LIL_LOOP_YES, resume); NULL: none */
    int64_t max_block_ms;      /* sleeps up to this block in-process; 0: 1000 */
    int64_t effect_timeout_ms; /* shell and http time limit; 0: 300000 */
    lil_loop_progress_fn progress; /* called on the running thread; may be NULL */
    void *progress_ud;
    /* Cassettes (docs/loops.md, "Cassettes"; at most one of the two):
     * record_path: rewrite this JSON Lines file with every shell, http and
     * agent result the run's journal holds, then append each one the run
     * journals (secrets redacted, as journaled).  replay_path: answer every
     * effect from this file instead of running it -- the first unused
     * entry of the same kind and identity, its usage metered -- and fail
     * the run (failed, the step, the wanted and the nearest request in the
     * reason) at one it does not hold.  A replay's run id is run_id, or
     * the spec's id + "-replay" when run_id is NULL.  Both NULL: neither. */
    const char *record_path;
    const char *replay_path;
} lil_loop_opts;

/* The outcome of a call that runs the loop (RunResult). */
typedef struct lil_loop_result {
    lil_loop_status status;
    int64_t iteration;  /* the next iteration to run (= committed iterations) */
    char *state_json;   /* the committed state: the last snapshot (compact JSON) */
    char *reason;       /* why it stopped, paused, failed, is uncertain; or NULL */
    int64_t wake_at_ms; /* waiting on a sleep: epoch ms to resume at; else 0 */
    int has_next;       /* lil_loop_step: next_iteration is set */
    int64_t next_iteration;
    int has_uncertain;           /* the uncertain effect: */
    int64_t uncertain_iteration; /* -1: terminate.on_exit */
    int64_t uncertain_seq;
    char *uncertain_kind;     /* "shell", "http", "agent" */
    char *uncertain_identity; /* canonical JSON, secrets redacted */
    char *json;               /* the whole result as one JSON object: status, iteration,
                                 state, and reason, wakeAt, next {iteration}, uncertain
                                 {iteration, seq, kind, identity}, detail (what a
                                 budget's cap or an uncertain agent call's
                                 reservation means), meters where they apply */
} lil_loop_result;

/* Release the strings of a result (its struct is the caller's). */
LIL_API void lil_loop_result_free(lil_loop_result *res);

/* Open the loop run of spec in st: take the run's lock, read its journal,
 * and journal the run's start (inputs, the spec's digest and loop id, the
 * digests of its parts, the initial state) when the run is new.  Nothing
 * runs yet.  spec must outlive the loop.  A run that exists is bound to
 * its spec: a spec whose digest or loop id differs from the journaled one
 * is refused before anything is written (LIL_E_INVAL, the message naming
 * both digests and the parts that differ) unless opts' flags hold
 * LIL_LOOP_ACCEPT_SPEC_CHANGE.  Errors: LIL_E_SPEC (the spec has errors;
 * nothing is created), LIL_E_INVAL (bad options, inputs of the wrong type
 * or different from the journaled ones, another spec, an imported run with
 * LIL_LOOP_UNATTENDED), LIL_E_LOCKED, LIL_E_CORRUPT, LIL_E_KEY, LIL_E_IO,
 * LIL_E_NOMEM; the message is on the store (lil_store_errmsg). */
LIL_API lil_status lil_loop_open(lil_store *st, const lil_spec *spec,
                                 const lil_loop_opts *opts, lil_loop **out);

/* Run until the loop completes, fails, parks, pauses, stops or becomes
 * uncertain; *res says which (release it with lil_loop_result_free).
 * LIL_OK whenever a result was produced, whatever its status; an error
 * (LIL_E_IO, LIL_E_POISONED, LIL_E_NOMEM, LIL_E_INVAL) when the journal
 * could not be written or read, the message on the loop. */
LIL_API lil_status lil_loop_run(lil_loop *lp, lil_loop_result *res);

/* Run exactly one iteration (or none when the run cannot go on), as
 * lil_loop_run; a run with more to do is waiting with has_next. */
LIL_API lil_status lil_loop_step(lil_loop *lp, lil_loop_result *res);

/* Clear an honoured stop request (journaled with opts' actor and reason,
 * "explicit resume" when none), then lil_loop_run. */
LIL_API lil_status lil_loop_resume(lil_loop *lp, lil_loop_result *res);

/* Approve what the paused run waits at -- a breakpoint, a gate or a cap --
 * journaling actor and reason (non-empty) and the OS user of the process,
 * then lil_loop_run.  The approval names the pause (iteration, step, digest
 * of what is asked) and releases that pause only.  LIL_E_INVAL when the run
 * is not paused.  Whatever pause is current is approved: a program that
 * showed a pause to someone should name it (lil_loop_approve_pause). */
LIL_API lil_status lil_loop_approve(lil_loop *lp, const char *actor, const char *reason,
                                    lil_loop_result *res);

/* lil_loop_approve of one pause only: pause_id (the pause's "id" in the
 * result's and the facts' "pause": "pause.N" for a breakpoint or gate,
 * "cap.N" for a cap) and/or digest (its "digest": SHA-256 of the pause id
 * and the pending action) must name the pause the run waits at now, else
 * LIL_E_INVAL, nothing journaled, the message naming the current pause.
 * So an approver who saw an earlier pause never releases a later one.
 * Both NULL: lil_loop_approve. */
LIL_API lil_status lil_loop_approve_pause(lil_loop *lp, const char *pause_id,
                                          const char *digest, const char *actor,
                                          const char *reason, lil_loop_result *res);

/* Decide the uncertain effect: retry it, take result_json as its result
 * (LIL_RESOLVE_ASSUME_DONE; JSON text), or abort the run (stopped, final).
 * Journaled with actor and reason (non-empty); then, unless aborted,
 * lil_loop_run.  An uncertain agent call stays counted at its reservation
 * whatever is decided (the uncertain result's "detail" says how much); a
 * retry reserves again (LIL_LOOP_APPROVE_CAPS: a budget cap it trips is
 * approved at once).  LIL_E_INVAL when the run is not uncertain, for a missing
 * or invalid result_json, or a result with another resolution. */
LIL_API lil_status lil_loop_recover(lil_loop *lp, lil_resolution how,
                                    const char *result_json, const char *actor,
                                    const char *reason, lil_loop_result *res);

/* Re-open a failed run from the iteration it failed in (`lil resume
 * --retry-failed`; docs/loops.md, "Retrying a failed run"): the effects
 * that failed there run again (a resolve record of a retry each), a
 * retried.N record is journaled with actor (NULL: opts' actor), the OS
 * user and reason (NULL: "retry of the failed run"), and the run goes on
 * as lil_loop_run does -- its committed iterations and the effects of the
 * failed iteration that completed are replayed, never run again.  A run
 * that a cap failed (on_cap_exceeded: fail) is retried only when that cap
 * no longer stops it at the iteration's start (its limit raised in the
 * spec, accepted with LIL_LOOP_RETRY_FAILED and
 * LIL_LOOP_ACCEPT_SPEC_CHANGE at the open).  A queued run goes back to the
 * queue (LIL_LOOP_REQUEUE).  Errors, nothing written: LIL_E_INVAL (the run
 * has not failed -- completed, stopped, running, paused, uncertain ... --
 * or a cap still stops it; the message names the cap and its limit),
 * LIL_E_LOCKED (another process holds the run); else as lil_loop_run. */
LIL_API lil_status lil_loop_retry_failed(lil_loop *lp, const char *actor,
                                         const char *reason, lil_loop_result *res);

/* The run's status as journaled, without running anything (lil_loop_run
 * of a run that is not runnable gives the same). */
LIL_API lil_status lil_loop_current(lil_loop *lp, lil_loop_result *res);

/* Ask loop run run_id of st to stop, from any process, without its lock:
 * the request (actor, reason, time) is published beside the journal and
 * the process running the loop honours it at the next iteration boundary
 * (or at its next start): the run is then stopped, and lil_loop_resume
 * goes on.  A run that does not exist yet may be asked too: the request
 * waits in the store under run_id, and the run's first call honours it
 * before any iteration (it starts stopped).  Errors: LIL_E_INVAL (empty
 * reason, bad run id), LIL_E_DONE (a stop is already requested, or the run
 * has ended), LIL_E_IO, LIL_E_PG. */
LIL_API lil_status lil_loop_request_stop(lil_store *st, const char *run_id,
                                         const char *actor, const char *reason);

/* The stop request pending for run_id (published, not yet honoured) as
 * JSON text in *json (lil_free): {"version": 1, "runId", "requestedAt" (ms
 * since the epoch), "actor", "reason"}.  run_id need not exist (a stop
 * asked before its first start).  Errors: LIL_E_NOTFOUND (none pending),
 * LIL_E_INVAL (bad handle or run id, json NULL), LIL_E_IO, LIL_E_PG,
 * LIL_E_NOMEM. */
LIL_API lil_status lil_loop_stop_pending(lil_store *st, const char *run_id,
                                         lil_bytes *json);

/* From a signal handler (async-signal-safe) or another thread:
 * LIL_LOOP_INTERRUPT_STOP asks the running call to stop after the current
 * effect (journaled as a stop request: the run is then stopped, and
 * lil_loop_resume goes on); LIL_LOOP_INTERRUPT_KILL also kills the current
 * shell effect's process group with SIGKILL at once.  A process that then
 * exits at once (what `lil` does on a second Ctrl-C) leaves that effect
 * with its intent and no outcome: the run is uncertain.  One that goes on
 * journals the killed command's result (code 1, signal SIGKILL). */
enum { LIL_LOOP_INTERRUPT_STOP = 1, LIL_LOOP_INTERRUPT_KILL = 2 };

LIL_API void lil_loop_interrupt(lil_loop *lp, int how);

/* What the journal of loop run `run` says, read-only and without its spec
 * (`lil inspect`, `lil ls`, `lil tick` use it): the runner's own fold of
 * the journal -- the one lil_loop_open makes -- with the meters' limits
 * taken from the caps its start record journaled, so every figure equals
 * what the runner counts.  *json (lil_free) is one JSON object:
 *   "run", "loop" (the spec's id), "spec_path", "spec_sha256", "cwd",
 *   "inputs", "started_at_ms";
 *   "status": what lil_loop_current would answer -- "completed", "failed",
 *   "uncertain", "paused", "waiting", "stopped" -- or "running" when
 *   another process holds the run and it would be waiting or uncertain
 *   (its effect is in flight); "ended" (completed, failed or stopped for
 *   good: nothing can go on), "reason" (string or null), "iteration" (the
 *   next to run), "state" (committed), "holder_pid" (null: none),
 *   "wake_at_ms" (a parked run's wake time, else null), "uncertain"
 *   ({"slot", "iteration", "seq", "kind", "identity"} or null), "paused"
 *   (what an approval would release, or null), "stop" (an honoured stop
 *   request not cleared, or null);
 *   "caps" (the start record's, or null for a run started before it
 *   carried them), "meters" (as the "meters" of a loop result), "totals"
 *   ({"tokens", "usd"}: what the meters count as settled, bases and
 *   reservations aside), the "reservations" that calls without an outcome
 *   hold ([{"slot", "tokens", "usd", "unpriced"?}]) and "budget":
 *   {"tokens", "usd", "wallclock_ms"}, each null or {"limit", "used",
 *   "reserved" (not wallclock), "left"}.
 * Wallclock figures count to now while the run can go on, to its last
 * record once it has ended.  docs/api.md lists every key.  run may be
 * read-only (LIL_OPEN_READONLY) and held by another process.  Errors (the
 * message on the run): LIL_E_NOTFOUND (run is no loop run: it has no
 * start record), LIL_E_INVAL (bad handle, json NULL), LIL_E_CORRUPT (a
 * record the runner never writes: the runner could not go on either),
 * LIL_E_IO, LIL_E_NOMEM. */
LIL_API lil_status lil_loop_facts(lil_run *run, lil_bytes *json);

/* The loop's run id, and the message of its last failing call. */
LIL_API const char *lil_loop_run_id(const lil_loop *lp);
LIL_API const char *lil_loop_errmsg(const lil_loop *lp);

/* Sync, release the lock and free.  NULL is LIL_OK. */
LIL_API lil_status lil_loop_close(lil_loop *lp);

/* ------------------------------------------------------------------------ */
/* Queued loop runs and workers (a PostgreSQL store)                       */
/*
 * Processes on many machines share the loop runs of a PostgreSQL store
 * (docs/postgres.md, "Workers"): lil_loop_submit queues a run, and workers
 * (lil_worker_next; `lil worker`) claim runnable runs one at a time -- a
 * queued run, a parked one whose wake time has come, or a running one
 * whose worker died or stopped renewing its lease -- and run them.  A claim
 * takes the run's lease with an epoch (a fencing token) that goes up at
 * every claim; every append checks it in its own transaction, so a worker
 * that lost its run (paused or cut off past its lease) writes not a record
 * more, and starts no effect.  A run taken over from a dead worker goes on
 * as after a crash on one machine: an effect that was in flight makes it
 * uncertain, never runs again by itself.  A file store has no queue: these
 * calls refuse it with LIL_E_INVAL.
 */

/* Queue a loop run of spec (valid: lil_spec_ok) in st, for a worker to run:
 * the run is created (its first record) with the spec's text, its inputs
 * and the sync mode of opts, in one durable commit; nothing runs here.
 * opts: run_id (NULL: the spec's id), sync, inputs_json and input_pairs
 * (resolved and checked here, as lil_loop_open does: a missing, unknown or
 * mistyped input is refused now); the other fields are the worker's
 * (lil_worker_opts) and must be 0.  *run_id (lil_free; may be NULL) gets
 * the run's id.  Errors: LIL_E_INVAL (a file store: no queue; a run with
 * that id exists; bad options or inputs, named in the message), LIL_E_SPEC
 * (the spec has errors), LIL_E_PG, LIL_E_NOMEM; the message on the store. */
LIL_API lil_status lil_loop_submit(lil_store *st, const lil_spec *spec,
                                   const lil_loop_opts *opts, char **run_id);

typedef struct lil_worker lil_worker;
typedef struct lil_worker_result lil_worker_result; /* below */

typedef struct lil_worker_opts {
    size_t struct_size; /* sizeof(lil_worker_opts) */
    /* Names this worker in the queue (claimed_by) and in its log lines;
     * NULL: "pid P on HOST". */
    const char *name;
    /* For every run it claims, as lil_loop_opts's fields of the same name
     * (cwd NULL: shell steps run in this process's working directory). */
    const char *env_allow;
    const char *cwd;
    const char *actor;
    int64_t max_block_ms;
    int64_t effect_timeout_ms;
    /* Called on the worker's thread after each claim, before the run runs,
     * with the claim as far as it goes (run_id, epoch, attempt, takeover;
     * state "claimed"); NULL: not called.  (A struct_size that ends before
     * on_claim is taken, as from a caller built before it.) */
    void (*on_claim)(void *ud, const lil_worker_result *claim);
    void *on_claim_ud;
} lil_worker_opts;

/* What lil_worker_next did with the run it claimed. */
struct lil_worker_result {
    char run_id[LIL_RUN_ID_MAX + 1];
    /* The run's queue state as the worker recorded it: "completed",
     * "failed", "stopped", "paused" (lil_loop_approve goes on),
     * "uncertain" (lil_loop_recover), "parked" (until wake_at_ms),
     * "queued" (handed back: lil_worker_drain, or an error to retry),
     * "error" (the worker could not run it: message says why), or "lost"
     * (fenced: another worker claimed it since; nothing was recorded). */
    char state[16];
    lil_loop_status status; /* the loop's status, 0 when it had none */
    int64_t epoch;          /* of this claim */
    int attempt;            /* claims of the run so far, this one included */
    int takeover;           /* 1: claimed from a worker that died or lost it */
    int64_t wake_at_ms;     /* parked: its wake time */
    int64_t iterations;     /* iterations committed (loop's result) */
    char message[256];      /* the loop's reason, or the error; "" if none */
};

/* A worker on st (which must be a PostgreSQL store and outlive it), for one
 * thread: several threads each use a worker of their own over one store.
 * Errors: LIL_E_INVAL (a file store: no queue; bad options), LIL_E_NOMEM. */
LIL_API lil_status lil_worker_new(lil_store *st, const lil_worker_opts *opts,
                                  lil_worker **out);

/* Claim the next runnable run, run it (lil_loop_step after lil_loop_step:
 * until it completes, fails, parks for longer than max_block_ms, pauses,
 * stops, becomes uncertain, or lil_worker_drain asks to hand it back),
 * record its queue state, close it.  LIL_OK: *res says what happened
 * (whatever became of the run: its errors are in res->state and
 * res->message).  LIL_E_NOTFOUND: no run is runnable now (poll again
 * later).  LIL_E_DONE: lil_worker_drain was called.  Other errors (the
 * claim itself failed: LIL_E_PG while the server is away, LIL_E_NOMEM):
 * try again later; the message in lil_worker_errmsg. */
LIL_API lil_status lil_worker_next(lil_worker *w, lil_worker_result *res);

/* From a signal handler (async-signal-safe) or another thread: the worker
 * hands its current run back to the queue at its next iteration boundary
 * (after the effect in flight), and lil_worker_next claims no more
 * (LIL_E_DONE). */
LIL_API void lil_worker_drain(lil_worker *w);

/* The message of the worker's last failing call. */
LIL_API const char *lil_worker_errmsg(const lil_worker *w);

/* Free the worker (not while lil_worker_next runs).  NULL is harmless. */
LIL_API void lil_worker_free(lil_worker *w);

/* What operators see of the queue and its workers (`lil ls`, `lil
 * workers`).  A worker is registered from lil_worker_new to lil_worker_free
 * (one row per process: its host, pid, number of workers, start and last
 * heartbeat, kept every lease/3 by the store's lease renewer); a process
 * that died stays listed as "lost" (heartbeat older than its lease) for an
 * hour.  Documents are compact JSON in *json (lil_free); errors: LIL_E_INVAL
 * (bad handle, json NULL), LIL_E_PG, LIL_E_NOMEM, the message on the
 * store.
 *
 * lil_queue_list: {"queue" (true: the store keeps a queue),
 * "runs": [{"run", "state" (lil_worker_result's words but "lost", or
 * "running": claimed), "wake_at_ms" (or null), "attempts", "worker" (the
 * name of the worker that claimed it last, or null), "owner" (its lease's
 * holder, "pid P on HOST since T", or null), "held" (that lease is live),
 * "error" (the last error a worker met, or null)}]}, in run id order; a
 * store without a queue lists no run.
 *
 * lil_workers_list: {"now_ms" (the server's clock), "workers": [{"name",
 * "owner", "host", "pid", "threads", "state": "live" | "lost",
 * "started_ms", "heartbeat_ms", "age_ms" (since the heartbeat), "lease_ms",
 * "runs": [the run ids it claimed and holds]}]}, by name.  LIL_E_INVAL for
 * a store without a queue. */
LIL_API lil_status lil_queue_list(lil_store *st, lil_bytes *json);
LIL_API lil_status lil_workers_list(lil_store *st, lil_bytes *json);

/* Can an agent step with harness run in this process's environment (the
 * harness is known, configured -- an LLM key or base URL, LIL_AGENT_CMD for
 * `cli`, a CLI binary on PATH -- and its limits parse)?  LIL_OK, or
 * LIL_E_INVAL with what to set in the message (lil_errmsg).  `lil doctor`
 * asks it for every agent step. */
LIL_API lil_status lil_agent_harness_check(const char *harness);

/* What the agent harnesses would use in this process's environment, as a
 * JSON object in *out (free with lil_free), for `lil doctor`:
 * "harnesses" (each harness: "name", "ready", "message": what
 * lil_agent_harness_check says), "llm" (the resolved server: "configured",
 * "provider", "base_url" (credentials redacted), "model", each with where
 * it came from, "key_set" and "key_from" -- the variable, never the key --,
 * "stream", "priced", "price_in" and "price_out" in USD per million tokens
 * with where they came from) and "limits" ("cli_timeout_ms",
 * "llm_timeout_ms", "max_buffer", "max_tokens": "value", "default",
 * "from": "default" or the variable read, "error" when it does not parse).
 * docs/api.md lists every key.  Errors: LIL_E_INVAL (out NULL),
 * LIL_E_NOMEM. */
LIL_API lil_status lil_agent_settings(lil_bytes *out);

/* What dry runs prove about a valid spec (`lil verify`, `lil score`;
 * docs/loops.md, "Verify and score"): the loop runs three times in a
 * temporary store ($TMPDIR, else /tmp; removed before returning) -- once
 * straight through, once more from scratch, once with a restart between
 * every iteration -- with every shell, http and agent effect answered
 * from the fixtures instead of run: no process is started, no request
 * sent.  Breakpoints and gates are approved, inputs without a default get
 * a sample value, and a dry run stops after at most 1000 iterations.
 *
 * fixtures_json: NULL, or a JSON object of at most 1 MiB whose keys are
 * among "shell", "http" and "agent": the result every effect of that kind
 * gets (default {}); an agent fixture's "usage" ({"tokens", "usd"}) is
 * metered as a harness's would be.
 *
 * *report_json (lil_free) is a JSON object: "ok" (bounded, deterministic
 * and resume-stable), "bounded", "deterministic", "resumeStable",
 * "terminatedNaturally", the end of each dry run ("dryRun", "rerun",
 * "stepped": status, iteration, reason, state), "issues" ({"severity",
 * "code", "message"}) and "score" (the scorecard: "total" out of 100,
 * "grade", "dimensions").  docs/loops.md describes every field.  env NULL
 * means a private default env.
 * Errors: LIL_E_SPEC (the spec has errors), LIL_E_INVAL (NULL arguments;
 * fixtures that are not JSON, not an object or hold other keys: the
 * message says which), LIL_E_TOOBIG (fixtures over 1 MiB), LIL_E_IO (the
 * temporary store), LIL_E_NOMEM; the message in lil_errmsg(). */
LIL_API lil_status lil_spec_verify(lil_env *env, const lil_spec *spec,
                                   const char *fixtures_json, lil_bytes *report_json);

/* ------------------------------------------------------------------------ */
/* Supervision                                                               */

/* Durability keeps completed steps; supervision restarts the program that
 * was killed, so that it resumes from its journal (docs/supervise.md).
 *
 * lil_supervise makes the calling process a supervisor.  Without argv the
 * call returns LIL_OK in a forked child, and whenever that child dies the
 * supervisor forks a new one that returns from the same call: everything
 * before the call runs once, everything after it runs again in each child
 * (and resumes from its journal).  With argv, each child runs that program
 * instead (`lil watch` is this).  In the supervisor the call never returns:
 * when supervision ends it flushes stdio (fflush(NULL)) and ends the process
 * with _exit(status) -- the one call of the library that ends the process,
 * because a supervisor has nothing to return to.  atexit handlers do not
 * run there (the children run them).
 *
 * Each child:
 *  - leads a process group of its own (the supervisor stays in the
 *    foreground of a terminal; a child that reads the terminal is stopped
 *    by it: give it another stdin);
 *  - gets SIGTERM when the supervisor dies, even by SIGKILL
 *    (PR_SET_PDEATHSIG of the thread that called lil_supervise);
 *  - has LIL_SUPERVISED=1 and LIL_ATTEMPT=<n> (1, 2, ...) in its
 *    environment;
 *  - without argv: gets back the signal dispositions and the signal mask the
 *    caller had when it called lil_supervise, and every descriptor it had;
 *  - with argv: is exec'd with the default action for every signal the
 *    caller caught and for SIGPIPE and SIGXFSZ, an empty signal mask, and
 *    exactly descriptors 0, 1 and 2 (argv[0] without '/' is looked up in
 *    PATH).  A program that cannot be executed ends the supervision at once
 *    with 127 (not found) or 126 (found, not executable), as a shell would;
 *    so does, by default, a child that exits 126 or 127 (a shell's way of
 *    saying the same: see no_restart_codes).
 *
 * The supervisor:
 *  - forwards SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGWINCH
 *    and SIGCONT to the child's process group, and SIGTSTP too (then stops
 *    itself); after SIGINT, SIGTERM, SIGHUP or SIGQUIT (the user's stop) it
 *    never restarts, and a second one sends SIGKILL to the group;
 *  - when the child dies, kills (SIGKILL) what the child left in its
 *    process group, then reaps it: two generations never run side by side;
 *  - restarts it as the policy says (LIL_RESTART_*; never after a death by
 *    SIGINT, which only a user sends), after a delay of backoff_s doubling
 *    with each restart up to max_backoff_s, less a random part of up to
 *    jitter of it; a child that ran for healthy_s or longer starts the
 *    doubling over;
 *  - never restarts a child whose exit code is one of no_restart_codes
 *    (default 126 and 127): it ends with that status;
 *  - gives up, with the exit statuses below, after max_restarts restarts,
 *    after crash_loop_k deaths in a row each less than crash_loop_t_s
 *    seconds after their start, or after same_step deaths in a row at the
 *    same step of the same run;
 *  - otherwise ends with the last child's status: its exit code, or 128 +
 *    the signal that killed it; after the user's stop during a backoff,
 *    128 + that signal.
 *
 * Tied to the journal: with dir, after each death the supervisor reads the
 * store at dir (read-only; nothing is created) for the run whose journal
 * the child changed most recently since it started, and in it the step the
 * child had started and not finished (an effect's intent without outcome),
 * or else the last step it finished (the child died after it).  The death
 * event names both, and same_step compares them across deaths.
 *
 * Call it early: before threads are started (the child has only the
 * calling thread; other threads keep running in the supervisor) and before
 * any run is opened (a forked child would share the run's lock; with env,
 * a run open through it is LIL_E_INVAL).  The supervisor reaps its own
 * child only; it installs handlers for the signals above and SIGCHLD.
 *
 * Returns, in the caller and before anything is forked: LIL_E_INVAL for
 * invalid options (the message says which), LIL_E_IO when the signal
 * handlers or their pipe cannot be set up.  LIL_OK in each child (without
 * argv).  When fork itself fails the supervisor ends with
 * LIL_SUPERVISE_EXIT_OSERR. */

typedef enum lil_restart_policy {
    LIL_RESTART_ON_FAILURE = 0, /* a death by a signal or a non-zero exit */
    LIL_RESTART_ON_CRASH = 1,   /* a death by a signal only */
    LIL_RESTART_ALWAYS = 2,     /* any end, exit 0 included */
} lil_restart_policy;

/* Exit statuses of a supervisor that gives up (docs/errors.md).  Besides
 * them it ends with the child's status, or 126 / 127 when argv cannot be
 * executed. */
#define LIL_SUPERVISE_EXIT_OSERR      71 /* EX_OSERR: fork (or a pipe) failed */
#define LIL_SUPERVISE_EXIT_RESTARTS   80 /* max_restarts restarts were made */
#define LIL_SUPERVISE_EXIT_CRASH_LOOP 81 /* crash_loop_k quick deaths in a row */
#define LIL_SUPERVISE_EXIT_SAME_STEP  82 /* same_step deaths at one step */

/* max_restarts: no limit. */
#define LIL_SUPERVISE_UNLIMITED 0xffffffffu
/* backoff_s or jitter: none (0 means the default). */
#define LIL_SUPERVISE_NONE (-1.0)

/* What the supervisor reports (on_event).  Strings are borrowed for the
 * call.  kind is one of:
 *   "start"   a child was started (attempt, pid)
 *   "death"   it died (pid, exit_code or signal, uptime_s, run_id, step)
 *   "done"    it exited with 0: the fields of a death; not a death
 *   "backoff" the next start waits delay_s seconds
 *   "giveup"  supervision stops: restart limit, crash loop, same step, a
 *             program that cannot be run, fork failed (exit_code: the status)
 *   "exit"    the supervisor ends now with exit_code (always the last)
 * message is one line for a person, e.g. "attempt 2: pid 4242 was killed
 * by SIGKILL after 1.52s, in run invoice-42 at step charge (started, not
 * finished)". */
typedef struct lil_supervise_event {
    const char *kind;
    unsigned attempt; /* the child concerned (the last one for exit) */
    int pid;
    int exit_code;      /* death: the exit code, -1 for a signal; giveup,
                           exit: the supervisor's exit status */
    int signal;         /* death: the signal that ended the child, else 0 */
    double uptime_s;    /* death: seconds since its start */
    double delay_s;     /* backoff: seconds until the next start */
    const char *run_id; /* death: the run the child was in, or NULL */
    const char *step;   /* death: the step identity (see step_started), or NULL */
    const char *message;
    int64_t time_ms;   /* when, ms since the Unix epoch */
    int step_started;  /* death: 1 the child died in step (started, not
                          finished); 0 it died after step, its last one */
    unsigned restarts; /* restarts made so far (backoff: this one included) */
} lil_supervise_event;

typedef void (*lil_supervise_event_fn)(void *ud, const lil_supervise_event *ev);

typedef struct lil_supervise_options {
    size_t struct_size; /* sizeof(lil_supervise_options): lets the struct grow */
    lil_restart_policy restart;
    unsigned max_restarts; /* 0 = 10; LIL_SUPERVISE_UNLIMITED */
    double backoff_s;      /* first delay, doubling; 0 = 1 s; LIL_SUPERVISE_NONE */
    double max_backoff_s;  /* ceiling of the delay; 0 = 60 s */
    double jitter;         /* 0..1: a random part of the delay taken off; 0 = 0.2;
                              LIL_SUPERVISE_NONE */
    unsigned crash_loop_k; /* 0 = off */
    double crash_loop_t_s; /* 0 with crash_loop_k: healthy_s (a quick death is
                              one before the child was healthy) */
    unsigned same_step;    /* 0 = off; needs dir */
    const char *dir;       /* store read after each death; NULL = none */
    lil_supervise_event_fn on_event; /* NULL: nothing reported (never printed) */
    void *ud;
    double healthy_s; /* a child that ran this long resets the doubling; 0 = 30 s */
    const char *const *argv; /* NULL: fork (the call returns in each child);
                                else the program each child runs */
    lil_env *env;            /* allocator for the supervisor; NULL = default */
    /* Exit codes (0..255) that are never restarted: the supervision ends at
     * once with that status.  NULL: 126 and 127 (the program cannot be
     * executed / is not found: a restart would not change that); else
     * exactly the no_restart_count codes given (0 of them: none). */
    const int *no_restart_codes;
    size_t no_restart_count;
} lil_supervise_options;

LIL_API lil_status lil_supervise(const lil_supervise_options *opts);

/* ---- schedules (docs/loops.md, "Schedules") ---------------------------------
 *
 * A store keeps schedules of cron loops for `lil tick` and `lil schedule`:
 * each a JSON object (its caller's: lil keeps the bytes) under an id that
 * follows the run-id rule, and a mark, the last slot fired (epoch ms, 0:
 * none) that only moves forward.  File stores keep them in
 * <store>/schedules/, PostgreSQL stores in a table; an in-memory store
 * keeps none (LIL_E_INVAL).  Errors as lil_store_errmsg. */

/* Write schedule id's document (a JSON object, at most 64 KiB); an
 * existing one is LIL_E_INVAL unless replace (its mark is kept). */
LIL_API lil_status lil_schedule_put(lil_store *st, const char *id, const char *doc_json,
                                    int replace);
/* Schedule id's document into *doc (lil_free) and its mark into *mark_ms;
 * LIL_E_NOTFOUND when there is none. */
LIL_API lil_status lil_schedule_get(lil_store *st, const char *id, lil_bytes *doc,
                                    int64_t *mark_ms);
/* Remove schedule id (its document and its mark); LIL_E_NOTFOUND. */
LIL_API lil_status lil_schedule_remove(lil_store *st, const char *id);
/* Call fn for each schedule's id, in id order, until it returns non-zero. */
LIL_API lil_status lil_schedule_foreach(lil_store *st, lil_run_id_fn fn, void *ud);
/* Move schedule id's mark to slot_ms when that is later than it (never
 * back), atomically against other processes. */
LIL_API lil_status lil_schedule_mark(lil_store *st, const char *id, int64_t slot_ms);
/* The slots of cron expression cron (schedule.cron's syntax, UTC) due at
 * now_ms after from_ms, by catch_up ("all": every fire time t with from_ms
 * < t <= now_ms, oldest first, at most cap; "latest": the newest only;
 * "none": the one of now's own minute -- second, for six fields -- only),
 * into slots, their number into *n.  LIL_E_SPEC: cron does not parse
 * (lil_errmsg says why). */
LIL_API lil_status lil_schedule_due(const char *cron, const char *catch_up,
                                    int64_t from_ms, int64_t now_ms, int64_t *slots,
                                    size_t cap, size_t *n);

#ifdef __cplusplus
}
#endif
#endif /* LIL_LIL_H */
