/*
 * state.c -- the state of a running loop (state.h): the initial state, a
 * step's save and on_done, snapshot and restore, the fingerprint, and the
 * value model every write goes through (lil__state_copy_value).
 *
 * lil__state_apply is a small transaction.  The operations run on `work`,
 * a shallow copy of the state object (its values shared with the current
 * one); save, incr and set only replace or remove keys of `work`, so the
 * current object is untouched.  append is the one operation that changes
 * a shared value in place (pushing onto an array that both objects hold):
 * it records the array and its length first, and a failure takes the
 * pushed elements off again (json_array_remove never allocates).  Success
 * swaps `work` in; failure drops it.  The record of pushes is allocated
 * before any change, so nothing can fail half-way through an undo.
 */
#include "loop/state.h"

#include <math.h>
#include <string.h>

#include "base/alloc.h"
#include "base/err.h"
#include "lang/jsonpath.h"
#include "lang/value.h"

#define STATE_TEXT_CAP ((size_t)16 << 20) /* incr's concatenation */
#define EXACT_INT_MAX  9007199254740992.0 /* 2^53 */

/* ---- the value model ------------------------------------------------------ */

static json_t *copy_number(json_t *v)
{
    double x;

    if (json_is_integer(v))
        return json_integer(json_integer_value(v));
    x = json_real_value(v);
    if (!isfinite(x))
        return json_null();
    if (x >= -EXACT_INT_MAX && x <= EXACT_INT_MAX && x == (double)(json_int_t)x)
        return json_integer((json_int_t)x); /* -0.0 too */
    return json_real(x);
}

static lil_status copy_at(json_t *v, int depth, json_t **out);

static lil_status copy_object(json_t *v, int depth, json_t *o)
{
    const char *k;
    json_t *x, *c;
    lil_status rc = LIL_OK;

    json_object_foreach(v, k, x)
    {
        rc = copy_at(x, depth + 1, &c);
        if (rc == LIL_OK && json_object_set_new(o, k, c) != 0)
            rc = LIL_E_NOMEM;
        if (rc != LIL_OK)
            break;
    }
    return rc;
}

static lil_status copy_array(json_t *v, int depth, json_t *a)
{
    size_t i;
    json_t *x, *c;
    lil_status rc = LIL_OK;

    json_array_foreach(v, i, x)
    {
        rc = copy_at(x, depth + 1, &c);
        if (rc == LIL_OK && json_array_append_new(a, c) != 0)
            rc = LIL_E_NOMEM;
        if (rc != LIL_OK)
            break;
    }
    return rc;
}

static lil_status copy_at(json_t *v, int depth, json_t **out)
{
    lil_status rc = LIL_OK;

    *out = NULL;
    if (depth > LIL_STATE_MAX_DEPTH)
        return LIL_E_TOOBIG;
    switch (json_typeof(v)) {
    case JSON_OBJECT:
        *out = json_object();
        rc = *out ? copy_object(v, depth, *out) : LIL_E_NOMEM;
        break;
    case JSON_ARRAY:
        *out = json_array();
        rc = *out ? copy_array(v, depth, *out) : LIL_E_NOMEM;
        break;
    case JSON_STRING:
        *out = json_stringn_nocheck(json_string_value(v), json_string_length(v));
        break;
    case JSON_INTEGER:
    case JSON_REAL:
        *out = copy_number(v);
        break;
    default: /* true, false, null: jansson's constants */
        *out = json_incref(v);
        break;
    }
    if (rc == LIL_OK && !*out)
        rc = LIL_E_NOMEM;
    if (rc != LIL_OK) {
        json_decref(*out);
        *out = NULL;
    }
    return rc;
}

lil_status lil__state_copy_value(json_t *v, json_t **out)
{
    return copy_at(v, 0, out);
}

/* lil__state_copy_value inside a scope already open, with a message. */
static lil_status copy_for(struct lil_err *err, const char *what, json_t *v,
                           json_t **out)
{
    lil_status rc = lil__state_copy_value(v, out);

    if (rc == LIL_E_TOOBIG)
        return lil__seterr(err, rc, 0, "%s: the value is nested deeper than %d levels",
                           what, LIL_STATE_MAX_DEPTH);
    if (rc != LIL_OK)
        return lil__seterr(err, rc, 0, "out of memory");
    return LIL_OK;
}

