/*
 * yaml_errors.c -- a YAML text's errors in plain words, at the characters
 * they are about.
 *
 * libyaml reports what its scanner or parser expected ("did not find
 * expected key"), often a line after the mistake.  The common mistakes are
 * recognized here from libyaml's problem and context and from the text
 * around its marks, and reworded with what to do:
 *
 *   - a string whose closing quote is missing: at the opening quote (the
 *     string ran on to the next quote, or to the end of the file);
 *   - a tab in the indentation: at the tab;
 *   - "mapping values are not allowed": a key indented differently from
 *     its siblings (at the key), or an unquoted ': ' in a value (at it);
 *   - a list or mapping in brackets that is not closed: at its '[' or '{';
 *     a ']' or '}' that closes nothing: at it;
 *   - a line that does not continue the mapping or list it sits in;
 *   - an unknown escape, a character that cannot start a value, a '- '
 *     after a key.
 * Anything else keeps libyaml's words, with its context.  The code stays
 * `yaml` throughout: only the message and the position change.
 *
 * Before libyaml runs, the whole text is checked for invalid UTF-8 (libyaml
 * names the byte after a cut-short sequence, one column late), and its size
 * against the limit (the real size, at line 1).
 *
 * Positions: a libyaml mark counts characters; it becomes a byte offset
 * (the text is valid UTF-8 by then) and then a position through
 * lil__load_pos_at_byte, like every other position of the loader.
 *
 * Nothing here allocates: messages are formatted into the diagnostics list.
 */
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <yaml.h>

#include "base/utf8.h"
#include "loopspec/diag.h"
#include "loopspec/node.h"
#include "loopspec/yaml_load.h"

/* ------------------------------------------------------------------------ */
/* The text around a mark                                                   */

/* The byte offset in ld->text of libyaml's mark m (the BOM is not seen by
 * libyaml; a sequence that does not decode counts as one byte). */
static size_t mark_offset(const struct loader *ld, const yaml_mark_t *m)
{
    size_t off = ld->bom;
    uint32_t cp;

    for (size_t i = 0; i < m->index && off < ld->len; i++) {
        size_t w =
            lil__utf8_decode((const unsigned char *)ld->text + off, ld->len - off, &cp);

        off += w ? w : 1;
    }
    return off;
}

static struct lil_pos pos_at(const struct loader *ld, size_t off)
{
    return lil__load_pos_at_byte(ld->text, ld->len, off);
}

static char char_at(const struct loader *ld, size_t off)
{
    if (off >= ld->len)
        return '\0';
    return ld->text[off];
}

static size_t line_start(const struct loader *ld, size_t off)
{
    while (off > 0 && ld->text[off - 1] != '\n')
        off--;
    return off;
}

static size_t line_end(const struct loader *ld, size_t off)
{
    const char *nl = off < ld->len ? memchr(ld->text + off, '\n', ld->len - off) : NULL;

    return nl ? (size_t)(nl - ld->text) : ld->len;
}

/* The first byte of the line at off that is not a blank or a tab. */
static size_t first_nonblank(const struct loader *ld, size_t off)
{
    size_t i = line_start(ld, off), end = line_end(ld, off);

    while (i < end && (ld->text[i] == ' ' || ld->text[i] == '\t'))
        i++;
    return i;
}

/* The first tab in the indentation of the line at off, or SIZE_MAX. */
static size_t indent_tab(const struct loader *ld, size_t off)
{
    size_t i = line_start(ld, off), end = first_nonblank(ld, off);
    const char *tab = memchr(ld->text + i, '\t', end - i);

    return tab ? (size_t)(tab - ld->text) : SIZE_MAX;
}

/* The column (0-based) of the key on the line starting at ls: after the
 * indentation and any list item markers ("- "). */
static size_t key_offset(const struct loader *ld, size_t ls)
{
    size_t i = first_nonblank(ld, ls), end = line_end(ld, ls);

    while (i + 1 < end && ld->text[i] == '-' && ld->text[i + 1] == ' ') {
        i += 2;
        while (i < end && ld->text[i] == ' ')
            i++;
    }
    return i;
}

/* The start of the last line before the one at off that holds something
 * other than blanks and a comment, or SIZE_MAX. */
static size_t previous_content_line(const struct loader *ld, size_t off)
{
    size_t ls = line_start(ld, off);

    while (ls > 0) {
        size_t prev = line_start(ld, ls - 1), nb = first_nonblank(ld, prev);

        if (nb < ls - 1 && ld->text[nb] != '#' && ld->text[nb] != '\r')
            return prev;
        ls = prev;
    }
    return SIZE_MAX;
}

