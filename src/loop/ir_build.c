/*
 * ir_build.c -- document tree -> IR: the structural checks.
 *
 * What zod does in the reference (loopspec-contract.md sections 1.1-1.5):
 * required keys, value types, enum values, positive integers, minimum
 * string lengths, plus one rule of lil's own: an unknown key is an error
 * everywhere (the reference strips them inside steps), with a "did you
 * mean" from the keys allowed there.  Codes: `schema` for a wrong or
 * missing value, `unknown-key` for a key that does not belong.
 *
 * Each diagnostic points at the offending node: the value; the key for an
 * unknown key; the mapping for a missing key.  Messages:
 *   step 'build': missing required key 'cmd'
 *   caps.max_iterations: expected a positive integer, got -1
 *   unknown key 'comand' in step 'build' (did you mean 'cmd'?)
 *
 * Guards and templates are parsed here; a parse failure is kept in the IR
 * and reported by the validator as `bad-expr`.  Nothing is quadratic in the
 * number of steps: each node is visited once, key checks are bounded by
 * the (small) tables of allowed keys.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "base/alloc.h"
#include "loop/duration.h"
#include "loop/ir.h"

#define PATH_MAX_LEN 512

/* ------------------------------------------------------------------------ */
/* Enumerations                                                             */

static const char *const PATTERNS[] = {"react",
                                       "plan-execute-reflect",
                                       "evaluator-optimizer",
                                       "loop-until-dry",
                                       "map-reduce",
                                       "poll-until",
                                       "cron"};
static const char *const STEP_KINDS[] = {"agent",      "shell", "http",
                                         "breakpoint", "sleep", "reduce"};
static const char *const SIGNALS[] = {"oracle", "state-predicate", "llm-judge",
                                      "self-assess"};
static const char *const CAP_ACTIONS[] = {"fail", "breakpoint", "exit-clean"};
static const char *const SCHED_MODES[] = {"manual", "cron", "watch", "forever"};
static const char *const METHODS[] = {"GET", "POST", "PUT", "PATCH", "DELETE"};
static const char *const STRATEGIES[] = {"single", "first-wins", "quorum"};
static const char *const TRACES[] = {"journal", "none"};
static const char *const POLICIES[] = {"never", "on-change", "on-failure", "always"};
static const char *const STORES[] = {"journal", "memory"};
static const char *const RUNTIMES[] = {"standalone", "babysitter", "claude-code",
                                       "claude-native", "n8n"};
static const char *const EMITS[] = {"cli", "skill", "doctor"};
static const char *const ACTION_KINDS[] = {"shell", "http", "agent"};

#define NELEM(a) (sizeof(a) / sizeof((a)[0]))

static const struct {
    const char *const *v;
    size_t n;
} ENUMS[LIL_ENUM_COUNT_] = {
    {PATTERNS, NELEM(PATTERNS)},         {STEP_KINDS, NELEM(STEP_KINDS)},
    {SIGNALS, NELEM(SIGNALS)},           {CAP_ACTIONS, NELEM(CAP_ACTIONS)},
    {SCHED_MODES, NELEM(SCHED_MODES)},   {METHODS, NELEM(METHODS)},
    {STRATEGIES, NELEM(STRATEGIES)},     {TRACES, NELEM(TRACES)},
    {POLICIES, NELEM(POLICIES)},         {STORES, NELEM(STORES)},
    {RUNTIMES, NELEM(RUNTIMES)},         {EMITS, NELEM(EMITS)},
    {ACTION_KINDS, NELEM(ACTION_KINDS)},
};

const char *lil__ir_enum_name(enum lil_ir_enum e, int v)
{
    if ((unsigned)e >= LIL_ENUM_COUNT_ || v < 0 || (size_t)v >= ENUMS[e].n)
        return "?";
    return ENUMS[e].v[v];
}

const char *const *lil__ir_enum_values(enum lil_ir_enum e, size_t *n)
{
    if ((unsigned)e >= LIL_ENUM_COUNT_) {
        *n = 0;
        return NULL;
    }
    *n = ENUMS[e].n;
    return ENUMS[e].v;
}

/* ------------------------------------------------------------------------ */
/* Allowed keys                                                             */

static const char *const TOP_KEYS[] = {
    "loopspec",  "id",     "meta",  "pattern",   "provenance", "target",
    "inputs",    "state",  "body",  "terminate", "caps",       "schedule",
    "artifacts", "notify", "retry", "gates",     "observe"};
static const char *const META_KEYS[] = {"name", "version", "description"};
static const char *const PROV_KEYS[] = {"factory_version", "source", "run_id",
                                        "recipe"};
static const char *const RECIPE_KEYS[] = {"name", "version"};
static const char *const TARGET_KEYS[] = {"runtime", "emit"};
static const char *const INPUT_KEYS[] = {"type", "required", "default", "description"};
static const char *const STATE_KEYS[] = {"store", "vars"};
static const char *const VAR_KEYS[] = {"type", "init", "description"};
static const char *const TERM_KEYS[] = {"signal", "until", "on_exit"};
static const char *const EXIT_KEYS[] = {"kind",     "cmd",     "request",
                                        "envelope", "harness", "prompt"};
static const char *const CAPS_KEYS[] = {"max_iterations", "no_progress", "budget",
                                        "on_cap_exceeded"};
static const char *const NOPROG_KEYS[] = {"fingerprint", "max_repeats"};
static const char *const BUDGET_KEYS[] = {"tokens", "usd", "wallclock"};
static const char *const SCHED_KEYS[] = {"mode", "cron"};
static const char *const ART_KEYS[] = {"include", "exclude", "max_files", "max_bytes"};
static const char *const NOTIFY_KEYS[] = {"policy", "channels"};
static const char *const RETRY_KEYS[] = {"max", "backoff_ms"};
static const char *const GATE_KEYS[] = {"after", "when", "ask", "strategy",
                                        "auto_approve_in"};
static const char *const OBSERVE_KEYS[] = {"trace", "hooks", "notify"};
static const char *const HOOKS_KEYS[] = {"completed"};
static const char *const HOOK_SHELL_KEYS[] = {"kind", "cmd"};
static const char *const HOOK_HTTP_KEYS[] = {"kind", "request"};
static const char *const REQUEST_KEYS[] = {"method", "url", "headers", "body"};
static const char *const ON_DONE_KEYS[] = {"incr", "set", "append"};

static const char *const AGENT_KEYS[] = {"id",     "kind",          "when", "harness",
                                         "prompt", "allowed-tools", "save", "on_done"};
static const char *const SHELL_KEYS[] = {"id",   "kind", "when",   "cmd",
                                         "args", "save", "on_done"};
static const char *const HTTP_KEYS[] = {"id",       "kind", "when",   "request",
                                        "envelope", "save", "on_done"};
static const char *const BREAK_KEYS[] = {"id",  "kind",     "when",
                                         "ask", "strategy", "auto_approve_in"};
static const char *const SLEEP_KEYS[] = {"id", "kind", "when", "for", "until"};
static const char *const REDUCE_KEYS[] = {"id", "kind", "when", "over", "as", "body"};

static const struct {
    const char *const *v;
    size_t n;
} STEP_KEYS[] = {
    {AGENT_KEYS, NELEM(AGENT_KEYS)}, {SHELL_KEYS, NELEM(SHELL_KEYS)},
    {HTTP_KEYS, NELEM(HTTP_KEYS)},   {BREAK_KEYS, NELEM(BREAK_KEYS)},
    {SLEEP_KEYS, NELEM(SLEEP_KEYS)}, {REDUCE_KEYS, NELEM(REDUCE_KEYS)},
};

/* ------------------------------------------------------------------------ */
/* Build context                                                            */

struct build {
    const struct lil_env *env;
    struct lil_diags *d;
    struct lil_ir_spec *ir;
    const char *text; /* may be NULL */
    size_t len;
    size_t *lines; /* byte offset of each line's start (lazy) */
    size_t nlines;
    bool lines_done;
    bool nomem;
};

/* An object being read: its mapping node, its path ("" for the root) and
 * how messages name it (NULL for the root: "top-level"). */
struct obj {
    const struct lil_node *map;
    const char *path;
    const char *where;
};

static bool oom(struct build *b)
{
    b->nomem = true;
    return false;
}

static char *dup_node_str(struct build *b, const struct lil_node *n)
{
    char *s = lil__strndup(b->env, n->str ? n->str : "", n->str ? n->str_len : 0);

    if (!s)
        oom(b);
    return s;
}

