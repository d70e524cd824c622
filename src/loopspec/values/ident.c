/*
 * ident.c -- identifier rules, declared types and "did you mean" for loop
 * specs (ident.h; docs/loopspec.md, "Ids, names and types").
 *
 * The reference's regexes are written out as plain character checks (its
 * `$` is JavaScript's: the very end, no trailing-newline exception).
 *
 * Types: `enum[...]` members are the text between the brackets split on ','
 * or '|' and trimmed with JavaScript's trim; empty members are kept, like
 * the reference ("enum[a,,b]" has the members "a", "" and "b").  The
 * members are not copied: struct lil_type points into the type's text, and
 * lil__type_member cuts member i out of it when asked.  A member longer
 * than MEMBER_MAX_LEN bytes makes the type invalid (the reference has no
 * such limit; no value's String() is compared beyond it).
 *
 * lil__type_accepts compares an enum with JavaScript's String(value):
 * strings as they are, true/false, numbers in Number::toString form (1,
 * 1.5, 1e+21, 1e-7: lil__num_format of value.h), arrays joined with ","
 * (null elements empty, nested arrays flattened the same way), objects
 * "[object Object]".  null is accepted by every type; the stricter "a list
 * state var needs an array init" rule is the validator's.
 *
 * lil__suggest: optimal-string-alignment (Damerau-Levenshtein with adjacent
 * transpositions) distance over bytes, case-sensitive.  A candidate is
 * suggested when its distance is at most max(2, strlen(word) / 3) and
 * smaller than strlen(word) (so "ab" never suggests an unrelated "xy");
 * the first closest candidate wins; words or candidates longer than 64
 * bytes are never compared (bounded work: at most 65 x 65 cells each).
 *
 * lil__key_near: is an unknown key a near miss of a known one (so an
 * error, where a key far from every known one is only ignored)?  Keys are
 * compared folded (ASCII lower case, '-' read as '_'); the rules, the
 * first that holds giving the match's rank (the lowest rank wins, then the
 * first candidate):
 *   0  equal once folded                       CMD, On_Done, allowed_tools
 *   1-2  optimal-string-alignment distance d <= 2 with 3*d <= the longer
 *        length                                on_don, prmpt, max_iteratons
 *   3  a truncation: the key (3+ bytes) is a prefix or a suffix of the known
 *        key                                   max_iter, desc, tools, done
 *   4  spelled out: the known key (3+ bytes) appears in order in the key,
 *        which is at most twice as long plus one   comand, command, initial
 * So `name` is not near `save` (distance 2 in 4 bytes), nor `tags` near
 * `args`; `description` is near no step key.
 */
#include "loopspec/values/ident.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "lang/value.h"

#define SUGGEST_MAX    64  /* longest word compared */
#define STRING_DEPTH   64  /* deepest array String() follows */
#define MEMBER_MAX_LEN 256 /* longest String(value) compared with members */

static const char *const RESERVED[] = {
    "await",    "break",    "case",      "catch",  "class",      "const",
    "continue", "debugger", "default",   "delete", "do",         "else",
    "enum",     "export",   "extends",   "false",  "finally",    "for",
    "function", "if",       "import",    "in",     "instanceof", "new",
    "null",     "return",   "super",     "switch", "this",       "throw",
    "true",     "try",      "typeof",    "var",    "void",       "while",
    "with",     "yield",    "let",       "static", "implements", "interface",
    "package",  "private",  "protected", "public",
};

static const char *const BINDINGS[] = {
    "ctx",     "state", "inputs", "env",  "meta", "iteration", "spec",
    "runtime", "__res", "__out",  "__in", "__fp", "__waited",
};

static const char *const ROOTS[] = {"state", "inputs", "env", "meta", "iteration"};

static const char *const SIMPLE_TYPES[] = {"string",  "int",  "number",
                                           "boolean", "json", "list"};

static bool in_list(const char *s, const char *const *list, size_t n)
{
    if (!s)
        return false;
    for (size_t i = 0; i < n; i++)
        if (strcmp(s, list[i]) == 0)
            return true;
    return false;
}

static bool is_word_start(char c)
{
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_';
}

