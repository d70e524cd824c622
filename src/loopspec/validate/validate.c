/*
 * validate.c -- docs/loopspec.md, "Validation": the checks that need the
 * whole spec.  This file: the loop id, declarations (state vars, inputs),
 * the walk over the steps (ids, guards, templates, bindings, per-kind
 * rules) and the expression checks every part shares.  validate_top.c does
 * terminate, caps, schedule, gates, artifacts, notify and observe.
 *
 * Paths and messages are the reference's: a step is `body[<i>]:<id>`,
 * nested `<parent>.body[<j>]:<id>`, then `.when`, `.cmd`, `.save`, ...;
 * "<path>: reference to undeclared state var 'state.nope'".  A diagnostic
 * inside an expression points at the offending character when the file
 * shows the text verbatim there (lil__ir_src_pos).
 *
 * Step ids go into a hash set (dup-id, gate-ref): no pass is quadratic.
 */
#include "loopspec/validate/validate.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lang/jsonpath.h"
#include "loopspec/values/ident.h"

#define SHOW 96

static const char *const HARNESSES[] = {"internal",     "llm",      "claude-code",
                                        "codex",        "opencode", "antigravity",
                                        "cursor-agent", "pi",       "cli"};

/* ------------------------------------------------------------------------ */
/* Expressions                                                              */

struct refck {
    struct vctx *v;
    const char *path;
    const struct lil_ir_src *src;
};

static bool alias_in_scope(const struct vctx *v, const char *name)
{
    for (size_t i = v->naliases; i > 0; i--) {
        if (strcmp(v->aliases[i - 1], name) == 0)
            return true;
    }
    return false;
}

/* "(allowed: state, inputs, env, meta, iteration[, aliases])" */
static void allowed_roots(const struct vctx *v, char *buf, size_t cap)
{
    size_t l;

    snprintf(buf, cap, "state, inputs, env, meta, iteration");
    for (size_t i = 0; i < v->naliases; i++) {
        l = strlen(buf);
        snprintf(buf + l, cap - l, ", %s", v->aliases[i]);
    }
}

static void on_ref(void *ud, const struct lil_expr_ref *r)
{
    struct refck *rc = ud;
    const struct lil_ir_spec *ir = rc->v->ir;
    char msg[512], mbuf[SHOW], roots[256];
    const char *m =
        r->member ? lil__ir_show(r->member, strlen(r->member), mbuf, sizeof(mbuf)) : "";

    if (strcmp(r->root, "state") == 0) {
        if (!r->member)
            snprintf(msg, sizeof(msg), "bare 'state' reference; use state.<var>");
        else if (lil__ir_var_index(ir, r->member) < 0)
            snprintf(msg, sizeof(msg), "reference to undeclared state var 'state.%s'",
                     m);
        else
            return;
    } else if (strcmp(r->root, "inputs") == 0) {
        if (!r->member)
            snprintf(msg, sizeof(msg), "bare 'inputs' reference; use inputs.<name>");
        else if (lil__ir_input_index(ir, r->member) < 0)
            snprintf(msg, sizeof(msg), "reference to undeclared input 'inputs.%s'", m);
        else
            return;
    } else if (lil__ident_is_root(r->root) || alias_in_scope(rc->v, r->root)) {
        return;
    } else {
        allowed_roots(rc->v, roots, sizeof(roots));
        snprintf(msg, sizeof(msg), "unknown reference root '%s' (allowed: %s)",
                 lil__ir_show(r->root, strlen(r->root), mbuf, sizeof(mbuf)), roots);
    }
    lil__diag(rc->v->d, LIL_SEV_ERROR, "bad-ref", lil__ir_src_pos(rc->src, r->offset),
              rc->path, "%s: %s", rc->path, msg);
}

static void bad_expr(struct vctx *v, const struct lil_ir_src *src, const char *err,
                     size_t off, const char *path)
{
    lil__diag(v->d, LIL_SEV_ERROR, "bad-expr", lil__ir_src_pos(src, off), path,
              "%s: %s", path, err);
}

void lil__validate_guard(struct vctx *v, const struct lil_ir_guard *g, const char *path)
{
    struct refck rc = {v, path, &g->src};

    if (!g->src.s)
        return;
    if (g->err) {
        bad_expr(v, &g->src, g->err, g->err_offset, path);
        return;
    }
    if (g->expr)
        lil__expr_refs(g->expr, on_ref, &rc);
}

