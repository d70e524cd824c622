/*
 * ir_top.c -- the top-level sections of a loop spec to IR: meta,
 * provenance, target, inputs, state, body (steps: ir_steps.c), terminate
 * with its on_exit action, caps, schedule, artifacts, notify, retry, gates
 * and observe with its completed hook; and the root mapping that holds them.
 */
#include <stdio.h>
#include <string.h>

#include "base/alloc.h"
#include "loopspec/ir/ir_build.h"

/* ------------------------------------------------------------------------ */
/* Allowed keys                                                             */
/* Where the reference is strict (the top level, artifacts, notify,
 * observe.hooks and the hook action) an unknown key is an error; elsewhere
 * only a near miss is (ir_build.c). */

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
static const char *const SCHED_KEYS[] = {"mode", "cron", "catch_up"};
static const char *const ART_KEYS[] = {"include", "exclude", "max_files", "max_bytes"};
static const char *const NOTIFY_KEYS[] = {"policy", "channels"};
static const char *const RETRY_KEYS[] = {"max", "backoff_ms"};
static const char *const GATE_KEYS[] = {"after", "when", "ask", "strategy",
                                        "auto_approve_in"};
static const char *const OBSERVE_KEYS[] = {"trace", "hooks", "notify"};
static const char *const HOOKS_KEYS[] = {"completed"};
static const char *const HOOK_SHELL_KEYS[] = {"kind", "cmd"};
static const char *const HOOK_HTTP_KEYS[] = {"kind", "request"};

#define INT_BIG 9007199254740991LL /* 2^53 - 1: what a JS number holds exactly */

/* ------------------------------------------------------------------------ */
/* Actions: terminate.on_exit, observe.hooks.completed                      */

/* terminate.on_exit: ExitAction (not strict about fields per kind). */
static void build_exit_action(struct build *b, const struct obj *parent,
                              struct lil_ir_action *a)
{
    char path[PATH_MAX_LEN];
    struct obj o;
    int k;

    if (!lil__irb_sub_obj(b, parent, "on_exit", false, path, &o))
        return;
    a->present = true;
    a->pos = o.map->pos;
    lil__irb_check_keys(b, &o, EXIT_KEYS, NELEM(EXIT_KEYS), NULL);
    if (lil__irb_get_enum(b, &o, "kind", true, LIL_ENUM_ACTION_KIND, &k, &a->kind_pos))
        a->kind = (enum lil_ir_action_kind)k;
    lil__irb_get_tmpl(b, &o, "cmd", false, 0, &a->cmd);
    lil__irb_request(b, &o, false, &a->request);
    a->has_envelope = lil__irb_get_bool(b, &o, "envelope", &a->envelope);
    a->harness_given = lil__irb_get_str(b, &o, "harness", false, 1, &a->harness);
    lil__irb_get_tmpl(b, &o, "prompt", false, 0, &a->prompt);
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

    if (!lil__irb_sub_obj(b, parent, "completed", false, path, &o))
        return;
    a->pos = o.map->pos;
    kind = lil__irb_field(b, &o, "kind", true);
    if (kind) {
        char kpath[PATH_MAX_LEN];
        static const char *const HOOK_KINDS[] = {"shell", "http"};
        char gbuf[128];

        lil__irb_child_path(kpath, sizeof(kpath), path, "kind");
        a->kind_pos = kind->pos;
        if (lil__irb_is_string(kind) && strcmp(kind->str, "shell") == 0)
            k = LIL_ACT_SHELL;
        else if (lil__irb_is_string(kind) && strcmp(kind->str, "http") == 0)
            k = LIL_ACT_HTTP;
        else
            lil__diag(b->d, LIL_SEV_ERROR, "schema", kind->pos, kpath,
                      "%s: expected one of %s, %s, got %s", kpath, HOOK_KINDS[0],
                      HOOK_KINDS[1], lil__irb_got(kind, gbuf, sizeof(gbuf)));
    }
    if (k == LIL_ACT_SHELL) {
        lil__irb_check_keys_strict(b, &o, HOOK_SHELL_KEYS, NELEM(HOOK_SHELL_KEYS));
        lil__irb_get_tmpl(b, &o, "cmd", true, 1, &a->cmd);
    } else if (k == LIL_ACT_HTTP) {
        lil__irb_check_keys_strict(b, &o, HOOK_HTTP_KEYS, NELEM(HOOK_HTTP_KEYS));
        lil__irb_request(b, &o, true, &a->request);
    }
    if (k >= 0) {
        a->present = true;
        a->kind = (enum lil_ir_action_kind)k;
    }
}

