/*
 * diag_print.c -- a loop spec's diagnostics for people (compiler style) and
 * for programs (JSON), shared by `lil validate`, `lil new` and `lil explain`;
 * and cli_spec_load (a path, or "-" for stdin; LIL_SPEC_MAX_BYTES raises
 * the size limit).
 *
 * Text output, one block per diagnostic:
 *
 *     loop.yaml:12:14: error: reference to undeclared state var ... [bad-ref]
 *        12 |     when: "${state.nope == 1}"
 *           |              ^
 *
 * The column of a diagnostic counts characters (a valid UTF-8 sequence, or
 * one byte that does not start one; a tab is one), so the caret goes under
 * the column-th character of the line, whatever its bytes.  The gutter is
 * as wide as the line number (at least four digits, plus one blank).  A
 * diagnostic without a position prints "loop.yaml: error: ... [code] (at
 * PATH)" and no snippet.  Alignment rule of the caret line: it repeats, for
 * every character of the source before the column, a tab where the source
 * has a tab and as many blanks as the character takes on the screen
 * everywhere else: 1 for ASCII and most of Unicode, 2 for East Asian wide
 * characters and emoji, and 4 per byte for a byte shown as \xNN (the
 * control characters, DEL, bytes that are not valid UTF-8, C1 controls, bidi
 * controls, U+2028/9 and U+FEFF, so that the terminal shows what is in the
 * file and nothing can reorder or hide text).  Backslashes are shown as
 * they are.  A line longer than WINDOW_MAX bytes is shown as a window
 * around the column, with "..." at the cut ends (three blanks in the caret
 * line).  A column one past the end of the line gets its caret there; a
 * column further out (a position the source line cannot show) gets the
 * caret just after the line and says which column it was.  Messages, paths
 * and file names get the same escaping.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "cli.h"
#include "spec_cli.h"

#define WINDOW_MAX    240              /* bytes of a source line shown at most */
#define WINDOW_BEFORE 80               /* bytes shown before the column when cut */
#define STDIN_MAX     ((1u << 20) + 1) /* default limit of a spec, plus one */

/* What one character (or byte) of text prints as. */
struct piece {
    char text[16]; /* what is printed (not NUL-terminated) */
    size_t len;    /* bytes of text */
    size_t used;   /* bytes of input consumed */
    unsigned cols; /* screen columns (a tab: 0, see is_tab) */
    bool is_tab;
};

/* Code points shown escaped: C1 controls, bidi controls, line and
 * paragraph separators, the zero-width no-break space. */
static bool hidden_cp(uint32_t cp)
{
    return cp < 0xa0 || (cp >= 0x200e && cp <= 0x200f) ||
           (cp >= 0x2028 && cp <= 0x202e) || (cp >= 0x2066 && cp <= 0x2069) ||
           cp == 0xfeff;
}

/* Screen width of a printable code point: 2 for the East Asian wide and
 * fullwidth blocks and the emoji blocks, else 1. */
static unsigned cp_width(uint32_t cp)
{
    static const uint32_t wide[][2] = {
        {0x1100, 0x115f},   {0x2e80, 0x303e},   {0x3041, 0x33ff},   {0x3400, 0x4dbf},
        {0x4e00, 0x9fff},   {0xa000, 0xa4cf},   {0xac00, 0xd7a3},   {0xf900, 0xfaff},
        {0xfe30, 0xfe4f},   {0xff00, 0xff60},   {0xffe0, 0xffe6},   {0x1f300, 0x1f64f},
        {0x1f900, 0x1f9ff}, {0x20000, 0x2fffd}, {0x30000, 0x3fffd},
    };

    for (size_t i = 0; i < sizeof(wide) / sizeof(wide[0]); i++) {
        if (cp >= wide[i][0] && cp <= wide[i][1])
            return 2;
    }
    return 1;
}

/* Bytes p[0..k) as \xNN each. */
static void piece_escape(struct piece *pc, const unsigned char *p, size_t k)
{
    pc->len = 0;
    for (size_t i = 0; i < k; i++) {
        snprintf(pc->text + pc->len, sizeof(pc->text) - pc->len, "\\x%02x", p[i]);
        pc->len += 4;
    }
    pc->used = k;
    pc->cols = (unsigned)(4 * k);
}