/* End a scope: any allocation that failed inside it makes rc LIL_E_NOMEM. */
static lil_status scope_end(struct lil_json_scope *sc, struct lil_err *err,
                            lil_status rc)
{
    if (lil__json_end(sc) != LIL_OK)
        return lil__seterr(err, LIL_E_NOMEM, 0, "out of memory");
    return rc;
}

/* "a string", "an object", ... ("undefined" for NULL). */
static const char *kind_of(json_t *v)
{
    if (!v)
        return "undefined";
    switch (json_typeof(v)) {
    case JSON_OBJECT:
        return "an object";
    case JSON_ARRAY:
        return "an array";
    case JSON_STRING:
        return "a string";
    case JSON_INTEGER:
    case JSON_REAL:
        return "a number";
    case JSON_NULL:
        return "null";
    default:
        return "a boolean";
    }
}

/* ---- the state ------------------------------------------------------------ */

static lil_status init_vars(const struct lil_ir_spec *ir, struct lil_err *err,
                            json_t *vars)
{
    lil_status rc = LIL_OK;

    for (size_t i = 0; i < ir->state.nvars && rc == LIL_OK; i++) {
        const struct lil_ir_var *v = &ir->state.vars[i];
        char what[128];
        json_t *c;
        if (!v->init)
            continue; /* undefined */
        snprintf(what, sizeof(what), "state var '%.64s' init", v->name);
        rc = copy_for(err, what, v->init, &c);
        if (rc == LIL_OK && json_object_set_new(vars, v->name, c) != 0)
            rc = lil__seterr(err, LIL_E_NOMEM, 0, "out of memory");
    }
    return rc;
}

lil_status lil__state_init(struct lil_loop_state *st, const struct lil_env *env,
                           const struct lil_ir_spec *ir, struct lil_err *err)
{
    struct lil_json_scope sc;
    json_t *vars;
    lil_status rc;

    memset(st, 0, sizeof(*st));
    lil__json_begin(&sc, env);
    vars = json_object();
    rc = vars ? init_vars(ir, err, vars) : LIL_E_NOMEM;
    if (!vars)
        rc = lil__seterr(err, LIL_E_NOMEM, 0, "out of memory");
    rc = scope_end(&sc, err, rc);
    if (rc != LIL_OK) {
        json_decref(vars);
        return rc;
    }
    st->env = env;
    st->ir = ir;
    st->vars = vars;
    return LIL_OK;
}

void lil__state_free(struct lil_loop_state *st)
{
    json_decref(st->vars);
    memset(st, 0, sizeof(*st));
}

json_t *lil__state_get(const struct lil_loop_state *st, const char *var)
{
    return json_object_get(st->vars, var);
}

static void eval_init(const struct lil_env *env, json_t *vars,
                      const struct lil_state_ctx *cx, struct lil_eval *ev)
{
    lil__eval_init(ev, env);
    ev->state = vars;
    if (!cx)
        return;
    ev->inputs = cx->inputs;
    ev->environ = cx->environ;
    ev->meta = cx->meta;
    ev->iteration = cx->iteration;
    ev->aliases = cx->aliases;
    ev->naliases = cx->naliases;
}

void lil__state_eval_init(const struct lil_loop_state *st,
                          const struct lil_state_ctx *cx, struct lil_eval *ev)
{
    eval_init(st->env, st->vars, cx, ev);
}

/* ---- a step's result ------------------------------------------------------ */

struct pushed {
    json_t *arr; /* borrowed: held by the state */
    size_t len;  /* its size before the push */
};

struct apply {
    const struct lil_env *env;
    const struct lil_ir_spec *ir;
    const struct lil_ir_step *step;
    struct lil_err *err;
    json_t *work;        /* the state being changed */
    struct lil_eval ev;  /* reads work */
    struct pushed *push; /* one slot per append entry */
    size_t npush;
};

static lil_status nomem(struct apply *a)
{
    return lil__seterr(a->err, LIL_E_NOMEM, 0, "out of memory");
}

