/*
 * grounding.c -- what the exit predicate depends on: termination grounding
 * and exit liveness (docs/loopspec.md, "Validation").
 *
 * One walk over the steps collects every write of a state var (save, incr,
 * set, append) with the state vars it depends on:
 *
 *   grounding   a `save` by an agent step marks the var `agent`, by a shell
 *               or http step `external`; an on_done write makes the var
 *               depend on the state vars read by its guards (the step's and
 *               every enclosing step's `when`) and by its string value.  A
 *               var inherits `agent`/`external` from its dependencies
 *               (propagated along reverse edges: linear).
 *   liveness    only top-level writers count.  A writer without `when`, or
 *               whose `when` reads `iteration`, makes its vars live; a
 *               guarded writer makes them live once a var its guard reads
 *               is live (again propagated along edges).
 *
 * Exit vars are the state vars read by terminate.until.  Class: none (no
 * exit var written, no iteration), mixed (agent- and external-fed exit
 * vars), agent, external, else structural.
 *
 * Everything is O(steps + vars + references).
 */
#include <string.h>

#include "base/alloc.h"
#include "loopspec/ir/ir.h"

/* An edge "to depends on from". */
struct edge {
    size_t from, to;
};

struct edges {
    struct edge *v;
    size_t n, alloc;
};

struct walk {
    const struct lil_ir_spec *ir;
    struct lil_ir_exit *x;
    struct edges ground; /* grounding dependencies */
    struct edges live;   /* liveness: guard var -> written var (top level) */
    size_t *guard;       /* stack of state vars read by enclosing guards */
    size_t nguard, aguard;
    bool nomem;
};

static bool push_edge(struct walk *w, struct edges *e, size_t from, size_t to)
{
    struct edge *v = lil__grow(w->ir->env, e->v, &e->alloc, e->n, sizeof(*v), 32);

    if (!v) {
        w->nomem = true;
        return false;
    }
    e->v = v;
    e->v[e->n].from = from;
    e->v[e->n].to = to;
    e->n++;
    return true;
}

static bool push_guard(struct walk *w, size_t var)
{
    size_t *v = lil__grow(w->ir->env, w->guard, &w->aguard, w->nguard, sizeof(*v), 16);

    if (!v) {
        w->nomem = true;
        return false;
    }
    w->guard = v;
    w->guard[w->nguard++] = var;
    return true;
}

/* ------------------------------------------------------------------------ */
/* References                                                               */

struct refs {
    struct walk *w;
    bool iteration;
    bool push;   /* push declared state vars on the guard stack */
    size_t self; /* a var to skip (SIZE_MAX: none) */
    size_t to;   /* with edges: the written var (SIZE_MAX: no edges) */
};

static void on_ref(void *ud, const struct lil_expr_ref *r)
{
    struct refs *rf = ud;
    long v;

    if (strcmp(r->root, "iteration") == 0) {
        rf->iteration = true;
        return;
    }
    if (strcmp(r->root, "state") != 0 || !r->member)
        return;
    v = lil__ir_var_index(rf->w->ir, r->member);
    if (v < 0 || (size_t)v == rf->self)
        return;
    if (rf->push)
        push_guard(rf->w, (size_t)v);
    if (rf->to != SIZE_MAX)
        push_edge(rf->w, &rf->w->ground, (size_t)v, rf->to);
}

/* ------------------------------------------------------------------------ */
/* Writes                                                                   */

static bool add_write(struct walk *w, const struct lil_ir_step *s, size_t var,
                      enum lil_ir_write_how how, bool guarded)
{
    struct lil_ir_exit *x = w->x;

    if (x->nwrites % 64 == 0) {
        struct lil_ir_write *v =
            lil__realloc(w->ir->env, x->writes, (x->nwrites + 64) * sizeof(*v));

        if (!v) {
            w->nomem = true;
            return false;
        }
        x->writes = v;
    }
    x->writes[x->nwrites].step = s;
    x->writes[x->nwrites].var = var;
    x->writes[x->nwrites].how = how;
    x->writes[x->nwrites].guarded = guarded;
    x->nwrites++;
    x->written[var] = true;
    return true;
}

/* An on_done write of var: depends on the enclosing guards (stack from
 * `base`) and on the state read by a string value. */
static void on_done_write(struct walk *w, const struct lil_ir_step *s, size_t var,
                          enum lil_ir_write_how how, const struct lil_ir_assign *a,
                          bool guarded)
{
    if (!add_write(w, s, var, how, guarded))
        return;
    for (size_t i = 0; i < w->nguard; i++) {
        if (w->guard[i] != var)
            push_edge(w, &w->ground, w->guard[i], var);
    }
    if (a && a->is_tmpl && a->tmpl.tmpl) {
        struct refs rf = {w, false, false, var, var};

        lil__tmpl_refs(a->tmpl.tmpl, on_ref, &rf);
    }
}