/* parent + "." + key (or key alone at the root) into out. */
static void child_path(char *out, size_t cap, const char *parent, const char *key)
{
    int r; /* paths are for display: cutting a very long one is fine */

    if (parent && *parent)
        r = snprintf(out, cap, "%s.%s", parent, key);
    else
        r = snprintf(out, cap, "%s", key);
    if (r < 0)
        out[0] = '\0';
}

/* What a node is, for "got ...": the scalar as written, or its kind. */
static const char *got(const struct lil_node *n, char *buf, size_t cap)
{
    char tmp[96];

    if (n->kind != LIL_NODE_SCALAR)
        return lil__node_kind_name(n);
    if (json_is_null(n->value))
        return "null";
    if (json_is_string(n->value)) {
        snprintf(buf, cap, "'%s'", lil__ir_show(n->str, n->str_len, tmp, sizeof(tmp)));
        return buf;
    }
    return lil__ir_show(n->str, n->str_len, buf, cap);
}

/* "<path>: expected <what>, got <x>" at the value. */
static void type_error(struct build *b, const struct lil_node *n, const char *path,
                       const char *what)
{
    char gbuf[128];
    const char *hint = "";

    if (n->kind == LIL_NODE_SCALAR && !n->quoted && !json_is_null(n->value) &&
        !json_is_string(n->value) &&
        (strcmp(what, "a string") == 0 || strcmp(what, "a non-empty string") == 0 ||
         strcmp(what, "a JSONPath string") == 0))
        hint = " (quote it to make it a string)";
    lil__diag(b->d, LIL_SEV_ERROR, "schema", n->pos, path, "%s: expected %s, got %s%s",
              path, what, got(n, gbuf, sizeof(gbuf)), hint);
}

/* type_error for the value of key in o (the path is made only here: most
 * values are fine, and formatting paths is most of the cost of a build). */
static void field_error(struct build *b, const struct lil_node *v, const struct obj *o,
                        const char *key, const char *what)
{
    char path[PATH_MAX_LEN];

    child_path(path, sizeof(path), o->path, key);
    type_error(b, v, path, what);
}

/* ------------------------------------------------------------------------ */
/* Keys                                                                     */

static bool in_list(const char *key, const char *const *v, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (strcmp(key, v[i]) == 0)
            return true;
    }
    return false;
}

/* The kinds of step a key belongs to ("agent, shell, http") into out;
 * false if none. */
static bool step_kinds_of_key(const char *key, char *out, size_t cap)
{
    size_t l = 0;

    out[0] = '\0';
    for (size_t k = 0; k < NELEM(STEP_KEYS) && l + 1 < cap; k++) {
        if (in_list(key, STEP_KEYS[k].v, STEP_KEYS[k].n)) {
            snprintf(out + l, cap - l, "%s%s", l ? ", " : "", STEP_KINDS[k]);
            l = strlen(out);
        }
    }
    return l > 0;
}

static void unknown_key(struct build *b, const struct obj *o,
                        const struct lil_node *key, const char *const *allowed,
                        size_t n, const char *step_kind)
{
    char kbuf[96], where[PATH_MAX_LEN + 32], hint[160] = "", path[PATH_MAX_LEN];
    const char *k = key->str ? key->str : "";
    char kinds[64];
    bool other = step_kind && step_kinds_of_key(k, kinds, sizeof(kinds));
    const char *s = other ? NULL : lil__suggest(k, allowed, n);

    if (o->where)
        snprintf(where, sizeof(where), " in %s", o->where);
    else
        snprintf(where, sizeof(where), " at top level");
    if (other)
        snprintf(hint, sizeof(hint), " (a key of %s steps; this step is %s)", kinds,
                 step_kind);
    else if (s)
        snprintf(hint, sizeof(hint), " (did you mean '%s'?)", s);
    child_path(path, sizeof(path), o->path, k);
    lil__diag(b->d, LIL_SEV_ERROR, "unknown-key", key->pos, path,
              "unknown key '%s'%s%s", lil__ir_show(k, strlen(k), kbuf, sizeof(kbuf)),
              where, hint);
}

/* Report every key of o not in allowed. */
static void check_keys(struct build *b, const struct obj *o, const char *const *allowed,
                       size_t n, const char *step_kind)
{
    for (size_t i = 0; i < o->map->n; i++) {
        const struct lil_node *key = o->map->pairs[i].key;

        if (!in_list(key->str ? key->str : "", allowed, n))
            unknown_key(b, o, key, allowed, n, step_kind);
    }
}

/* The value of key in o; a missing required key is reported at o. */
static const struct lil_node *field(struct build *b, const struct obj *o,
                                    const char *key, bool required)
{
    const struct lil_node *v = lil__node_get(o->map, key);

    if (!v && required) {
        if (o->where)
            lil__diag(b->d, LIL_SEV_ERROR, "schema", o->map->pos, o->path,
                      "%s: missing required key '%s'", o->where, key);
        else
            lil__diag(b->d, LIL_SEV_ERROR, "schema", o->map->pos, "",
                      "missing required top-level key '%s'", key);
    }
    return v;
}

/* A child object: key's value must be a mapping. */
static bool sub_obj(struct build *b, const struct obj *o, const char *key,
                    bool required, char *pathbuf, struct obj *out)
{
    const struct lil_node *v = field(b, o, key, required);

    child_path(pathbuf, PATH_MAX_LEN, o->path, key);
    if (!v)
        return false;
    if (v->kind != LIL_NODE_MAP) {
        type_error(b, v, pathbuf, "a mapping");
        return false;
    }
    out->map = v;
    out->path = pathbuf;
    out->where = pathbuf;
    return true;
}

/* ------------------------------------------------------------------------ */
/* Scalars                                                                  */

static bool is_string(const struct lil_node *n)
{
    return n->kind == LIL_NODE_SCALAR && json_is_string(n->value);
}

/* A string value (min_len 0 or 1); false if absent or wrong. */
static bool get_str(struct build *b, const struct obj *o, const char *key,
                    bool required, size_t min_len, struct lil_ir_str *out)
{
    const struct lil_node *v = field(b, o, key, required);

    if (!v)
        return false;
    if (!is_string(v) || v->str_len < min_len) {
        field_error(b, v, o, key, min_len ? "a non-empty string" : "a string");
        return false;
    }
    out->pos = v->pos;
    out->s = dup_node_str(b, v);
    return out->s != NULL;
}

/* An integer in [lo, hi] (JSON integers, or reals with an integral value). */
static bool int_value(const struct lil_node *n, long long lo, long long hi,
                      long long *out)
{
    double x;

    if (n->kind != LIL_NODE_SCALAR)
        return false;
    if (json_is_integer(n->value)) {
        json_int_t i = json_integer_value(n->value);

        if (i < lo || i > hi)
            return false;
        *out = (long long)i;
        return true;
    }
    if (!json_is_real(n->value))
        return false;
    x = json_real_value(n->value);
    if (!isfinite(x) || x < (double)lo || x > (double)hi || x != (double)(long long)x)
        return false; /* range first: the cast is defined only in range */
    *out = (long long)x;
    return true;
}

#define INT_BIG 9007199254740991LL /* 2^53 - 1: what a JS number holds exactly */

static bool get_int(struct build *b, const struct obj *o, const char *key,
                    bool required, long long lo, long long hi, const char *what,
                    long long *out, struct lil_pos *pos)
{
    const struct lil_node *v = field(b, o, key, required);

    if (!v)
        return false;
    if (!int_value(v, lo, hi, out)) {
        field_error(b, v, o, key, what);
        return false;
    }
    if (pos)
        *pos = v->pos;
    return true;
}

static bool get_posnum(struct build *b, const struct obj *o, const char *key,
                       double *out)
{
    const struct lil_node *v = field(b, o, key, false);
    double x;

    if (!v)
        return false;
    x = v->kind == LIL_NODE_SCALAR && json_is_number(v->value)
            ? json_number_value(v->value)
            : -1.0;
    if (!(x > 0) || !isfinite(x)) {
        field_error(b, v, o, key, "a positive number");
        return false;
    }
    *out = x;
    return true;
}

static bool get_bool(struct build *b, const struct obj *o, const char *key, bool *out)
{
    const struct lil_node *v = field(b, o, key, false);

    if (!v)
        return false;
    if (v->kind != LIL_NODE_SCALAR || !json_is_boolean(v->value)) {
        field_error(b, v, o, key, "true or false");
        return false;
    }
    *out = json_is_true(v->value);
    return true;
}

/* One of the spellings of enumeration e. */
static bool enum_value(struct build *b, const struct lil_node *v, const char *path,
                       enum lil_ir_enum e, int *out)
{
    size_t n;
    const char *const *vals = lil__ir_enum_values(e, &n);
    char list[256] = "", gbuf[128], hint[96] = "";
    const char *s;