static lil_status check_declared(struct apply *a, const char *what, const char *var)
{
    if (var && lil__ir_var_index(a->ir, var) >= 0)
        return LIL_OK;
    return lil__seterr(a->err, LIL_E_SPEC, 0,
                       "step '%s': %s writes undeclared state var '%.64s'", a->step->id,
                       what, var ? var : "");
}

/* Store value (a new reference, taken) as var; NULL removes the var. */
static lil_status store(struct apply *a, const char *var, json_t *value)
{
    if (!value) {
        json_object_del(a->work, var); /* absent already: nothing to do */
        return LIL_OK;
    }
    if (json_object_set_new(a->work, var, value) != 0)
        return nomem(a);
    return LIL_OK;
}

static lil_status save_one(struct apply *a, const struct lil_ir_save *s, json_t *result)
{
    char what[128];
    json_t *hit, *c = NULL;
    lil_status rc = check_declared(a, "save", s->var);

    if (rc != LIL_OK)
        return rc;
    if (!s->path.s)
        return lil__seterr(a->err, LIL_E_SPEC, 0, "step '%s': save.%s has no path",
                           a->step->id, s->var);
    hit = lil__jsonpath_get(result, s->path.s); /* NULL: undefined */
    snprintf(what, sizeof(what), "step '%.64s': save.%.48s", a->step->id, s->var);
    if (hit)
        rc = copy_for(a->err, what, hit, &c);
    json_decref(hit);
    return rc == LIL_OK ? store(a, s->var, c) : rc;
}

/* state[v] + 1, as JavaScript's `+` computes it. */
static lil_status incr_value(struct apply *a, json_t *cur, json_t **out)
{
    struct lil_val v = lil__val_from_json(cur), n;
    struct lil_buf b;
    bool undef;
    lil_status rc;

    if (v.t != LIL_V_STR && v.t != LIL_V_JSON) {
        memset(&n, 0, sizeof(n));
        n.t = LIL_V_NUM;
        n.n = lil__val_number(&v) + 1;
        *out = lil__val_to_json(&n, &undef);
        return *out ? LIL_OK : nomem(a);
    }
    lil__buf_init(&b, a->env, STATE_TEXT_CAP);
    rc = lil__val_string(&v, &b);
    if (rc == LIL_OK)
        rc = lil__buf_add(&b, "1", 1);
    if (rc == LIL_OK) {
        *out = json_stringn((const char *)b.data, b.len);
        rc = *out ? LIL_OK : LIL_E_NOMEM;
    }
    lil__buf_free(&b);
    if (rc != LIL_OK)
        return lil__seterr(a->err, rc, 0, "step '%s': on_done.incr of '%.64s': %s",
                           a->step->id, a->step->on_done.incr.s, lil__status_text(rc));
    return LIL_OK;
}

static lil_status incr(struct apply *a)
{
    const char *var = a->step->on_done.incr.s;
    json_t *v = NULL;
    lil_status rc;

    if (!var)
        return LIL_OK;
    rc = check_declared(a, "on_done.incr", var);
    if (rc == LIL_OK)
        rc = incr_value(a, json_object_get(a->work, var), &v);
    return rc == LIL_OK ? store(a, var, v) : rc;
}

/* The value of a set or append entry, owned: a template rendered (typed
 * when it is one ${expr}), anything else copied. */
static lil_status entry_value(struct apply *a, const char *op,
                              const struct lil_ir_assign *e, json_t **out)
{
    char what[160];
    json_t *v = NULL;
    lil_status rc;

    *out = NULL;
    snprintf(what, sizeof(what), "step '%.64s': on_done.%s.%.48s", a->step->id, op,
             e->var);
    if (!e->is_tmpl)
        return copy_for(a->err, what, e->value, out);
    if (!e->tmpl.tmpl)
        return lil__seterr(a->err, LIL_E_SPEC, 0, "%s: the template did not parse: %s",
                           what, e->tmpl.err ? e->tmpl.err : "?");
    lil__eval_reset(&a->ev);
    rc = lil__tmpl_value(e->tmpl.tmpl, &a->ev, &v);
    if (rc != LIL_OK)
        return lil__seterr(a->err, rc, 0, "%s: %s", what, lil__status_text(rc));
    rc = copy_for(a->err, what, v, out); /* ${state.list} is the state's own list */
    json_decref(v);
    return rc;
}

