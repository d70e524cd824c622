/*
 * ir_free.c -- lil__ir_free: every allocation of an IR built by
 * lil__ir_build (strings, parsed guards and templates, JSON values, step
 * arrays with their nested reduce bodies), also of a partly built one.
 */
#include "base/alloc.h"
#include "loopspec/ir/ir.h"

static void free_src(const struct lil_env *env, struct lil_ir_src *s)
{
    lil__free(env, s->s);
    lil__free(env, s->map);
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
    lil__free(env, ir->schedule.catch_up.s);
    free_strlist(env, &ir->artifacts.include);
    free_strlist(env, &ir->artifacts.exclude);
    free_strlist(env, &ir->notify.channels);
    free_gates(env, ir);
    free_action(env, &ir->observe.completed);
    json_decref(ir->observe.notify);
    lil__free(env, ir);
}
