/*
 * ir_build.h -- shared by the files of the IR build (ir_build.c: entry
 * points, diagnostics, key checks; ir_field.c: typed values; ir_steps.c:
 * steps and HTTP requests; ir_top.c: top-level sections).  Not used
 * outside them.  lil__irb_ is "IR build".
 *
 * A struct build is one build: the IR being filled, the diagnostics and
 * whether an allocation failed (`nomem`: the build then stops and frees the
 * IR).
 */
#ifndef LIL_SPEC_IR_BUILD_H
#define LIL_SPEC_IR_BUILD_H

#include <stdbool.h>
#include <stddef.h>

#include "json/json.h"
#include "loopspec/ir/ir.h"

#define PATH_MAX_LEN 512

#define NELEM(a) (sizeof(a) / sizeof((a)[0]))

/* ------------------------------------------------------------------------ */
/* Build context                                                            */

struct build {
    const struct lil_env *env;
    struct lil_diags *d;
    struct lil_ir_spec *ir;
    bool nomem;
};

/* An object being read: its mapping node, its path ("" for the root) and
 * how messages name it (NULL for the root: "top-level"). */
struct obj {
    const struct lil_node *map;
    const char *path;
    const char *where;
};

/* ------------------------------------------------------------------------ */
/* ir_build.c: diagnostics, paths, keys                                     */

/* Note an allocation failure; returns false. */
bool lil__irb_oom(struct build *b);
char *lil__irb_dup_node_str(struct build *b, const struct lil_node *n);
void lil__irb_child_path(char *out, size_t cap, const char *parent, const char *key);
const char *lil__irb_got(const struct lil_node *n, char *buf, size_t cap);
void lil__irb_type_error(struct build *b, const struct lil_node *n, const char *path,
                         const char *what);
void lil__irb_field_error(struct build *b, const struct lil_node *v,
                          const struct obj *o, const char *key, const char *what);
bool lil__irb_in_list(const char *key, const char *const *v, size_t n);
/* Report the keys of o not in allowed, at a level where the reference
 * drops them: a near miss of an allowed key, or (step_kind: the kind of the
 * step o is, else NULL) a key of another kind of step, is an error; any
 * other is a warning that it is ignored. */
void lil__irb_check_keys(struct build *b, const struct obj *o,
                         const char *const *allowed, size_t n, const char *step_kind);
/* The same where the reference is strict: every unknown key is an error. */
void lil__irb_check_keys_strict(struct build *b, const struct obj *o,
                                const char *const *allowed, size_t n);
const struct lil_node *lil__irb_field(struct build *b, const struct obj *o,
                                      const char *key, bool required);
/* pathbuf: PATH_MAX_LEN bytes, the child's path (out points into it). */
bool lil__irb_sub_obj(struct build *b, const struct obj *o, const char *key,
                      bool required, char *pathbuf, struct obj *out);

/* ------------------------------------------------------------------------ */
/* ir_field.c: typed values                                                 */

bool lil__irb_is_string(const struct lil_node *n);
bool lil__irb_get_str(struct build *b, const struct obj *o, const char *key,
                      bool required, size_t min_len, struct lil_ir_str *out);
bool lil__irb_get_int(struct build *b, const struct obj *o, const char *key,
                      bool required, long long lo, long long hi, const char *what,
                      long long *out, struct lil_pos *pos);
bool lil__irb_get_posnum(struct build *b, const struct obj *o, const char *key,
                         double *out);
bool lil__irb_get_bool(struct build *b, const struct obj *o, const char *key,
                       bool *out);
bool lil__irb_enum_value(struct build *b, const struct lil_node *v, const char *path,
                         enum lil_ir_enum e, int *out);
bool lil__irb_get_enum(struct build *b, const struct obj *o, const char *key,
                       bool required, enum lil_ir_enum e, int *out,
                       struct lil_pos *pos);
bool lil__irb_get_strlist(struct build *b, const struct obj *o, const char *key,
                          bool required, size_t min_items, size_t max_items,
                          size_t min_len, struct lil_ir_strlist *out);
json_t *lil__irb_node_json(struct build *b, const struct lil_node *n);
bool lil__irb_parse_tmpl_node(struct build *b, const struct lil_node *v,
                              struct lil_ir_tmpl *t);
bool lil__irb_get_guard(struct build *b, const struct obj *o, const char *key,
                        bool required, size_t min_len, struct lil_ir_guard *out);
bool lil__irb_get_tmpl(struct build *b, const struct obj *o, const char *key,
                       bool required, size_t min_len, struct lil_ir_tmpl *out);
void lil__irb_get_duration(struct build *b, const struct obj *o, const char *key,
                           struct lil_ir_duration *out);

/* ------------------------------------------------------------------------ */
/* ir_steps.c: steps and HTTP requests                                      */

bool lil__irb_step_kinds_of_key(const char *key, char *out, size_t cap);
/* parent's `request` mapping into h. */
void lil__irb_request(struct build *b, const struct obj *parent, bool required,
                      struct lil_ir_http *h);
/* The steps of seq (a body, or a reduce's body under prefix) into *out. */
void lil__irb_steps(struct build *b, const struct lil_node *seq, const char *prefix,
                    const struct lil_ir_step *parent, struct lil_ir_step **out,
                    size_t *nout);

/* ------------------------------------------------------------------------ */
/* ir_top.c: the top-level sections                                         */

void lil__irb_root(struct build *b, const struct lil_node *root);

#endif
