/*
 * test_loop_util.c -- the small rule modules of the LoopSpec front end:
 * durations (tests/data/duration/duration.test), cron expressions
 * (tests/data/cron/cron.test) and their fire times in UTC
 * (tests/data/cron/next.test), identifiers, declared types and "did you
 * mean" (ident.h), artifact patterns and notify channels (artifact.h).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "loopspec/values/artifact.h"
#include "loopspec/values/cron.h"
#include "loopspec/values/duration.h"
#include "loopspec/values/ident.h"
#include "t.h"

#ifndef T_DATA_DIR
#error "T_DATA_DIR must name tests/data"
#endif

/* ---- data files --------------------------------------------------------- */

typedef int (*line_fn)(const char *file, int lineno, char *line);

/* Run fn over every non-comment line of T_DATA_DIR/name; returns the
 * failures (a file that cannot be read is one) and counts the cases. */
static int run_data(const char *name, line_fn fn, int *cases)
{
    char path[512];
    FILE *f;
    char *line = NULL;
    size_t cap = 0;
    int lineno = 0, failed = 0;

    snprintf(path, sizeof(path), "%s/%s", T_DATA_DIR, name);
    f = fopen(path, "r");
    if (!f) {
        perror(path);
        return 1;
    }
    while (getline(&line, &cap, f) > 0) {
        size_t n = strlen(line);
        lineno++;
        if (n && line[n - 1] == '\n')
            line[--n] = '\0';
        if (n == 0 || line[0] == '#')
            continue;
        (*cases)++;
        failed += fn(name, lineno, line);
    }
    free(line);
    fclose(f);
    return failed;
}

/* Read one JSON value from the front of *p (a string or a number) and move
 * *p past it and the following spaces. */
static json_t *take_json(char **p)
{
    json_error_t err;
    json_t *j =
        json_loads(*p, JSON_DECODE_ANY | JSON_DISABLE_EOF_CHECK | JSON_ALLOW_NUL, &err);

    if (!j)
        return NULL;
    *p += err.position;
    while (**p == ' ')
        (*p)++;
    return j;
}

static int duration_line(const char *file, int lineno, char *line)
{
    char *p = line;
    json_t *in = take_json(&p);
    double ms = -1;
    enum lil_duration_rc rc, want_rc = LIL_DURATION_OK;
    double want = strtod(p, NULL);
    int bad;

    if (!json_is_string(in)) {
        fprintf(stderr, "%s:%d: cannot read the input\n", file, lineno);
        json_decref(in);
        return 1;
    }
    if (strcmp(p, "syntax") == 0)
        want_rc = LIL_DURATION_SYNTAX;
    else if (strcmp(p, "range") == 0)
        want_rc = LIL_DURATION_RANGE;
    rc = lil__duration_parse(json_string_value(in), json_string_length(in), &ms);
    bad = rc != want_rc || (rc == LIL_DURATION_OK && ms != want) ||
          (rc == LIL_DURATION_SYNTAX && ms != 0.0);
    if (bad)
        fprintf(stderr, "%s:%d: %s: rc %d ms %.17g, want %s\n", file, lineno,
                json_string_value(in), (int)rc, ms, p);
    json_decref(in);
    return bad;
}

T_TEST(duration_data_file)
{
    int cases = 0;

    T_EQ_I64(run_data("duration/duration.test", duration_line, &cases), 0);
    T_CHECK(cases >= 75);
}

T_TEST(duration_range_reports_the_value)
{
    char nines[320];
    double ms = 0;

    memset(nines, '9', 309);
    memcpy(nines + 309, "d", 2);
    T_EQ_I64(lil__duration_parse(nines, strlen(nines), &ms), LIL_DURATION_RANGE);
    T_CHECK(isinf(ms));
    T_EQ_I64(lil__duration_parse("36501d", 6, &ms), LIL_DURATION_RANGE);
    T_CHECK(ms == 36501.0 * 86400000.0);
    T_EQ_I64(lil__duration_parse("36500d", 6, &ms), LIL_DURATION_OK);
    T_CHECK(ms == LIL_DURATION_MAX_MS);
}

T_TEST(duration_uses_len_not_nul)
{
    double ms = 0;

    T_EQ_I64(lil__duration_parse("5m and more", 2, &ms), LIL_DURATION_OK);
    T_CHECK(ms == 300000.0);
    T_EQ_I64(lil__duration_parse("5ms", 2, &ms), LIL_DURATION_OK); /* "5m" */
    T_CHECK(ms == 300000.0);
    T_EQ_I64(lil__duration_parse("5m", 0, &ms), LIL_DURATION_SYNTAX);
    T_EQ_I64(lil__duration_parse(NULL, 0, &ms), LIL_DURATION_SYNTAX);
}

T_TEST(duration_long_fractions_round_like_number)
{
    /* 0.1 + 1e-2000 worth of digits rounds to the double 0.1: 100 ms. */
    static char text[2100];
    double ms = 0;

    strcpy(text, "0.1");
    memset(text + 3, '0', 2000);
    strcpy(text + 2003, "1s");
    T_EQ_I64(lil__duration_parse(text, strlen(text), &ms), LIL_DURATION_OK);
    T_CHECK(ms == 0.1 * 1000.0);
}

