/*
 * blueprints.c -- the built-in loop specs of `lil new`: one realistic
 * blueprint per LoopSpec pattern, and the poll-until spec of
 * `lil new ID --from-shell CMD --until EXPR`.  Their texts are the files
 * blueprints/<name>.yaml and blueprints/from-shell.yaml, compiled in
 * (cli/CMakeLists.txt); the table below gives each blueprint its name,
 * pattern and summary.
 *
 * Every blueprint validates with no error and no cap-only-termination or
 * ungrounded-exit warning (tests/data/spec/v42-*.yaml; tests/cli/test_cli_spec.c
 * checks it through the binary): each exit is grounded in a shell or http fact or
 * is structural, and has a writer that runs unconditionally.  Caps are
 * explicit, with a budget.  "@ID@" in a text stands for the loop id; the
 * id obeys the loop id rule (^[A-Za-z0-9_.:-]+$) and is written quoted,
 * so that an id such as 123 or 1.5 stays a string.
 *
 * The --from-shell spec declares (and documents in its comments):
 *
 *   state.out    the command's result ($): its stdout parsed as JSON when it
 *                exits 0 and prints JSON, else {stdout, code} (and stderr
 *                when it failed)
 *   state.code   $.code: the exit code (0 for a command that succeeds
 *                without printing JSON, the status of one that fails)
 *   state.polls  how many times the command ran
 *
 * and polls every 30s (a sleep guarded by `not (EXPR)`, so a true EXPR ends
 * the loop without a last wait).  It has no no_progress cap: a poll loop
 * sees the same answer many times while it waits; its bounds are 240 polls
 * and a 2h wallclock, then it fails.  CMD, `not (EXPR)` and EXPR take
 * the places of the slots "@CMD@", "@WHEN@" and "@UNTIL@" of its text, as
 * double-quoted YAML scalars (quote, backslash, control characters and the
 * Unicode line separators escaped; other UTF-8 kept).  CMD is run as
 * given: templates have no escape for a literal "${", so each "${" of CMD
 * is written "${'$'}{", which renders back to "${" for the shell.  EXPR is
 * a guard; an outer "${...}" around it is dropped, as a guard would.
 * cli_from_shell_until_offset maps a position on the generated until line
 * back into EXPR, so that `lil new` reports EXPR's errors in the user's
 * own words (cmd_new.c).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "spec_cli.h"

/* bp_<name>: the bytes of blueprints/<name>.yaml, then a NUL (generated
 * at build time by cmake/Embed.cmake). */
#include "blueprints_yaml.h"

#define TEXT(bp) ((const char *)(bp))

static const struct cli_blueprint blueprints[] = {
    {"fix-tests", "react",
     "a coding agent fixes the code until the test command exits 0",
     TEXT(bp_fix_tests)},
    {"migrate-files", "plan-execute-reflect",
     "migrate off a deprecated API file by file until none remain and it builds",
     TEXT(bp_migrate_files)},
    {"optimize-score", "evaluator-optimizer",
     "refine a prompt until an evaluation script scores it 0.9 or better",
     TEXT(bp_optimize_score)},
    {"sweep-until-dry", "loop-until-dry",
     "clear TODO(cleanup) markers until two scans in a row find none",
     TEXT(bp_sweep_until_dry)},
    {"triage-batch", "map-reduce",
     "label each issue of a batch, then write one triage summary",
     TEXT(bp_triage_batch)},
    {"wait-for-deploy", "poll-until",
     "poll a deploy status URL until it is ready or failed", TEXT(bp_wait_for_deploy)},
    {"nightly-report", "cron",
     "each morning: fetch metrics, summarize, post the digest",
     TEXT(bp_nightly_report)},
};

#define NBLUEPRINTS (sizeof(blueprints) / sizeof(blueprints[0]))

const struct cli_blueprint *cli_blueprints(size_t *n)
{
    *n = NBLUEPRINTS;
    return blueprints;
}

const struct cli_blueprint *cli_blueprint_named(const char *name)
{
    for (size_t i = 0; i < NBLUEPRINTS; i++) {
        if (strcmp(blueprints[i].name, name) == 0)
            return &blueprints[i];
    }
    return NULL;
}

const struct cli_blueprint *cli_blueprint_of_pattern(const char *pattern)
{
    for (size_t i = 0; i < NBLUEPRINTS; i++) {
        if (strcmp(blueprints[i].pattern, pattern) == 0)
            return &blueprints[i];
    }
    return NULL;
}