/* The piece at p (n >= 1 bytes left). */
static void next_piece(const unsigned char *p, size_t n, struct piece *pc)
{
    uint32_t cp = 0;
    size_t k;

    pc->is_tab = false;
    if (p[0] == '\t' || (p[0] >= 0x20 && p[0] < 0x7f)) {
        pc->text[0] = (char)p[0];
        pc->len = pc->used = 1;
        pc->cols = p[0] == '\t' ? 0 : 1;
        pc->is_tab = p[0] == '\t';
        return;
    }
    k = p[0] >= 0x80 ? cli_utf8_decode(p, n, &cp) : 0;
    if (k == 0) {
        piece_escape(pc, p, 1);
        return;
    }
    if (hidden_cp(cp)) {
        piece_escape(pc, p, k);
        return;
    }
    memcpy(pc->text, p, k);
    pc->len = pc->used = k;
    pc->cols = cp_width(cp);
}

/* Print len bytes of s, escaped (see the top of the file). */
static void put_escaped(FILE *f, const char *s, size_t len)
{
    const unsigned char *p = (const unsigned char *)s;
    struct piece pc;

    for (size_t i = 0; i < len; i += pc.used) {
        next_piece(p + i, len - i, &pc);
        fwrite(pc.text, 1, pc.len, f);
    }
}

void cli_put_text(FILE *f, const char *s)
{
    if (s)
        put_escaped(f, s, strlen(s));
}

/* The severity's name: a note is "note" in text and "info" in JSON. */
static const char *severity_name(lil_severity sev, bool json)
{
    switch (sev) {
    case LIL_SEV_ERROR:
        return "error";
    case LIL_SEV_WARNING:
        return "warning";
    default:
        return json ? "info" : "note";
    }
}

/* The part of a source line of len bytes shown for byte column col
 * (0-based): [*start, *end). */
static void line_window(const unsigned char *s, size_t len, size_t col, size_t *start,
                        size_t *end)
{
    size_t a = 0, b;

    if (len > WINDOW_MAX && col > WINDOW_BEFORE)
        a = col - WINDOW_BEFORE;
    if (a > len)
        a = len;
    for (int i = 0; i < 3 && a < len && a > 0 && (s[a] & 0xc0) == 0x80; i++)
        a++; /* start on a character, not inside one */
    b = len - a > WINDOW_MAX ? a + WINDOW_MAX : len;
    for (int i = 0; i < 3 && b < len && (s[b] & 0xc0) == 0x80; i++)
        b++;
    *start = a;
    *end = b;
}

/* The caret line's blanks for the shown text s[start..col), col <= end. */
static void put_caret_pad(FILE *f, const unsigned char *s, size_t start, size_t end,
                          size_t col)
{
    struct piece pc;
    size_t i = start;

    while (i < end && i < col) {
        next_piece(s + i, end - i, &pc);
        if (i + pc.used > col)
            break; /* the column is inside this character: point at it */
        if (pc.is_tab)
            fputc('\t', f);
        else
            fprintf(f, "%*s", (int)pc.cols, "");
        i += pc.used;
    }
}

static int gutter_width(unsigned line)
{
    int digits = 1;

    for (unsigned v = line; v >= 10; v /= 10)
        digits++;
    return (digits < 4 ? 4 : digits) + 1;
}

/* The byte where character column col (1-based) of s starts; len + the
 * characters missing when the line is shorter. */
static size_t byte_of_column(const unsigned char *s, size_t len, unsigned col)
{
    size_t i = 0;
    unsigned c = 1;
    uint32_t cp;

    for (; c < col && i < len; c++) {
        size_t k = cli_utf8_decode(s + i, len - i, &cp);

        i += k ? k : 1;
    }
    return i + (col - c);
}

/* The source line and the caret under the column. */
static void print_snippet(FILE *f, const lil_diag *d)
{
    const char *src = d->source_line ? d->source_line : "";
    const unsigned char *s = (const unsigned char *)src;
    size_t len = strlen(src), start, end;
    size_t col = d->column ? byte_of_column(s, len, d->column) : 0;
    int w = gutter_width(d->line);

    line_window(s, len, col, &start, &end);
    fprintf(f, "%*u | ", w, d->line);
    if (start > 0)
        fputs("...", f);
    put_escaped(f, src + start, end - start);
    if (end < len)
        fputs("...", f);
    fputc('\n', f);
    if (d->column == 0)
        return;
    fprintf(f, "%*s | ", w, "");
    if (start > 0)
        fputs("   ", f);
    if (col > len) {
        /* past the end of the line as given: point just after it */
        put_caret_pad(f, s, start, end, end);
        fprintf(f, "^ column %u is past the end of the line\n", d->column);
        return;
    }
    put_caret_pad(f, s, start, end, col);
    fputs("^\n", f);
}

