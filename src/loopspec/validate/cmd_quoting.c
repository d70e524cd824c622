/*
 * cmd_quoting.c -- `unquoted-cmd`: a shell command that pastes text from
 * the run into /bin/sh without quotes (docs/loops.md, "Text in shell
 * commands").
 *
 * A `cmd` without `args` runs as `/bin/sh -c CMD`, and its ${...} parts are
 * pasted in as they render, as the reference does: a value holding `;`,
 * a backquote, `$(` or a newline runs as more commands.  The warning names
 * each ${...} part whose value may be a string that the run does not
 * control: a state var or input of type string, json or list, or a reduce
 * alias (an item of a list).  Numbers, booleans and enums cannot carry a
 * command; env.* and meta.* are the operator's; shq(...) quotes its value
 * as one word, and `args:` runs the command without a shell at all.
 */
#include <string.h>

#include "loopspec/validate/validate.h"

struct quoting {
    struct vctx *v;
    const char *path;
    const struct lil_ir_src *src;
};

static bool text_type(const struct lil_type *t, bool ok)
{
    return ok && (t->kind == LIL_TYPE_STRING || t->kind == LIL_TYPE_JSON ||
                  t->kind == LIL_TYPE_LIST);
}

/* May the value of root.member be text an outsider wrote? */
static bool may_carry_text(const struct vctx *v, const struct lil_expr_ref *r)
{
    const struct lil_ir_spec *ir = v->ir;
    long i;

    for (size_t k = 0; k < v->naliases; k++)
        if (strcmp(v->aliases[k], r->root) == 0)
            return true;
    if (!r->member)
        return false;
    if (strcmp(r->root, "state") == 0) {
        i = lil__ir_var_index(ir, r->member);
        return i >= 0 && text_type(&ir->state.vars[i].type, ir->state.vars[i].type_ok);
    }
    if (strcmp(r->root, "inputs") == 0) {
        i = lil__ir_input_index(ir, r->member);
        return i >= 0 && text_type(&ir->inputs[i].type, ir->inputs[i].type_ok);
    }
    return false;
}

static void on_unquoted(void *ud, const struct lil_expr_ref *r)
{
    const struct quoting *q = ud;
    char what[160];

    if (!may_carry_text(q->v, r))
        return;
    snprintf(what, sizeof(what), "%s%s%s", r->root, r->member ? "." : "",
             r->member ? r->member : "");
    lil__diag(
        q->v->d, LIL_SEV_WARNING, "unquoted-cmd", lil__ir_src_pos(q->src, r->offset),
        q->path,
        "%s: ${%s} is pasted into a /bin/sh command unquoted: a ';', '$(', '`' "
        "or newline in it runs as a command; write ${shq(%s)} or pass it in args:",
        q->path, what, what);
}

void lil__validate_cmd_quoting(struct vctx *v, const struct lil_ir_tmpl *t,
                               const char *path)
{
    struct quoting q = {v, path, &t->src};

    if (t->tmpl && !t->err)
        lil__tmpl_unquoted_refs(t->tmpl, on_unquoted, &q);
}