/* ---- cron ---------------------------------------------------------------- */

static const char *const CRON_FIELDS[] = {"second", "minute", "hour",
                                          "day",    "month",  "weekday"};
static const unsigned CRON_LO[] = {0, 0, 0, 1, 1, 0};
static const unsigned CRON_HI[] = {59, 59, 23, 31, 12, 6}; /* weekday 7 is 0 */

static uint64_t cron_bits(const struct lil_cron *c, int field)
{
    const uint64_t v[] = {c->second, c->minute, c->hour, c->day, c->month, c->weekday};
    return v[field];
}

/* "1,5,7" / "*" / "-" as a bit set for field. */
static uint64_t parse_set(int field, const char *s)
{
    uint64_t bits = 0;

    if (strcmp(s, "*") == 0) {
        for (unsigned v = CRON_LO[field]; v <= CRON_HI[field]; v++)
            bits |= (uint64_t)1 << v;
        return bits;
    }
    while (*s && *s != '-') {
        char *end;
        unsigned long v = strtoul(s, &end, 10);
        bits |= (uint64_t)1 << (v == 7 && field == 5 ? 0 : v);
        s = *end == ',' ? end + 1 : end;
    }
    return bits;
}

/* One "field=values" check of an ok line. */
static int cron_check(const struct lil_cron *c, const char *check)
{
    const char *eq = strchr(check, '=');

    if (!eq)
        return 1;
    if (strncmp(check, "seconds=", 8) == 0)
        return c->has_seconds != (eq[1] == '1');
    for (int f = 0; f < 6; f++)
        if (strlen(CRON_FIELDS[f]) == (size_t)(eq - check) &&
            strncmp(check, CRON_FIELDS[f], (size_t)(eq - check)) == 0)
            return cron_bits(c, f) != parse_set(f, eq + 1);
    return 1;
}

static int cron_ok_line(const char *expr, char *checks, const char *file, int lineno)
{
    struct lil_cron c;
    char why[200] = "";
    int bad = 0;

    if (!lil__cron_parse(expr, &c, why, sizeof(why))) {
        fprintf(stderr, "%s:%d: refused: %s\n", file, lineno, why);
        return 1;
    }
    for (char *tok = strtok(checks, " "); tok; tok = strtok(NULL, " ")) {
        if (cron_check(&c, tok)) {
            fprintf(stderr, "%s:%d: %s does not hold\n", file, lineno, tok);
            bad = 1;
        }
    }
    return bad;
}

static int cron_bad_line(const char *expr, char *rest, const char *file, int lineno)
{
    struct lil_cron c;
    char why[200] = "";
    json_t *want = take_json(&rest);
    int bad = !json_is_string(want) || lil__cron_parse(expr, &c, why, sizeof(why)) ||
              strcmp(why, json_string_value(want)) != 0;

    if (bad)
        fprintf(stderr, "%s:%d: why '%s', want '%s'\n", file, lineno, why,
                json_is_string(want) ? json_string_value(want) : "?");
    json_decref(want);
    return bad;
}

static int cron_line(const char *file, int lineno, char *line)
{
    bool ok = strncmp(line, "ok ", 3) == 0;
    char *p = line + (ok ? 3 : 4);
    json_t *expr;
    int bad;

    if (!ok && strncmp(line, "bad ", 4) != 0)
        return 1;
    expr = take_json(&p);
    if (!json_is_string(expr)) {
        json_decref(expr);
        return 1;
    }
    bad = ok ? cron_ok_line(json_string_value(expr), p, file, lineno)
             : cron_bad_line(json_string_value(expr), p, file, lineno);
    json_decref(expr);
    return bad;
}

T_TEST(cron_data_file)
{
    int cases = 0;

    T_EQ_I64(run_data("cron/cron.test", cron_line, &cases), 0);
    T_CHECK(cases >= 80);
}

T_TEST(cron_failure_clears_out_and_tolerates_no_buffer)
{
    struct lil_cron c;

    memset(&c, 0xff, sizeof(c));
    T_CHECK(!lil__cron_parse("0 24 * * *", &c, NULL, 0));
    T_CHECK(c.minute == 0 && c.hour == 0 && !c.has_seconds);
    T_CHECK(!lil__cron_parse(NULL, &c, NULL, 0));
    T_CHECK(lil__cron_parse("0 0 * * *", &c, NULL, 0));
    T_CHECK(c.minute == 1 && c.hour == 1 && c.second == 1);
}

T_TEST(cron_long_element_is_cut_in_the_message)
{
    struct lil_cron c;
    char why[200];

    T_CHECK(!lil__cron_parse("0 0 * * MONDAYTUESDAYWEDNESDAYTHURSDAY", &c, why,
                             sizeof(why)));
    T_EQ_STR(
        why,
        "field 5 (weekday): 'MONDAYTUESDAYWEDNESDAYTH...' is a name; use numbers 0-7");
}

