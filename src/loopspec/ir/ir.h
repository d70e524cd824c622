/*
 * ir.h -- the loop spec as the runner sees it: every field of LoopSpec
 * v0.1 (docs/loopspec.md), normalized, with source positions, and
 * every guard and template parsed.
 *
 * ir_build.c builds it from the document tree (structural checks: required
 * keys, types of values, enum values, unknown keys with "did you mean"),
 * normalize.c fills defaults and injects caps, validate*.c and grounding.c
 * check it (docs/loopspec.md, "Validation"), explain.c describes it.
 *
 * Ownership: the IR owns every string, parsed expression and JSON value in
 * it (copies of the document tree, which may be freed once lil__ir_build
 * returns).  Strings are NUL-terminated UTF-8 (the loader refuses NUL bytes
 * and invalid UTF-8).  An absent optional string is NULL.  An IR is
 * immutable after lil__ir_build and may be read by many threads.
 *
 * Positions: every field keeps the position of its value node (`pos`);
 * keys of free-form maps (state vars, inputs, save, set, ...) keep the
 * position of the key.  Guards and templates also keep the scalar's
 * offset map (srcmap.h), so lil__ir_src_pos maps a byte offset of their
 * text to the exact line, column and offset in the file, through YAML's
 * folding, chomping and escapes.
 *
 * Parse failures of guards and templates are not structural errors: the
 * IR keeps the message and offset, and lil__ir_validate reports them as
 * `bad-expr`, in the reference's order.
 */
#ifndef LIL_SPEC_IR_H
#define LIL_SPEC_IR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "json/json.h"
#include "lang/expr.h"
#include "loopspec/diag.h"
#include "loopspec/node.h"
#include "loopspec/values/cron.h"
#include "loopspec/values/ident.h"

struct lil_env;

/* ------------------------------------------------------------------------ */
/* Enumerations (the order of each enum is the order of the reference's     */
/* tables; lil__ir_enum_name gives the spelling).                           */

enum lil_ir_pattern {
    LIL_PAT_REACT,
    LIL_PAT_PLAN_EXECUTE_REFLECT,
    LIL_PAT_EVALUATOR_OPTIMIZER,
    LIL_PAT_LOOP_UNTIL_DRY,
    LIL_PAT_MAP_REDUCE,
    LIL_PAT_POLL_UNTIL,
    LIL_PAT_CRON
};

enum lil_ir_step_kind {
    LIL_STEP_AGENT,
    LIL_STEP_SHELL,
    LIL_STEP_HTTP,
    LIL_STEP_BREAKPOINT,
    LIL_STEP_SLEEP,
    LIL_STEP_REDUCE
};

enum lil_ir_signal {
    LIL_SIG_ORACLE,
    LIL_SIG_STATE_PREDICATE,
    LIL_SIG_LLM_JUDGE,
    LIL_SIG_SELF_ASSESS
};

enum lil_ir_cap_action {
    LIL_CAPACT_FAIL,
    LIL_CAPACT_BREAKPOINT,
    LIL_CAPACT_EXIT_CLEAN
};

enum lil_ir_sched_mode {
    LIL_SCHED_MANUAL,
    LIL_SCHED_CRON,
    LIL_SCHED_WATCH,
    LIL_SCHED_FOREVER
};

enum lil_ir_method {
    LIL_HTTP_GET,
    LIL_HTTP_POST,
    LIL_HTTP_PUT,
    LIL_HTTP_PATCH,
    LIL_HTTP_DELETE
};

enum lil_ir_strategy { LIL_STRAT_SINGLE, LIL_STRAT_FIRST_WINS, LIL_STRAT_QUORUM };

enum lil_ir_trace { LIL_TRACE_JOURNAL, LIL_TRACE_NONE };

enum lil_ir_policy {
    LIL_NOTIFY_NEVER,
    LIL_NOTIFY_ON_CHANGE,
    LIL_NOTIFY_ON_FAILURE,
    LIL_NOTIFY_ALWAYS
};

enum lil_ir_store { LIL_STORE_JOURNAL, LIL_STORE_MEMORY };

enum lil_ir_runtime {
    LIL_RT_STANDALONE,
    LIL_RT_BABYSITTER,
    LIL_RT_CLAUDE_CODE,
    LIL_RT_CLAUDE_NATIVE,
    LIL_RT_N8N
};