void lil__validate_tmpl(struct vctx *v, const struct lil_ir_tmpl *t, const char *path)
{
    struct refck rc = {v, path, &t->src};

    if (!t->src.s)
        return;
    if (t->err) {
        bad_expr(v, &t->src, t->err, t->err_offset, path);
        return;
    }
    if (t->tmpl)
        lil__tmpl_refs(t->tmpl, on_ref, &rc);
}

void lil__validate_http(struct vctx *v, const struct lil_ir_http *h, const char *path)
{
    char p[VALIDATE_PATH_MAX + 96];

    if (!h->present)
        return;
    snprintf(p, sizeof(p), "%s.url", path);
    lil__validate_tmpl(v, &h->url, p);
    for (size_t i = 0; i < h->nheaders; i++) {
        snprintf(p, sizeof(p), "%s.headers.%s", path, h->headers[i].name);
        lil__validate_tmpl(v, &h->headers[i].value, p);
    }
    snprintf(p, sizeof(p), "%s.body", path);
    lil__validate_tmpl(v, &h->body_tmpl, p);
}

void lil__validate_harness(struct vctx *v, const struct lil_ir_str *h, const char *path)
{
    char hbuf[SHOW], hint[96] = "";
    const char *s;

    if (!h->s)
        return;
    for (size_t i = 0; i < sizeof(HARNESSES) / sizeof(HARNESSES[0]); i++) {
        if (strcmp(h->s, HARNESSES[i]) == 0)
            return;
    }
    s = lil__suggest(h->s, HARNESSES, sizeof(HARNESSES) / sizeof(HARNESSES[0]));
    if (s)
        snprintf(hint, sizeof(hint), " (did you mean '%s'?)", s);
    lil__diag(
        v->d, LIL_SEV_WARNING, "unknown-harness", h->pos, path,
        "%s: unknown agent harness '%s'%s; known: internal, llm, claude-code, codex, "
        "opencode, antigravity, cursor-agent, pi, cli",
        path, lil__ir_show(h->s, strlen(h->s), hbuf, sizeof(hbuf)), hint);
}

/* ------------------------------------------------------------------------ */
/* Declarations                                                             */

/* A JSON value for a message: compact, cut.  Out of memory sets v->nomem. */
static const char *show_json(struct vctx *v, json_t *j, char *buf, size_t cap)
{
    struct lil_err err;
    struct lil_buf s;

    lil__buf_init(&s, v->d->env, SIZE_MAX);
    if (lil__json_dump(v->d->env, &err, j, JSON_COMPACT | JSON_ENCODE_ANY, &s) !=
        LIL_OK) {
        v->nomem = true;
        return "(value)";
    }
    lil__ir_show((const char *)s.data, s.len, buf, cap);
    lil__buf_free(&s);
    return buf;
}

static bool type_is(const struct lil_ir_str *t, const char *name)
{
    return t->s && strcmp(t->s, name) == 0;
}

static void check_var(struct vctx *v, const struct lil_ir_var *var)
{
    char path[VALIDATE_PATH_MAX], nbuf[SHOW], tbuf[SHOW], jbuf[SHOW];
    const char *n = lil__ir_show(var->name, strlen(var->name), nbuf, sizeof(nbuf));

    snprintf(path, sizeof(path), "state.vars.%s", var->name);
    if (!lil__ident_is_name(var->name))
        lil__diag(v->d, LIL_SEV_ERROR, "bad-name", var->pos, path,
                  "state var name '%s' must match ^[A-Za-z_][A-Za-z0-9_]*$", n);
    if (!var->type_text.s)
        return; /* a structural error said so already */
    if (!var->type_ok) {
        lil__diag(v->d, LIL_SEV_ERROR, "bad-type", var->type_text.pos, path,
                  "state var '%s' has invalid type '%s' (expected string, int, number, "
                  "boolean, json, list or enum[a,b,...])",
                  n,
                  lil__ir_show(var->type_text.s, strlen(var->type_text.s), tbuf,
                               sizeof(tbuf)));
        return;
    }
    if (var->type.kind == LIL_TYPE_LIST) {
        if (!var->init || !json_is_array(var->init))
            lil__diag(v->d, LIL_SEV_ERROR, "bad-init",
                      var->init ? var->init_pos : var->pos, path,
                      "state var '%s' is type 'list' but its init is not an array", n);
        return;
    }
    if (var->init && !json_is_null(var->init) &&
        !lil__type_accepts(&var->type, var->init))
        lil__diag(v->d, LIL_SEV_ERROR, "bad-init", var->init_pos, path,
                  "state var '%s' init %s does not match type '%s'", n,
                  show_json(v, var->init, jbuf, sizeof(jbuf)),
                  lil__ir_show(var->type_text.s, strlen(var->type_text.s), tbuf,
                               sizeof(tbuf)));
}