/* ---- cron fire times ------------------------------------------------------- */

/* "2025-01-01T12:00:00Z" as ms since the epoch (days_from_civil), or -1. */
static int64_t iso_ms(const char *s)
{
    int y, m, d, hh, mm, ss, n = 0;
    int64_t era, yoe, doy, doe;

    if (sscanf(s, "%4d-%2d-%2dT%2d:%2d:%2dZ%n", &y, &m, &d, &hh, &mm, &ss, &n) != 6 ||
        s[n] != '\0')
        return -1;
    y -= m <= 2;
    era = y / 400;
    yoe = y - era * 400;
    doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
    doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return ((era * 146097 + doe - 719468) * 86400 + hh * 3600 + mm * 60 + ss) * 1000;
}

/* The times of a next/never line after its expression, fire by fire. */
static int cron_next_line(const char *file, int lineno, char *line)
{
    bool never = strncmp(line, "never ", 6) == 0;
    char *p = line + (never ? 6 : 5), *tok, iso[LIL_CRON_ISO_CAP];
    json_t *expr = take_json(&p);
    struct lil_cron c;
    int64_t t;
    int bad = 0, n = 0;

    if (!json_is_string(expr) ||
        !lil__cron_parse(json_string_value(expr), &c, NULL, 0) ||
        !(tok = strtok(p, " ")) || (t = iso_ms(tok)) < 0) {
        json_decref(expr);
        return 1;
    }
    while ((tok = strtok(NULL, " ")) != NULL && !bad) {
        n++;
        bad = !lil__cron_next(&c, t, &t);
        lil__cron_iso(t, iso, sizeof(iso));
        if (bad || strcmp(iso, tok) != 0) {
            fprintf(stderr, "%s:%d: fire %d is %s, want %s\n", file, lineno, n,
                    bad ? "none" : iso, tok);
            bad = 1;
        }
    }
    if (never && lil__cron_next(&c, t, &t))
        bad = 1;
    json_decref(expr);
    return bad || (!never && n == 0);
}

T_TEST(cron_next_data_file)
{
    int cases = 0;

    T_EQ_I64(run_data("cron/next.test", cron_next_line, &cases), 0);
    T_CHECK(cases >= 14);
}

T_TEST(cron_next_edges)
{
    struct lil_cron c;
    char iso[LIL_CRON_ISO_CAP];
    int64_t t = 0, seven = iso_ms("2025-01-02T07:00:00Z");

    T_REQUIRE(lil__cron_parse("0 7 * * *", &c, NULL, 0));
    /* a millisecond before a fire time, and half a second after it */
    T_CHECK(lil__cron_next(&c, seven - 1, &t));
    T_EQ_I64(t, seven);
    T_CHECK(lil__cron_next(&c, seven + 500, &t));
    T_EQ_I64(t, seven + 86400000);
    /* out of range starts: before 1970, after 9999 */
    T_CHECK(!lil__cron_next(&c, -1, &t));
    T_CHECK(!lil__cron_next(&c, LIL_CRON_MAX_MS + 1, &t));
    T_CHECK(lil__cron_next(&c, LIL_CRON_MAX_MS, &t));
    lil__cron_iso(t, iso, sizeof(iso));
    T_EQ_STR(iso, "10000-01-01T07:00:00Z");
    lil__cron_iso(LIL_CRON_MAX_MS, iso, sizeof(iso));
    T_EQ_STR(iso, "9999-12-31T23:59:59Z");
    lil__cron_iso(0, iso, sizeof(iso));
    T_EQ_STR(iso, "1970-01-01T00:00:00Z");
}

/* ---- identifiers ---------------------------------------------------------- */

T_TEST(ident_ids)
{
    T_CHECK(lil__ident_is_id("t"));
    T_CHECK(lil__ident_is_id("a.b:c-d_1"));
    T_CHECK(lil__ident_is_id("1abc"));
    T_CHECK(lil__ident_is_id("..."));
    T_CHECK(!lil__ident_is_id(""));
    T_CHECK(!lil__ident_is_id(NULL));
    T_CHECK(!lil__ident_is_id("t\nrequire('x')"));
    T_CHECK(!lil__ident_is_id("w\n}();danger;{"));
    T_CHECK(!lil__ident_is_id("t\n"));
    T_CHECK(!lil__ident_is_id("a b"));
    T_CHECK(!lil__ident_is_id("a/b"));
    T_CHECK(!lil__ident_is_id("caf\xc3\xa9"));
}

T_TEST(ident_names)
{
    T_CHECK(lil__ident_is_name("x"));
    T_CHECK(lil__ident_is_name("_"));
    T_CHECK(lil__ident_is_name("done_2"));
    T_CHECK(lil__ident_is_name("__proto__"));
    T_CHECK(!lil__ident_is_name(""));
    T_CHECK(!lil__ident_is_name(NULL));
    T_CHECK(!lil__ident_is_name("2x"));
    T_CHECK(!lil__ident_is_name("x; danger()"));
    T_CHECK(!lil__ident_is_name("a-b"));
    T_CHECK(!lil__ident_is_name("a.b"));
    T_CHECK(!lil__ident_is_name("x\n"));
    T_CHECK(!lil__ident_is_name("i of [0]) { danger() } for (const j"));
}

