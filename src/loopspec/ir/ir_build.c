/*
 * ir_build.c -- document tree -> IR: the structural checks.
 *
 * What zod does in the reference (docs/loopspec.md, "Structure and
 * normalization"):
 * required keys, value types, enum values, positive integers, minimum
 * string lengths.  Codes: `schema` for a wrong or missing value,
 * `unknown-key` for a key that does not belong.
 *
 * Unknown keys follow the reference's two kinds of object (docs/loopspec.md,
 * "Unknown keys"):
 *   - strict (the top level, artifacts, notify, observe.hooks, a hook
 *     action: lil__irb_check_keys_strict): an error, with a "did you mean"
 *     (lil__suggest) from the keys allowed there;
 *   - lenient (everything else, where the reference drops unknown keys:
 *     lil__irb_check_keys): a near miss of an allowed key (lil__key_near:
 *     `on_don`, `comand`) is an error with that key as the suggestion, and
 *     so is a key of another kind of step (`save` on a breakpoint), since
 *     dropping either would silently change the loop; any other key is a
 *     warning and is ignored (a step's `description:`, `meta.author`).
 *
 * Each diagnostic points at the offending node: the value; the key for an
 * unknown key; the mapping for a missing key.  Messages:
 *   step 'build': missing required key 'cmd'
 *   caps.max_iterations: expected a positive integer, got -1
 *   unknown key 'comand' in step 'build' (did you mean 'cmd'?)
 *   unknown key 'description' in step 'build' is ignored
 *
 * Guards and templates are parsed during the build (ir_field.c); a parse
 * failure is kept in the IR and reported by the validator as `bad-expr`.
 * Nothing is quadratic in the number of steps: each node is visited once,
 * key checks are bounded by the (small) tables of allowed keys.
 *
 * The build is split by what it reads: this file has the enumerations,
 * the diagnostics and path helpers, the key checks, the entry points and
 * the name lookups; ir_field.c reads typed values (scalars, enums, string
 * lists, guards, templates, durations); ir_steps.c the steps and their
 * HTTP requests; ir_top.c the top-level sections; ir_free.c frees the IR.
 * ir_build.h holds what they share.
 */
#include "loopspec/ir/ir_build.h"

#include <stdio.h>
#include <string.h>

#include "base/alloc.h"
#include "base/utf8.h"

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

static const struct {
    const char *const *v;
    size_t n;
} ENUMS[LIL_ENUM_COUNT] = {
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
    if ((unsigned)e >= LIL_ENUM_COUNT || v < 0 || (size_t)v >= ENUMS[e].n)
        return "?";
    return ENUMS[e].v[v];
}

const char *const *lil__ir_enum_values(enum lil_ir_enum e, size_t *n)
{
    if ((unsigned)e >= LIL_ENUM_COUNT) {
        *n = 0;
        return NULL;
    }
    *n = ENUMS[e].n;
    return ENUMS[e].v;
}

/* ------------------------------------------------------------------------ */
/* Diagnostics and paths                                                    */

bool lil__irb_oom(struct build *b)
{
    b->nomem = true;
    return false;
}

char *lil__irb_dup_node_str(struct build *b, const struct lil_node *n)
{
    char *s = lil__strndup(b->env, n->str ? n->str : "", n->str ? n->str_len : 0);

    if (!s)
        lil__irb_oom(b);
    return s;
}

/* parent + "." + key (or key alone at the root) into out. */
void lil__irb_child_path(char *out, size_t cap, const char *parent, const char *key)
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
const char *lil__irb_got(const struct lil_node *n, char *buf, size_t cap)
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
void lil__irb_type_error(struct build *b, const struct lil_node *n, const char *path,
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
              path, what, lil__irb_got(n, gbuf, sizeof(gbuf)), hint);
}

/* type_error for the value of key in o (the path is made only here: most
 * values are fine, and formatting paths is most of the cost of a build). */
void lil__irb_field_error(struct build *b, const struct lil_node *v,
                          const struct obj *o, const char *key, const char *what)
{
    char path[PATH_MAX_LEN];

    lil__irb_child_path(path, sizeof(path), o->path, key);
    lil__irb_type_error(b, v, path, what);
}

/* ------------------------------------------------------------------------ */
/* Keys                                                                     */

bool lil__irb_in_list(const char *key, const char *const *v, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (strcmp(key, v[i]) == 0)
            return true;
    }
    return false;
}

/* " in step 'w'" / " at top level" for o, into out. */
static void where_of(const struct obj *o, char *out, size_t cap)
{
    if (o->where)
        snprintf(out, cap, " in %s", o->where);
    else
        snprintf(out, cap, " at top level");
}

/* What to say of an unknown key k: an error with hint (a suggestion, or
 * the kinds of step that take it), or a warning that it is ignored. */
static lil_severity judge_key(const char *k, const char *const *allowed, size_t n,
                              const char *step_kind, bool strict, char *hint,
                              size_t cap)
{
    char kinds[64];
    const char *s;

    if (step_kind && lil__irb_step_kinds_of_key(k, kinds, sizeof(kinds))) {
        snprintf(hint, cap, " (a key of %s steps; this step is %s)", kinds, step_kind);
        return LIL_SEV_ERROR;
    }
    s = strict ? lil__suggest(k, allowed, n) : lil__key_near(k, allowed, n);
    if (s)
        snprintf(hint, cap, " (did you mean '%s'?)", s);
    if (strict || s)
        return LIL_SEV_ERROR;
    snprintf(hint, cap, " is ignored");
    return LIL_SEV_WARNING;
}