enum lil_ir_emit { LIL_EMIT_CLI, LIL_EMIT_SKILL, LIL_EMIT_DOCTOR };

/* The kind of an exit action or completion hook (hooks: shell, http). */
enum lil_ir_action_kind { LIL_ACT_SHELL, LIL_ACT_HTTP, LIL_ACT_AGENT };

/* Which enumeration lil__ir_enum_name / lil__ir_enum_values speak of. */
enum lil_ir_enum {
    LIL_ENUM_PATTERN,
    LIL_ENUM_STEP_KIND,
    LIL_ENUM_SIGNAL,
    LIL_ENUM_CAP_ACTION,
    LIL_ENUM_SCHED_MODE,
    LIL_ENUM_METHOD,
    LIL_ENUM_STRATEGY,
    LIL_ENUM_TRACE,
    LIL_ENUM_POLICY,
    LIL_ENUM_STORE,
    LIL_ENUM_RUNTIME,
    LIL_ENUM_EMIT,
    LIL_ENUM_ACTION_KIND,
    LIL_ENUM_COUNT
};

/* The spelling of value v of enumeration e ("plan-execute-reflect"), or
 * "?" when out of range. */
const char *lil__ir_enum_name(enum lil_ir_enum e, int v);

/* All spellings of e, in order; *n is set to their number. */
const char *const *lil__ir_enum_values(enum lil_ir_enum e, size_t *n);

/* ------------------------------------------------------------------------ */
/* Leaves                                                                   */

/* A plain string value (NULL s: absent). */
struct lil_ir_str {
    char *s;
    struct lil_pos pos;
};

/* The text of a guard or template and where it lies in the file. */
struct lil_ir_src {
    char *s; /* NULL: absent */
    size_t len;
    struct lil_pos pos;      /* the scalar node (for a quoted scalar: its quote) */
    struct lil_srcspan *map; /* owned copy of the node's offset map, or NULL */
    size_t nmap;
};

/* Where byte `offset` (0..len) of src's text is in the file: through the
 * offset map, else (no map) the scalar's start. */
struct lil_pos lil__ir_src_pos(const struct lil_ir_src *src, size_t offset);

/* A guard: one expression with a typed result (when, until, over,
 * fingerprint, gates[].when, sleep until). */
struct lil_ir_guard {
    struct lil_ir_src src;
    struct lil_expr *expr; /* NULL when absent or when parsing failed */
    char *err;             /* parser message when parsing failed, else NULL */
    size_t err_offset;     /* byte offset of the error in src.s */
};

/* A template: text with ${expr} segments, renders to a string (or, for
 * on_done.set / append, to a typed value when it is one ${expr}). */
struct lil_ir_tmpl {
    struct lil_ir_src src;
    struct lil_tmpl *tmpl; /* NULL when absent or when parsing failed */
    char *err;
    size_t err_offset;
};

/* A duration as written plus its value. */
struct lil_ir_duration {
    struct lil_ir_str text; /* NULL s: absent */
    double ms;              /* valid only when ok */
    bool ok;                /* parsed and in range (else `bad-duration`) */
};

/* A list of plain strings (allowed-tools, auto_approve_in, include, ...). */
struct lil_ir_strlist {
    bool present;
    struct lil_pos pos; /* the sequence node */
    struct lil_ir_str *v;
    size_t n;
};

/* ------------------------------------------------------------------------ */
/* HTTP requests (steps, on_exit, completion hook)                          */

struct lil_ir_header {
    char *name;
    struct lil_pos pos; /* of the key */
    struct lil_ir_tmpl value;
};

struct lil_ir_http {
    bool present;
    struct lil_pos pos; /* the request mapping */
    enum lil_ir_method method;
    struct lil_pos method_pos;
    struct lil_ir_tmpl url;
    struct lil_ir_header *headers;
    size_t nheaders;
    bool has_headers;
    json_t *body;                 /* NULL: no body.  A string body is also in body_tmpl;
                                     anything else is sent verbatim as JSON */
    struct lil_ir_tmpl body_tmpl; /* set only for a string body */
    struct lil_pos body_pos;
};

/* ------------------------------------------------------------------------ */
/* Steps                                                                    */

/* One `save` entry: state var <- JSONPath of the result. */
struct lil_ir_save {
    char *var;
    struct lil_pos pos; /* the key */
    struct lil_ir_str path;
};