static bool is_word_char(char c)
{
    return is_word_start(c) || (c >= '0' && c <= '9');
}

bool lil__ident_is_id(const char *s)
{
    if (!s || !*s)
        return false;
    for (; *s; s++)
        if (!is_word_char(*s) && *s != '.' && *s != ':' && *s != '-')
            return false;
    return true;
}

bool lil__ident_is_name(const char *s)
{
    if (!s || !is_word_start(*s))
        return false;
    for (s++; *s; s++)
        if (!is_word_char(*s))
            return false;
    return true;
}

bool lil__ident_is_reserved(const char *s)
{
    return in_list(s, RESERVED, sizeof(RESERVED) / sizeof(RESERVED[0]));
}

bool lil__ident_is_binding(const char *s)
{
    return in_list(s, BINDINGS, sizeof(BINDINGS) / sizeof(BINDINGS[0]));
}

bool lil__ident_is_root(const char *s)
{
    return in_list(s, ROOTS, sizeof(ROOTS) / sizeof(ROOTS[0]));
}

/* ---- declared types ---------------------------------------------------- */

static bool is_member_separator(char c)
{
    return c == ',' || c == '|';
}

/* "enum[" [^\]]+ "]" at the very end: t points at the text inside. */
static bool parse_enum(const char *s, struct lil_type *t)
{
    size_t len = strlen(s);

    if (len < 7 || strncmp(s, "enum[", 5) != 0 || s[len - 1] != ']')
        return false;
    s += 5;
    len -= 6; /* the text between the brackets */
    if (memchr(s, ']', len))
        return false;
    t->kind = LIL_TYPE_ENUM;
    t->text = s;
    t->text_len = len;
    t->nmembers = 1;
    for (size_t i = 0; i < len; i++)
        t->nmembers += is_member_separator(s[i]);
    for (size_t i = 0, start = 0; i <= len; i++) { /* one pass: no member too long */
        size_t b = start, e = i;

        if (i < len && !is_member_separator(s[i]))
            continue;
        start = i + 1;
        lil__js_trim(s, &b, &e);
        if (e - b > MEMBER_MAX_LEN)
            return false;
    }
    return true;
}

bool lil__type_member(const struct lil_type *t, size_t i, const char **s, size_t *len)
{
    size_t start = 0, k = 0, b, e;

    if (t->kind != LIL_TYPE_ENUM || i >= t->nmembers)
        return false;
    for (size_t j = 0; j < t->text_len && k < i; j++) {
        if (is_member_separator(t->text[j])) {
            k++;
            start = j + 1;
        }
    }
    e = start;
    while (e < t->text_len && !is_member_separator(t->text[e]))
        e++;
    b = start;
    lil__js_trim(t->text, &b, &e);
    *s = t->text + b;
    *len = e - b;
    return true;
}

bool lil__type_parse(const char *s, struct lil_type *out)
{
    static const enum lil_type_kind kinds[] = {LIL_TYPE_STRING, LIL_TYPE_INT,
                                               LIL_TYPE_NUMBER, LIL_TYPE_BOOLEAN,
                                               LIL_TYPE_JSON,   LIL_TYPE_LIST};

    memset(out, 0, sizeof(*out));
    if (!s)
        return false;
    for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
        if (strcmp(s, SIMPLE_TYPES[i]) == 0) {
            out->kind = kinds[i];
            return true;
        }
    }
    if (parse_enum(s, out))
        return true;
    memset(out, 0, sizeof(*out));
    return false;
}

/* ---- JavaScript String(value) ------------------------------------------ */

struct sbuf {
    char s[MEMBER_MAX_LEN + 1];
    size_t len;
    bool over; /* longer than MEMBER_MAX_LEN: compared as no member */
};

static void sbuf_add(struct sbuf *b, const char *s, size_t len)
{
    if (b->over || len > MEMBER_MAX_LEN - b->len) {
        b->over = true;
        return;
    }
    memcpy(b->s + b->len, s, len);
    b->len += len;
}

static void js_string(json_t *v, struct sbuf *b, int depth);