static void check_input(struct vctx *v, const struct lil_ir_input *in)
{
    char path[VALIDATE_PATH_MAX], nbuf[SHOW], tbuf[SHOW], jbuf[SHOW];
    const char *n = lil__ir_show(in->name, strlen(in->name), nbuf, sizeof(nbuf));

    snprintf(path, sizeof(path), "inputs.%s", in->name);
    if (!lil__ident_is_name(in->name))
        lil__diag(v->d, LIL_SEV_ERROR, "bad-name", in->pos, path,
                  "input name '%s' must match ^[A-Za-z_][A-Za-z0-9_]*$", n);
    if (!in->type_text.s)
        return; /* a structural error said so already */
    if (!in->type_ok) {
        lil__diag(
            v->d, LIL_SEV_ERROR, "bad-type", in->type_text.pos, path,
            "input '%s' has invalid type '%s' (expected string, int, number, boolean, "
            "json, list or enum[a,b,...])",
            n,
            lil__ir_show(in->type_text.s, strlen(in->type_text.s), tbuf, sizeof(tbuf)));
        return;
    }
    if (!in->def || json_is_null(in->def))
        return;
    if (in->type.kind == LIL_TYPE_LIST && !json_is_array(in->def))
        lil__diag(v->d, LIL_SEV_ERROR, "bad-init", in->def_pos, path,
                  "input '%s' is type 'list' but its default is not an array", n);
    else if (!lil__type_accepts(&in->type, in->def))
        lil__diag(
            v->d, LIL_SEV_ERROR, "bad-init", in->def_pos, path,
            "input '%s' default %s does not match type '%s'", n,
            show_json(v, in->def, jbuf, sizeof(jbuf)),
            lil__ir_show(in->type_text.s, strlen(in->type_text.s), tbuf, sizeof(tbuf)));
}

static void check_decls(struct vctx *v)
{
    const struct lil_ir_spec *ir = v->ir;
    char ibuf[SHOW];

    if (ir->id.s && !lil__ident_is_id(ir->id.s))
        lil__diag(v->d, LIL_SEV_ERROR, "bad-id", ir->id.pos, "id",
                  "loop id '%s' must match ^[A-Za-z0-9_.:-]+$",
                  lil__ir_show(ir->id.s, strlen(ir->id.s), ibuf, sizeof(ibuf)));
    for (size_t i = 0; i < ir->state.nvars; i++)
        check_var(v, &ir->state.vars[i]);
    for (size_t i = 0; i < ir->ninputs; i++)
        check_input(v, &ir->inputs[i]);
}

/* ------------------------------------------------------------------------ */
/* Bindings: save and on_done                                               */

static const struct lil_ir_var *var_of(const struct vctx *v, const char *name)
{
    long i = lil__ir_var_index(v->ir, name);

    return i < 0 ? NULL : &v->ir->state.vars[i];
}

static void check_jsonpath(struct vctx *v, const struct lil_ir_save *sv,
                           const char *path)
{
    char why[160], pbuf[SHOW];
    const char *p = lil__ir_show(sv->path.s, strlen(sv->path.s), pbuf, sizeof(pbuf));

    why[0] = '\0';
    if (!lil__jsonpath_supported(sv->path.s, why, sizeof(why)))
        lil__diag(v->d, LIL_SEV_WARNING, "jsonpath", sv->path.pos, path,
                  "%s: JSONPath '%s' can never match: %s", path, p, why);
    else if (sv->path.s[0] != '$')
        lil__diag(v->d, LIL_SEV_WARNING, "jsonpath", sv->path.pos, path,
                  "%s: JSONPath '%s' does not start with '$' (read as '$.%s')", path, p,
                  p);
}

static void check_save(struct vctx *v, const struct lil_ir_step *s)
{
    char path[VALIDATE_PATH_MAX], vpath[VALIDATE_PATH_MAX + 80], nbuf[SHOW];

    snprintf(path, sizeof(path), "%s.save", s->path);
    for (size_t i = 0; i < s->nsave; i++) {
        const struct lil_ir_save *sv = &s->save[i];

        snprintf(vpath, sizeof(vpath), "%s.%s", path, sv->var);
        if (!var_of(v, sv->var))
            lil__diag(v->d, LIL_SEV_ERROR, "bad-binding", sv->pos, path,
                      "%s writes undeclared state var '%s'", path,
                      lil__ir_show(sv->var, strlen(sv->var), nbuf, sizeof(nbuf)));
        check_jsonpath(v, sv, vpath);
    }
}