/* One on_done.set / append entry. */
struct lil_ir_assign {
    char *var;
    struct lil_pos pos; /* the key */
    json_t *value;      /* the value as written (a string too) */
    bool is_tmpl;       /* string value: rendered through tmpl */
    struct lil_ir_tmpl tmpl;
    struct lil_pos value_pos;
};

struct lil_ir_on_done {
    bool present;
    struct lil_pos pos;
    struct lil_ir_str incr; /* NULL s: none */
    struct lil_ir_assign *set;
    size_t nset;
    bool has_set;
    struct lil_ir_assign *append;
    size_t nappend;
    bool has_append;
};

struct lil_ir_agent {
    struct lil_ir_str harness;
    struct lil_ir_tmpl prompt;
    struct lil_ir_strlist allowed_tools;
};

struct lil_ir_shell {
    struct lil_ir_tmpl cmd;
    bool has_args;
    struct lil_ir_tmpl *args;
    size_t nargs;
    struct lil_pos args_pos;
};

struct lil_ir_breakpoint {
    struct lil_ir_tmpl ask;
    bool has_strategy;
    enum lil_ir_strategy strategy;
    struct lil_pos strategy_pos;
    struct lil_ir_strlist auto_approve_in;
};

struct lil_ir_sleep {
    struct lil_ir_duration for_; /* text.s NULL: absent */
    struct lil_ir_guard until;   /* src.s NULL: absent */
};

struct lil_ir_step;

struct lil_ir_reduce {
    struct lil_ir_guard over;
    struct lil_ir_str as; /* normalized: "item" when not given (pos 0:0) */
    bool as_given;
    struct lil_ir_step *body; /* may be empty */
    size_t nbody;
};

struct lil_ir_step {
    char *id;
    struct lil_pos pos;    /* the step mapping */
    struct lil_pos id_pos; /* the id value */
    char *path;            /* "body[0]:build", "body[2]:each.body[0]:one" */
    enum lil_ir_step_kind kind;
    struct lil_pos kind_pos;
    size_t index;                     /* in the enclosing body */
    const struct lil_ir_step *parent; /* enclosing reduce, or NULL */
    struct lil_ir_guard when;         /* src.s NULL: no guard */
    /* Per kind; only the one of `kind` is filled. */
    struct lil_ir_agent agent;
    struct lil_ir_shell shell;
    struct lil_ir_http http;
    bool envelope; /* http */
    struct lil_ir_breakpoint breakpoint;
    struct lil_ir_sleep sleep;
    struct lil_ir_reduce reduce;
    /* agent, shell, http */
    struct lil_ir_save *save;
    size_t nsave;
    bool has_save;
    struct lil_pos save_pos;
    struct lil_ir_on_done on_done;
};

/* ------------------------------------------------------------------------ */
/* Declarations                                                             */

struct lil_ir_input {
    char *name;
    struct lil_pos pos; /* the key */
    struct lil_ir_str type_text;
    bool type_ok; /* type_text parsed into type (else `bad-type`) */
    struct lil_type type;
    bool has_required;
    bool required;
    json_t *def; /* NULL: no default key (a YAML null is json null) */
    struct lil_pos def_pos;
    struct lil_ir_str description;
};

struct lil_ir_var {
    char *name;
    struct lil_pos pos; /* the key */
    struct lil_ir_str type_text;
    bool type_ok;
    struct lil_type type;
    json_t *init; /* NULL: no init key (undefined) */
    struct lil_pos init_pos;
    struct lil_ir_str description;
};

/* terminate.on_exit (ExitAction) or observe.hooks.completed (HookAction:
 * kind shell or http only). */
struct lil_ir_action {
    bool present;
    struct lil_pos pos;
    enum lil_ir_action_kind kind;
    struct lil_pos kind_pos;
    struct lil_ir_tmpl cmd;     /* shell */
    struct lil_ir_http request; /* http */
    bool has_envelope;
    bool envelope;
    struct lil_ir_str harness; /* agent; normalized to "llm" (pos 0:0) */
    bool harness_given;
    struct lil_ir_tmpl prompt; /* agent */
};

struct lil_ir_gate {
    struct lil_pos pos;
    struct lil_ir_str after;  /* NULL s: none */
    struct lil_ir_guard when; /* src.s NULL: none */
    struct lil_ir_tmpl ask;
    bool has_strategy;
    enum lil_ir_strategy strategy;
    struct lil_ir_strlist auto_approve_in;
};