T_TEST(ident_reserved_bindings_roots)
{
    static const char *const reserved[] = {
        "await",    "break",    "case",      "catch",  "class",      "const",
        "continue", "debugger", "default",   "delete", "do",         "else",
        "enum",     "export",   "extends",   "false",  "finally",    "for",
        "function", "if",       "import",    "in",     "instanceof", "new",
        "null",     "return",   "super",     "switch", "this",       "throw",
        "true",     "try",      "typeof",    "var",    "void",       "while",
        "with",     "yield",    "let",       "static", "implements", "interface",
        "package",  "private",  "protected", "public"};
    static const char *const bindings[] = {
        "ctx",     "state", "inputs", "env",  "meta", "iteration", "spec",
        "runtime", "__res", "__out",  "__in", "__fp", "__waited"};

    for (size_t i = 0; i < sizeof(reserved) / sizeof(reserved[0]); i++)
        T_CHECK(lil__ident_is_reserved(reserved[i]));
    for (size_t i = 0; i < sizeof(bindings) / sizeof(bindings[0]); i++)
        T_CHECK(lil__ident_is_binding(bindings[i]));
    T_CHECK(!lil__ident_is_reserved("item"));
    T_CHECK(!lil__ident_is_reserved("Await"));
    T_CHECK(!lil__ident_is_reserved("undefined")); /* not in the list */
    T_CHECK(!lil__ident_is_reserved(NULL));
    T_CHECK(!lil__ident_is_binding("item"));
    T_CHECK(!lil__ident_is_binding("__res2"));
    T_CHECK(lil__ident_is_root("state") && lil__ident_is_root("inputs"));
    T_CHECK(lil__ident_is_root("env") && lil__ident_is_root("meta"));
    T_CHECK(lil__ident_is_root("iteration"));
    T_CHECK(!lil__ident_is_root("ctx") && !lil__ident_is_root("item"));
    T_CHECK(!lil__ident_is_root("State") && !lil__ident_is_root(NULL));
}

/* ---- types ------------------------------------------------------------------ */

T_TEST(type_parse_simple)
{
    static const char *const names[] = {"string",  "int",  "number",
                                        "boolean", "json", "list"};

    static const enum lil_type_kind kinds[] = {LIL_TYPE_STRING, LIL_TYPE_INT,
                                               LIL_TYPE_NUMBER, LIL_TYPE_BOOLEAN,
                                               LIL_TYPE_JSON,   LIL_TYPE_LIST};
    struct lil_type t;

    for (size_t i = 0; i < 6; i++) {
        T_CHECK(lil__type_parse(names[i], &t));
        T_EQ_I64(t.kind, kinds[i]);
        T_EQ_I64(t.nmembers, 0);
    }
    T_CHECK(!lil__type_parse("weird", &t));
    T_CHECK(!lil__type_parse("String", &t));
    T_CHECK(!lil__type_parse("list ", &t));
    T_CHECK(!lil__type_parse(" int", &t));
    T_CHECK(!lil__type_parse("int\n", &t));
    T_CHECK(!lil__type_parse("", &t));
    T_CHECK(!lil__type_parse(NULL, &t));
    T_CHECK(!lil__type_parse("list[int]", &t));
}

/* Member i of t as a NUL-terminated string (static buffer). */
static const char *member_of(const struct lil_type *t, size_t i)
{
    static char buf[512];
    const char *m;
    size_t len;

    if (!lil__type_member(t, i, &m, &len) || len >= sizeof(buf))
        return NULL;
    memcpy(buf, m, len);
    buf[len] = '\0';
    return buf;
}

T_TEST(type_parse_enum)
{
    struct lil_type t;

    T_REQUIRE(lil__type_parse("enum[a,b,c]", &t));
    T_EQ_I64(t.kind, LIL_TYPE_ENUM);
    T_EQ_I64(t.nmembers, 3);
    T_EQ_STR(member_of(&t, 0), "a");
    T_EQ_STR(member_of(&t, 2), "c");
    T_CHECK(member_of(&t, 3) == NULL);
    T_REQUIRE(lil__type_parse("enum[ low | mid ,high ]", &t));
    T_EQ_I64(t.nmembers, 3);
    T_EQ_STR(member_of(&t, 0), "low");
    T_EQ_STR(member_of(&t, 1), "mid");
    T_EQ_STR(member_of(&t, 2), "high");
    T_REQUIRE(lil__type_parse("enum[a,,b]", &t)); /* the reference keeps "" */
    T_EQ_I64(t.nmembers, 3);
    T_EQ_STR(member_of(&t, 1), "");
    T_REQUIRE(lil__type_parse("enum[ ]", &t));
    T_EQ_I64(t.nmembers, 1);
    T_EQ_STR(member_of(&t, 0), "");
    T_REQUIRE(lil__type_parse("enum[\xc2\xa0x y\xe3\x80\x80]", &t)); /* JS trim */
    T_EQ_STR(member_of(&t, 0), "x y");
    T_REQUIRE(lil__type_parse("enum[[a]", &t));
    T_EQ_STR(member_of(&t, 0), "[a");
    T_CHECK(!lil__type_parse("enum[]", &t));
    T_CHECK(!lil__type_parse("enum[a]b]", &t));
    T_CHECK(!lil__type_parse("enum[a", &t));
    T_CHECK(!lil__type_parse("enum a]", &t));
    T_CHECK(!lil__type_parse("enum[a] ", &t));
    T_CHECK(!lil__type_parse("Enum[a]", &t));
}