    if (is_string(v)) {
        for (size_t i = 0; i < n; i++) {
            if (strcmp(v->str, vals[i]) == 0) {
                *out = (int)i;
                return true;
            }
        }
    }
    for (size_t i = 0; i < n; i++) {
        size_t l = strlen(list);

        snprintf(list + l, sizeof(list) - l, "%s%s", i ? ", " : "", vals[i]);
    }
    s = is_string(v) ? lil__suggest(v->str, vals, n) : NULL;
    for (size_t i = 0; !s && is_string(v) && i < n; i++) {
        if (strcasecmp(v->str, vals[i]) == 0)
            s = vals[i];
    }
    if (s)
        snprintf(hint, sizeof(hint), " (did you mean '%s'?)", s);
    lil__diag(b->d, LIL_SEV_ERROR, "schema", v->pos, path,
              "%s: expected one of %s, got %s%s", path, list,
              got(v, gbuf, sizeof(gbuf)), hint);
    return false;
}

static bool get_enum(struct build *b, const struct obj *o, const char *key,
                     bool required, enum lil_ir_enum e, int *out, struct lil_pos *pos)
{
    char path[PATH_MAX_LEN];
    const struct lil_node *v = field(b, o, key, required);

    if (!v)
        return false;
    if (pos)
        *pos = v->pos;
    if (is_string(v)) {
        size_t n;
        const char *const *vals = lil__ir_enum_values(e, &n);

        for (size_t i = 0; i < n; i++) {
            if (strcmp(v->str, vals[i]) == 0) {
                *out = (int)i;
                return true;
            }
        }
    }
    child_path(path, sizeof(path), o->path, key);
    return enum_value(b, v, path, e, out);
}

/* A list of strings: at least min_items, at most max_items, each at least
 * min_len bytes. */
static bool get_strlist(struct build *b, const struct obj *o, const char *key,
                        bool required, size_t min_items, size_t max_items,
                        size_t min_len, struct lil_ir_strlist *out)
{
    char path[PATH_MAX_LEN], ipath[PATH_MAX_LEN + 24];
    const struct lil_node *v = field(b, o, key, required);
    bool ok = true;

    if (!v)
        return false;
    child_path(path, sizeof(path), o->path, key);
    if (v->kind != LIL_NODE_SEQ) {
        type_error(b, v, path, "a list of strings");
        return false;
    }
    if (v->n < min_items || v->n > max_items) {
        lil__diag(b->d, LIL_SEV_ERROR, "schema", v->pos, path,
                  v->n < min_items ? "%s: expected at least %zu item(s), got %zu"
                                   : "%s: expected at most %zu items, got %zu",
                  path, v->n < min_items ? min_items : max_items, v->n);
        return false;
    }
    out->present = true;
    out->pos = v->pos;
    out->v = lil__calloc(b->env, v->n ? v->n : 1, sizeof(*out->v));
    if (!out->v)
        return oom(b);
    for (size_t i = 0; i < v->n; i++) {
        const struct lil_node *it = v->items[i];

        if (!is_string(it) || it->str_len < min_len) {
            snprintf(ipath, sizeof(ipath), "%s[%zu]", path, i);
            type_error(b, it, ipath, min_len ? "a non-empty string" : "a string");
            ok = false;
            continue;
        }
        out->v[out->n].pos = it->pos;
        out->v[out->n].s = dup_node_str(b, it);
        if (!out->v[out->n].s)
            return false;
        out->n++;
    }
    return ok;
}

/* A JSON copy of a node (NULL on failure, noted). */
static json_t *node_json(struct build *b, const struct lil_node *n)
{
    json_t *j = lil__node_json(n);

    if (!j)
        oom(b);
    return j;
}

/* ------------------------------------------------------------------------ */
/* Guards and templates                                                     */

static bool index_lines(struct build *b)
{
    size_t n = 1, k = 1;

    b->lines_done = true;
    if (!b->text)
        return false;
    for (size_t i = 0; i < b->len; i++)
        n += b->text[i] == '\n';
    b->lines = lil__malloc(b->env, n * sizeof(*b->lines));
    if (!b->lines)
        return oom(b);
    b->lines[0] = 0;
    for (size_t i = 0; i < b->len; i++) {
        if (b->text[i] == '\n')
            b->lines[k++] = i + 1;
    }
    b->nlines = n;
    return true;
}

/* Where src's text starts in the file and how much of it appears there
 * verbatim (see lil__ir_src_pos). */
static void locate(struct build *b, const struct lil_node *n, struct lil_ir_src *src)
{
    size_t off, i = 0;

    src->pos = src->at = n->pos;
    src->exact = 0;
    if (!b->lines_done)
        index_lines(b);
    if (!b->lines || n->pos.line == 0 || n->pos.line > b->nlines || n->pos.col == 0)
        return;
    off = b->lines[n->pos.line - 1] + n->pos.col - 1;
    if (off >= b->len)
        return;
    if (n->quoted) {
        if (b->text[off] != '"' && b->text[off] != '\'')
            return; /* a block scalar: its text starts on a later line */
        off++;
        src->at.col++;
    }
    while (i < src->len && off + i < b->len && b->text[off + i] == src->s[i] &&
           src->s[i] != '\n' && src->s[i] != '\r')
        i++;
    src->exact = i;
}

struct lil_pos lil__ir_src_pos(const struct lil_ir_src *src, size_t offset)
{
    struct lil_pos p = src->at;

    if (offset < src->exact || (offset == src->exact && offset == src->len)) {
        p.col += (unsigned)offset;
        return p;
    }
    return src->pos;
}

/* Copy a string node into src (its text and position). */
static bool take_src(struct build *b, const struct lil_node *v, struct lil_ir_src *src)
{
    src->s = dup_node_str(b, v);
    if (!src->s)
        return false;
    src->len = v->str_len;
    locate(b, v, src);
    return true;
}

static bool keep_err(struct build *b, const struct lil_expr_err *e, char **msg,
                     size_t *off)
{
    *msg = lil__strdup(b->env, e->msg);
    *off = e->offset;
    if (!*msg)
        return oom(b);
    return true;
}

static bool parse_guard_node(struct build *b, const struct lil_node *v,
                             struct lil_ir_guard *g)
{
    struct lil_expr_err e;
    lil_status rc;

    if (!take_src(b, v, &g->src))
        return false;
    memset(&e, 0, sizeof(e));
    rc = lil__guard_parse(b->env, g->src.s, g->src.len, &g->expr, &e);
    if (rc == LIL_E_NOMEM)
        return oom(b);
    if (rc != LIL_OK)
        return keep_err(b, &e, &g->err, &g->err_offset);
    return true;
}

static bool parse_tmpl_node(struct build *b, const struct lil_node *v,
                            struct lil_ir_tmpl *t)
{
    struct lil_expr_err e;
    lil_status rc;

    if (!take_src(b, v, &t->src))
        return false;
    memset(&e, 0, sizeof(e));
    rc = lil__tmpl_parse(b->env, t->src.s, t->src.len, &t->tmpl, &e);
    if (rc == LIL_E_NOMEM)
        return oom(b);
    if (rc != LIL_OK)
        return keep_err(b, &e, &t->err, &t->err_offset);
    return true;
}

/* A string value parsed as a guard / template. */
static bool get_guard(struct build *b, const struct obj *o, const char *key,
                      bool required, size_t min_len, struct lil_ir_guard *out)
{
    const struct lil_node *v = field(b, o, key, required);

    if (!v)
        return false;
    if (!is_string(v) || v->str_len < min_len) {
        field_error(b, v, o, key, min_len ? "a non-empty string" : "a string");
        return false;
    }
    return parse_guard_node(b, v, out);
}

static bool get_tmpl(struct build *b, const struct obj *o, const char *key,
                     bool required, size_t min_len, struct lil_ir_tmpl *out)
{
    const struct lil_node *v = field(b, o, key, required);

    if (!v)
        return false;
    if (!is_string(v) || v->str_len < min_len) {
        field_error(b, v, o, key, min_len ? "a non-empty string" : "a string");
        return false;
    }
    return parse_tmpl_node(b, v, out);
}

static void get_duration(struct build *b, const struct obj *o, const char *key,
                         struct lil_ir_duration *out)
{
    if (!get_str(b, o, key, false, 0, &out->text))
        return;
    out->ok = lil__duration_parse(out->text.s, strlen(out->text.s), &out->ms) ==
              LIL_DURATION_OK;
}

/* ------------------------------------------------------------------------ */
/* HTTP requests and actions                                                */

static void build_headers(struct build *b, const struct lil_node *v, const char *path,
                          struct lil_ir_http *h)
{
    char hpath[PATH_MAX_LEN + 64];

