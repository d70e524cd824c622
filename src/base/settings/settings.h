/*
 * settings.h -- the one place of the library that reads the process
 * environment.
 *
 * Every environment variable the library reads is a row of one table
 * (settings.c): its name, its LOOPY_ alias (the loop runtime's harness
 * variables keep their LOOPY_ names; NULL: none), its default as text, the
 * values it takes, what it sets, and a kind that says how it is checked.
 * docs/api.md ("Settings") lists the same rows.  The rest of the library
 * asks this module: it never calls getenv itself.
 *
 * Rules of the table (they are the library's behaviour, kept exactly):
 *   - a variable with an alias: the LIL_ name wins when it is set and not
 *     empty; else the LOOPY_ one, even empty (lil__setting_twin);
 *   - a variable without an alias: read as it is; empty counts as unset
 *     for LIL_DIR, LIL_SYNC and the journal key;
 *   - a value that does not parse is reported the way its reader always
 *     did (LIL_SYNC at run open, LIL_SPEC_MAX_BYTES by the caller of
 *     lil_setting); LIL_PG_LEASE_MS below 100 or not a number means the
 *     default.
 * Host variables the library consults (USER, TMPDIR, PATH) are rows too,
 * of kind LIL_SETK_HOST, without a LIL_ name.
 *
 * The environment passed to children (effect_env.c, supervise.c reading
 * environ) is not a setting: it is copied, not interpreted.
 *
 * Thread rules: reading the environment is as safe as getenv: not while
 * another thread changes it.  Returned strings are borrowed from the
 * environment (or the table) and valid until the environment changes.
 * The module keeps no state.
 */
#ifndef LIL_BASE_SETTINGS_H
#define LIL_BASE_SETTINGS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/err.h"

/* How a row's value is checked and turned into the value in force. */
enum lil_setting_kind {
    LIL_SETK_TEXT,   /* any text; empty: the default */
    LIL_SETK_SYNC,   /* full, normal or off; empty: full */
    LIL_SETK_LEASE,  /* milliseconds >= 100; anything else: the default */
    LIL_SETK_BYTES,  /* a positive number of bytes (digits only) */
    LIL_SETK_POSINT, /* a positive integer <= 2^53 - 1, blanks around it */
    LIL_SETK_NUMBER, /* a finite number >= 0 (prices); else none */
    LIL_SETK_SECRET, /* a key: never returned by lil_setting */
    LIL_SETK_HOST,   /* a host variable, read as it is */
};

struct lil_setting_def {
    const char *name;  /* "LIL_SYNC", or the host's name ("USER") */
    const char *alias; /* "LOOPY_AGENT_CMD", or NULL */
    const char *dflt;  /* the default as text, or NULL: none */
    enum lil_setting_kind kind;
    const char *values;      /* what it takes, for docs */
    const char *description; /* what it sets, for docs */
};

/* Default lease of a run in the PostgreSQL store (LIL_PG_LEASE_MS). */
#define LIL_SETTING_PG_LEASE_MS 30000

/* The table: row i (NULL past the end). */
const struct lil_setting_def *lil__setting_at(size_t i);

/* The row named name (its LIL_ name, its alias or a host name), or NULL. */
const struct lil_setting_def *lil__setting_find(const char *name);

/* The variable name of envp (NULL: this process's environment), or NULL
 * when it is not there.  The first entry wins, as with getenv. */
const char *lil__env_lookup(const char *const *envp, const char *name);

/* The setting LIL_<x> / LOOPY_<x> of envp (NULL: this process's
 * environment): the LIL_ one when set and not empty, else the LOOPY_ one
 * (even empty), else NULL.  *which (may be NULL) gets the prefix read
 * ("LIL_" or "LOOPY_"). */
const char *lil__setting_twin(const char *const *envp, const char *x,
                              const char **which);

/* A row's variable as the library reads it from this process's
 * environment (its alias by the rule above), or NULL when unset.
 * name must be a row of the table. */
const char *lil__setting_raw(const char *name);

/* The store location: given when not NULL (an empty one: ".lil"), else
 * $LIL_DIR when set and not empty, else ".lil".  Borrowed. */
const char *lil__setting_store_where(const char *given);

/* $LIL_SYNC as a mode (1 full, 2 normal, 3 off: lil_sync's values); a value
 * it cannot read leaves full in *mode and is copied to bad (cap bytes) to
 * be reported later; bad is "" otherwise. */
void lil__setting_sync(int *mode, char *bad, size_t cap);

/* Whether $LIL_STORE_KEY is "off": a new file store makes no key of its own. */
bool lil__setting_store_key_off(void);

/* $LIL_PG_LEASE_MS: at least 100, else LIL_SETTING_PG_LEASE_MS. */
int64_t lil__setting_pg_lease_ms(void);

/* The value in force of row name in this process's environment, checked
 * as the library checks it: *value the variable's text, the default, or
 * NULL (unset, no default); *from the variable read or NULL (the default).
 * buf (cap bytes) holds a value that had to be computed.  LIL_E_NOTFOUND
 * (no such row), LIL_E_INVAL (a value that does not parse, or a secret),
 * each with its message in err. */
lil_status lil__setting_value(struct lil_err *err, const char *name, const char **value,
                              const char **from, char *buf, size_t cap);

#endif
