/*
 * test_spec_data.c -- the acceptance inputs of the loop-spec validator,
 * through lil.h: every file of tests/data/spec/ (.yaml, .yml, .json) is
 * loaded with lil_spec_load and its diagnostics compared with the
 * expectations the file states.
 *
 * Expectations are comment lines of the file (for a .json file: the lines
 * of <file>.expect, with or without the leading "# "):
 *
 *   # expect: <error|warning|info> <code> [<line>:<col>] [~ <text>]
 *   # expect: none
 *   # normalized: <dotted.path> = <json>
 *
 * The diagnostics must equal the expect lines exactly: each diagnostic is
 * matched by one line and each line by one diagnostic (same severity and
 * code; the same position and a message containing <text> when given).
 * `none` means no diagnostic at all.  A normalized line looks the path up
 * in lil_spec_json's document (numeric parts index arrays) and compares it
 * with <json>.  A file without any expectation is an error of the test.
 */
#include <dirent.h>
#include <lil/lil.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "t.h"

#ifndef T_DATA_DIR
#error "T_DATA_DIR must name tests/data"
#endif

#define MAX_EXPECT 64

struct expect {
    lil_severity sev;
    char code[64];
    unsigned line, col; /* 0: any */
    char text[256];     /* "" : any */
    bool matched;
};

struct normalized {
    char path[256];
    char json[512];
};

struct expectations {
    struct expect e[MAX_EXPECT];
    size_t n;
    struct normalized norm[16];
    size_t nnorm;
    bool none;
    bool any; /* at least one expectation line seen */
};

static bool parse_severity(const char *w, lil_severity *sev)
{
    if (strcmp(w, "error") == 0)
        *sev = LIL_SEV_ERROR;
    else if (strcmp(w, "warning") == 0)
        *sev = LIL_SEV_WARNING;
    else if (strcmp(w, "info") == 0)
        *sev = LIL_SEV_INFO;
    else
        return false;
    return true;
}

/* "error bad-ref 12:7 ~ text" */
static bool parse_expect(const char *s, struct expect *e)
{
    char sev[16] = "";
    int used = 0;
    const char *tilde;

    memset(e, 0, sizeof(*e));
    if (sscanf(s, "%15s %63s%n", sev, e->code, &used) != 2 ||
        !parse_severity(sev, &e->sev))
        return false;
    s += used;
    while (*s == ' ')
        s++;
    if (sscanf(s, "%u:%u", &e->line, &e->col) != 2)
        e->line = e->col = 0;
    tilde = strchr(s, '~');
    if (tilde) {
        tilde++;
        while (*tilde == ' ')
            tilde++;
        snprintf(e->text, sizeof(e->text), "%s", tilde);
    }
    return true;
}

static bool parse_line(const char *file, char *line, struct expectations *x)
{
    char *p = line;
    size_t len = strlen(p);

    while (len && (p[len - 1] == '\n' || p[len - 1] == '\r' || p[len - 1] == ' '))
        p[--len] = '\0';
    while (*p == ' ')
        p++;
    if (*p == '#')
        p++;
    while (*p == ' ')
        p++;
    if (strncmp(p, "expect:", 7) == 0) {
        p += 7;
        while (*p == ' ')
            p++;
        x->any = true;
        if (strcmp(p, "none") == 0) {
            x->none = true;
            return true;
        }
        if (x->n == MAX_EXPECT || !parse_expect(p, &x->e[x->n])) {
            fprintf(stderr, "%s: bad expect line: %s\n", file, p);
            return false;
        }
        x->n++;
    } else if (strncmp(p, "normalized:", 11) == 0) {
        char *eq = strchr(p, '=');
        struct normalized *nm;

        if (!eq || x->nnorm == 16) {
            fprintf(stderr, "%s: bad normalized line: %s\n", file, p);
            return false;
        }
        nm = &x->norm[x->nnorm++];
        *eq = '\0';
        p += 11;
        while (*p == ' ')
            p++;
        snprintf(nm->path, sizeof(nm->path), "%s", p);
        for (size_t k = strlen(nm->path); k && nm->path[k - 1] == ' '; k--)
            nm->path[k - 1] = '\0';
        snprintf(nm->json, sizeof(nm->json), "%s", eq + 1);
        x->any = true;
    }
    return true;
}

static bool read_expectations(const char *path, struct expectations *x)
{
    char expect_path[1024], line[1024];
    const char *dot = strrchr(path, '.');
    FILE *f;
    bool ok = true;

    memset(x, 0, sizeof(*x));
    snprintf(expect_path, sizeof(expect_path), "%s.expect", path);
    f = fopen(expect_path, "r");
    if (!f && dot && strcmp(dot, ".json") != 0)
        f = fopen(path, "r");
    if (!f) {
        fprintf(stderr, "%s: no expectations (.json files need %s)\n", path,
                expect_path);
        return false;
    }
    while (ok && fgets(line, sizeof(line), f))
        ok = parse_line(path, line, x);
    fclose(f);
    if (ok && !x->any)
        fprintf(stderr, "%s: no '# expect:' line\n", path);
    return ok && x->any;
}

static bool diag_matches(const lil_diag *d, const struct expect *e)
{
    if (e->matched || d->severity != e->sev || strcmp(d->code, e->code) != 0)
        return false;
    if (e->line && (d->line != e->line || d->column != e->col))
        return false;
    return !e->text[0] || strstr(d->message, e->text);
}

