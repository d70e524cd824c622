/*
 * ir_steps.c -- the steps of a loop spec to IR: the keys each kind of step
 * allows, the step itself (id, kind, when), the fields of each kind (agent,
 * shell, http, breakpoint, sleep, reduce with its nested body), save and
 * on_done; plus HTTP requests (also read by ir_top.c for on_exit and hooks).
 */
#include <stdio.h>
#include <string.h>

#include "base/alloc.h"
#include "loopspec/ir/ir_build.h"

/* ------------------------------------------------------------------------ */
/* Allowed keys                                                             */

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

/* The kinds of step a key belongs to ("agent, shell, http") into out;
 * false if none. */
bool lil__irb_step_kinds_of_key(const char *key, char *out, size_t cap)
{
    size_t l = 0;

    out[0] = '\0';
    for (size_t k = 0; k < NELEM(STEP_KEYS) && l + 1 < cap; k++) {
        if (lil__irb_in_list(key, STEP_KEYS[k].v, STEP_KEYS[k].n)) {
            snprintf(out + l, cap - l, "%s%s", l ? ", " : "",
                     lil__ir_enum_name(LIL_ENUM_STEP_KIND, (int)k));
            l = strlen(out);
        }
    }
    return l > 0;
}

/* ------------------------------------------------------------------------ */
/* HTTP requests                                                            */

static void build_headers(struct build *b, const struct lil_node *v, const char *path,
                          struct lil_ir_http *h)
{
    char hpath[PATH_MAX_LEN + 64];

    if (v->kind != LIL_NODE_MAP) {
        lil__irb_type_error(b, v, path, "a mapping of header names to strings");
        return;
    }
    h->has_headers = true;
    h->headers = lil__calloc(b->env, v->n ? v->n : 1, sizeof(*h->headers));
    if (!h->headers) {
        lil__irb_oom(b);
        return;
    }
    for (size_t i = 0; i < v->n && !b->nomem; i++) {
        const struct lil_node_pair *p = &v->pairs[i];
        struct lil_ir_header *hd = &h->headers[h->nheaders];

        if (!lil__irb_is_string(p->value)) {
            lil__irb_child_path(hpath, sizeof(hpath), path, p->key->str);
            lil__irb_type_error(b, p->value, hpath, "a string");
            continue;
        }
        hd->name = lil__irb_dup_node_str(b, p->key);
        hd->pos = p->key->pos;
        h->nheaders++;
        if (hd->name)
            lil__irb_parse_tmpl_node(b, p->value, &hd->value);
    }
}

void lil__irb_request(struct build *b, const struct obj *parent, bool required,
                      struct lil_ir_http *h)
{
    char path[PATH_MAX_LEN], hpath[PATH_MAX_LEN];
    struct obj o;
    const struct lil_node *v;
    int m;

    if (!lil__irb_sub_obj(b, parent, "request", required, path, &o))
        return;
    h->present = true;
    h->pos = o.map->pos;
    lil__irb_check_keys(b, &o, REQUEST_KEYS, NELEM(REQUEST_KEYS), NULL);
    if (lil__irb_get_enum(b, &o, "method", true, LIL_ENUM_METHOD, &m, &h->method_pos))
        h->method = (enum lil_ir_method)m;
    lil__irb_get_tmpl(b, &o, "url", true, 0, &h->url);
    v = lil__irb_field(b, &o, "headers", false);
    if (v) {
        lil__irb_child_path(hpath, sizeof(hpath), path, "headers");
        build_headers(b, v, hpath, h);
    }
    v = lil__irb_field(b, &o, "body", false);
    if (v) {
        h->body_pos = v->pos;
        h->body = lil__irb_node_json(b, v);
        if (h->body && lil__irb_is_string(v))
            lil__irb_parse_tmpl_node(b, v, &h->body_tmpl);
    }
}

/* ------------------------------------------------------------------------ */
/* Steps                                                                    */