T_TEST(type_parse_enum_limits)
{
    static char s[8 * 1024 + 64];
    char member[300];
    struct lil_type t;

    strcpy(s, "enum[");
    for (int i = 0; i < 4000; i++) /* no limit on the number of members */
        strcat(s, i ? ",x" : "x");
    strcat(s, "y]");
    T_REQUIRE(lil__type_parse(s, &t));
    T_EQ_I64(t.nmembers, 4000);
    T_EQ_STR(member_of(&t, 3999), "xy");
    memset(member, 'm', 256);
    member[256] = '\0';
    snprintf(s, sizeof(s), "enum[a,%s]", member);
    T_REQUIRE(lil__type_parse(s, &t));
    T_EQ_STR(member_of(&t, 1), member);
    snprintf(s, sizeof(s), "enum[a,%sm]", member);
    T_CHECK(!lil__type_parse(s, &t)); /* 257 bytes: longer than any compared value */
    snprintf(s, sizeof(s), "enum[  %s  ]", member);
    T_CHECK(lil__type_parse(s, &t)); /* trimmed first */
}

/* Does type accept the JSON text value? */
static bool accepts(const char *type, const char *value)
{
    struct lil_type t;
    json_t *v = json_loads(value, JSON_DECODE_ANY, NULL);
    bool ok;

    if (!lil__type_parse(type, &t) || !v) {
        fprintf(stderr, "bad test input %s / %s\n", type, value);
        json_decref(v);
        return false;
    }
    ok = lil__type_accepts(&t, v);
    json_decref(v);
    return ok;
}

T_TEST(type_accepts_simple)
{
    T_CHECK(accepts("int", "1") && accepts("int", "-7") && accepts("int", "1.0"));
    T_CHECK(accepts("int", "1e3"));
    T_CHECK(!accepts("int", "1.5") && !accepts("int", "\"1\"") &&
            !accepts("int", "true"));
    T_CHECK(!accepts("int", "\"hello\""));
    T_CHECK(accepts("number", "1.5") && accepts("number", "2"));
    T_CHECK(!accepts("number", "\"1\"") && !accepts("number", "[]"));
    T_CHECK(accepts("boolean", "false") && !accepts("boolean", "0"));
    T_CHECK(accepts("string", "\"\"") && !accepts("string", "1"));
    T_CHECK(accepts("list", "[]") && !accepts("list", "{}") &&
            !accepts("list", "\"a\""));
    T_CHECK(accepts("json", "{}") && accepts("json", "1") && accepts("json", "[1]"));
    T_CHECK(accepts("int", "null") && accepts("list", "null") &&
            accepts("enum[a]", "null"));
}

T_TEST(type_accepts_enum_via_js_string)
{
    T_CHECK(accepts("enum[a,b,c]", "\"a\"") && !accepts("enum[a,b,c]", "\"z\""));
    T_CHECK(!accepts("enum[a,b,c]", "\"A\"") && !accepts("enum[a,b,c]", "\" a\""));
    T_CHECK(accepts("enum[1,2]", "1") && accepts("enum[1,2]", "\"2\""));
    T_CHECK(accepts("enum[1,2]", "1.0") && !accepts("enum[1,2]", "3"));
    T_CHECK(accepts("enum[1.5]", "1.5") && accepts("enum[-1.5]", "-1.5"));
    T_CHECK(accepts("enum[0]", "-0.0") && accepts("enum[100]", "1e2"));
    T_CHECK(accepts("enum[1e+21]", "1e21") && accepts("enum[1e-7]", "0.0000001"));
    T_CHECK(accepts("enum[0.000001]", "1e-6") && accepts("enum[0.1]", "0.1"));
    T_CHECK(accepts("enum[123456789012345680000]", "123456789012345678901.0"));
    T_CHECK(accepts("enum[1.2345e-7]", "0.00000012345"));
    T_CHECK(accepts("enum[9007199254740992]", "9007199254740993")); /* Number() */
    T_CHECK(accepts("enum[true]", "true") && accepts("enum[false]", "false"));
    T_CHECK(!accepts("enum[True]", "true"));
    T_CHECK(accepts("enum[1,2]", "[1]"));              /* String([1]) = "1" */
    T_CHECK(accepts("enum[a|1,2]", "[1,2]") == false); /* "1,2" is no member */
    T_CHECK(accepts("enum[a,,b]", "[]") && accepts("enum[a,,b]", "\"\""));
    T_CHECK(accepts("enum[x]", "[[\"x\"]]") && accepts("enum[ ]", "[null]"));
    T_CHECK(!accepts("enum[x]", "{\"x\":1}") && !accepts("enum[object Object]", "{}"));
}