static void print_one(FILE *f, const lil_diag *d, const char *file)
{
    cli_put_text(f, d->file && *d->file ? d->file : file);
    if (d->line && d->column)
        fprintf(f, ":%u:%u", d->line, d->column);
    else if (d->line)
        fprintf(f, ":%u", d->line);
    fprintf(f, ": %s: ", severity_name(d->severity, false));
    cli_put_text(f, d->message);
    fputs(" [", f);
    cli_put_text(f, d->code);
    fputc(']', f);
    if (!d->line && d->path && *d->path) {
        fputs(" (at ", f);
        cli_put_text(f, d->path);
        fputc(')', f);
    }
    fputc('\n', f);
    if (d->line)
        print_snippet(f, d);
}

void cli_diag_print(FILE *f, const lil_spec *spec, const char *file)
{
    size_t n = lil_spec_diag_count(spec);

    for (size_t i = 0; i < n; i++) {
        const lil_diag *d = lil_spec_diag(spec, i);
        if (d)
            print_one(f, d, file);
    }
}

void cli_diag_print_warnings(FILE *f, const lil_spec *spec, const char *file)
{
    size_t n = lil_spec_diag_count(spec);

    for (size_t i = 0; i < n; i++) {
        const lil_diag *d = lil_spec_diag(spec, i);
        if (d && d->severity == LIL_SEV_WARNING)
            print_one(f, d, file);
    }
}

struct counts {
    size_t errors, warnings, infos;
};

static struct counts count_diags(const lil_spec *spec)
{
    struct counts c = {0, 0, 0};
    size_t n = lil_spec_diag_count(spec);

    for (size_t i = 0; i < n; i++) {
        const lil_diag *d = lil_spec_diag(spec, i);
        if (!d)
            continue;
        if (d->severity == LIL_SEV_ERROR)
            c.errors++;
        else if (d->severity == LIL_SEV_WARNING)
            c.warnings++;
        else
            c.infos++;
    }
    return c;
}

void cli_diag_summary(FILE *f, const lil_spec *spec, const char *file)
{
    struct counts c = count_diags(spec);

    cli_put_text(f, file);
    if (c.errors || !lil_spec_ok(spec))
        fprintf(f, ": \u2717 invalid \u2014 %zu error(s), %zu warning(s)\n", c.errors,
                c.warnings);
    else if (c.warnings + c.infos == 0)
        fprintf(f, ": \u2713 valid (no diagnostics)\n");
    else
        fprintf(f, ": \u2713 valid \u2014 %zu warning(s), %zu note(s)\n", c.warnings,
                c.infos);
}

static json_t *str_or_null(const char *s)
{
    return s && *s ? cli_json_str(s, strlen(s)) : json_null();
}

static json_t *diag_json(const lil_diag *d)
{
    json_t *o = json_object();

    cli_json_set(o, "severity", json_string(severity_name(d->severity, true)));
    cli_json_set(o, "code", str_or_null(d->code));
    cli_json_set(o, "message", str_or_null(d->message));
    cli_json_set(o, "path", str_or_null(d->path));
    cli_json_set(o, "line", d->line ? json_integer(d->line) : json_null());
    cli_json_set(o, "column", d->column ? json_integer(d->column) : json_null());
    cli_json_set(o, "offset", d->line ? cli_json_u64(d->offset) : json_null());
    return o;
}

static json_t *doc_json(const char *file, bool ok, struct counts c, json_t *diags)
{
    json_t *o = json_object();

    cli_json_set(o, "file", cli_json_str(file, strlen(file)));
    cli_json_set(o, "ok", json_boolean(ok));
    cli_json_set(o, "errors", cli_json_u64(c.errors));
    cli_json_set(o, "warnings", cli_json_u64(c.warnings));
    cli_json_set(o, "infos", cli_json_u64(c.infos));
    if (!o || !diags || json_object_set_new(o, "diagnostics", diags) != 0) {
        json_decref(o);
        return NULL;
    }
    return o;
}

json_t *cli_diag_json(const lil_spec *spec, const char *file)
{
    json_t *arr = json_array();
    size_t n = lil_spec_diag_count(spec);

    for (size_t i = 0; arr && i < n; i++) {
        const lil_diag *d = lil_spec_diag(spec, i);
        if (d && json_array_append_new(arr, diag_json(d)) != 0) {
            json_decref(arr);
            return NULL;
        }
    }
    return doc_json(file, lil_spec_ok(spec) != 0, count_diags(spec), arr);
}