/* ------------------------------------------------------------------------ */
/* Top-level sections                                                       */

static void build_meta(struct build *b, const struct obj *root)
{
    char path[PATH_MAX_LEN];
    struct obj o;
    struct lil_ir_spec *ir = b->ir;

    if (!lil__irb_sub_obj(b, root, "meta", false, path, &o))
        return;
    ir->meta.given = true;
    ir->meta.pos = o.map->pos;
    lil__irb_check_keys(b, &o, META_KEYS, NELEM(META_KEYS), NULL);
    lil__irb_get_str(b, &o, "name", false, 0, &ir->meta.name);
    lil__irb_get_str(b, &o, "version", false, 0, &ir->meta.version);
    lil__irb_get_str(b, &o, "description", false, 0, &ir->meta.description);
}

static void build_provenance(struct build *b, const struct obj *root)
{
    char path[PATH_MAX_LEN], rpath[PATH_MAX_LEN];
    struct obj o, r;
    struct lil_ir_str tmp[5];

    if (!lil__irb_sub_obj(b, root, "provenance", false, path, &o))
        return;
    memset(tmp, 0, sizeof(tmp));
    lil__irb_check_keys(b, &o, PROV_KEYS, NELEM(PROV_KEYS), NULL);
    lil__irb_get_str(b, &o, "factory_version", false, 0, &tmp[0]);
    lil__irb_get_str(b, &o, "source", false, 0, &tmp[1]);
    lil__irb_get_str(b, &o, "run_id", false, 0, &tmp[2]);
    if (lil__irb_sub_obj(b, &o, "recipe", false, rpath, &r)) {
        lil__irb_check_keys(b, &r, RECIPE_KEYS, NELEM(RECIPE_KEYS), NULL);
        lil__irb_get_str(b, &r, "name", true, 1, &tmp[3]);
        lil__irb_get_str(b, &r, "version", true, 1, &tmp[4]);
    }
    for (size_t i = 0; i < NELEM(tmp); i++)
        lil__free(b->env, tmp[i].s);
    b->ir->provenance = lil__irb_node_json(b, o.map);
}