static void build_save(struct build *b, const struct obj *o, struct lil_ir_step *s)
{
    char path[PATH_MAX_LEN], vpath[PATH_MAX_LEN + 64];
    const struct lil_node *v = lil__irb_field(b, o, "save", false);

    if (!v)
        return;
    lil__irb_child_path(path, sizeof(path), o->path, "save");
    if (v->kind != LIL_NODE_MAP) {
        lil__irb_type_error(b, v, path, "a mapping of state vars to JSONPaths");
        return;
    }
    s->has_save = true;
    s->save_pos = v->pos;
    s->save = lil__calloc(b->env, v->n ? v->n : 1, sizeof(*s->save));
    if (!s->save) {
        lil__irb_oom(b);
        return;
    }
    for (size_t i = 0; i < v->n && !b->nomem; i++) {
        const struct lil_node_pair *p = &v->pairs[i];
        struct lil_ir_save *sv = &s->save[s->nsave];

        if (!lil__irb_is_string(p->value)) {
            lil__irb_child_path(vpath, sizeof(vpath), path, p->key->str);
            lil__irb_type_error(b, p->value, vpath, "a JSONPath string");
            continue;
        }
        s->nsave++;
        sv->var = lil__irb_dup_node_str(b, p->key);
        sv->pos = p->key->pos;
        sv->path.s = lil__irb_dup_node_str(b, p->value);
        sv->path.pos = p->value->pos;
    }
}

static void build_assigns(struct build *b, const struct obj *o, const char *key,
                          struct lil_ir_assign **out, size_t *nout, bool *has)
{
    const struct lil_node *v = lil__irb_field(b, o, key, false);

    if (!v)
        return;
    if (v->kind != LIL_NODE_MAP) {
        lil__irb_field_error(b, v, o, key, "a mapping of state vars to values");
        return;
    }
    *has = true;
    *out = lil__calloc(b->env, v->n ? v->n : 1, sizeof(**out));
    if (!*out) {
        lil__irb_oom(b);
        return;
    }
    for (size_t i = 0; i < v->n && !b->nomem; i++) {
        const struct lil_node_pair *p = &v->pairs[i];
        struct lil_ir_assign *a = &(*out)[i];

        (*nout)++;
        a->var = lil__irb_dup_node_str(b, p->key);
        a->pos = p->key->pos;
        a->value_pos = p->value->pos;
        a->value = lil__irb_node_json(b, p->value);
        if (a->value && lil__irb_is_string(p->value)) {
            a->is_tmpl = true;
            lil__irb_parse_tmpl_node(b, p->value, &a->tmpl);
        }
    }
}

static void build_on_done(struct build *b, const struct obj *step,
                          struct lil_ir_on_done *od)
{
    char path[PATH_MAX_LEN];
    struct obj o;

    if (!lil__irb_sub_obj(b, step, "on_done", false, path, &o))
        return;
    od->present = true;
    od->pos = o.map->pos;
    lil__irb_check_keys(b, &o, ON_DONE_KEYS, NELEM(ON_DONE_KEYS), NULL);
    lil__irb_get_str(b, &o, "incr", false, 0, &od->incr);
    build_assigns(b, &o, "set", &od->set, &od->nset, &od->has_set);
    build_assigns(b, &o, "append", &od->append, &od->nappend, &od->has_append);
}

static void build_shell_args(struct build *b, const struct obj *o,
                             struct lil_ir_shell *sh)
{
    char path[PATH_MAX_LEN], ipath[PATH_MAX_LEN + 24];
    const struct lil_node *v = lil__irb_field(b, o, "args", false);

    if (!v)
        return;
    lil__irb_child_path(path, sizeof(path), o->path, "args");
    if (v->kind != LIL_NODE_SEQ) {
        lil__irb_type_error(b, v, path, "a list of strings");
        return;
    }
    sh->has_args = true;
    sh->args_pos = v->pos;
    sh->args = lil__calloc(b->env, v->n ? v->n : 1, sizeof(*sh->args));
    if (!sh->args) {
        lil__irb_oom(b);
        return;
    }
    for (size_t i = 0; i < v->n && !b->nomem; i++) {
        if (!lil__irb_is_string(v->items[i])) {
            snprintf(ipath, sizeof(ipath), "%s[%zu]", path, i);
            lil__irb_type_error(b, v->items[i], ipath, "a string");
            continue;
        }
        lil__irb_parse_tmpl_node(b, v->items[i], &sh->args[sh->nargs++]);
    }
}