/* String(array): elements joined by ",", null elements empty. */
static void js_array_string(json_t *a, struct sbuf *b, int depth)
{
    size_t i;
    json_t *e;

    if (depth >= STRING_DEPTH) {
        b->over = true;
        return;
    }
    json_array_foreach(a, i, e)
    {
        if (i > 0)
            sbuf_add(b, ",", 1);
        if (!json_is_null(e))
            js_string(e, b, depth + 1);
    }
}

static void js_string(json_t *v, struct sbuf *b, int depth)
{
    char num[32];

    switch (json_typeof(v)) {
    case JSON_STRING:
        sbuf_add(b, json_string_value(v), json_string_length(v));
        break;
    case JSON_INTEGER:
    case JSON_REAL:
        sbuf_add(b, num, lil__num_format(json_number_value(v), num));
        break;
    case JSON_TRUE:
        sbuf_add(b, "true", 4);
        break;
    case JSON_FALSE:
        sbuf_add(b, "false", 5);
        break;
    case JSON_NULL:
        sbuf_add(b, "null", 4);
        break;
    case JSON_ARRAY:
        js_array_string(v, b, depth);
        break;
    default:
        sbuf_add(b, "[object Object]", 15);
        break;
    }
}

static bool enum_accepts(const struct lil_type *t, json_t *value)
{
    struct sbuf b = {{0}, 0, false};

    size_t start = 0;

    js_string(value, &b, 0);
    if (b.over)
        return false;
    for (size_t i = 0; i <= t->text_len; i++) { /* each member, in one pass */
        size_t mb = start, me = i;

        if (i < t->text_len && !is_member_separator(t->text[i]))
            continue;
        start = i + 1;
        lil__js_trim(t->text, &mb, &me);
        if (me - mb == b.len && memcmp(t->text + mb, b.s, b.len) == 0)
            return true;
    }
    return false;
}

static bool is_integral(json_t *v)
{
    double x;

    if (json_is_integer(v))
        return true;
    if (!json_is_real(v))
        return false;
    x = json_real_value(v);
    if (!isfinite(x))
        return false;
    if (x >= 4503599627370496.0 || x <= -4503599627370496.0)
        return true; /* |x| >= 2^52: no fraction bits left */
    return (double)(int64_t)x == x;
}

bool lil__type_accepts(const struct lil_type *t, json_t *value)
{
    if (!value || json_is_null(value))
        return true;
    switch (t->kind) {
    case LIL_TYPE_STRING:
        return json_is_string(value);
    case LIL_TYPE_INT:
        return is_integral(value);
    case LIL_TYPE_NUMBER:
        return json_is_number(value);
    case LIL_TYPE_BOOLEAN:
        return json_is_boolean(value);
    case LIL_TYPE_LIST:
        return json_is_array(value);
    case LIL_TYPE_ENUM:
        return enum_accepts(t, value);
    case LIL_TYPE_JSON:
    default:
        return true;
    }
}

/* ---- did you mean ------------------------------------------------------- */

static size_t min3(size_t a, size_t b, size_t c)
{
    size_t m = a < b ? a : b;
    return m < c ? m : c;
}

/* Optimal string alignment distance of a and b (each <= SUGGEST_MAX). */
static size_t osa_distance(const char *a, size_t n, const char *b, size_t m)
{
    uint8_t d[SUGGEST_MAX + 1][SUGGEST_MAX + 1]; /* distances <= 64 */

    for (size_t i = 0; i <= n; i++)
        d[i][0] = (uint8_t)i;
    for (size_t j = 0; j <= m; j++)
        d[0][j] = (uint8_t)j;
    for (size_t i = 1; i <= n; i++) {
        for (size_t j = 1; j <= m; j++) {
            size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
            size_t v = min3(d[i - 1][j] + 1u, d[i][j - 1] + 1u, d[i - 1][j - 1] + cost);
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] &&
                d[i - 2][j - 2] + 1u < v)
                v = d[i - 2][j - 2] + 1u;
            d[i][j] = (uint8_t)v;
        }
    }
    return d[n][m];
}

/* Is c a subsequence of w ("cmd" in "comand")? */
static bool subsequence(const char *c, const char *w)
{
    for (; *c && *w; w++) {
        if (*c == *w)
            c++;
    }
    return *c == '\0';
}