static void build_target(struct build *b, const struct obj *root)
{
    char path[PATH_MAX_LEN], epath[PATH_MAX_LEN], ipath[PATH_MAX_LEN + 24];
    struct obj o;
    const struct lil_node *v;
    int k;

    if (!lil__irb_sub_obj(b, root, "target", false, path, &o))
        return;
    b->ir->target.given = true;
    lil__irb_check_keys(b, &o, TARGET_KEYS, NELEM(TARGET_KEYS), NULL);
    if (lil__irb_get_enum(b, &o, "runtime", false, LIL_ENUM_RUNTIME, &k, NULL))
        b->ir->target.runtime = (enum lil_ir_runtime)k;
    v = lil__irb_field(b, &o, "emit", false);
    if (!v)
        return;
    lil__irb_child_path(epath, sizeof(epath), path, "emit");
    if (v->kind != LIL_NODE_SEQ) {
        lil__irb_type_error(b, v, epath, "a list of cli, skill, doctor");
        return;
    }
    b->ir->target.emit_given = true;
    for (size_t i = 0; i < v->n; i++) {
        bool seen = false;

        snprintf(ipath, sizeof(ipath), "%s[%zu]", epath, i);
        if (!lil__irb_enum_value(b, v->items[i], ipath, LIL_ENUM_EMIT, &k))
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
        return lil__irb_oom(b);
    return true;
}

static void build_input(struct build *b, const struct lil_node_pair *p,
                        const char *base, struct lil_ir_input *in)
{
    char path[PATH_MAX_LEN];
    struct obj o = {p->value, path, path};
    const struct lil_node *v;

    lil__irb_child_path(path, sizeof(path), base, p->key->str);
    in->name = lil__irb_dup_node_str(b, p->key);
    in->pos = p->key->pos;
    if (p->value->kind != LIL_NODE_MAP) {
        lil__irb_type_error(b, p->value, path,
                            "an input declaration (a mapping with 'type')");
        return;
    }
    lil__irb_check_keys(b, &o, INPUT_KEYS, NELEM(INPUT_KEYS), NULL);
    if (lil__irb_get_str(b, &o, "type", true, 1, &in->type_text))
        parse_type(&in->type_text, &in->type_ok, &in->type);
    in->has_required = lil__irb_get_bool(b, &o, "required", &in->required);
    v = lil__irb_field(b, &o, "default", false);
    if (v) {
        in->def = lil__irb_node_json(b, v);
        in->def_pos = v->pos;
    }
    lil__irb_get_str(b, &o, "description", false, 0, &in->description);
}

static void build_inputs(struct build *b, const struct obj *root)
{
    struct lil_ir_spec *ir = b->ir;
    const struct lil_node *v = lil__irb_field(b, root, "inputs", false);

    if (!v)
        return;
    if (v->kind != LIL_NODE_MAP) {
        lil__irb_type_error(b, v, "inputs", "a mapping of input names to declarations");
        return;
    }
    ir->has_inputs = true;
    ir->inputs = lil__calloc(b->env, v->n ? v->n : 1, sizeof(*ir->inputs));
    if (!ir->inputs) {
        lil__irb_oom(b);
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

    lil__irb_child_path(path, sizeof(path), base, p->key->str);
    var->name = lil__irb_dup_node_str(b, p->key);
    var->pos = p->key->pos;
    if (p->value->kind != LIL_NODE_MAP) {
        lil__irb_type_error(b, p->value, path,
                            "a state var declaration (a mapping with 'type')");
        return;
    }
    lil__irb_check_keys(b, &o, VAR_KEYS, NELEM(VAR_KEYS), NULL);
    if (lil__irb_get_str(b, &o, "type", true, 1, &var->type_text))
        parse_type(&var->type_text, &var->type_ok, &var->type);
    v = lil__irb_field(b, &o, "init", false);
    if (v) {
        var->init = lil__irb_node_json(b, v);
        var->init_pos = v->pos;
    }
    lil__irb_get_str(b, &o, "description", false, 0, &var->description);
}

static void build_state(struct build *b, const struct obj *root)
{
    char path[PATH_MAX_LEN], vpath[PATH_MAX_LEN];
    struct obj o;
    struct lil_ir_spec *ir = b->ir;
    const struct lil_node *v;
    int k;

    if (!lil__irb_sub_obj(b, root, "state", false, path, &o))
        return;
    ir->state.present = true;
    ir->state.pos = o.map->pos;
    lil__irb_check_keys(b, &o, STATE_KEYS, NELEM(STATE_KEYS), NULL);
    if (lil__irb_get_enum(b, &o, "store", false, LIL_ENUM_STORE, &k, NULL))
        ir->state.store = (enum lil_ir_store)k;
    v = lil__irb_field(b, &o, "vars", true);
    if (!v)
        return;
    lil__irb_child_path(vpath, sizeof(vpath), path, "vars");
    if (v->kind != LIL_NODE_MAP) {
        lil__irb_type_error(b, v, vpath,
                            "a mapping of state var names to declarations");
        return;
    }
    ir->state.vars = lil__calloc(b->env, v->n ? v->n : 1, sizeof(*ir->state.vars));
    if (!ir->state.vars) {
        lil__irb_oom(b);
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
    const struct lil_node *v = lil__irb_field(b, root, "body", true);

    if (!v)
        return;
    if (v->kind != LIL_NODE_SEQ) {
        lil__irb_type_error(b, v, "body", "a list of steps");
        return;
    }
    if (v->n == 0) {
        lil__diag(b->d, LIL_SEV_ERROR, "schema", v->pos, "body",
                  "body: expected at least 1 step, got an empty list");
        return;
    }
    lil__irb_steps(b, v, "", NULL, &b->ir->body, &b->ir->nbody);
}

static void build_terminate(struct build *b, const struct obj *root)
{
    char path[PATH_MAX_LEN];
    struct obj o;
    struct lil_ir_spec *ir = b->ir;
    int k;

    if (!lil__irb_sub_obj(b, root, "terminate", false, path, &o))
        return;
    ir->terminate.present = true;
    ir->terminate.pos = o.map->pos;
    lil__irb_check_keys(b, &o, TERM_KEYS, NELEM(TERM_KEYS), NULL);
    if (lil__irb_get_enum(b, &o, "signal", true, LIL_ENUM_SIGNAL, &k,
                          &ir->terminate.signal_pos))
        ir->terminate.signal = (enum lil_ir_signal)k;
    lil__irb_get_guard(b, &o, "until", true, 1, &ir->terminate.until);
    build_exit_action(b, &o, &ir->terminate.on_exit);
}

static void build_caps(struct build *b, const struct obj *root)
{
    char path[PATH_MAX_LEN], npath[PATH_MAX_LEN], bpath[PATH_MAX_LEN];
    struct obj o, np, bu;
    struct lil_ir_spec *ir = b->ir;
    int k;

    if (!lil__irb_sub_obj(b, root, "caps", false, path, &o)) {
        ir->caps.injected = lil__node_get(root->map, "caps") == NULL;
        return;
    }
    ir->caps.pos = o.map->pos;
    lil__irb_check_keys_strict(b, &o, CAPS_KEYS, NELEM(CAPS_KEYS));
    lil__irb_get_int(b, &o, "max_iterations", true, 1, INT_BIG, "a positive integer",
                     &ir->caps.max_iterations, &ir->caps.max_iterations_pos);
    if (lil__irb_sub_obj(b, &o, "no_progress", false, npath, &np)) {
        ir->caps.no_progress.present = true;
        ir->caps.no_progress.pos = np.map->pos;
        lil__irb_check_keys_strict(b, &np, NOPROG_KEYS, NELEM(NOPROG_KEYS));
        lil__irb_get_guard(b, &np, "fingerprint", true, 1,
                           &ir->caps.no_progress.fingerprint);
        lil__irb_get_int(b, &np, "max_repeats", true, 1, INT_BIG, "a positive integer",
                         &ir->caps.no_progress.max_repeats, NULL);
    }
    if (lil__irb_sub_obj(b, &o, "budget", false, bpath, &bu)) {
        ir->caps.budget.present = true;
        ir->caps.budget.pos = bu.map->pos;
        lil__irb_check_keys_strict(b, &bu, BUDGET_KEYS, NELEM(BUDGET_KEYS));
        ir->caps.budget.has_tokens =
            lil__irb_get_int(b, &bu, "tokens", false, 1, INT_BIG, "a positive integer",
                             &ir->caps.budget.tokens, NULL);
        ir->caps.budget.has_usd =
            lil__irb_get_posnum(b, &bu, "usd", &ir->caps.budget.usd);
        lil__irb_get_duration(b, &bu, "wallclock", &ir->caps.budget.wallclock);
    }
    ir->caps.on_cap_exceeded = LIL_CAPACT_BREAKPOINT;
    if (lil__irb_get_enum(b, &o, "on_cap_exceeded", false, LIL_ENUM_CAP_ACTION, &k,
                          NULL))
        ir->caps.on_cap_exceeded = (enum lil_ir_cap_action)k;
}

static void build_schedule(struct build *b, const struct obj *root)
{
    char path[PATH_MAX_LEN];
    struct obj o;
    struct lil_ir_spec *ir = b->ir;
    int k;

    if (!lil__irb_sub_obj(b, root, "schedule", false, path, &o))
        return;
    ir->schedule.given = true;
    ir->schedule.pos = o.map->pos;
    lil__irb_check_keys(b, &o, SCHED_KEYS, NELEM(SCHED_KEYS), NULL);
    if (lil__irb_get_enum(b, &o, "mode", true, LIL_ENUM_SCHED_MODE, &k, NULL))
        ir->schedule.mode = (enum lil_ir_sched_mode)k;
    if (lil__irb_get_str(b, &o, "cron", false, 0, &ir->schedule.cron))
        ir->schedule.cron_ok =
            lil__cron_parse(ir->schedule.cron.s, &ir->schedule.cron_parsed,
                            ir->schedule.cron_why, sizeof(ir->schedule.cron_why));
    (void)lil__irb_get_str(b, &o, "catch_up", false, 0, &ir->schedule.catch_up);
}

static void build_artifacts(struct build *b, const struct obj *root)
{
    char path[PATH_MAX_LEN];
    struct obj o;
    struct lil_ir_spec *ir = b->ir;

    if (!lil__irb_sub_obj(b, root, "artifacts", false, path, &o))
        return;
    ir->artifacts.present = true;
    ir->artifacts.pos = o.map->pos;
    lil__irb_check_keys_strict(b, &o, ART_KEYS, NELEM(ART_KEYS));
    lil__irb_get_strlist(b, &o, "include", true, 1, SIZE_MAX, 1,
                         &ir->artifacts.include);
    lil__irb_get_strlist(b, &o, "exclude", false, 0, SIZE_MAX, 1,
                         &ir->artifacts.exclude);
    lil__irb_get_int(b, &o, "max_files", false, 1, 10000, "an integer from 1 to 10000",
                     &ir->artifacts.max_files, NULL);
    lil__irb_get_int(b, &o, "max_bytes", false, 1, 1000000000,
                     "an integer from 1 to 1000000000", &ir->artifacts.max_bytes, NULL);
}

static void build_notify(struct build *b, const struct obj *root)
{
    char path[PATH_MAX_LEN];
    struct obj o;
    struct lil_ir_spec *ir = b->ir;
    int k;

    if (!lil__irb_sub_obj(b, root, "notify", false, path, &o))
        return;
    ir->notify.present = true;
    ir->notify.pos = o.map->pos;
    lil__irb_check_keys_strict(b, &o, NOTIFY_KEYS, NELEM(NOTIFY_KEYS));
    if (lil__irb_get_enum(b, &o, "policy", true, LIL_ENUM_POLICY, &k, NULL))
        ir->notify.policy = (enum lil_ir_policy)k;
    lil__irb_get_strlist(b, &o, "channels", true, 0, 32, 1, &ir->notify.channels);
}

static void build_retry(struct build *b, const struct obj *root)
{
    char path[PATH_MAX_LEN];
    struct obj o;
    struct lil_ir_spec *ir = b->ir;

    if (!lil__irb_sub_obj(b, root, "retry", false, path, &o))
        return;
    ir->retry.present = true;
    lil__irb_check_keys(b, &o, RETRY_KEYS, NELEM(RETRY_KEYS), NULL);
    ir->retry.has_max = lil__irb_get_int(b, &o, "max", false, 0, INT_BIG,
                                         "an integer >= 0", &ir->retry.max, NULL);
    ir->retry.has_backoff_ms =
        lil__irb_get_int(b, &o, "backoff_ms", false, 1, INT_BIG, "a positive integer",
                         &ir->retry.backoff_ms, NULL);
}

static void build_gate(struct build *b, const struct lil_node *n, const char *path,
                       struct lil_ir_gate *g)
{
    struct obj o = {n, path, path};
    int k;

    g->pos = n->pos;
    if (n->kind != LIL_NODE_MAP) {
        lil__irb_type_error(b, n, path, "a gate (a mapping)");
        return;
    }
    lil__irb_check_keys(b, &o, GATE_KEYS, NELEM(GATE_KEYS), NULL);
    lil__irb_get_str(b, &o, "after", false, 0, &g->after);
    lil__irb_get_guard(b, &o, "when", false, 0, &g->when);
    lil__irb_get_tmpl(b, &o, "ask", true, 1, &g->ask);
    g->has_strategy =
        lil__irb_get_enum(b, &o, "strategy", false, LIL_ENUM_STRATEGY, &k, NULL);
    if (g->has_strategy)
        g->strategy = (enum lil_ir_strategy)k;
    lil__irb_get_strlist(b, &o, "auto_approve_in", false, 0, SIZE_MAX, 0,
                         &g->auto_approve_in);
}

static void build_gates(struct build *b, const struct obj *root)
{
    char path[PATH_MAX_LEN];
    struct lil_ir_spec *ir = b->ir;
    const struct lil_node *v = lil__irb_field(b, root, "gates", false);

    if (!v)
        return;
    if (v->kind != LIL_NODE_SEQ) {
        lil__irb_type_error(b, v, "gates", "a list of gates");
        return;
    }
    ir->has_gates = true;
    ir->gates = lil__calloc(b->env, v->n ? v->n : 1, sizeof(*ir->gates));
    if (!ir->gates) {
        lil__irb_oom(b);
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

    if (!lil__irb_sub_obj(b, root, "observe", false, path, &o))
        return;
    ir->observe.given = true;
    lil__irb_check_keys(b, &o, OBSERVE_KEYS, NELEM(OBSERVE_KEYS), NULL);
    if (lil__irb_get_enum(b, &o, "trace", false, LIL_ENUM_TRACE, &k,
                          &ir->observe.trace_pos))
        ir->observe.trace = (enum lil_ir_trace)k;
    if (lil__irb_sub_obj(b, &o, "hooks", false, hpath, &h)) {
        ir->observe.has_hooks = true;
        lil__irb_check_keys_strict(b, &h, HOOKS_KEYS, NELEM(HOOKS_KEYS));
        build_hook(b, &h, &ir->observe.completed);
    }
    v = lil__irb_field(b, &o, "notify", false);
    if (!v)
        return;
    lil__irb_child_path(npath, sizeof(npath), path, "notify");
    if (v->kind != LIL_NODE_MAP) {
        lil__irb_type_error(b, v, npath, "a mapping");
        return;
    }
    ir->observe.notify = lil__irb_node_json(b, v);
}

void lil__irb_root(struct build *b, const struct lil_node *root)
{
    struct obj o = {root, "", NULL};
    struct lil_ir_spec *ir = b->ir;
    int k;

    lil__irb_check_keys_strict(b, &o, TOP_KEYS, NELEM(TOP_KEYS));
    lil__irb_get_str(b, &o, "loopspec", true, 0, &ir->loopspec);
    lil__irb_get_str(b, &o, "id", true, 1, &ir->id);
    build_meta(b, &o);
    if (lil__irb_get_enum(b, &o, "pattern", true, LIL_ENUM_PATTERN, &k,
                          &ir->pattern_pos))
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