static lil_status fail(struct loader *ld, size_t off, const char *fmt, ...)
    LIL_PRINTF(3, 4);

static lil_status fail(struct loader *ld, size_t off, const char *fmt, ...)
{
    char msg[512];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    return lil__load_fail_at(ld, "yaml", pos_at(ld, off), "%s", msg);
}

/* ------------------------------------------------------------------------ */
/* Before parsing: size and encoding                                        */

#define RAISE_LIMIT                                                                \
    "make it smaller, or raise the limit (lil_spec_limits.max_bytes; for the lil " \
    "command, the environment variable LIL_SPEC_MAX_BYTES)"

void lil__doc_too_big(struct lil_diags *diags, size_t size, size_t limit)
{
    struct lil_pos first = {1, 1, 0};

    if (size > limit)
        lil__diag(
            diags, LIL_SEV_ERROR, "yaml", first, NULL,
            "the spec is %zu bytes, more than the limit of %zu bytes: " RAISE_LIMIT,
            size, limit);
    else
        lil__diag(diags, LIL_SEV_ERROR, "yaml", first, NULL,
                  "the spec is larger than the limit of %zu bytes: " RAISE_LIMIT,
                  limit);
}

lil_status lil__load_too_big(struct loader *ld)
{
    lil__doc_too_big(ld->diags, ld->len, ld->lim.max_bytes);
    return ld->diags->nomem ? LIL_E_NOMEM : LIL_E_SPEC;
}

lil_status lil__load_check_utf8(struct loader *ld)
{
    size_t bad = lil__utf8_invalid_at(ld->text, ld->len);

    if (bad == ld->len)
        return LIL_OK;
    return fail(ld, bad,
                "byte 0x%02X is not valid UTF-8 here: a spec must be UTF-8 text (a "
                "file saved as Latin-1 or Windows-1252 has such bytes); re-save it as "
                "UTF-8, or remove the byte",
                (unsigned char)ld->text[bad]);
}

/* ------------------------------------------------------------------------ */
/* Remembering the last quoted string                                       */

void lil__load_note_event(struct loader *ld, const yaml_event_t *ev)
{
    yaml_scalar_style_t st;

    if (ev->type != YAML_SCALAR_EVENT)
        return;
    st = ev->data.scalar.style;
    ld->quoted =
        st == YAML_SINGLE_QUOTED_SCALAR_STYLE || st == YAML_DOUBLE_QUOTED_SCALAR_STYLE;
    ld->quoted_start = ev->start_mark;
    ld->quoted_end = ev->end_mark;
}

/* The last scalar was a quoted string over several lines that ended on the
 * line where the parser then failed: its closing quote is most likely
 * missing, and the quote that ended it opened the next string. */
static bool ran_on_string(const struct loader *ld, const yaml_parser_t *p)
{
    return ld->quoted && ld->quoted_start.line != ld->quoted_end.line &&
           p->problem_mark.line == ld->quoted_end.line;
}

static lil_status string_runs_on(struct loader *ld)
{
    size_t open = mark_offset(ld, &ld->quoted_start);
    size_t close = mark_offset(ld, &ld->quoted_end);
    struct lil_pos end = pos_at(ld, close ? close - 1 : 0);
    struct lil_pos at = pos_at(ld, open);
    char q = char_at(ld, open);

    return fail(ld, open,
                "this string is not closed on its line: the %c here runs on to the "
                "%c at line %u, column %u; add the closing %c on line %u (or escape "
                "the quote)",
                q, q, end.line, end.col, q, at.line);
}

static lil_status string_never_closed(struct loader *ld, const yaml_parser_t *p)
{
    size_t open = mark_offset(ld, &p->context_mark);
    char q = char_at(ld, open);

    if (strstr(p->problem, "document indicator"))
        return fail(ld, open,
                    "this string is not closed: the %c here runs on into a '---' or "
                    "'...' line; add the closing %c",
                    q, q);
    return fail(ld, open,
                "this string is not closed: no %c closes the %c here before the end "
                "of the file; add the closing %c",
                q, q, q);
}

/* ------------------------------------------------------------------------ */
/* Indentation and ': '                                                     */

static lil_status tab_indent(struct loader *ld, size_t tab)
{
    return fail(ld, tab,
                "a tab in the indentation: YAML allows only spaces there; replace "
                "the tab with spaces");
}

/* An earlier ': ' (or ':' then a tab) on the line between from and colon. */
static bool colon_before(const struct loader *ld, size_t from, size_t colon)
{
    for (size_t i = from; i + 1 < colon; i++) {
        if (ld->text[i] == ':' && (ld->text[i + 1] == ' ' || ld->text[i + 1] == '\t'))
            return true;
    }
    return false;
}