static lil_status set_one(struct apply *a, const struct lil_ir_assign *e)
{
    json_t *v;
    lil_status rc = check_declared(a, "on_done.set", e->var);

    if (rc == LIL_OK)
        rc = entry_value(a, "set", e, &v);
    return rc == LIL_OK ? store(a, e->var, v) : rc;
}

static lil_status append_one(struct apply *a, const struct lil_ir_assign *e)
{
    json_t *arr, *v = NULL;
    lil_status rc = check_declared(a, "on_done.append", e->var);

    if (rc != LIL_OK)
        return rc;
    arr = json_object_get(a->work, e->var);
    if (!json_is_array(arr))
        return lil__seterr(a->err, LIL_E_SPEC, 0,
                           "step '%s': on_done.append: state var '%.64s' is %s, not an "
                           "array",
                           a->step->id, e->var, kind_of(arr));
    rc = entry_value(a, "append", e, &v);
    if (rc != LIL_OK)
        return rc;
    a->push[a->npush].arr = arr;
    a->push[a->npush].len = json_array_size(arr);
    a->npush++;
    if (json_array_append_new(arr, v) != 0)
        return nomem(a);
    return LIL_OK;
}

static lil_status run_ops(struct apply *a, json_t *result)
{
    const struct lil_ir_step *s = a->step;
    const struct lil_ir_on_done *od = &s->on_done;
    lil_status rc = LIL_OK;

    for (size_t i = 0; i < s->nsave && rc == LIL_OK; i++)
        rc = save_one(a, &s->save[i], result);
    if (rc != LIL_OK || !od->present)
        return rc;
    rc = incr(a);
    for (size_t i = 0; i < od->nset && rc == LIL_OK; i++)
        rc = set_one(a, &od->set[i]);
    for (size_t i = 0; i < od->nappend && rc == LIL_OK; i++)
        rc = append_one(a, &od->append[i]);
    return rc;
}

/* Take the pushed elements off again, last push first. */
static void undo_pushes(struct apply *a)
{
    for (size_t i = a->npush; i-- > 0;) {
        json_t *arr = a->push[i].arr;
        while (json_array_size(arr) > a->push[i].len)
            json_array_remove(arr, json_array_size(arr) - 1);
    }
}

static lil_status apply_begin(struct apply *a, const struct lil_loop_state *st)
{
    size_t n = a->step->on_done.present ? a->step->on_done.nappend : 0;

    a->work = json_copy(st->vars);
    if (!a->work)
        return nomem(a);
    if (n) {
        a->push = lil__calloc(a->env, n, sizeof(*a->push));
        if (!a->push)
            return nomem(a);
    }
    a->ev.state = a->work;
    return LIL_OK;
}

lil_status lil__state_apply(struct lil_loop_state *st, struct lil_err *err,
                            const struct lil_state_ctx *cx,
                            const struct lil_ir_step *step, json_t *result)
{
    struct apply a;
    struct lil_json_scope sc;
    lil_status rc;

    memset(&a, 0, sizeof(a));
    a.env = st->env;
    a.ir = st->ir;
    a.step = step;
    a.err = err;
    eval_init(st->env, NULL, cx, &a.ev);
    lil__json_begin(&sc, st->env);
    rc = apply_begin(&a, st);
    if (rc == LIL_OK)
        rc = run_ops(&a, result);
    rc = scope_end(&sc, err, rc);
    if (rc == LIL_OK) {
        json_decref(st->vars);
        st->vars = a.work;
    } else {
        undo_pushes(&a);
        json_decref(a.work); /* blocks know their allocator (json.h) */
    }
    lil__eval_free(&a.ev);
    lil__free(st->env, a.push);
    return rc;
}

/* ---- snapshot, restore ---------------------------------------------------- */

lil_status lil__state_snapshot(const struct lil_loop_state *st, struct lil_err *err,
                               struct lil_buf *out)
{
    return lil__json_canon(st->env, err, st->vars, out);
}