    if (v->kind != LIL_NODE_MAP) {
        type_error(b, v, path, "a mapping of header names to strings");
        return;
    }
    h->has_headers = true;
    h->headers = lil__calloc(b->env, v->n ? v->n : 1, sizeof(*h->headers));
    if (!h->headers) {
        oom(b);
        return;
    }
    for (size_t i = 0; i < v->n && !b->nomem; i++) {
        const struct lil_node_pair *p = &v->pairs[i];
        struct lil_ir_header *hd = &h->headers[h->nheaders];

        if (!is_string(p->value)) {
            child_path(hpath, sizeof(hpath), path, p->key->str);
            type_error(b, p->value, hpath, "a string");
            continue;
        }
        hd->name = dup_node_str(b, p->key);
        hd->pos = p->key->pos;
        h->nheaders++;
        if (hd->name)
            parse_tmpl_node(b, p->value, &hd->value);
    }
}

static void build_request(struct build *b, const struct obj *parent, bool required,
                          struct lil_ir_http *h)
{
    char path[PATH_MAX_LEN], hpath[PATH_MAX_LEN];
    struct obj o;
    const struct lil_node *v;
    int m;

    if (!sub_obj(b, parent, "request", required, path, &o))
        return;
    h->present = true;
    h->pos = o.map->pos;
    check_keys(b, &o, REQUEST_KEYS, NELEM(REQUEST_KEYS), NULL);
    if (get_enum(b, &o, "method", true, LIL_ENUM_METHOD, &m, &h->method_pos))
        h->method = (enum lil_ir_method)m;
    get_tmpl(b, &o, "url", true, 0, &h->url);
    v = field(b, &o, "headers", false);
    if (v) {
        child_path(hpath, sizeof(hpath), path, "headers");
        build_headers(b, v, hpath, h);
    }
    v = field(b, &o, "body", false);
    if (v) {
        h->body_pos = v->pos;
        h->body = node_json(b, v);
        if (h->body && is_string(v))
            parse_tmpl_node(b, v, &h->body_tmpl);
    }
}

/* terminate.on_exit: ExitAction (not strict about fields per kind). */
static void build_exit_action(struct build *b, const struct obj *parent,
                              struct lil_ir_action *a)
{
    char path[PATH_MAX_LEN];
    struct obj o;
    int k;

    if (!sub_obj(b, parent, "on_exit", false, path, &o))
        return;
    a->present = true;
    a->pos = o.map->pos;
    check_keys(b, &o, EXIT_KEYS, NELEM(EXIT_KEYS), NULL);
    if (get_enum(b, &o, "kind", true, LIL_ENUM_ACTION_KIND, &k, &a->kind_pos))
        a->kind = (enum lil_ir_action_kind)k;
    get_tmpl(b, &o, "cmd", false, 0, &a->cmd);
    build_request(b, &o, false, &a->request);
    a->has_envelope = get_bool(b, &o, "envelope", &a->envelope);
    a->harness_given = get_str(b, &o, "harness", false, 1, &a->harness);
    get_tmpl(b, &o, "prompt", false, 0, &a->prompt);
}

/* observe.hooks.completed: a strict union of {kind: shell, cmd} and
 * {kind: http, request}. */
static void build_hook(struct build *b, const struct obj *parent,
                       struct lil_ir_action *a)
{
    char path[PATH_MAX_LEN];
    struct obj o;
    const struct lil_node *kind;
    int k = -1;

    if (!sub_obj(b, parent, "completed", false, path, &o))
        return;
    a->pos = o.map->pos;
    kind = field(b, &o, "kind", true);
    if (kind) {
        char kpath[PATH_MAX_LEN];
        static const char *const HOOK_KINDS[] = {"shell", "http"};
        char gbuf[128];

        child_path(kpath, sizeof(kpath), path, "kind");
        a->kind_pos = kind->pos;
        if (is_string(kind) && strcmp(kind->str, "shell") == 0)
            k = LIL_ACT_SHELL;
        else if (is_string(kind) && strcmp(kind->str, "http") == 0)
            k = LIL_ACT_HTTP;
        else
            lil__diag(b->d, LIL_SEV_ERROR, "schema", kind->pos, kpath,
                      "%s: expected one of %s, %s, got %s", kpath, HOOK_KINDS[0],
                      HOOK_KINDS[1], got(kind, gbuf, sizeof(gbuf)));
    }
    if (k == LIL_ACT_SHELL) {
        check_keys(b, &o, HOOK_SHELL_KEYS, NELEM(HOOK_SHELL_KEYS), NULL);
        get_tmpl(b, &o, "cmd", true, 1, &a->cmd);
    } else if (k == LIL_ACT_HTTP) {
        check_keys(b, &o, HOOK_HTTP_KEYS, NELEM(HOOK_HTTP_KEYS), NULL);
        build_request(b, &o, true, &a->request);
    }
    if (k >= 0) {
        a->present = true;
        a->kind = (enum lil_ir_action_kind)k;
    }
}

/* ------------------------------------------------------------------------ */
/* Steps                                                                    */

static void build_steps(struct build *b, const struct lil_node *seq, const char *prefix,
                        const struct lil_ir_step *parent, struct lil_ir_step **out,
                        size_t *nout);

static void build_save(struct build *b, const struct obj *o, struct lil_ir_step *s)
{
    char path[PATH_MAX_LEN], vpath[PATH_MAX_LEN + 64];
    const struct lil_node *v = field(b, o, "save", false);

    if (!v)
        return;
    child_path(path, sizeof(path), o->path, "save");
    if (v->kind != LIL_NODE_MAP) {
        type_error(b, v, path, "a mapping of state vars to JSONPaths");
        return;
    }
    s->has_save = true;
    s->save_pos = v->pos;
    s->save = lil__calloc(b->env, v->n ? v->n : 1, sizeof(*s->save));
    if (!s->save) {
        oom(b);
        return;
    }
    for (size_t i = 0; i < v->n && !b->nomem; i++) {
        const struct lil_node_pair *p = &v->pairs[i];
        struct lil_ir_save *sv = &s->save[s->nsave];

        if (!is_string(p->value)) {
            child_path(vpath, sizeof(vpath), path, p->key->str);
            type_error(b, p->value, vpath, "a JSONPath string");
            continue;
        }
        s->nsave++;
        sv->var = dup_node_str(b, p->key);
        sv->pos = p->key->pos;
        sv->path.s = dup_node_str(b, p->value);
        sv->path.pos = p->value->pos;
    }
}

static void build_assigns(struct build *b, const struct obj *o, const char *key,
                          struct lil_ir_assign **out, size_t *nout, bool *has)
{
    const struct lil_node *v = field(b, o, key, false);

    if (!v)
        return;
    if (v->kind != LIL_NODE_MAP) {
        field_error(b, v, o, key, "a mapping of state vars to values");
        return;
    }
    *has = true;
    *out = lil__calloc(b->env, v->n ? v->n : 1, sizeof(**out));
    if (!*out) {
        oom(b);
        return;
    }
    for (size_t i = 0; i < v->n && !b->nomem; i++) {
        const struct lil_node_pair *p = &v->pairs[i];
        struct lil_ir_assign *a = &(*out)[i];

        (*nout)++;
        a->var = dup_node_str(b, p->key);
        a->pos = p->key->pos;
        a->value_pos = p->value->pos;
        a->value = node_json(b, p->value);
        if (a->value && is_string(p->value)) {
            a->is_tmpl = true;
            parse_tmpl_node(b, p->value, &a->tmpl);
        }
    }
}

static void build_on_done(struct build *b, const struct obj *step,
                          struct lil_ir_on_done *od)
{
    char path[PATH_MAX_LEN];
    struct obj o;

    if (!sub_obj(b, step, "on_done", false, path, &o))
        return;
    od->present = true;
    od->pos = o.map->pos;
    check_keys(b, &o, ON_DONE_KEYS, NELEM(ON_DONE_KEYS), NULL);
    get_str(b, &o, "incr", false, 0, &od->incr);
    build_assigns(b, &o, "set", &od->set, &od->nset, &od->has_set);
    build_assigns(b, &o, "append", &od->append, &od->nappend, &od->has_append);
}

static void build_shell_args(struct build *b, const struct obj *o,
                             struct lil_ir_shell *sh)
{
    char path[PATH_MAX_LEN], ipath[PATH_MAX_LEN + 24];
    const struct lil_node *v = field(b, o, "args", false);