bool cli_loop_id_ok(const char *id)
{
    if (!*id)
        return false;
    for (const char *p = id; *p; p++) {
        unsigned char c = (unsigned char)*p;
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
              (c >= '0' && c <= '9') || c == '_' || c == '.' || c == ':' || c == '-'))
            return false;
    }
    return true;
}

/* ------------------------------------------------------------------------ */
/* A growable string                                                         */

struct sbuf {
    char *p;
    size_t len, cap;
    bool nomem;
};

static void sb_add(struct sbuf *b, const char *s, size_t n)
{
    if (b->nomem)
        return;
    if (n >= SIZE_MAX - b->len) {
        b->nomem = true;
        return;
    }
    if (b->len + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 1024;
        char *p;
        while (cap < b->len + n + 1)
            cap *= 2;
        p = realloc(b->p, cap);
        if (!p) {
            b->nomem = true;
            return;
        }
        b->p = p;
        b->cap = cap;
    }
    memcpy(b->p + b->len, s, n);
    b->len += n;
    b->p[b->len] = '\0';
}

static void sb_str(struct sbuf *b, const char *s)
{
    sb_add(b, s, strlen(s));
}

/* The string, or NULL (and nothing to free) when an allocation failed. */
static char *sb_take(struct sbuf *b)
{
    if (b->nomem || !b->p) {
        free(b->p);
        return NULL;
    }
    return b->p;
}

/* text with every "@ID@" replaced by id. */
static char *subst_id(const char *text, const char *id)
{
    struct sbuf b = {NULL, 0, 0, false};
    const char *p = text, *q;

    while ((q = strstr(p, "@ID@")) != NULL) {
        sb_add(&b, p, (size_t)(q - p));
        sb_str(&b, id);
        p = q + 4;
    }
    sb_str(&b, p);
    return sb_take(&b);
}

char *cli_blueprint_render(const struct cli_blueprint *bp, const char *id)
{
    return subst_id(bp->text, id);
}

/* ------------------------------------------------------------------------ */
/* Double-quoted YAML scalars                                                */

bool cli_utf8_ok(const char *s)
{
    const unsigned char *p = (const unsigned char *)s;
    size_t n = strlen(s);
    uint32_t cp;

    for (size_t i = 0, k; i < n; i += k) {
        k = cli_utf8_decode(p + i, n - i, &cp);
        if (k == 0)
            return false;
    }
    return true;
}

/* The escape of code point cp inside a double-quoted YAML scalar, or NULL
 * when it stands for itself. */
static const char *yaml_escape(uint32_t cp, char tmp[12])
{
    const char *esc = cli_c_escape(cp);

    if (esc)
        return esc;
    switch (cp) {
    case '"':
        return "\\\"";
    case 0x85:
        return "\\N";
    case 0x2028:
        return "\\L";
    case 0x2029:
        return "\\P";
    default:
        break;
    }
    if (cp < 0x20 || (cp >= 0x7f && cp < 0xa0)) {
        snprintf(tmp, 12, "\\x%02X", (unsigned)cp);
        return tmp;
    }
    if (cp == 0xfeff || cp == 0xfffe || cp == 0xffff) {
        snprintf(tmp, 12, "\\u%04X", (unsigned)cp);
        return tmp;
    }
    return NULL;
}

/* Append s (valid UTF-8) as a double-quoted YAML scalar. */
static void sb_yaml_dq(struct sbuf *b, const char *s)
{
    const unsigned char *p = (const unsigned char *)s;
    size_t n = strlen(s), k;
    uint32_t cp = 0;
    char tmp[12];

    sb_add(b, "\"", 1);
    for (size_t i = 0; i < n; i += k) {
        const char *esc;
        k = cli_utf8_decode(p + i, n - i, &cp);
        if (k == 0)
            k = 1; /* not reached: the caller checked the text */
        esc = yaml_escape(cp, tmp);
        if (esc)
            sb_str(b, esc);
        else
            sb_add(b, s + i, k);
    }
    sb_add(b, "\"", 1);
}

/* ------------------------------------------------------------------------ */
/* --from-shell                                                              */

/* len bytes at p. */
struct span {
    const char *p;
    size_t len;
};

/* Cut blueprints/from-shell.yaml at its slots "@CMD@", "@WHEN@" and
 * "@UNTIL@" (quotes included), in that order, into the four texts around
 * them; false when a slot is missing. */