lil_status lil__state_restore(struct lil_loop_state *st, struct lil_err *err,
                              const char *text, size_t len)
{
    struct lil_json_scope sc;
    json_t *v = NULL, *vars = NULL;
    lil_status rc;

    rc = lil__json_parse(st->env, err, LIL_E_INVAL, text, len, LIL_JSON_CANON_PARSE,
                         NULL, &v);
    if (rc != LIL_OK)
        return rc;
    lil__json_begin(&sc, st->env);
    if (!json_is_object(v))
        rc = lil__seterr(err, LIL_E_INVAL, 0,
                         "a state snapshot is a JSON object, not %s", kind_of(v));
    else
        rc = copy_for(err, "state snapshot", v, &vars);
    json_decref(v);
    rc = scope_end(&sc, err, rc);
    if (rc != LIL_OK) {
        json_decref(vars);
        return rc;
    }
    json_decref(st->vars);
    st->vars = vars;
    return LIL_OK;
}

/* ---- fingerprint ---------------------------------------------------------- */

static lil_status fingerprint_of(const struct lil_loop_state *st, struct lil_err *err,
                                 const struct lil_val *v, struct lil_buf *out)
{
    char num[32];
    json_t *j;
    bool undef;
    lil_status rc;

    /* values JSON has no text for keep their names, unquoted */
    if (v->t == LIL_V_UNDEF || (v->t == LIL_V_NUM && !isfinite(v->n))) {
        rc = v->t == LIL_V_UNDEF ? lil__buf_add(out, "undefined", 9)
                                 : lil__buf_add(out, num, lil__num_format(v->n, num));
        return rc == LIL_OK
                   ? LIL_OK
                   : lil__seterr(err, rc, 0, "fingerprint: %s", lil__status_text(rc));
    }
    j = lil__val_to_json(v, &undef);
    if (!j)
        return lil__seterr(err, LIL_E_NOMEM, 0, "out of memory");
    rc = lil__json_canon(st->env, err, j, out);
    json_decref(j);
    return rc;
}

lil_status lil__state_fingerprint(const struct lil_loop_state *st, struct lil_err *err,
                                  const struct lil_state_ctx *cx, struct lil_buf *out,
                                  bool *has)
{
    const struct lil_ir_guard *g = &st->ir->caps.no_progress.fingerprint;
    struct lil_json_scope sc;
    struct lil_eval ev;
    struct lil_val v = {LIL_V_UNDEF, false, 0, NULL, 0, NULL};
    size_t len = out->len;
    lil_status rc;

    *has = false;
    if (!st->ir->caps.no_progress.present)
        return LIL_OK;
    if (!g->expr)
        return lil__seterr(err, LIL_E_SPEC, 0,
                           "caps.no_progress.fingerprint did not parse: %s",
                           g->err ? g->err : "?");
    lil__state_eval_init(st, cx, &ev);
    lil__json_begin(&sc, st->env);
    rc = lil__expr_eval(g->expr, &ev, &v);
    if (rc != LIL_OK)
        lil__seterr(err, rc, 0, "caps.no_progress.fingerprint: %s",
                    lil__status_text(rc));
    else
        rc = fingerprint_of(st, err, &v, out);
    rc = scope_end(&sc, err, rc);
    lil__eval_free(&ev);
    if (rc != LIL_OK)
        out->len = len; /* appended bytes, if any, are not a fingerprint */
    else
        *has = true;
    return rc;
}

/* ---- meta ----------------------------------------------------------------- */

static int set_str(json_t *o, const char *key, const char *s)
{
    return s ? json_object_set_new(o, key, json_string(s)) : 0;
}

lil_status lil__state_meta(const struct lil_env *env, struct lil_err *err,
                           const struct lil_ir_spec *ir, json_t **out)
{
    struct lil_json_scope sc;
    json_t *m;
    lil_status rc = LIL_OK;

    *out = NULL;
    lil__json_begin(&sc, env);
    m = json_object();
    if (!m || set_str(m, "name", ir->meta.name.s) != 0 ||
        set_str(m, "version", ir->meta.version.s) != 0 ||
        set_str(m, "description", ir->meta.description.s) != 0)
        rc = LIL_E_NOMEM;
    rc = scope_end(&sc, err, rc);
    if (rc != LIL_OK) {
        json_decref(m);
        return lil__seterr(err, LIL_E_NOMEM, 0, "out of memory");
    }
    *out = m;
    return LIL_OK;
}