    if (!v)
        return;
    child_path(path, sizeof(path), o->path, "args");
    if (v->kind != LIL_NODE_SEQ) {
        type_error(b, v, path, "a list of strings");
        return;
    }
    sh->has_args = true;
    sh->args_pos = v->pos;
    sh->args = lil__calloc(b->env, v->n ? v->n : 1, sizeof(*sh->args));
    if (!sh->args) {
        oom(b);
        return;
    }
    for (size_t i = 0; i < v->n && !b->nomem; i++) {
        if (!is_string(v->items[i])) {
            snprintf(ipath, sizeof(ipath), "%s[%zu]", path, i);
            type_error(b, v->items[i], ipath, "a string");
            continue;
        }
        parse_tmpl_node(b, v->items[i], &sh->args[sh->nargs++]);
    }
}

static void build_reduce(struct build *b, const struct obj *o, struct lil_ir_step *s)
{
    char path[PATH_MAX_LEN];
    const struct lil_node *v;

    get_guard(b, o, "over", true, 1, &s->reduce.over);
    s->reduce.as_given = get_str(b, o, "as", false, 0, &s->reduce.as);
    v = field(b, o, "body", true);
    if (!v)
        return;
    child_path(path, sizeof(path), o->path, "body");
    if (v->kind != LIL_NODE_SEQ) {
        type_error(b, v, path, "a list of steps");
        return;
    }
    build_steps(b, v, o->path, s, &s->reduce.body, &s->reduce.nbody);
}

static void build_kind_fields(struct build *b, const struct obj *o,
                              struct lil_ir_step *s)
{
    int st;

    switch (s->kind) {
    case LIL_STEP_AGENT:
        get_str(b, o, "harness", true, 1, &s->agent.harness);
        get_tmpl(b, o, "prompt", true, 1, &s->agent.prompt);
        get_strlist(b, o, "allowed-tools", false, 0, SIZE_MAX, 0,
                    &s->agent.allowed_tools);
        break;
    case LIL_STEP_SHELL:
        get_tmpl(b, o, "cmd", true, 1, &s->shell.cmd);
        build_shell_args(b, o, &s->shell);
        break;
    case LIL_STEP_HTTP:
        build_request(b, o, true, &s->http);
        get_bool(b, o, "envelope", &s->envelope);
        break;
    case LIL_STEP_BREAKPOINT:
        get_tmpl(b, o, "ask", true, 1, &s->breakpoint.ask);
        s->breakpoint.has_strategy =
            get_enum(b, o, "strategy", false, LIL_ENUM_STRATEGY, &st,
                     &s->breakpoint.strategy_pos);
        if (s->breakpoint.has_strategy)
            s->breakpoint.strategy = (enum lil_ir_strategy)st;
        get_strlist(b, o, "auto_approve_in", false, 0, SIZE_MAX, 0,
                    &s->breakpoint.auto_approve_in);
        break;
    case LIL_STEP_SLEEP:
        get_duration(b, o, "for", &s->sleep.for_);
        get_guard(b, o, "until", false, 0, &s->sleep.until);
        break;
    case LIL_STEP_REDUCE:
        build_reduce(b, o, s);
        break;
    }
    if (s->kind <= LIL_STEP_HTTP) {
        build_save(b, o, s);
        build_on_done(b, o, &s->on_done);
    }
}

/* The step's id (when it is a usable string) for its path and messages. */
static void step_id(struct build *b, const struct lil_node *map, const char *base,
                    struct lil_ir_step *s, char *path, char *where)
{
    const struct lil_node *id = lil__node_get(map, "id");
    char sbuf[96];

    snprintf(path, PATH_MAX_LEN, "%s", base);
    snprintf(where, PATH_MAX_LEN + 16, "step %s", base);
    if (!id || !is_string(id) || id->str_len == 0)
        return;
    s->id = dup_node_str(b, id);
    s->id_pos = id->pos;
    lil__ir_show(id->str, id->str_len, sbuf, sizeof(sbuf));
    if (snprintf(path, PATH_MAX_LEN, "%s:%s", base, sbuf) < 0)
        path[0] = '\0';
    snprintf(where, PATH_MAX_LEN + 16, "step '%s'", sbuf);
}

static void build_step(struct build *b, const struct lil_node *n, const char *base,
                       struct lil_ir_step *s)
{
    char path[PATH_MAX_LEN], where[PATH_MAX_LEN + 16];
    struct obj o = {n, path, where};
    struct lil_ir_str idtmp = {0};
    int k;

    s->pos = n->pos;
    if (n->kind != LIL_NODE_MAP) {
        type_error(b, n, base, "a step (a mapping)");
        return;
    }
    step_id(b, n, base, s, path, where);
    s->path = lil__strdup(b->env, path);
    if (!s->path) {
        oom(b);
        return;
    }
    if (!s->id && get_str(b, &o, "id", true, 1, &idtmp)) /* reports what is wrong */
        lil__free(b->env, idtmp.s);
    if (!get_enum(b, &o, "kind", true, LIL_ENUM_STEP_KIND, &k, &s->kind_pos))
        return;
    s->kind = (enum lil_ir_step_kind)k;
    check_keys(b, &o, STEP_KEYS[k].v, STEP_KEYS[k].n, STEP_KINDS[k]);
    get_guard(b, &o, "when", false, 0, &s->when);
    build_kind_fields(b, &o, s);
}

static void build_steps(struct build *b, const struct lil_node *seq, const char *prefix,
                        const struct lil_ir_step *parent, struct lil_ir_step **out,
                        size_t *nout)
{
    char base[PATH_MAX_LEN];

    *out = lil__calloc(b->env, seq->n ? seq->n : 1, sizeof(**out));
    if (!*out) {
        oom(b);
        return;
    }
    *nout = seq->n;
    b->ir->nsteps += seq->n;
    for (size_t i = 0; i < seq->n && !b->nomem; i++) {
        if (prefix && *prefix)
            snprintf(base, sizeof(base), "%s.body[%zu]", prefix, i);
        else
            snprintf(base, sizeof(base), "body[%zu]", i);
        (*out)[i].index = i;
        (*out)[i].parent = parent;
        build_step(b, seq->items[i], base, &(*out)[i]);
    }
}

/* ------------------------------------------------------------------------ */
/* Top-level sections                                                       */

static void build_meta(struct build *b, const struct obj *root)
{
    char path[PATH_MAX_LEN];
    struct obj o;
    struct lil_ir_spec *ir = b->ir;

    if (!sub_obj(b, root, "meta", false, path, &o))
        return;
    ir->meta.given = true;
    ir->meta.pos = o.map->pos;
    check_keys(b, &o, META_KEYS, NELEM(META_KEYS), NULL);
    get_str(b, &o, "name", false, 0, &ir->meta.name);
    get_str(b, &o, "version", false, 0, &ir->meta.version);
    get_str(b, &o, "description", false, 0, &ir->meta.description);
}

static void build_provenance(struct build *b, const struct obj *root)
{
    char path[PATH_MAX_LEN], rpath[PATH_MAX_LEN];
    struct obj o, r;
    struct lil_ir_str tmp[5];

    if (!sub_obj(b, root, "provenance", false, path, &o))
        return;
    memset(tmp, 0, sizeof(tmp));
    check_keys(b, &o, PROV_KEYS, NELEM(PROV_KEYS), NULL);
    get_str(b, &o, "factory_version", false, 0, &tmp[0]);
    get_str(b, &o, "source", false, 0, &tmp[1]);
    get_str(b, &o, "run_id", false, 0, &tmp[2]);
    if (sub_obj(b, &o, "recipe", false, rpath, &r)) {
        check_keys(b, &r, RECIPE_KEYS, NELEM(RECIPE_KEYS), NULL);
        get_str(b, &r, "name", true, 1, &tmp[3]);
        get_str(b, &r, "version", true, 1, &tmp[4]);
    }
    for (size_t i = 0; i < NELEM(tmp); i++)
        lil__free(b->env, tmp[i].s);
    b->ir->provenance = node_json(b, o.map);
}

static void build_target(struct build *b, const struct obj *root)
{
    char path[PATH_MAX_LEN], epath[PATH_MAX_LEN], ipath[PATH_MAX_LEN + 24];
    struct obj o;
    const struct lil_node *v;
    int k;

    if (!sub_obj(b, root, "target", false, path, &o))
        return;
    b->ir->target.given = true;
    check_keys(b, &o, TARGET_KEYS, NELEM(TARGET_KEYS), NULL);
    if (get_enum(b, &o, "runtime", false, LIL_ENUM_RUNTIME, &k, NULL))
        b->ir->target.runtime = (enum lil_ir_runtime)k;
    v = field(b, &o, "emit", false);
    if (!v)
        return;
    child_path(epath, sizeof(epath), path, "emit");
    if (v->kind != LIL_NODE_SEQ) {
        type_error(b, v, epath, "a list of cli, skill, doctor");
        return;
    }
    b->ir->target.emit_given = true;
    for (size_t i = 0; i < v->n; i++) {
        bool seen = false;

        snprintf(ipath, sizeof(ipath), "%s[%zu]", epath, i);
        if (!enum_value(b, v->items[i], ipath, LIL_ENUM_EMIT, &k))
            continue;
        for (size_t j = 0; j < b->ir->target.nemit; j++)
            seen = seen || b->ir->target.emit[j] == (enum lil_ir_emit)k;
        if (!seen)
            b->ir->target.emit[b->ir->target.nemit++] = (enum lil_ir_emit)k;
    }
}