static void assigns(struct walk *w, const struct lil_ir_step *s,
                    const struct lil_ir_assign *v, size_t n, enum lil_ir_write_how how,
                    bool guarded)
{
    for (size_t i = 0; i < n; i++) {
        long var = v[i].var ? lil__ir_var_index(w->ir, v[i].var) : -1;

        if (var >= 0)
            on_done_write(w, s, (size_t)var, how, &v[i], guarded);
    }
}

static void step_writes(struct walk *w, const struct lil_ir_step *s, bool guarded)
{
    const struct lil_ir_on_done *od = &s->on_done;
    long var;

    for (size_t i = 0; i < s->nsave; i++) {
        var = s->save[i].var ? lil__ir_var_index(w->ir, s->save[i].var) : -1;
        if (var < 0 || !add_write(w, s, (size_t)var, LIL_WRITE_SAVE, guarded))
            continue;
        if (s->kind == LIL_STEP_AGENT)
            w->x->agent[var] = true;
        else
            w->x->external[var] = true;
    }
    var = od->incr.s ? lil__ir_var_index(w->ir, od->incr.s) : -1;
    if (var >= 0)
        on_done_write(w, s, (size_t)var, LIL_WRITE_INCR, NULL, guarded);
    assigns(w, s, od->set, od->nset, LIL_WRITE_SET, guarded);
    assigns(w, s, od->append, od->nappend, LIL_WRITE_APPEND, guarded);
}

/* Liveness edges of a top-level writer: guard var -> each var it writes
 * (or the var is live at once when the step is unguarded). */
static void top_level_liveness(struct walk *w, size_t first_write, size_t guard_base,
                               bool unconditional)
{
    struct lil_ir_exit *x = w->x;

    for (size_t i = first_write; i < x->nwrites; i++) {
        size_t var = x->writes[i].var;

        if (unconditional) {
            x->live[var] = true;
            continue;
        }
        for (size_t g = guard_base; g < w->nguard; g++)
            push_edge(w, &w->live, w->guard[g], var);
    }
}

static void walk_steps(struct walk *w, const struct lil_ir_step *v, size_t n,
                       bool guarded);

static void walk_step(struct walk *w, const struct lil_ir_step *s, bool guarded)
{
    size_t base = w->nguard, first = w->x->nwrites;
    struct refs rf = {w, false, true, SIZE_MAX, SIZE_MAX};
    bool has_when = s->when.expr != NULL;

    if (has_when)
        lil__expr_refs(s->when.expr, on_ref, &rf);
    guarded = guarded || s->when.src.s != NULL;
    step_writes(w, s, guarded);
    if (!s->parent)
        top_level_liveness(w, first, base, !has_when || rf.iteration);
    if (s->kind == LIL_STEP_REDUCE)
        walk_steps(w, s->reduce.body, s->reduce.nbody, guarded);
    w->nguard = base;
}

static void walk_steps(struct walk *w, const struct lil_ir_step *v, size_t n,
                       bool guarded)
{
    for (size_t i = 0; i < n && !w->nomem; i++)
        walk_step(w, &v[i], guarded);
}

/* ------------------------------------------------------------------------ */
/* Propagation                                                              */

/* mark[to] |= mark[from] along edges until nothing changes: a BFS over the
 * edges grouped by `from` (counting sort). */
static bool propagate(struct walk *w, const struct edges *e, bool *mark)
{
    size_t nv = w->ir->state.nvars;
    const struct lil_env *env = w->ir->env;
    size_t *start = lil__calloc(env, nv + 1, sizeof(*start));
    size_t *adj = lil__calloc(env, e->n ? e->n : 1, sizeof(*adj));
    size_t *queue = lil__calloc(env, nv ? nv : 1, sizeof(*queue));
    size_t head = 0, tail = 0;

    if (!start || !adj || !queue) {
        lil__free(env, start);
        lil__free(env, adj);
        lil__free(env, queue);
        return false;
    }
    for (size_t i = 0; i < e->n; i++)
        start[e->v[i].from + 1]++;
    for (size_t i = 0; i < nv; i++)
        start[i + 1] += start[i];
    for (size_t i = 0; i < e->n; i++)
        adj[start[e->v[i].from]++] = e->v[i].to;
    for (size_t i = nv; i > 0; i--) /* undo the shift the fill made */
        start[i] = start[i - 1];
    start[0] = 0;
    for (size_t i = 0; i < nv; i++) {
        if (mark[i])
            queue[tail++] = i;
    }
    while (head < tail) {
        size_t u = queue[head++];

        for (size_t k = start[u]; k < start[u + 1]; k++) {
            if (!mark[adj[k]]) {
                mark[adj[k]] = true;
                queue[tail++] = adj[k];
            }
        }
    }
    lil__free(env, start);
    lil__free(env, adj);
    lil__free(env, queue);
    return true;
}