static void check_incr(struct vctx *v, const struct lil_ir_step *s)
{
    const struct lil_ir_str *incr = &s->on_done.incr;
    const struct lil_ir_var *var;
    char path[VALIDATE_PATH_MAX], nbuf[SHOW];

    if (!incr->s)
        return;
    snprintf(path, sizeof(path), "%s.on_done.incr", s->path);
    var = var_of(v, incr->s);
    lil__ir_show(incr->s, strlen(incr->s), nbuf, sizeof(nbuf));
    if (!var)
        lil__diag(v->d, LIL_SEV_ERROR, "bad-binding", incr->pos, path,
                  "%s targets undeclared state var '%s'", path, nbuf);
    else if (!type_is(&var->type_text, "int") && !type_is(&var->type_text, "number"))
        lil__diag(
            v->d, LIL_SEV_ERROR, "bad-binding", incr->pos, path,
            "%s targets non-numeric state var '%s' (declare it as 'int' or 'number')",
            path, nbuf);
}

static void check_assigns(struct vctx *v, const struct lil_ir_step *s,
                          const struct lil_ir_assign *a, size_t n, bool append)
{
    char path[VALIDATE_PATH_MAX], vpath[VALIDATE_PATH_MAX + 80], nbuf[SHOW];
    const struct lil_ir_var *var;

    snprintf(path, sizeof(path), "%s.on_done.%s", s->path, append ? "append" : "set");
    for (size_t i = 0; i < n; i++) {
        var = var_of(v, a[i].var);
        lil__ir_show(a[i].var, strlen(a[i].var), nbuf, sizeof(nbuf));
        if (!var)
            lil__diag(v->d, LIL_SEV_ERROR, "bad-binding", a[i].pos, path,
                      "%s writes undeclared state var '%s'", path, nbuf);
        else if (append && !type_is(&var->type_text, "list"))
            lil__diag(v->d, LIL_SEV_ERROR, "bad-binding", a[i].pos, path,
                      "%s targets non-list state var '%s' (declare it as 'list')", path,
                      nbuf);
        snprintf(vpath, sizeof(vpath), "%s.%s", path, a[i].var);
        if (a[i].is_tmpl)
            lil__validate_tmpl(v, &a[i].tmpl, vpath);
    }
}

/* ------------------------------------------------------------------------ */
/* Steps                                                                    */

static void check_steps(struct vctx *v, const struct lil_ir_step *s, size_t n);

static void check_id(struct vctx *v, const struct lil_ir_step *s)
{
    char ibuf[SHOW];

    if (!s->id)
        return;
    lil__ir_show(s->id, strlen(s->id), ibuf, sizeof(ibuf));
    if (!lil__ident_is_id(s->id))
        lil__diag(v->d, LIL_SEV_ERROR, "bad-id", s->id_pos, s->path,
                  "step id '%s' must match ^[A-Za-z0-9_.:-]+$", ibuf);
    if (json_object_get(v->ids, s->id)) {
        lil__diag(v->d, LIL_SEV_ERROR, "dup-id", s->id_pos, s->path,
                  "duplicate step id '%s'", ibuf);
        return;
    }
    if (json_object_set_new(v->ids, s->id, json_true()) != 0)
        v->nomem = true;
}

static void check_sleep(struct vctx *v, const struct lil_ir_step *s)
{
    char path[VALIDATE_PATH_MAX + 16], tbuf[SHOW];
    const struct lil_ir_sleep *sl = &s->sleep;
    bool has_for = sl->for_.text.s != NULL, has_until = sl->until.src.s != NULL;

    if (has_for == has_until)
        lil__diag(v->d, LIL_SEV_ERROR, "sleep-shape", s->pos, s->path,
                  "%s must set exactly one of 'for' or 'until'", s->path);
    snprintf(path, sizeof(path), "%s.for", s->path);
    if (has_for && !sl->for_.ok)
        lil__diag(
            v->d, LIL_SEV_ERROR, "bad-duration", sl->for_.text.pos, path,
            "%s is not a valid duration: '%s' (a number and a unit ms, s, m, h or d, "
            "at most 36500d)",
            path,
            lil__ir_show(sl->for_.text.s, strlen(sl->for_.text.s), tbuf, sizeof(tbuf)));
    snprintf(path, sizeof(path), "%s.until", s->path);
    lil__validate_guard(v, &sl->until, path);
}