static lil_status misplaced_key(struct loader *ld, size_t colon)
{
    size_t key = key_offset(ld, line_start(ld, colon));
    size_t prev = previous_content_line(ld, colon);
    char t[MSG_TEXT_MAX + 4];
    struct lil_pos at, here = pos_at(ld, key);

    if (key > colon)
        key = first_nonblank(ld, colon);
    if (colon_before(ld, key, colon))
        return fail(ld, colon,
                    "': ' inside a value that is not quoted: YAML reads it as the "
                    "start of a key; put the whole value in quotes (\"...\")");
    lil__load_msg_text(ld->text + key, colon - key, t);
    if (prev == SIZE_MAX)
        return fail(ld, key, "the key '%s' is indented differently from its siblings",
                    t);
    at = pos_at(ld, key_offset(ld, prev));
    return fail(ld, key,
                "the key '%s' (column %u) is indented differently from line %u "
                "(column %u), whose value is already given: keys of one mapping "
                "start in the same column; if '%s:' is part of line %u's value, "
                "quote that value",
                t, here.col, at.line, at.col, t, at.line);
}

/* ------------------------------------------------------------------------ */
/* Brackets and lines that do not fit                                        */

static lil_status stray_closer(struct loader *ld, size_t off)
{
    char c = char_at(ld, off);

    return fail(ld, off, "this '%c' closes nothing: no '%c' is open here; remove it", c,
                c == ']' ? '[' : '{');
}

static lil_status flow_not_closed(struct loader *ld, const yaml_parser_t *p)
{
    size_t open = mark_offset(ld, &p->context_mark);
    size_t prob = mark_offset(ld, &p->problem_mark);
    bool list = strstr(p->problem, "']'") != NULL;
    const char *what = list ? "list" : "mapping";
    char closer = list ? ']' : '}';
    struct lil_pos at = pos_at(ld, prob);

    if (p->problem_mark.line == p->context_mark.line)
        return fail(ld, prob,
                    "expected ',' or '%c' here: separate the %s's items with ', ' and "
                    "close it with '%c' (quote an item that holds such characters)",
                    closer, what, closer);
    return fail(ld, open,
                "this %s is not closed: add '%c' after its last item (YAML looked for "
                "it up to line %u, column %u)",
                what, closer, at.line, at.col);
}

static lil_status does_not_fit(struct loader *ld, const yaml_parser_t *p, bool list)
{
    size_t prob = mark_offset(ld, &p->problem_mark);
    struct lil_pos start = pos_at(ld, mark_offset(ld, &p->context_mark));
    char c = char_at(ld, prob);

    if (c == ']' || c == '}')
        return stray_closer(ld, prob);
    if (list)
        return fail(ld, prob,
                    "this line does not continue the list that starts at line %u "
                    "(items '- ' in column %u): check its indentation",
                    start.line, start.col);
    return fail(ld, prob,
                "this line does not continue the mapping that starts at line %u (keys "
                "in column %u): check its indentation, or write 'key: value'",
                start.line, start.col);
}

/* ------------------------------------------------------------------------ */
/* Characters                                                               */

static lil_status cannot_start(struct loader *ld, size_t off)
{
    char c = char_at(ld, off);

    if (c == '@' || c == '`')
        return fail(ld, off,
                    "'%c' is reserved in YAML and cannot start a value: put the value "
                    "in quotes",
                    c);
    return fail(ld, off,
                "this character cannot start a value here: put the value in quotes");
}

static lil_status unknown_escape(struct loader *ld, size_t off)
{
    char t[MSG_TEXT_MAX + 4];
    size_t n = off + 2 <= ld->len ? 2 : ld->len - off;

    return fail(ld, off,
                "unknown escape '%s' in a double-quoted string: write '\\\\' for a "
                "backslash, or use single quotes (where '\\' is an ordinary character)",
                lil__load_msg_text(ld->text + off, n, t));
}

/* A \x, \u or \U escape without its hex digits (often a Windows path):
 * at its backslash, the last one before off on the line. */
static lil_status bad_hex_escape(struct loader *ld, size_t off)
{
    size_t ls = line_start(ld, off), bs = off;

    while (bs > ls && char_at(ld, bs) != '\\')
        bs--;
    if (char_at(ld, bs) != '\\')
        bs = off;
    return fail(ld, bs,
                "'\\%c' starts an escape that needs hex digits in a double-quoted "
                "string: write '\\\\' for a backslash (as in a Windows path), or use "
                "single quotes (where '\\' is an ordinary character)",
                bs + 1 < ld->len ? ld->text[bs + 1] : 'u');
}