/* Declared type text -> parsed type. */
static void parse_type(struct lil_ir_str *text, bool *ok, struct lil_type *t)
{
    *ok = text->s && lil__type_parse(text->s, t);
}

static bool add_index(struct build *b, json_t *index, const char *name, size_t i)
{
    if (json_object_set_new(index, name, json_integer((json_int_t)i)) != 0)
        return oom(b);
    return true;
}

static void build_input(struct build *b, const struct lil_node_pair *p,
                        const char *base, struct lil_ir_input *in)
{
    char path[PATH_MAX_LEN];
    struct obj o = {p->value, path, path};
    const struct lil_node *v;

    child_path(path, sizeof(path), base, p->key->str);
    in->name = dup_node_str(b, p->key);
    in->pos = p->key->pos;
    if (p->value->kind != LIL_NODE_MAP) {
        type_error(b, p->value, path, "an input declaration (a mapping with 'type')");
        return;
    }
    check_keys(b, &o, INPUT_KEYS, NELEM(INPUT_KEYS), NULL);
    if (get_str(b, &o, "type", true, 1, &in->type_text))
        parse_type(&in->type_text, &in->type_ok, &in->type);
    in->has_required = get_bool(b, &o, "required", &in->required);
    v = field(b, &o, "default", false);
    if (v) {
        in->def = node_json(b, v);
        in->def_pos = v->pos;
    }
    get_str(b, &o, "description", false, 0, &in->description);
}

static void build_inputs(struct build *b, const struct obj *root)
{
    struct lil_ir_spec *ir = b->ir;
    const struct lil_node *v = field(b, root, "inputs", false);

    if (!v)
        return;
    if (v->kind != LIL_NODE_MAP) {
        type_error(b, v, "inputs", "a mapping of input names to declarations");
        return;
    }
    ir->has_inputs = true;
    ir->inputs = lil__calloc(b->env, v->n ? v->n : 1, sizeof(*ir->inputs));
    if (!ir->inputs) {
        oom(b);
        return;
    }
    ir->ninputs = v->n;
    for (size_t i = 0; i < v->n && !b->nomem; i++) {
        build_input(b, &v->pairs[i], "inputs", &ir->inputs[i]);
        if (ir->inputs[i].name)
            add_index(b, ir->input_index, ir->inputs[i].name, i);
    }
}

static void build_var(struct build *b, const struct lil_node_pair *p, const char *base,
                      struct lil_ir_var *var)
{
    char path[PATH_MAX_LEN];
    struct obj o = {p->value, path, path};
    const struct lil_node *v;

    child_path(path, sizeof(path), base, p->key->str);
    var->name = dup_node_str(b, p->key);
    var->pos = p->key->pos;
    if (p->value->kind != LIL_NODE_MAP) {
        type_error(b, p->value, path,
                   "a state var declaration (a mapping with 'type')");
        return;
    }
    check_keys(b, &o, VAR_KEYS, NELEM(VAR_KEYS), NULL);
    if (get_str(b, &o, "type", true, 1, &var->type_text))
        parse_type(&var->type_text, &var->type_ok, &var->type);
    v = field(b, &o, "init", false);
    if (v) {
        var->init = node_json(b, v);
        var->init_pos = v->pos;
    }
    get_str(b, &o, "description", false, 0, &var->description);
}

static void build_state(struct build *b, const struct obj *root)
{
    char path[PATH_MAX_LEN], vpath[PATH_MAX_LEN];
    struct obj o;
    struct lil_ir_spec *ir = b->ir;
    const struct lil_node *v;
    int k;

    if (!sub_obj(b, root, "state", false, path, &o))
        return;
    ir->state.present = true;
    ir->state.pos = o.map->pos;
    check_keys(b, &o, STATE_KEYS, NELEM(STATE_KEYS), NULL);
    if (get_enum(b, &o, "store", false, LIL_ENUM_STORE, &k, NULL))
        ir->state.store = (enum lil_ir_store)k;
    v = field(b, &o, "vars", true);
    if (!v)
        return;
    child_path(vpath, sizeof(vpath), path, "vars");
    if (v->kind != LIL_NODE_MAP) {
        type_error(b, v, vpath, "a mapping of state var names to declarations");
        return;
    }
    ir->state.vars = lil__calloc(b->env, v->n ? v->n : 1, sizeof(*ir->state.vars));
    if (!ir->state.vars) {
        oom(b);
        return;
    }
    ir->state.nvars = v->n;
    for (size_t i = 0; i < v->n && !b->nomem; i++) {
        build_var(b, &v->pairs[i], vpath, &ir->state.vars[i]);
        if (ir->state.vars[i].name)
            add_index(b, ir->var_index, ir->state.vars[i].name, i);
    }
}

static void build_body(struct build *b, const struct obj *root)
{
    const struct lil_node *v = field(b, root, "body", true);

    if (!v)
        return;
    if (v->kind != LIL_NODE_SEQ) {
        type_error(b, v, "body", "a list of steps");
        return;
    }
    if (v->n == 0) {
        lil__diag(b->d, LIL_SEV_ERROR, "schema", v->pos, "body",
                  "body: expected at least 1 step, got an empty list");
        return;
    }
    build_steps(b, v, "", NULL, &b->ir->body, &b->ir->nbody);
}

static void build_terminate(struct build *b, const struct obj *root)
{
    char path[PATH_MAX_LEN];
    struct obj o;
    struct lil_ir_spec *ir = b->ir;
    int k;

    if (!sub_obj(b, root, "terminate", false, path, &o))
        return;
    ir->terminate.present = true;
    ir->terminate.pos = o.map->pos;
    check_keys(b, &o, TERM_KEYS, NELEM(TERM_KEYS), NULL);
    if (get_enum(b, &o, "signal", true, LIL_ENUM_SIGNAL, &k, &ir->terminate.signal_pos))
        ir->terminate.signal = (enum lil_ir_signal)k;
    get_guard(b, &o, "until", true, 1, &ir->terminate.until);
    build_exit_action(b, &o, &ir->terminate.on_exit);
}

static void build_caps(struct build *b, const struct obj *root)
{
    char path[PATH_MAX_LEN], npath[PATH_MAX_LEN], bpath[PATH_MAX_LEN];
    struct obj o, np, bu;
    struct lil_ir_spec *ir = b->ir;
    int k;

    if (!sub_obj(b, root, "caps", false, path, &o)) {
        ir->caps.injected = lil__node_get(root->map, "caps") == NULL;
        return;
    }
    ir->caps.pos = o.map->pos;
    check_keys(b, &o, CAPS_KEYS, NELEM(CAPS_KEYS), NULL);
    get_int(b, &o, "max_iterations", true, 1, INT_BIG, "a positive integer",
            &ir->caps.max_iterations, &ir->caps.max_iterations_pos);
    if (sub_obj(b, &o, "no_progress", false, npath, &np)) {
        ir->caps.no_progress.present = true;
        ir->caps.no_progress.pos = np.map->pos;
        check_keys(b, &np, NOPROG_KEYS, NELEM(NOPROG_KEYS), NULL);
        get_guard(b, &np, "fingerprint", true, 1, &ir->caps.no_progress.fingerprint);
        get_int(b, &np, "max_repeats", true, 1, INT_BIG, "a positive integer",
                &ir->caps.no_progress.max_repeats, NULL);
    }
    if (sub_obj(b, &o, "budget", false, bpath, &bu)) {
        ir->caps.budget.present = true;
        ir->caps.budget.pos = bu.map->pos;
        check_keys(b, &bu, BUDGET_KEYS, NELEM(BUDGET_KEYS), NULL);
        ir->caps.budget.has_tokens =
            get_int(b, &bu, "tokens", false, 1, INT_BIG, "a positive integer",
                    &ir->caps.budget.tokens, NULL);
        ir->caps.budget.has_usd = get_posnum(b, &bu, "usd", &ir->caps.budget.usd);
        get_duration(b, &bu, "wallclock", &ir->caps.budget.wallclock);
    }
    ir->caps.on_cap_exceeded = LIL_CAPACT_BREAKPOINT;
    if (get_enum(b, &o, "on_cap_exceeded", false, LIL_ENUM_CAP_ACTION, &k, NULL))
        ir->caps.on_cap_exceeded = (enum lil_ir_cap_action)k;
}