T_TEST(type_accepts_enum_with_long_strings)
{
    char v[200] = "\"", t[120] = "enum[";

    memset(v + 1, 'q', 63);
    strcpy(v + 64, "\"");
    memset(t + 5, 'q', 63);
    strcpy(t + 68, "]");
    T_CHECK(accepts(t, v)); /* 63 bytes: the longest member */
    strcpy(v + 64, "q\"");
    T_CHECK(!accepts(t, v));
    memset(v + 1, 'q', 150);
    strcpy(v + 151, "\"");
    T_CHECK(!accepts(t, v));
    T_CHECK(!accepts(
        t,
        "[\"qqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqq\",\"qqqqqqqqqqqqqqqqqqqqqqqqqqqqqqq\"]"));
}

/* ---- did you mean ----------------------------------------------------------- */

T_TEST(suggest_close_words)
{
    static const char *const keys[] = {"cmd",    "command",   "harness",
                                       "prompt", "iteration", "on_done"};
    const size_t n = sizeof(keys) / sizeof(keys[0]);
    char big[80];

    T_EQ_STR(lil__suggest("cdm", keys, n), "cmd"); /* transposition: 1 */
    T_EQ_STR(lil__suggest("comand", keys, n), "command");
    T_EQ_STR(lil__suggest("harnes", keys, n), "harness");
    T_EQ_STR(lil__suggest("promtp", keys, n), "prompt");
    T_EQ_STR(lil__suggest("on_don", keys, n), "on_done");
    T_EQ_STR(lil__suggest("itertaoin", keys, n), "iteration"); /* 3 <= 9/3 */
    T_EQ_STR(lil__suggest("cmd", keys, n), "cmd");
    T_CHECK(lil__suggest("xyz", keys, n) == NULL);
    T_CHECK(lil__suggest("pr", keys, n) == NULL);
    T_CHECK(lil__suggest("", keys, n) == NULL);
    T_CHECK(lil__suggest(NULL, keys, n) == NULL);
    T_CHECK(lil__suggest("cmd", NULL, 0) == NULL);
    memset(big, 'c', 65);
    big[65] = '\0';
    T_CHECK(lil__suggest(big, keys, n) == NULL);
}

T_TEST(suggest_limits)
{
    static const char *const two[] = {"xy", "ab"};
    static const char *const ties[] = {"cmx", "cmy"};
    static const char *const far[] = {"abcdefghij"};

    T_CHECK(lil__suggest("ab", two, 1) == NULL); /* 2 edits of 2 letters */
    T_EQ_STR(lil__suggest("ac", two, 2), "ab");
    T_EQ_STR(lil__suggest("cmd", ties, 2), "cmx"); /* the first closest */
    T_CHECK(lil__suggest("abcdefghij", far, 1) != NULL);
    T_CHECK(lil__suggest("abcdefgxyz", far, 1) != NULL); /* 3 <= 10/3 */
    T_CHECK(lil__suggest("abcdewxyz", far, 1) == NULL);  /* 5 > 3 */
}

/* The near-miss rule of unknown keys (ident.c): near ones are errors, far
 * ones are ignored with a warning. */