/* bad-alias: one of four reasons, or NULL. */
static const char *alias_problem(const struct vctx *v, const char *a)
{
    if (!lil__ident_is_name(a))
        return "is not a valid identifier (^[A-Za-z_][A-Za-z0-9_]*$)";
    if (lil__ident_is_reserved(a))
        return "is a reserved word";
    if (lil__ident_is_binding(a) || lil__ident_is_root(a))
        return "is reserved by the runtime (an expression root or a generated binding)";
    if (lil__ir_var_index(v->ir, a) >= 0 || lil__ir_input_index(v->ir, a) >= 0)
        return "shadows a declared state var or input";
    return NULL;
}

static void check_reduce(struct vctx *v, const struct lil_ir_step *s)
{
    char path[VALIDATE_PATH_MAX + 16], abuf[SHOW];
    const struct lil_ir_reduce *r = &s->reduce;
    const char *why;

    snprintf(path, sizeof(path), "%s.over", s->path);
    lil__validate_guard(v, &r->over, path);
    snprintf(path, sizeof(path), "%s.as", s->path);
    why = r->as.s ? alias_problem(v, r->as.s) : NULL;
    if (why)
        lil__diag(v->d, LIL_SEV_ERROR, "bad-alias", r->as_given ? r->as.pos : s->pos,
                  path, "%s '%s' %s", path,
                  lil__ir_show(r->as.s, strlen(r->as.s), abuf, sizeof(abuf)), why);
    if (v->naliases < VALIDATE_MAX_ALIASES && r->as.s)
        v->aliases[v->naliases++] = r->as.s;
    check_steps(v, r->body, r->nbody);
    if (r->as.s)
        v->naliases--;
}

static void check_kind(struct vctx *v, const struct lil_ir_step *s)
{
    char path[VALIDATE_PATH_MAX + 32];

    switch (s->kind) {
    case LIL_STEP_AGENT:
        snprintf(path, sizeof(path), "%s.harness", s->path);
        lil__validate_harness(v, &s->agent.harness, path);
        snprintf(path, sizeof(path), "%s.prompt", s->path);
        lil__validate_tmpl(v, &s->agent.prompt, path);
        break;
    case LIL_STEP_SHELL:
        snprintf(path, sizeof(path), "%s.cmd", s->path);
        lil__validate_tmpl(v, &s->shell.cmd, path);
        if (!s->shell.has_args)
            lil__validate_cmd_quoting(v, &s->shell.cmd, path);
        for (size_t i = 0; i < s->shell.nargs; i++) {
            snprintf(path, sizeof(path), "%s.args[%zu]", s->path, i);
            lil__validate_tmpl(v, &s->shell.args[i], path);
        }
        break;
    case LIL_STEP_HTTP:
        snprintf(path, sizeof(path), "%s.request", s->path);
        lil__validate_http(v, &s->http, path);
        break;
    case LIL_STEP_BREAKPOINT:
        snprintf(path, sizeof(path), "%s.ask", s->path);
        lil__validate_tmpl(v, &s->breakpoint.ask, path);
        break;
    case LIL_STEP_SLEEP:
        check_sleep(v, s);
        break;
    case LIL_STEP_REDUCE:
        check_reduce(v, s);
        break;
    }
}

static void check_step(struct vctx *v, const struct lil_ir_step *s)
{
    char path[VALIDATE_PATH_MAX + 16];

    check_id(v, s);
    snprintf(path, sizeof(path), "%s.when", s->path);
    lil__validate_guard(v, &s->when, path);
    check_kind(v, s);
    check_save(v, s);
    check_incr(v, s);
    check_assigns(v, s, s->on_done.set, s->on_done.nset, false);
    check_assigns(v, s, s->on_done.append, s->on_done.nappend, true);
}

static void check_steps(struct vctx *v, const struct lil_ir_step *s, size_t n)
{
    for (size_t i = 0; i < n && !v->nomem; i++)
        check_step(v, &s[i]);
}

lil_status lil__ir_validate(const struct lil_ir_spec *ir, struct lil_diags *d)
{
    struct vctx v;

    memset(&v, 0, sizeof(v));
    v.ir = ir;
    v.d = d;
    v.ids = json_object();
    if (!v.ids)
        return LIL_E_NOMEM;
    check_decls(&v);
    check_steps(&v, ir->body, ir->nbody);
    if (!v.nomem)
        lil__validate_top(&v);
    json_decref(v.ids);
    return v.nomem || d->nomem ? LIL_E_NOMEM : LIL_OK;
}