static void build_schedule(struct build *b, const struct obj *root)
{
    char path[PATH_MAX_LEN];
    struct obj o;
    struct lil_ir_spec *ir = b->ir;
    int k;

    if (!sub_obj(b, root, "schedule", false, path, &o))
        return;
    ir->schedule.given = true;
    ir->schedule.pos = o.map->pos;
    check_keys(b, &o, SCHED_KEYS, NELEM(SCHED_KEYS), NULL);
    if (get_enum(b, &o, "mode", true, LIL_ENUM_SCHED_MODE, &k, NULL))
        ir->schedule.mode = (enum lil_ir_sched_mode)k;
    if (get_str(b, &o, "cron", false, 0, &ir->schedule.cron))
        ir->schedule.cron_ok =
            lil__cron_parse(ir->schedule.cron.s, &ir->schedule.cron_parsed,
                            ir->schedule.cron_why, sizeof(ir->schedule.cron_why));
}

static void build_artifacts(struct build *b, const struct obj *root)
{
    char path[PATH_MAX_LEN];
    struct obj o;
    struct lil_ir_spec *ir = b->ir;

    if (!sub_obj(b, root, "artifacts", false, path, &o))
        return;
    ir->artifacts.present = true;
    ir->artifacts.pos = o.map->pos;
    check_keys(b, &o, ART_KEYS, NELEM(ART_KEYS), NULL);
    get_strlist(b, &o, "include", true, 1, SIZE_MAX, 1, &ir->artifacts.include);
    get_strlist(b, &o, "exclude", false, 0, SIZE_MAX, 1, &ir->artifacts.exclude);
    get_int(b, &o, "max_files", false, 1, 10000, "an integer from 1 to 10000",
            &ir->artifacts.max_files, NULL);
    get_int(b, &o, "max_bytes", false, 1, 1000000000, "an integer from 1 to 1000000000",
            &ir->artifacts.max_bytes, NULL);
}

static void build_notify(struct build *b, const struct obj *root)
{
    char path[PATH_MAX_LEN];
    struct obj o;
    struct lil_ir_spec *ir = b->ir;
    int k;

    if (!sub_obj(b, root, "notify", false, path, &o))
        return;
    ir->notify.present = true;
    ir->notify.pos = o.map->pos;
    check_keys(b, &o, NOTIFY_KEYS, NELEM(NOTIFY_KEYS), NULL);
    if (get_enum(b, &o, "policy", true, LIL_ENUM_POLICY, &k, NULL))
        ir->notify.policy = (enum lil_ir_policy)k;
    get_strlist(b, &o, "channels", true, 0, 32, 1, &ir->notify.channels);
}

static void build_retry(struct build *b, const struct obj *root)
{
    char path[PATH_MAX_LEN];
    struct obj o;
    struct lil_ir_spec *ir = b->ir;

    if (!sub_obj(b, root, "retry", false, path, &o))
        return;
    ir->retry.present = true;
    check_keys(b, &o, RETRY_KEYS, NELEM(RETRY_KEYS), NULL);
    ir->retry.has_max = get_int(b, &o, "max", false, 0, INT_BIG, "an integer >= 0",
                                &ir->retry.max, NULL);
    ir->retry.has_backoff_ms =
        get_int(b, &o, "backoff_ms", false, 1, INT_BIG, "a positive integer",
                &ir->retry.backoff_ms, NULL);
}

static void build_gate(struct build *b, const struct lil_node *n, const char *path,
                       struct lil_ir_gate *g)
{
    struct obj o = {n, path, path};
    int k;

    g->pos = n->pos;
    if (n->kind != LIL_NODE_MAP) {
        type_error(b, n, path, "a gate (a mapping)");
        return;
    }
    check_keys(b, &o, GATE_KEYS, NELEM(GATE_KEYS), NULL);
    get_str(b, &o, "after", false, 0, &g->after);
    get_guard(b, &o, "when", false, 0, &g->when);
    get_tmpl(b, &o, "ask", true, 1, &g->ask);
    g->has_strategy = get_enum(b, &o, "strategy", false, LIL_ENUM_STRATEGY, &k, NULL);
    if (g->has_strategy)
        g->strategy = (enum lil_ir_strategy)k;
    get_strlist(b, &o, "auto_approve_in", false, 0, SIZE_MAX, 0, &g->auto_approve_in);
}

static void build_gates(struct build *b, const struct obj *root)
{
    char path[PATH_MAX_LEN];
    struct lil_ir_spec *ir = b->ir;
    const struct lil_node *v = field(b, root, "gates", false);

    if (!v)
        return;
    if (v->kind != LIL_NODE_SEQ) {
        type_error(b, v, "gates", "a list of gates");
        return;
    }
    ir->has_gates = true;
    ir->gates = lil__calloc(b->env, v->n ? v->n : 1, sizeof(*ir->gates));
    if (!ir->gates) {
        oom(b);
        return;
    }
    ir->ngates = v->n;
    for (size_t i = 0; i < v->n && !b->nomem; i++) {
        snprintf(path, sizeof(path), "gates[%zu]", i);
        build_gate(b, v->items[i], path, &ir->gates[i]);
    }
}

static void build_observe(struct build *b, const struct obj *root)
{
    char path[PATH_MAX_LEN], hpath[PATH_MAX_LEN], npath[PATH_MAX_LEN];
    struct obj o, h;
    struct lil_ir_spec *ir = b->ir;
    const struct lil_node *v;
    int k;

    if (!sub_obj(b, root, "observe", false, path, &o))
        return;
    ir->observe.given = true;
    check_keys(b, &o, OBSERVE_KEYS, NELEM(OBSERVE_KEYS), NULL);
    if (get_enum(b, &o, "trace", false, LIL_ENUM_TRACE, &k, &ir->observe.trace_pos))
        ir->observe.trace = (enum lil_ir_trace)k;
    if (sub_obj(b, &o, "hooks", false, hpath, &h)) {
        ir->observe.has_hooks = true;
        check_keys(b, &h, HOOKS_KEYS, NELEM(HOOKS_KEYS), NULL);
        build_hook(b, &h, &ir->observe.completed);
    }
    v = field(b, &o, "notify", false);
    if (!v)
        return;
    child_path(npath, sizeof(npath), path, "notify");
    if (v->kind != LIL_NODE_MAP) {
        type_error(b, v, npath, "a mapping");
        return;
    }
    ir->observe.notify = node_json(b, v);
}

static void build_root(struct build *b, const struct lil_node *root)
{
    struct obj o = {root, "", NULL};
    struct lil_ir_spec *ir = b->ir;
    int k;

    check_keys(b, &o, TOP_KEYS, NELEM(TOP_KEYS), NULL);
    get_str(b, &o, "loopspec", true, 0, &ir->loopspec);
    get_str(b, &o, "id", true, 1, &ir->id);
    build_meta(b, &o);
    if (get_enum(b, &o, "pattern", true, LIL_ENUM_PATTERN, &k, &ir->pattern_pos))
        ir->pattern = (enum lil_ir_pattern)k;
    build_provenance(b, &o);
    build_target(b, &o);
    build_inputs(b, &o);
    build_state(b, &o);
    build_body(b, &o);
    build_terminate(b, &o);
    build_caps(b, &o);
    build_schedule(b, &o);
    build_artifacts(b, &o);
    build_notify(b, &o);
    build_retry(b, &o);
    build_gates(b, &o);
    build_observe(b, &o);
}

/* ------------------------------------------------------------------------ */
/* Entry points                                                             */

static bool root_ok(struct build *b, const struct lil_node *root)
{
    struct lil_pos first = {1, 1};
    char gbuf[128];

    if (!root) {
        lil__diag(b->d, LIL_SEV_ERROR, "schema", first, "",
                  "the document is empty: a loop spec is a mapping with loopspec, id, "
                  "pattern, body, terminate");
        return false;
    }
    if (root->kind != LIL_NODE_MAP) {
        lil__diag(b->d, LIL_SEV_ERROR, "schema", root->pos, "",
                  "a loop spec must be a mapping, got %s",
                  got(root, gbuf, sizeof(gbuf)));
        return false;
    }
    return true;
}

lil_status lil__ir_build_text(const struct lil_env *env, const struct lil_node *root,
                              const char *text, size_t len, struct lil_diags *d,
                              struct lil_ir_spec **out)
{
    struct build b;
    struct lil_ir_spec *ir;