/* ------------------------------------------------------------------------ */
/* Dispatch                                                                 */

static bool has(const char *s, const char *part)
{
    return s && strstr(s, part) != NULL;
}

/* libyaml's own words, with its context. */
static lil_status as_libyaml_says(struct loader *ld, const yaml_parser_t *p)
{
    const char *problem = p->problem ? p->problem : "cannot parse the text";
    struct lil_pos pos = pos_at(ld, mark_offset(ld, &p->problem_mark));

    if (p->context) {
        struct lil_pos at = pos_at(ld, mark_offset(ld, &p->context_mark));

        return lil__load_fail_at(ld, "yaml", pos, "%s (%s at line %u, column %u)",
                                 problem, p->context, at.line, at.col);
    }
    return lil__load_fail_at(ld, "yaml", pos, "%s", problem);
}

/* A mistake of the line's layout (quotes, tabs, indentation): true, with
 * *rc, when one is recognized. */
static bool layout_error(struct loader *ld, const yaml_parser_t *p, lil_status *rc)
{
    size_t prob = mark_offset(ld, &p->problem_mark);
    size_t tab = indent_tab(ld, prob);

    if (has(p->context, "quoted scalar") &&
        (has(p->problem, "end of stream") || has(p->problem, "document indicator")))
        *rc = string_never_closed(ld, p);
    else if (ran_on_string(ld, p))
        *rc = string_runs_on(ld);
    else if (char_at(ld, prob) == '\t' || has(p->problem, "tab character"))
        *rc = tab_indent(ld, tab != SIZE_MAX ? tab : prob);
    else if (tab != SIZE_MAX && tab <= prob)
        *rc = tab_indent(ld, tab);
    else if (has(p->problem, "mapping values are not allowed"))
        *rc = misplaced_key(ld, prob);
    else
        return false;
    return true;
}

/* A reader error: a control character (invalid UTF-8 is found before). */
static lil_status reader_error(struct loader *ld, const yaml_parser_t *p)
{
    struct lil_pos pos =
        lil__load_pos_at_byte(ld->text, ld->len, ld->bom + p->problem_offset);

    if (p->problem_value < 0 || has(p->problem, "UTF-8"))
        return lil__load_fail_at(ld, "yaml", pos, "%s",
                                 p->problem ? p->problem : "cannot read the text");
    return lil__load_fail_at(
        ld, "yaml", pos,
        "character U+%04X is a control character, which YAML does not allow in the "
        "text: remove it (in a double-quoted string, write it as \\u%04X)",
        (unsigned)p->problem_value, (unsigned)p->problem_value);
}

/* The parse stopped: libyaml's error as a diagnostic, in plain words where
 * the mistake is a common one. */
static lil_status syntax_error(struct loader *ld, const yaml_parser_t *p)
{
    size_t prob = mark_offset(ld, &p->problem_mark);
    lil_status rc;

    if (layout_error(ld, p, &rc))
        return rc;
    if (has(p->context, "flow") && has(p->problem, "did not find expected ','"))
        return flow_not_closed(ld, p);
    if (has(p->problem, "did not find expected key"))
        return does_not_fit(ld, p, false);
    if (has(p->problem, "did not find expected '-' indicator"))
        return does_not_fit(ld, p, true);
    if (has(p->problem, "expected node content") &&
        (char_at(ld, prob) == ']' || char_at(ld, prob) == '}'))
        return stray_closer(ld, prob);
    if (has(p->problem, "block sequence entries are not allowed"))
        return fail(ld, prob,
                    "a list item ('- ') cannot start on the line of its key: put the "
                    "items on the next lines, indented; quote the value if '-' is "
                    "part of it");
    if (has(p->problem, "cannot start any token"))
        return cannot_start(ld, prob);
    if (has(p->problem, "unknown escape"))
        return unknown_escape(ld, prob);
    if (has(p->problem, "hexdecimal number"))
        return bad_hex_escape(ld, prob);
    return as_libyaml_says(ld, p);
}

lil_status lil__load_yaml_error(struct loader *ld, const yaml_parser_t *p)
{
    if (p->error == YAML_MEMORY_ERROR)
        return LIL_E_NOMEM;
    if (ld->json) {
        ld->yaml_failed = true; /* valid JSON (jansson said so): no positions */
        return LIL_E_SPEC;
    }
    if (p->error == YAML_READER_ERROR)
        return reader_error(ld, p);
    return syntax_error(ld, p);
}