T_TEST(key_near_rule)
{
    static const char *const shell[] = {"id",   "kind", "when",   "cmd",
                                        "args", "save", "on_done"};
    static const char *const agent[] = {"id",     "kind",          "when", "harness",
                                        "prompt", "allowed-tools", "save", "on_done"};
    static const char *const caps[] = {"max_iterations", "no_progress", "budget",
                                       "on_cap_exceeded"};
    static const char *const var[] = {"type", "init", "description"};
    static const char *const meta[] = {"name", "version", "description"};
    const size_t ns = sizeof(shell) / sizeof(shell[0]);
    const size_t na = sizeof(agent) / sizeof(agent[0]);
    const size_t nc = sizeof(caps) / sizeof(caps[0]);
    char big[80];

    /* 0: case and '-'/'_' */
    T_EQ_STR(lil__key_near("CMD", shell, ns), "cmd");
    T_EQ_STR(lil__key_near("On-Done", shell, ns), "on_done");
    T_EQ_STR(lil__key_near("allowed_tools", agent, na), "allowed-tools");
    /* 1-2: edits, at most a third of the longer key */
    T_EQ_STR(lil__key_near("on_don", shell, ns), "on_done");
    T_EQ_STR(lil__key_near("cdm", shell, ns), "cmd");
    T_EQ_STR(lil__key_near("cwd", shell, ns), "cmd");
    T_EQ_STR(lil__key_near("prmpt", agent, na), "prompt");
    T_EQ_STR(lil__key_near("max_iteratons", caps, nc), "max_iterations");
    T_EQ_STR(lil__key_near("budgte", caps, nc), "budget");
    /* 3: truncations */
    T_EQ_STR(lil__key_near("max_iter", caps, nc), "max_iterations");
    T_EQ_STR(lil__key_near("tools", agent, na), "allowed-tools");
    T_EQ_STR(lil__key_near("done", shell, ns), "on_done");
    T_EQ_STR(lil__key_near("desc", var, 3), "description");
    /* 4: spelled out */
    T_EQ_STR(lil__key_near("comand", shell, ns), "cmd");
    T_EQ_STR(lil__key_near("command", shell, ns), "cmd");
    T_EQ_STR(lil__key_near("arguments", shell, ns), "args");
    T_EQ_STR(lil__key_near("initial", var, 3), "init");
    /* far: ignored */
    T_CHECK(lil__key_near("description", shell, ns) == NULL);
    T_CHECK(lil__key_near("description", agent, na) == NULL);
    T_CHECK(lil__key_near("name", shell, ns) == NULL); /* save: 2 edits of 4 */
    T_CHECK(lil__key_near("tags", shell, ns) == NULL); /* args: 2 edits of 4 */
    T_CHECK(lil__key_near("notes", var, 3) == NULL);
    T_CHECK(lil__key_near("author", meta, 3) == NULL);
    T_CHECK(lil__key_near("timeout", shell, ns) == NULL);
    T_CHECK(lil__key_near("commands", shell, ns) == NULL); /* 8 > 2 * 3 + 1 */
    T_CHECK(lil__key_near("if", shell, ns) == NULL);       /* id: 1 edit of 2 */
    T_CHECK(lil__key_near("ma", caps, nc) == NULL);        /* too short to truncate */
    T_CHECK(lil__key_near("", shell, ns) == NULL);
    T_CHECK(lil__key_near(NULL, shell, ns) == NULL);
    T_CHECK(lil__key_near("cmd", NULL, 0) == NULL);
    memset(big, 'c', 65);
    big[65] = '\0';
    T_CHECK(lil__key_near(big, shell, ns) == NULL);
}

/* ---- artifacts and channels ------------------------------------------------ */

static void expect_pattern(const char *p, bool include, const char *want_why)
{
    char why[200] = "garbage";
    bool ok = lil__artifact_pattern_safe(p, include, why, sizeof(why));

    if (ok != (want_why == NULL) || strcmp(why, want_why ? want_why : "") != 0) {
        fprintf(stderr, "pattern '%s' (%s): %d '%s', want '%s'\n", p,
                include ? "include" : "exclude", ok, why, want_why ? want_why : "safe");
        T_CHECK(0);
    }
}

#define REL   "must be a repository-relative POSIX glob "
#define TRAV  "must not traverse outside the artifact root "
#define CTRL  "must not contain control characters "
#define SECR  "must not allowlist secret or dependency paths "
#define ACTIV "must not allow active-content formats "

T_TEST(artifact_relative_rule)
{
    expect_pattern("reports/*.md", true, NULL);
    expect_pattern("reports/*.md", false, NULL);
    expect_pattern("reports\\x.md", true, REL "(contains a backslash)");
    expect_pattern("reports\\x.md", false, REL "(contains a backslash)");
    expect_pattern("/etc/passwd", true, REL "(starts with '/')");
    expect_pattern("/tmp", false, REL "(starts with '/')");
    expect_pattern("~/x", true, REL "(starts with '~')");
    expect_pattern("a~/x", true, NULL);
    expect_pattern("C:/x", true, REL "(starts with the drive letter 'C:')");
    expect_pattern("z:x", false, REL "(starts with the drive letter 'z:')");
    expect_pattern("1:x", true, NULL);
    expect_pattern("ab:x", true, NULL);
}

T_TEST(artifact_traversal_rule)
{
    expect_pattern("../outside/*.md", true, TRAV "('..' path part)");
    expect_pattern("a/../b", false, TRAV "('..' path part)");
    expect_pattern("a/..", true, TRAV "('..' path part)");
    expect_pattern("./a", true, TRAV "('.' path part)");
    expect_pattern("a/./b", false, TRAV "('.' path part)");
    expect_pattern(".", true, TRAV "('.' path part)");
    expect_pattern("a/...", true, NULL);
    expect_pattern("..a/b..", true, NULL);
    expect_pattern("a//b", true, NULL);
    expect_pattern(".hidden/x", true, NULL);
    /* rule order: traversal before secrets */
    expect_pattern(".env/../x", true, TRAV "('..' path part)");
}

T_TEST(artifact_control_rule)
{
    expect_pattern("a\nb", true, CTRL "(byte 0x0a)");
    expect_pattern("a\tb", false, CTRL "(byte 0x09)");
    expect_pattern("a\x7f", false, CTRL "(byte 0x7f)");
    expect_pattern("a\x1f", true, CTRL "(byte 0x1f)");
    expect_pattern("caf\xc3\xa9/*.md", true, NULL); /* UTF-8 is fine */
    expect_pattern("a b", true, NULL);
}