    *out = NULL;
    memset(&b, 0, sizeof(b));
    b.env = env;
    b.d = d;
    b.text = text;
    b.len = text ? len : 0;
    if (!root_ok(&b, root))
        return d->nomem ? LIL_E_NOMEM : LIL_OK;
    ir = lil__calloc(env, 1, sizeof(*ir));
    if (!ir)
        return LIL_E_NOMEM;
    ir->env = env;
    ir->pos = root->pos;
    ir->var_index = json_object();
    ir->input_index = json_object();
    b.ir = ir;
    if (!ir->var_index || !ir->input_index)
        b.nomem = true;
    else
        build_root(&b, root);
    lil__free(env, b.lines);
    if (b.nomem || d->nomem) {
        lil__ir_free(env, ir);
        return LIL_E_NOMEM;
    }
    if (lil__ir_normalize(ir) != LIL_OK) {
        lil__ir_free(env, ir);
        return LIL_E_NOMEM;
    }
    *out = ir;
    return LIL_OK;
}

lil_status lil__ir_build(const struct lil_env *env, const struct lil_node *root,
                         struct lil_diags *d, struct lil_ir_spec **out)
{
    return lil__ir_build_text(env, root, NULL, 0, d, out);
}

/* ------------------------------------------------------------------------ */
/* Messages                                                                 */

/* Byte c as written in a message: itself, or an escape (at most 4 bytes). */
static size_t show_byte(unsigned char c, char *out)
{
    static const char HEX[] = "0123456789abcdef";

    if (c == '\n' || c == '\t' || c == '\r') {
        out[0] = '\\';
        out[1] = c == '\n' ? 'n' : 't';
        if (c == '\r')
            out[1] = 'r';
        return 2;
    }
    if (c < 0x20 || c == 0x7f) {
        out[0] = '\\';
        out[1] = 'x';
        out[2] = HEX[c >> 4];
        out[3] = HEX[c & 15];
        return 4;
    }
    out[0] = (char)c;
    return 1;
}

const char *lil__ir_show(const char *s, size_t len, char *buf, size_t cap)
{
    size_t o = 0, limit = cap > 64 ? 60 : (cap > 8 ? cap - 8 : 0);
    size_t i;

    if (!cap)
        return "";
    for (i = 0; i < len && o < limit; i++)
        o += show_byte((unsigned char)s[i], buf + o);
    if (i < len) {
        while (o > 0 && ((unsigned char)buf[o - 1] & 0xc0) == 0x80)
            o--; /* do not cut a UTF-8 sequence */
        if (o > 0 && (unsigned char)buf[o - 1] >= 0xc0)
            o--;
        if (o + 4 <= cap - 1) {
            memcpy(buf + o, "...", 3);
            o += 3;
        }
    }
    buf[o] = '\0';
    return buf;
}

/* ------------------------------------------------------------------------ */
/* Freeing                                                                  */

static void free_src(const struct lil_env *env, struct lil_ir_src *s)
{
    lil__free(env, s->s);
}

static void free_guard(const struct lil_env *env, struct lil_ir_guard *g)
{
    free_src(env, &g->src);
    lil__expr_free(env, g->expr);
    lil__free(env, g->err);
}

static void free_tmpl(const struct lil_env *env, struct lil_ir_tmpl *t)
{
    free_src(env, &t->src);
    lil__tmpl_free(env, t->tmpl);
    lil__free(env, t->err);
}

static void free_strlist(const struct lil_env *env, struct lil_ir_strlist *l)
{
    for (size_t i = 0; i < l->n; i++)
        lil__free(env, l->v[i].s);
    lil__free(env, l->v);
}

static void free_http(const struct lil_env *env, struct lil_ir_http *h)
{
    free_tmpl(env, &h->url);
    for (size_t i = 0; i < h->nheaders; i++) {
        lil__free(env, h->headers[i].name);
        free_tmpl(env, &h->headers[i].value);
    }
    lil__free(env, h->headers);
    json_decref(h->body);
    free_tmpl(env, &h->body_tmpl);
}

static void free_assigns(const struct lil_env *env, struct lil_ir_assign *v, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        lil__free(env, v[i].var);
        json_decref(v[i].value);
        free_tmpl(env, &v[i].tmpl);
    }
    lil__free(env, v);
}

static void free_steps(const struct lil_env *env, struct lil_ir_step *v, size_t n);

static void free_step(const struct lil_env *env, struct lil_ir_step *s)
{
    lil__free(env, s->id);
    lil__free(env, s->path);
    free_guard(env, &s->when);
    lil__free(env, s->agent.harness.s);
    free_tmpl(env, &s->agent.prompt);
    free_strlist(env, &s->agent.allowed_tools);
    free_tmpl(env, &s->shell.cmd);
    for (size_t i = 0; i < s->shell.nargs; i++)
        free_tmpl(env, &s->shell.args[i]);
    lil__free(env, s->shell.args);
    free_http(env, &s->http);
    free_tmpl(env, &s->breakpoint.ask);
    free_strlist(env, &s->breakpoint.auto_approve_in);
    lil__free(env, s->sleep.for_.text.s);
    free_guard(env, &s->sleep.until);
    free_guard(env, &s->reduce.over);
    lil__free(env, s->reduce.as.s);
    free_steps(env, s->reduce.body, s->reduce.nbody);
    for (size_t i = 0; i < s->nsave; i++) {
        lil__free(env, s->save[i].var);
        lil__free(env, s->save[i].path.s);
    }
    lil__free(env, s->save);
    lil__free(env, s->on_done.incr.s);
    free_assigns(env, s->on_done.set, s->on_done.nset);
    free_assigns(env, s->on_done.append, s->on_done.nappend);
}

static void free_steps(const struct lil_env *env, struct lil_ir_step *v, size_t n)
{
    if (!v)
        return;
    for (size_t i = 0; i < n; i++)
        free_step(env, &v[i]);
    lil__free(env, v);
}

static void free_action(const struct lil_env *env, struct lil_ir_action *a)
{
    free_tmpl(env, &a->cmd);
    free_http(env, &a->request);
    lil__free(env, a->harness.s);
    free_tmpl(env, &a->prompt);
}

static void free_decls(const struct lil_env *env, struct lil_ir_spec *ir)
{
    for (size_t i = 0; i < ir->ninputs; i++) {
        struct lil_ir_input *in = &ir->inputs[i];

        lil__free(env, in->name);
        lil__free(env, in->type_text.s);
        json_decref(in->def);
        lil__free(env, in->description.s);
    }
    lil__free(env, ir->inputs);
    for (size_t i = 0; i < ir->state.nvars; i++) {
        struct lil_ir_var *v = &ir->state.vars[i];

        lil__free(env, v->name);
        lil__free(env, v->type_text.s);
        json_decref(v->init);
        lil__free(env, v->description.s);
    }
    lil__free(env, ir->state.vars);
}

static void free_gates(const struct lil_env *env, struct lil_ir_spec *ir)
{
    for (size_t i = 0; i < ir->ngates; i++) {
        struct lil_ir_gate *g = &ir->gates[i];

        lil__free(env, g->after.s);
        free_guard(env, &g->when);
        free_tmpl(env, &g->ask);
        free_strlist(env, &g->auto_approve_in);
    }
    lil__free(env, ir->gates);
}

void lil__ir_free(const struct lil_env *env, struct lil_ir_spec *ir)
{
    if (!ir)
        return;
    json_decref(ir->var_index);
    json_decref(ir->input_index);
    lil__free(env, ir->loopspec.s);
    lil__free(env, ir->id.s);
    lil__free(env, ir->meta.name.s);
    lil__free(env, ir->meta.version.s);
    lil__free(env, ir->meta.description.s);
    json_decref(ir->provenance);
    free_decls(env, ir);
    free_steps(env, ir->body, ir->nbody);
    free_guard(env, &ir->terminate.until);
    free_action(env, &ir->terminate.on_exit);
    free_guard(env, &ir->caps.no_progress.fingerprint);
    lil__free(env, ir->caps.budget.wallclock.text.s);
    lil__free(env, ir->schedule.cron.s);
    free_strlist(env, &ir->artifacts.include);
    free_strlist(env, &ir->artifacts.exclude);
    free_strlist(env, &ir->notify.channels);
    free_gates(env, ir);
    free_action(env, &ir->observe.completed);
    json_decref(ir->observe.notify);
    lil__free(env, ir);
}

long lil__ir_var_index(const struct lil_ir_spec *ir, const char *name)
{
    json_t *v = ir->var_index ? json_object_get(ir->var_index, name) : NULL;

    return v ? (long)json_integer_value(v) : -1;
}

long lil__ir_input_index(const struct lil_ir_spec *ir, const char *name)
{
    json_t *v = ir->input_index ? json_object_get(ir->input_index, name) : NULL;

    return v ? (long)json_integer_value(v) : -1;
}