/* ------------------------------------------------------------------------ */
/* The exit predicate                                                       */

struct exit_refs {
    const struct lil_ir_spec *ir;
    struct lil_ir_exit *x;
    bool *seen;
};

static void on_exit_ref(void *ud, const struct lil_expr_ref *r)
{
    struct exit_refs *er = ud;
    long v;

    if (strcmp(r->root, "iteration") == 0) {
        er->x->uses_iteration = true;
        return;
    }
    if (strcmp(r->root, "state") != 0 || !r->member)
        return;
    er->x->reads_state = true;
    v = lil__ir_var_index(er->ir, r->member);
    if (v < 0 || er->seen[v])
        return;
    er->seen[v] = true;
    er->x->reads[er->x->nreads++] = (size_t)v;
}

static void classify(struct lil_ir_exit *x)
{
    bool a = false, e = false;

    for (size_t i = 0; i < x->nreads; i++) {
        size_t v = x->reads[i];

        if (!x->written[v])
            continue;
        x->any_written = true;
        a = a || x->agent[v];
        e = e || x->external[v];
        x->any_live = x->any_live || x->live[v];
    }
    if (!x->any_written && !x->uses_iteration)
        x->grounding = LIL_GROUND_NONE;
    else if (a && e)
        x->grounding = LIL_GROUND_MIXED;
    else if (a)
        x->grounding = LIL_GROUND_AGENT;
    else if (e)
        x->grounding = LIL_GROUND_EXTERNAL;
    else
        x->grounding = LIL_GROUND_STRUCTURAL;
}

static bool alloc_marks(const struct lil_ir_spec *ir, struct lil_ir_exit *x)
{
    size_t nv = ir->state.nvars ? ir->state.nvars : 1;
    const struct lil_env *env = ir->env;

    x->written = lil__calloc(env, nv, sizeof(bool));
    x->agent = lil__calloc(env, nv, sizeof(bool));
    x->external = lil__calloc(env, nv, sizeof(bool));
    x->live = lil__calloc(env, nv, sizeof(bool));
    x->reads = lil__calloc(env, nv, sizeof(size_t));
    return x->written && x->agent && x->external && x->live && x->reads;
}

static bool read_exit(const struct lil_ir_spec *ir, struct lil_ir_exit *x)
{
    struct exit_refs er = {ir, x, NULL};

    x->parsed = ir->terminate.present && ir->terminate.until.expr != NULL;
    if (!x->parsed)
        return true;
    er.seen = lil__calloc(ir->env, ir->state.nvars ? ir->state.nvars : 1, sizeof(bool));
    if (!er.seen)
        return false;
    lil__expr_refs(ir->terminate.until.expr, on_exit_ref, &er);
    lil__free(ir->env, er.seen);
    return true;
}

lil_status lil__ir_exit_analyse(const struct lil_ir_spec *ir, struct lil_ir_exit *out)
{
    struct walk w;
    bool ok;

    memset(out, 0, sizeof(*out));
    memset(&w, 0, sizeof(w));
    w.ir = ir;
    w.x = out;
    if (!alloc_marks(ir, out) || !read_exit(ir, out))
        return LIL_E_NOMEM;
    walk_steps(&w, ir->body, ir->nbody, false);
    ok = !w.nomem && propagate(&w, &w.ground, out->agent) &&
         propagate(&w, &w.ground, out->external) && propagate(&w, &w.live, out->live);
    lil__free(ir->env, w.ground.v);
    lil__free(ir->env, w.live.v);
    lil__free(ir->env, w.guard);
    if (!ok)
        return LIL_E_NOMEM;
    classify(out);
    return LIL_OK;
}

void lil__ir_exit_free(const struct lil_env *env, struct lil_ir_exit *x)
{
    lil__free(env, x->written);
    lil__free(env, x->agent);
    lil__free(env, x->external);
    lil__free(env, x->live);
    lil__free(env, x->reads);
    lil__free(env, x->writes);
    memset(x, 0, sizeof(*x));
}

const char *lil__ir_grounding_name(enum lil_ir_grounding g)
{
    switch (g) {
    case LIL_GROUND_NONE:
        return "none";
    case LIL_GROUND_AGENT:
        return "agent";
    case LIL_GROUND_EXTERNAL:
        return "external";
    case LIL_GROUND_MIXED:
        return "mixed";
    case LIL_GROUND_STRUCTURAL:
        return "structural";
    }
    return "?";
}