static void build_reduce(struct build *b, const struct obj *o, struct lil_ir_step *s)
{
    char path[PATH_MAX_LEN];
    const struct lil_node *v;

    lil__irb_get_guard(b, o, "over", true, 1, &s->reduce.over);
    s->reduce.as_given = lil__irb_get_str(b, o, "as", false, 0, &s->reduce.as);
    v = lil__irb_field(b, o, "body", true);
    if (!v)
        return;
    lil__irb_child_path(path, sizeof(path), o->path, "body");
    if (v->kind != LIL_NODE_SEQ) {
        lil__irb_type_error(b, v, path, "a list of steps");
        return;
    }
    lil__irb_steps(b, v, o->path, s, &s->reduce.body, &s->reduce.nbody);
}

static void build_kind_fields(struct build *b, const struct obj *o,
                              struct lil_ir_step *s)
{
    int st;

    switch (s->kind) {
    case LIL_STEP_AGENT:
        lil__irb_get_str(b, o, "harness", true, 1, &s->agent.harness);
        lil__irb_get_tmpl(b, o, "prompt", true, 1, &s->agent.prompt);
        lil__irb_get_strlist(b, o, "allowed-tools", false, 0, SIZE_MAX, 0,
                             &s->agent.allowed_tools);
        break;
    case LIL_STEP_SHELL:
        lil__irb_get_tmpl(b, o, "cmd", true, 1, &s->shell.cmd);
        build_shell_args(b, o, &s->shell);
        break;
    case LIL_STEP_HTTP:
        lil__irb_request(b, o, true, &s->http);
        lil__irb_get_bool(b, o, "envelope", &s->envelope);
        break;
    case LIL_STEP_BREAKPOINT:
        lil__irb_get_tmpl(b, o, "ask", true, 1, &s->breakpoint.ask);
        s->breakpoint.has_strategy =
            lil__irb_get_enum(b, o, "strategy", false, LIL_ENUM_STRATEGY, &st,
                              &s->breakpoint.strategy_pos);
        if (s->breakpoint.has_strategy)
            s->breakpoint.strategy = (enum lil_ir_strategy)st;
        lil__irb_get_strlist(b, o, "auto_approve_in", false, 0, SIZE_MAX, 0,
                             &s->breakpoint.auto_approve_in);
        break;
    case LIL_STEP_SLEEP:
        lil__irb_get_duration(b, o, "for", &s->sleep.for_);
        lil__irb_get_guard(b, o, "until", false, 0, &s->sleep.until);
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
    if (!id || !lil__irb_is_string(id) || id->str_len == 0)
        return;
    s->id = lil__irb_dup_node_str(b, id);
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
        lil__irb_type_error(b, n, base, "a step (a mapping)");
        return;
    }
    step_id(b, n, base, s, path, where);
    s->path = lil__strdup(b->env, path);
    if (!s->path) {
        lil__irb_oom(b);
        return;
    }
    if (!s->id &&
        lil__irb_get_str(b, &o, "id", true, 1, &idtmp)) /* reports what is wrong */
        lil__free(b->env, idtmp.s);
    if (!lil__irb_get_enum(b, &o, "kind", true, LIL_ENUM_STEP_KIND, &k, &s->kind_pos))
        return;
    s->kind = (enum lil_ir_step_kind)k;
    lil__irb_check_keys(b, &o, STEP_KEYS[k].v, STEP_KEYS[k].n,
                        lil__ir_enum_name(LIL_ENUM_STEP_KIND, k));
    lil__irb_get_guard(b, &o, "when", false, 0, &s->when);
    build_kind_fields(b, &o, s);
}

void lil__irb_steps(struct build *b, const struct lil_node *seq, const char *prefix,
                    const struct lil_ir_step *parent, struct lil_ir_step **out,
                    size_t *nout)
{
    char base[PATH_MAX_LEN];

    *out = lil__calloc(b->env, seq->n ? seq->n : 1, sizeof(**out));
    if (!*out) {
        lil__irb_oom(b);
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