static bool shell_pieces(struct span pc[4])
{
    static const char *const slots[3] = {"\"@CMD@\"", "\"@WHEN@\"", "\"@UNTIL@\""};
    const char *p = TEXT(bp_from_shell), *q;

    for (size_t i = 0; i < 3; i++) {
        q = strstr(p, slots[i]);
        if (!q)
            return false;
        pc[i].p = p;
        pc[i].len = (size_t)(q - p);
        p = q + strlen(slots[i]);
    }
    pc[3].p = p;
    pc[3].len = strlen(p);
    return true;
}

/* cmd with every "${" written "${'$'}{". */
static char *literal_cmd(const char *cmd)
{
    struct sbuf b = {NULL, 0, 0, false};
    const char *p = cmd, *q;

    while ((q = strstr(p, "${")) != NULL) {
        sb_add(&b, p, (size_t)(q - p));
        sb_str(&b, "${'$'}{");
        p = q + 2;
    }
    sb_str(&b, p);
    return sb_take(&b);
}

static bool is_blank(char c)
{
    return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

/* The bytes [*a, *z) of expr that are the guard: expr trimmed, without
 * one outer "${...}" (as a guard reads it). */
static void guard_span(const char *expr, size_t *a, size_t *z)
{
    *a = 0;
    *z = strlen(expr);
    while (*a < *z && is_blank(expr[*a]))
        (*a)++;
    while (*z > *a && is_blank(expr[*z - 1]))
        (*z)--;
    if (*z - *a >= 3 && expr[*a] == '$' && expr[*a + 1] == '{' && expr[*z - 1] == '}') {
        *a += 2;
        (*z)--;
    }
}

/* The guard of expr (guard_span) as a string of its own. */
static char *guard_body(const char *expr)
{
    size_t a, z;
    struct sbuf b = {NULL, 0, 0, false};

    guard_span(expr, &a, &z);
    sb_add(&b, expr + a, z - a);
    sb_str(&b, "");
    return sb_take(&b);
}

long cli_from_shell_until_offset(const char *line, size_t off, const char *expr)
{
    const char *open = strstr(line, "\"${");
    const unsigned char *g = (const unsigned char *)expr;
    size_t a, z, pos, k;
    uint32_t cp = 0;
    char tmp[12];

    if (!open || off < (size_t)(open - line) + 3)
        return -1;
    guard_span(expr, &a, &z);
    pos = (size_t)(open - line) + 3;
    for (size_t i = a; i < z; i += k) {
        const char *esc;
        k = cli_utf8_decode(g + i, z - i, &cp);
        if (k == 0)
            return -1; /* not reached: the caller checked the text */
        esc = yaml_escape(cp, tmp);
        pos += esc ? strlen(esc) : k;
        if (off < pos)
            return (long)i;
    }
    return off == pos ? (long)z : -1;
}

/* "${" prefix expr suffix "}" as a double-quoted scalar. */
static void sb_guard(struct sbuf *b, const char *prefix, const char *expr,
                     const char *suffix)
{
    struct sbuf g = {NULL, 0, 0, false};

    sb_str(&g, "${");
    sb_str(&g, prefix);
    sb_str(&g, expr);
    sb_str(&g, suffix);
    sb_str(&g, "}");
    if (g.nomem)
        b->nomem = true;
    else
        sb_yaml_dq(b, g.p);
    free(g.p);
}

char *cli_from_shell_render(const char *id, const char *cmd, const char *expr,
                            bool *bad)
{
    struct sbuf b = {NULL, 0, 0, false};
    struct span pc[4];
    char *lit = NULL, *guard = NULL, *text = NULL, *out;

    *bad = !cli_utf8_ok(cmd) || !cli_utf8_ok(expr);
    if (*bad || !shell_pieces(pc))
        return NULL;
    lit = literal_cmd(cmd);
    guard = guard_body(expr);
    if (!lit || !guard)
        b.nomem = true;
    sb_add(&b, pc[0].p, pc[0].len);
    if (lit)
        sb_yaml_dq(&b, lit);
    sb_add(&b, pc[1].p, pc[1].len);
    if (guard)
        sb_guard(&b, "not (", guard, ")");
    sb_add(&b, pc[2].p, pc[2].len);
    if (guard)
        sb_guard(&b, "", guard, "");
    sb_add(&b, pc[3].p, pc[3].len);
    text = sb_take(&b);
    out = text ? subst_id(text, id) : NULL;
    free(text);
    free(lit);
    free(guard);
    return out;
}