/* ------------------------------------------------------------------------ */
/* The spec                                                                 */

struct lil_ir_spec {
    const struct lil_env *env;
    struct lil_pos pos;  /* the root mapping */
    json_t *var_index;   /* state var name -> index (a hash set) */
    json_t *input_index; /* input name -> index */

    struct lil_ir_str loopspec; /* normalized: "" -> "0.1" */
    struct lil_ir_str id;

    struct {
        bool given; /* the spec had a meta block */
        struct lil_pos pos;
        struct lil_ir_str name;        /* normalized: id when absent */
        struct lil_ir_str version;     /* normalized: "0.1.0" when absent */
        struct lil_ir_str description; /* NULL s: absent */
    } meta;

    enum lil_ir_pattern pattern;
    struct lil_pos pattern_pos;

    json_t *provenance; /* untouched (NULL: absent) */

    struct {
        bool given;
        enum lil_ir_runtime runtime; /* normalized: standalone */
        bool emit_given;
        enum lil_ir_emit
            emit[3]; /* as written, repeats dropped; normalized: all three */
        size_t nemit;
    } target;

    struct lil_ir_input *inputs;
    size_t ninputs;
    bool has_inputs;

    struct {
        bool present;
        struct lil_pos pos;
        enum lil_ir_store store; /* normalized: journal */
        struct lil_ir_var *vars;
        size_t nvars;
    } state;

    struct lil_ir_step *body;
    size_t nbody;
    size_t nsteps; /* all steps, nested included */

    struct {
        bool present; /* absent: `no-terminate` */
        struct lil_pos pos;
        enum lil_ir_signal signal;
        struct lil_pos signal_pos;
        struct lil_ir_guard until;
        struct lil_ir_action on_exit;
    } terminate;

    struct {
        bool injected;   /* the spec had no caps: filled per pattern */
        bool long_lived; /* pattern poll-until or schedule.mode forever/watch */
        struct lil_pos pos;
        long long max_iterations;
        struct lil_pos max_iterations_pos;

        struct {
            bool present;
            struct lil_pos pos;
            struct lil_ir_guard fingerprint;
            long long max_repeats;
        } no_progress;

        struct {
            bool present;
            struct lil_pos pos;
            bool has_tokens;
            long long tokens;
            bool has_usd;
            double usd;
            struct lil_ir_duration wallclock; /* text.s NULL: absent */
        } budget;
        enum lil_ir_cap_action on_cap_exceeded; /* normalized: breakpoint */
    } caps;

    struct {
        bool given;
        struct lil_pos pos;
        enum lil_ir_sched_mode mode; /* normalized: manual */
        struct lil_ir_str cron;      /* NULL s: absent */
        bool cron_ok;
        struct lil_cron cron_parsed;
        char cron_why[128];         /* why cron_ok is false */
        struct lil_ir_str catch_up; /* lil's own key: all | latest | none; NULL s:
                                       absent (lil schedule add: latest) */
    } schedule;

    struct {
        bool present;
        struct lil_pos pos;
        struct lil_ir_strlist include;
        struct lil_ir_strlist exclude; /* normalized: [] */
        long long max_files;           /* normalized: 1000 */
        long long max_bytes;           /* normalized: 50000000 */
    } artifacts;

    struct {
        bool present;
        struct lil_pos pos;
        enum lil_ir_policy policy;
        struct lil_ir_strlist channels;
    } notify;

    struct {
        bool present;
        bool has_max;
        long long max;
        bool has_backoff_ms;
        long long backoff_ms;
    } retry;

    struct lil_ir_gate *gates;
    size_t ngates;
    bool has_gates;

    struct {
        bool given;
        enum lil_ir_trace trace; /* normalized: journal */
        struct lil_pos trace_pos;
        bool has_hooks;
        struct lil_ir_action completed; /* kind shell or http */
        json_t *notify;                 /* inert map (NULL: absent) */
    } observe;
};

/* ------------------------------------------------------------------------ */
/* Functions                                                                */

/* Build the IR from a document root (NULL root: an empty document, which is
 * diagnosed).  Structural problems go to d; *out is set whenever the root
 * is a mapping (parts that failed are left unset), NULL otherwise.
 * LIL_OK or LIL_E_NOMEM.  Normalization happens here too.  Positions inside
 * guards and templates come from the nodes' offset maps. */