/* The longest candidate of 3+ bytes, shorter than word and at least half
 * its length, whose letters appear in order in word: an abbreviation typed
 * out ("comand" -> "cmd"), which edit distance misses. */
static const char *suggest_abbreviation(const char *word, size_t wlen,
                                        const char *const *candidates, size_t n)
{
    const char *best = NULL;
    size_t blen = 0;

    for (size_t i = 0; i < n; i++) {
        size_t l = candidates[i] ? strlen(candidates[i]) : 0;

        if (l >= 3 && l > blen && l < wlen && 2 * l >= wlen &&
            subsequence(candidates[i], word)) {
            best = candidates[i];
            blen = l;
        }
    }
    return best;
}

const char *lil__suggest(const char *word, const char *const *candidates, size_t n)
{
    size_t wlen, limit, best_d = SIZE_MAX;
    const char *best = NULL;

    if (!word || !candidates)
        return NULL;
    wlen = strlen(word);
    if (wlen == 0 || wlen > SUGGEST_MAX)
        return NULL;
    limit = wlen / 3 > 2 ? wlen / 3 : 2;
    if (limit >= wlen)
        limit = wlen - 1;
    for (size_t i = 0; i < n; i++) {
        size_t clen = candidates[i] ? strlen(candidates[i]) : SUGGEST_MAX + 1, d;
        if (clen > SUGGEST_MAX || (clen > wlen ? clen - wlen : wlen - clen) > limit)
            continue;
        d = osa_distance(word, wlen, candidates[i], clen);
        if (d <= limit && d < best_d) {
            best_d = d;
            best = candidates[i];
        }
    }
    return best ? best : suggest_abbreviation(word, wlen, candidates, n);
}

/* ------------------------------------------------------------------------ */
/* Near misses of keys                                                      */

#define NEAR_NONE 99 /* no rule holds */

/* s folded into out (SUGGEST_MAX + 1 bytes); false if longer. */
static bool fold_key(const char *s, char *out, size_t *len)
{
    size_t n = strlen(s);

    if (n > SUGGEST_MAX)
        return false;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];

        if (c == '-')
            c = '_';
        else if (c >= 'A' && c <= 'Z')
            c = "abcdefghijklmnopqrstuvwxyz"[c - 'A'];
        out[i] = c;
    }
    out[n] = '\0';
    *len = n;
    return true;
}

/* Is k (kl bytes) a prefix or a suffix of c (cl bytes)? */
static bool truncation_of(const char *k, size_t kl, const char *c, size_t cl)
{
    return kl >= 3 && kl < cl &&
           (memcmp(k, c, kl) == 0 || memcmp(k, c + (cl - kl), kl) == 0);
}

/* The rank of the first rule of lil__key_near that holds for the folded
 * key k and known key c, or NEAR_NONE. */
static unsigned near_rank(const char *k, size_t kl, const char *c, size_t cl)
{
    size_t longer = kl > cl ? kl : cl, d;

    if (kl == cl && memcmp(k, c, kl) == 0)
        return 0;
    if ((kl > cl ? kl - cl : cl - kl) <= 2) {
        d = osa_distance(k, kl, c, cl);
        if (d <= 2 && 3 * d <= longer)
            return (unsigned)d;
    }
    if (truncation_of(k, kl, c, cl))
        return 3;
    if (cl >= 3 && cl < kl && kl <= 2 * cl + 1 && subsequence(c, k))
        return 4;
    return NEAR_NONE;
}

const char *lil__key_near(const char *key, const char *const *known, size_t n)
{
    char k[SUGGEST_MAX + 1], c[SUGGEST_MAX + 1];
    size_t kl, cl;
    unsigned best_rank = NEAR_NONE;
    const char *best = NULL;

    if (!key || !known || !fold_key(key, k, &kl) || kl == 0)
        return NULL;
    for (size_t i = 0; i < n; i++) {
        unsigned r;

        if (!known[i] || !fold_key(known[i], c, &cl))
            continue;
        r = near_rank(k, kl, c, cl);
        if (r < best_rank) {
            best_rank = r;
            best = known[i];
        }
    }
    return best;
}