static const char *sev_name(lil_severity s)
{
    return s == LIL_SEV_ERROR ? "error" : s == LIL_SEV_WARNING ? "warning" : "info";
}

/* Match diagnostics to expectations; print every mismatch. */
static bool check_diags(const char *path, const lil_spec *spec, struct expectations *x)
{
    size_t n = lil_spec_diag_count(spec);
    bool ok = true;

    if (x->none && n) {
        fprintf(stderr, "%s: expected no diagnostic, got %zu\n", path, n);
        ok = false;
    }
    for (size_t i = 0; i < n; i++) {
        const lil_diag *d = lil_spec_diag(spec, i);
        size_t k;

        for (k = 0; k < x->n && !diag_matches(d, &x->e[k]); k++)
            ;
        if (k < x->n) {
            x->e[k].matched = true;
            continue;
        }
        fprintf(stderr, "%s: unexpected diagnostic %s %s %u:%u %s (%s)\n", path,
                sev_name(d->severity), d->code, d->line, d->column, d->message,
                d->path);
        ok = false;
    }
    for (size_t k = 0; k < x->n; k++) {
        if (!x->e[k].matched) {
            fprintf(stderr, "%s: missing diagnostic %s %s %u:%u ~ %s\n", path,
                    sev_name(x->e[k].sev), x->e[k].code, x->e[k].line, x->e[k].col,
                    x->e[k].text);
            ok = false;
        }
    }
    return ok;
}

/* Release a string of json_dumps.  liblil.a installs jansson's allocation
 * hooks (docs/api.md), so it goes back through them, never to free(). */
static void json_text_free(char *s)
{
    json_malloc_t m;
    json_free_t f;

    json_get_alloc_funcs(&m, &f);
    f(s);
}

/* The value at a dotted path ("caps.budget.tokens", "body.0.id"). */
static json_t *lookup(json_t *doc, const char *path)
{
    char buf[256];
    char *save = NULL;

    snprintf(buf, sizeof(buf), "%s", path);
    for (char *part = strtok_r(buf, ".", &save); part && doc;
         part = strtok_r(NULL, ".", &save)) {
        if (json_is_array(doc))
            doc = json_array_get(doc, strtoul(part, NULL, 10));
        else
            doc = json_object_get(doc, part);
    }
    return doc;
}

static bool check_normalized(const char *path, const lil_spec *spec,
                             const struct expectations *x)
{
    lil_bytes js;
    json_t *doc;
    bool ok = true;

    if (!x->nnorm)
        return true;
    if (lil_spec_json(spec, &js) != LIL_OK) {
        fprintf(stderr, "%s: lil_spec_json failed: %s\n", path, lil_errmsg());
        return false;
    }
    doc = json_loadb(js.data, js.len, 0, NULL);
    lil_free(js.data);
    for (size_t i = 0; doc && i < x->nnorm; i++) {
        json_t *want = json_loads(x->norm[i].json, JSON_DECODE_ANY, NULL);
        json_t *got = lookup(doc, x->norm[i].path);

        if (!want || !got || !json_equal(want, got)) {
            char *g = got ? json_dumps(got, JSON_ENCODE_ANY | JSON_COMPACT) : NULL;

            fprintf(stderr, "%s: normalized %s = %s, expected %s\n", path,
                    x->norm[i].path, g ? g : "(absent)", x->norm[i].json);
            json_text_free(g);
            ok = false;
        }
        json_decref(want);
    }
    json_decref(doc);
    return ok && doc;
}

static bool is_spec_file(const char *name)
{
    const char *dot = strrchr(name, '.');

    return dot && (strcmp(dot, ".yaml") == 0 || strcmp(dot, ".yml") == 0 ||
                   strcmp(dot, ".json") == 0);
}

static int cmp_names(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The spec files of dir, sorted; returns their count. */
static size_t list_specs(const char *dir, char ***out)
{
    DIR *d = opendir(dir);
    struct dirent *de;
    char **names = NULL;
    size_t n = 0;

    while (d && (de = readdir(d))) {
        if (!is_spec_file(de->d_name))
            continue;
        names = realloc(names, (n + 1) * sizeof(*names));
        names[n++] = strdup(de->d_name);
    }
    if (d)
        closedir(d);
    if (n)
        qsort(names, n, sizeof(*names), cmp_names);
    *out = names;
    return n;
}

T_TEST(every_spec_file_gives_exactly_its_expected_diagnostics)
{
    const char *dir = T_DATA_DIR "/spec";
    char **names;
    size_t n = list_specs(dir, &names), failed = 0;

    T_CHECK(n >= 40); /* the acceptance set is not allowed to shrink quietly */
    for (size_t i = 0; i < n; i++) {
        char path[1024];
        struct expectations x;
        lil_spec *spec = NULL;
        lil_status rc;

        snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
        if (!read_expectations(path, &x)) {
            failed++;
        } else if ((rc = lil_spec_load(NULL, path, NULL, &spec)) != LIL_OK) {
            fprintf(stderr, "%s: lil_spec_load returned %d: %s\n", path, rc,
                    lil_errmsg());
            failed++;
        } else if (!check_diags(path, spec, &x) || !check_normalized(path, spec, &x)) {
            failed++;
        }
        lil_spec_free(spec);
        free(names[i]);
    }
    free(names);
    if (failed)
        fprintf(stderr, "%zu of %zu spec files failed\n", failed, n);
    T_EQ_I64(failed, 0);
}

T_MAIN()