json_t *cli_diag_json_failed(const char *file, const char *msg)
{
    struct counts c = {1, 0, 0};
    json_t *arr = json_array(), *d = json_object();

    cli_json_set(d, "severity", json_string("error"));
    cli_json_set(d, "code", json_string("io"));
    cli_json_set(d, "message", str_or_null(msg));
    cli_json_set(d, "path", json_null());
    cli_json_set(d, "line", json_null());
    cli_json_set(d, "column", json_null());
    cli_json_set(d, "offset", json_null());
    if (!arr || !d || json_array_append_new(arr, d) != 0) {
        json_decref(arr);
        return NULL;
    }
    return doc_json(file, false, c, arr);
}

const char *cli_spec_name(const char *path)
{
    return strcmp(path, "-") == 0 ? "<stdin>" : path;
}

/* The spec size limit: LIL_SPEC_MAX_BYTES when set (a positive number of
 * bytes, checked by the library: lil_setting), else the library's default
 * (lim->max_bytes 0).  False, with msg, when the variable is not one. */
static bool spec_limits(lil_spec_limits *lim, char *msg, size_t cap)
{
    char *v = NULL;

    memset(lim, 0, sizeof(*lim));
    if (lil_setting("LIL_SPEC_MAX_BYTES", &v) != LIL_OK) {
        snprintf(msg, cap, "%s", lil_errmsg());
        return false;
    }
    if (v)
        lim->max_bytes = (size_t)strtoull(v, NULL, 10);
    lil_free(v);
    return true;
}

/* Read all of stdin into *buf (grown as needed), keeping at most keep
 * bytes; *total counts every byte.  False on a read or allocation error. */
static bool read_stdin(char **buf, size_t keep, size_t *len, size_t *total)
{
    size_t cap = 0, n;
    char skip[4096];

    *buf = NULL;
    *len = *total = 0;
    for (;;) {
        if (*len < keep && *len == cap) {
            size_t want = cap ? cap * 2 : 65536;
            char *p = realloc(*buf, want < keep ? want : keep);

            if (!p)
                return false;
            *buf = p;
            cap = want < keep ? want : keep;
        }
        n = *len < keep ? fread(*buf + *len, 1, cap - *len, stdin)
                        : fread(skip, 1, sizeof(skip), stdin);
        if (n == 0)
            return !ferror(stdin);
        *len += *len < keep ? n : 0;
        *total += n;
    }
}

/* Read stdin and parse it.  A text over the limit is only counted past the
 * limit: LIL_E_TOOBIG, with msg giving its size. */
static lil_status load_stdin(lil_env *env, const lil_spec_limits *lim, lil_spec **out,
                             char *msg, size_t cap)
{
    size_t max = lim->max_bytes ? lim->max_bytes : STDIN_MAX - 1;
    size_t len, total;
    char *buf;
    lil_status rc;

    if (!read_stdin(&buf, max, &len, &total)) {
        free(buf);
        return ferror(stdin) ? LIL_E_IO : LIL_E_NOMEM;
    }
    if (total > max) {
        free(buf);
        snprintf(msg, cap,
                 "<stdin>: the spec is %zu bytes, more than the limit of %zu bytes: "
                 "make it smaller, or raise the limit with the environment variable "
                 "LIL_SPEC_MAX_BYTES",
                 total, max);
        return LIL_E_TOOBIG;
    }
    rc = lil_spec_parse(env, "<stdin>", buf ? buf : "", len, lim, out);
    free(buf);
    return rc;
}

lil_status cli_spec_load(lil_env *env, const char *path, lil_spec **out, char *msg,
                         size_t cap)
{
    lil_spec_limits lim;
    lil_status rc;
    const char *why;

    *out = NULL;
    if (!spec_limits(&lim, msg, cap))
        return LIL_E_INVAL;
    if (strcmp(path, "-") == 0) {
        rc = load_stdin(env, &lim, out, msg, cap);
        if (rc == LIL_E_TOOBIG)
            return rc;
    } else {
        rc = lil_spec_load(env, path, &lim, out);
    }
    path = cli_spec_name(path);
    if (rc == LIL_OK && *out)
        return LIL_OK;
    if (rc == LIL_OK)
        rc = LIL_E_NOMEM;
    why = *lil_errmsg() ? lil_errmsg() : lil_strerror(rc);
    if (strstr(why, path))
        snprintf(msg, cap, "%s", why);
    else
        snprintf(msg, cap, "cannot load '%s': %s", path, why);
    return rc;
}