static void unknown_key(struct build *b, const struct obj *o,
                        const struct lil_node *key, const char *const *allowed,
                        size_t n, const char *step_kind, bool strict)
{
    char kbuf[96], where[PATH_MAX_LEN + 32], hint[160] = "", path[PATH_MAX_LEN];
    const char *k = key->str ? key->str : "";
    lil_severity sev = judge_key(k, allowed, n, step_kind, strict, hint, sizeof(hint));

    where_of(o, where, sizeof(where));
    lil__irb_child_path(path, sizeof(path), o->path, k);
    lil__diag(b->d, sev, "unknown-key", key->pos, path, "unknown key '%s'%s%s",
              lil__ir_show(k, strlen(k), kbuf, sizeof(kbuf)), where, hint);
}

static void check_keys(struct build *b, const struct obj *o, const char *const *allowed,
                       size_t n, const char *step_kind, bool strict)
{
    for (size_t i = 0; i < o->map->n; i++) {
        const struct lil_node *key = o->map->pairs[i].key;

        if (!lil__irb_in_list(key->str ? key->str : "", allowed, n))
            unknown_key(b, o, key, allowed, n, step_kind, strict);
    }
}

void lil__irb_check_keys(struct build *b, const struct obj *o,
                         const char *const *allowed, size_t n, const char *step_kind)
{
    check_keys(b, o, allowed, n, step_kind, false);
}

void lil__irb_check_keys_strict(struct build *b, const struct obj *o,
                                const char *const *allowed, size_t n)
{
    check_keys(b, o, allowed, n, NULL, true);
}

/* The value of key in o; a missing required key is reported at o. */
const struct lil_node *lil__irb_field(struct build *b, const struct obj *o,
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
bool lil__irb_sub_obj(struct build *b, const struct obj *o, const char *key,
                      bool required, char *pathbuf, struct obj *out)
{
    const struct lil_node *v = lil__irb_field(b, o, key, required);

    lil__irb_child_path(pathbuf, PATH_MAX_LEN, o->path, key);
    if (!v)
        return false;
    if (v->kind != LIL_NODE_MAP) {
        lil__irb_type_error(b, v, pathbuf, "a mapping");
        return false;
    }
    out->map = v;
    out->path = pathbuf;
    out->where = pathbuf;
    return true;
}

/* ------------------------------------------------------------------------ */
/* Entry points                                                             */

static bool root_ok(struct build *b, const struct lil_node *root)
{
    struct lil_pos first = {1, 1, 0};
    char gbuf[128];

    if (!root) {
        lil__diag(b->d, LIL_SEV_ERROR, "schema", first, "",
                  "the document is empty: a loop spec is a mapping with loopspec, id, "
                  "pattern, body, terminate");
        return false;
    }
    if (root->kind != LIL_NODE_MAP) {
        lil__diag(b->d, LIL_SEV_ERROR, "schema", root->pos, "",
                  "a loop spec must be a mapping, got %s: write its keys at the top "
                  "level, one per line (loopspec:, id:, pattern:, body:, ...)",
                  lil__irb_got(root, gbuf, sizeof(gbuf)));
        return false;
    }
    return true;
}

lil_status lil__ir_build(const struct lil_env *env, const struct lil_node *root,
                         struct lil_diags *d, struct lil_ir_spec **out)
{
    struct build b;
    struct lil_ir_spec *ir;

    *out = NULL;
    memset(&b, 0, sizeof(b));
    b.env = env;
    b.d = d;
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
        lil__irb_root(&b, root);
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

lil_status lil__ir_build_text(const struct lil_env *env, const struct lil_node *root,
                              const char *text, size_t len, struct lil_diags *d,
                              struct lil_ir_spec **out)
{
    (void)text; /* positions come from the nodes' offset maps */
    (void)len;
    return lil__ir_build(env, root, d, out);
}

/* ------------------------------------------------------------------------ */
/* Messages                                                                 */

/* Byte c as \xNN (4 bytes). */
static size_t hex_byte(unsigned char c, char *out)
{
    static const char HEX[] = "0123456789abcdef";

    out[0] = '\\';
    out[1] = 'x';
    out[2] = HEX[c >> 4];
    out[3] = HEX[c & 15];
    return 4;
}

/* The character at s (n bytes left) as written in a message: itself, an
 * escape for a control character or for a byte that is not UTF-8 (at most
 * 4 bytes out); *used gets the bytes of s it took. */
static size_t show_char(const char *s, size_t n, char *out, size_t *used)
{
    unsigned char c = (unsigned char)s[0];
    uint32_t cp;

    *used = 1;
    if (c == '\n' || c == '\t' || c == '\r') {
        out[0] = '\\';
        out[1] = c == '\n' ? 'n' : 't';
        if (c == '\r')
            out[1] = 'r';
        return 2;
    }
    if (c < 0x20 || c == 0x7f)
        return hex_byte(c, out);
    if (c >= 0x80 &&
        (*used = lil__utf8_decode((const unsigned char *)s, n, &cp)) == 0) {
        *used = 1;
        return hex_byte(c, out);
    }
    memcpy(out, s, *used);
    return *used;
}

const char *lil__ir_show(const char *s, size_t len, char *buf, size_t cap)
{
    size_t o = 0, limit = cap > 64 ? 60 : (cap > 8 ? cap - 8 : 0);
    size_t i, used;

    if (!cap)
        return "";
    for (i = 0; i < len && o < limit; i += used)
        o += show_char(s + i, len - i, buf + o, &used);
    if (i < len && o + 4 <= cap - 1) {
        memcpy(buf + o, "...", 3);
        o += 3;
    }
    buf[o] = '\0';
    return buf;
}

/* ------------------------------------------------------------------------ */
/* Lookups                                                                  */

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