T_TEST(artifact_env_rule)
{
    expect_pattern("**/.env*", true, SECR "(allowlists .env files)");
    expect_pattern(".env", true, SECR "(allowlists .env files)");
    expect_pattern("config/.env.example", true, SECR "(allowlists .env files)");
    expect_pattern(".envrc", true, SECR "(allowlists .env files)");
    expect_pattern(".ENV", true, SECR "(allowlists .env files)");
    expect_pattern(".env/x.md", true, SECR "(allowlists .env files)");
    expect_pattern("**/.env*", false, NULL); /* excluding it is fine */
    expect_pattern("x.env", true, NULL);
    expect_pattern("env/.en", true, NULL);
}

T_TEST(artifact_git_and_node_modules_rules)
{
    expect_pattern(".git/", true, SECR "(allowlists .git/)");
    expect_pattern(".git", true, SECR "(allowlists .git/)");
    expect_pattern("a/.GIT/config", true, SECR "(allowlists .git/)");
    expect_pattern(".git/", false, NULL);
    expect_pattern(".github/", true, NULL);
    expect_pattern(".github/workflows/*.yml", true, NULL);
    expect_pattern(".gitignore", true, NULL);
    expect_pattern("node_modules/", true, SECR "(allowlists node_modules/)");
    expect_pattern("web/Node_Modules/x.js", true, SECR "(allowlists node_modules/)");
    expect_pattern("node_modules/**", false, NULL);
    expect_pattern("node_modules2/x", true, NULL);
    expect_pattern("my_node_modules/x", true, NULL);
}

T_TEST(artifact_secret_name_rule)
{
    expect_pattern("config/secrets.json", true, SECR "(last path part names a secret)");
    expect_pattern("MY_SECRET", true, SECR "(last path part names a secret)");
    expect_pattern("aws-credentials", true, SECR "(last path part names a credential)");
    expect_pattern("id.privatekey", true, SECR "(last path part names a privatekey)");
    expect_pattern("Private-Key.pem", true,
                   SECR "(last path part names a private-key)");
    expect_pattern("x/private_key", true, SECR "(last path part names a private_key)");
    expect_pattern("secret/notes.md", true, NULL); /* only the last part */
    expect_pattern("private.key", true, NULL);
    expect_pattern("secrets.json", false, NULL);
}

T_TEST(artifact_active_content_rule)
{
    expect_pattern("reports/*.html", true, ACTIV "(.html)");
    expect_pattern("a.htm", true, ACTIV "(.htm)");
    expect_pattern("a.HTML", true, ACTIV "(.HTML)");
    expect_pattern("icons/*.svg", true, ACTIV "(.svg)");
    expect_pattern("feed.xml?", true, ACTIV "(.xml)");
    expect_pattern("page.xhtml*", true, ACTIV "(.xhtml)");
    expect_pattern("x.html*/y.md", true, ACTIV "(.html)");
    expect_pattern("reports/*.html", false, NULL);
    expect_pattern("a.html.md", true, NULL);
    expect_pattern("a.htmx", true, NULL);
    expect_pattern("a.shtml", true, NULL);
    expect_pattern("a.xmlx", true, NULL);
    expect_pattern("html/x.md", true, NULL);
}

T_TEST(artifact_no_buffer)
{
    char why[4];

    T_CHECK(!lil__artifact_pattern_safe("../x", true, NULL, 0));
    T_CHECK(!lil__artifact_pattern_safe("../x", true, why, sizeof(why)));
    T_EQ_STR(why, "mus");
    T_CHECK(!lil__artifact_pattern_safe(NULL, true, why, sizeof(why)));
}

T_TEST(notify_channels)
{
    char name[70];

    T_CHECK(lil__notify_channel_safe("ops"));
    T_CHECK(lil__notify_channel_safe("release-review"));
    T_CHECK(lil__notify_channel_safe("a.b_c-d"));
    T_CHECK(lil__notify_channel_safe("7"));
    T_CHECK(!lil__notify_channel_safe("https://hooks.example/secret"));
    T_CHECK(!lil__notify_channel_safe(""));
    T_CHECK(!lil__notify_channel_safe(NULL));
    T_CHECK(!lil__notify_channel_safe("-ops"));
    T_CHECK(!lil__notify_channel_safe(".ops"));
    T_CHECK(!lil__notify_channel_safe("_ops"));
    T_CHECK(!lil__notify_channel_safe("a b"));
    T_CHECK(!lil__notify_channel_safe("ops\n"));
    T_CHECK(!lil__notify_channel_safe("op$"));
    memset(name, 'a', 64);
    name[64] = '\0';
    T_CHECK(lil__notify_channel_safe(name));
    name[64] = 'a';
    name[65] = '\0';
    T_CHECK(!lil__notify_channel_safe(name));
}

T_MAIN()