lil_status lil__ir_build(const struct lil_env *env, const struct lil_node *root,
                         struct lil_diags *d, struct lil_ir_spec **out);

/* The same (the text the tree was parsed from is no longer needed: the
 * nodes carry their offset maps; text and len are ignored). */
lil_status lil__ir_build_text(const struct lil_env *env, const struct lil_node *root,
                              const char *text, size_t len, struct lil_diags *d,
                              struct lil_ir_spec **out);

/* Section 4: every hard error and soft diagnostic, appended to d.  Call only
 * when lil__ir_build reported no structural error.  LIL_OK or LIL_E_NOMEM. */
lil_status lil__ir_validate(const struct lil_ir_spec *ir, struct lil_diags *d);

/* The normalized spec as JSON (new reference; NULL on allocation failure). */
json_t *lil__ir_to_json(const struct lil_ir_spec *ir);

/* The explain document (new reference; NULL on allocation failure): the
 * warnings and notes of d (NULL: none) and the next fire times of a cron
 * schedule counted from now_ms (ms since the epoch, 0 to LIL_CRON_MAX_MS). */
json_t *lil__ir_explain(const struct lil_ir_spec *ir, const struct lil_diags *d,
                        int64_t now_ms);

void lil__ir_free(const struct lil_env *env, struct lil_ir_spec *ir);

/* ------------------------------------------------------------------------ */
/* Termination analysis (grounding.c; docs/loopspec.md), shared by the      */
/* validator and explain.                                                   */

enum lil_ir_grounding {
    LIL_GROUND_NONE,     /* no exit var is written and no iteration */
    LIL_GROUND_AGENT,    /* written exit vars are fed by agents only */
    LIL_GROUND_EXTERNAL, /* ... by shell/http results only */
    LIL_GROUND_MIXED,    /* both */
    LIL_GROUND_STRUCTURAL
};

const char *lil__ir_grounding_name(enum lil_ir_grounding g);

/* How a step writes a var. */
enum lil_ir_write_how {
    LIL_WRITE_SAVE,
    LIL_WRITE_INCR,
    LIL_WRITE_SET,
    LIL_WRITE_APPEND
};

struct lil_ir_write {
    const struct lil_ir_step *step;
    size_t var; /* index in state.vars */
    enum lil_ir_write_how how;
    bool guarded; /* the step or an enclosing step has a `when` */
};

struct lil_ir_exit {
    bool parsed;         /* terminate.until parsed */
    bool uses_iteration; /* the predicate reads `iteration` */
    size_t *reads; /* declared state vars the predicate reads, in order, no repeats */
    size_t nreads;
    bool reads_state; /* reads any state.<x> (declared or not) */
    bool any_written; /* some exit var is written by some step */
    bool any_live;    /* some written exit var is live */
    enum lil_ir_grounding grounding;
    /* per state var (state.nvars entries) */
    bool *written, *agent, *external, *live;
    /* every write by every step, in walk order */
    struct lil_ir_write *writes;
    size_t nwrites;
};

/* Analyse the exit predicate.  LIL_OK or LIL_E_NOMEM; free with
 * lil__ir_exit_free (also after a failure). */
lil_status lil__ir_exit_analyse(const struct lil_ir_spec *ir, struct lil_ir_exit *out);
void lil__ir_exit_free(const struct lil_env *env, struct lil_ir_exit *x);

/* Index of a declared state var / input, or -1 (hash lookups). */
long lil__ir_var_index(const struct lil_ir_spec *ir, const char *name);
long lil__ir_input_index(const struct lil_ir_spec *ir, const char *name);

/* normalize.c: fill defaults and inject caps (called by lil__ir_build).
 * LIL_OK or LIL_E_NOMEM. */
lil_status lil__ir_normalize(struct lil_ir_spec *ir);

/* s (len bytes) made fit for a message into buf: control characters and
 * bytes that are not UTF-8 escaped (\n, \xNN), cut at a character boundary
 * with "..." when longer than about 60 bytes.  Returns buf. */
const char *lil__ir_show(const char *s, size_t len, char *buf, size_t cap);

/* max_iterations injected for a pattern (long_lived: the 288 override). */
long long lil__ir_injected_max_iterations(enum lil_ir_pattern p, bool long_lived);

#endif
