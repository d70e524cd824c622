/*
 * args.c -- command-line parsing shared by the verbs.
 *
 * A verb describes its flags in a table (struct cli_flag) and names its
 * required positionals; the global flags --dir, --json and --help are known
 * to every verb.  Flags and positionals may come in any order; "--" ends
 * the flags.  `--flag value` and `--flag=value` are the same.  Anything
 * else (an unknown flag, a missing value or argument, one argument too
 * many) is a usage error: a message on stderr and CLI_EXIT_USAGE (64).  Verbs
 * whose positionals are optional or repeated use cli_parse_any, which
 * collects them and leaves the flags to cli_parse.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

void cli_err(const struct cli_ctx *ctx, const char *fmt, ...)
{
    va_list ap;

    fprintf(stderr, "lil: ");
    if (ctx && ctx->verb)
        fprintf(stderr, "%s: ", ctx->verb->name);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
}

int cli_usage(const struct cli_ctx *ctx, const char *fmt, ...)
{
    va_list ap;
    const char *verb = ctx && ctx->verb ? ctx->verb->name : NULL;

    fprintf(stderr, "lil: ");
    if (verb)
        fprintf(stderr, "%s: ", verb);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    if (verb)
        fprintf(stderr, "\nTry 'lil %s --help'.\n", verb);
    else
        fprintf(stderr, "\nTry 'lil --help'.\n");
    return CLI_EXIT_USAGE;
}

void cli_print_help(const struct cli_verb *verb)
{
    fputs(verb->help, stdout);
}

size_t cli_edit_distance(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b), row[32];

    if (la > 31 || lb > 31)
        return 99;
    for (size_t j = 0; j <= lb; j++)
        row[j] = j;
    for (size_t i = 1; i <= la; i++) {
        size_t diag = row[0];
        row[0] = i;
        for (size_t j = 1; j <= lb; j++) {
            size_t up = row[j];
            size_t best = diag + (a[i - 1] != b[j - 1]);
            if (up + 1 < best)
                best = up + 1;
            if (row[j - 1] + 1 < best)
                best = row[j - 1] + 1;
            row[j] = best;
            diag = up;
        }
    }
    return row[lb];
}

/* The suggestion for a mistyped name so far: the closest candidate. */
struct nearest {
    const char *name; /* the mistyped name */
    const char *best; /* NULL: none close enough */
    size_t best_d;
};

static void consider(struct nearest *n, const char *cand)
{
    size_t d = cli_edit_distance(n->name, cand);

    if (d < n->best_d && d < strlen(n->name)) {
        n->best = cand;
        n->best_d = d;
    }
}

/* The usage error of an unknown flag, with n's suggestion when it has one. */
static int report_unknown(const struct cli_ctx *ctx, const char *word, size_t len,
                          const struct nearest *n)
{
    if (n->best)
        return cli_usage(ctx, "unknown flag '%.*s'; did you mean '--%s'?",
                         len ? (int)len + 2 : (int)strlen(word), word, n->best);
    return cli_usage(ctx, "unknown flag '%.*s'", len ? (int)len + 2 : (int)strlen(word),
                     word);
}

int cli_unknown_flag(const struct cli_ctx *ctx, const char *word, size_t len,
                     const char *const *names)
{
    char name[32] = "";
    struct nearest n = {name, NULL, 3};

    if (len > 0 && len < sizeof(name))
        memcpy(name, word + 2, len);
    for (size_t i = 0; name[0] && names && names[i]; i++)
        consider(&n, names[i]);
    return report_unknown(ctx, word, len, &n);
}

/* The flag named by word (after "--", up to '=' when there is one). */
static const struct cli_flag *find_flag(const struct cli_flag *flags, const char *word,
                                        size_t len)
{
    for (const struct cli_flag *f = flags; f && f->name; f++) {
        if (strlen(f->name) == len && memcmp(f->name, word, len) == 0)
            return f;
    }
    return NULL;
}

/* The global flags, as a table of the same shape as a verb's. */
struct globals {
    struct cli_flag table[5];
    const char *dir;
    bool dir_set, json, help, shared_store;
};

static void globals_init(struct globals *g)
{
    memset(g, 0, sizeof(*g));
    g->table[0] = (struct cli_flag){"dir", true, &g->dir, &g->dir_set};
    g->table[1] = (struct cli_flag){"json", false, NULL, &g->json};
    g->table[2] = (struct cli_flag){"help", false, NULL, &g->help};
    g->table[3] = (struct cli_flag){"shared-store", false, NULL, &g->shared_store};
}

/* Take the value of flag f: "=value" glued to it or the next word. */
/* The flags whose value is text that is journaled (who, why): UTF-8, or a
 * usage error naming the byte. */
static int check_text_value(const struct cli_ctx *ctx, const struct cli_flag *f,
                            const char *value)
{
    const unsigned char *p = (const unsigned char *)value;
    size_t n = strlen(value);

    if (strcmp(f->name, "actor") != 0 && strcmp(f->name, "reason") != 0)
        return CLI_EXIT_OK;
    for (size_t i = 0; i < n;) {
        uint32_t cp;
        size_t k = cli_utf8_decode(p + i, n - i, &cp);

        if (k == 0)
            return cli_usage(ctx, "flag --%s: not UTF-8 (byte 0x%02x at offset %zu)",
                             f->name, p[i], i);
        i += k;
    }
    return CLI_EXIT_OK;
}

static int take_value(const struct cli_ctx *ctx, const struct cli_flag *f,
                      const char *eq, int argc, char **argv, int *i)
{
    const char *value = eq ? eq + 1 : NULL;

    if (!f->has_value) {
        if (eq)
            return cli_usage(ctx, "flag --%s takes no value", f->name);
        *f->set = true;
        return CLI_EXIT_OK;
    }
    if (!value) {
        if (*i + 1 >= argc)
            return cli_usage(ctx, "flag --%s needs a value", f->name);
        value = argv[++*i];
    }
    if (check_text_value(ctx, f, value) != CLI_EXIT_OK)
        return CLI_EXIT_USAGE;
    *f->value = value;
    if (f->set)
        *f->set = true;
    return CLI_EXIT_OK;
}

/* The usage error of the unknown flag word (its name the len bytes after
 * "--"), suggesting the verb's or the global flag closest to it. */
static int unknown_flag(const struct cli_ctx *ctx, const struct globals *g,
                        const struct cli_args *a, const char *word, size_t len)
{
    char name[32] = "";
    struct nearest n = {name, NULL, 3};

    if (len < sizeof(name))
        memcpy(name, word + 2, len);
    for (const struct cli_flag *f = a->flags; name[0] && f && f->name; f++)
        consider(&n, f->name);
    for (const struct cli_flag *f = g->table; name[0] && f->name; f++)
        consider(&n, f->name);
    return report_unknown(ctx, word, len, &n);
}

/* Handle the flag word argv[*i] ("--name" or "--name=value" or "-h"). */
static int parse_flag(const struct cli_ctx *ctx, struct globals *g,
                      const struct cli_args *a, int argc, char **argv, int *i)
{
    const char *word = argv[*i];
    const char *name, *eq;
    const struct cli_flag *f;

    if (strcmp(word, "-h") == 0) {
        g->help = true;
        return CLI_EXIT_OK;
    }
    if (word[1] != '-')
        return cli_usage(ctx, "unknown flag '%s'", word);
    name = word + 2;
    eq = strchr(name, '=');
    size_t len = eq ? (size_t)(eq - name) : strlen(name);
    f = find_flag(a->flags, name, len);
    if (!f)
        f = find_flag(g->table, name, len);
    if (!f)
        return unknown_flag(ctx, g, a, word, len);
    return take_value(ctx, f, eq, argc, argv, i);
}

/* Store one positional argument, or complain that there are too many. */
static int take_positional(const struct cli_ctx *ctx, const struct cli_args *a,
                           size_t *npos, const char *word)
{
    size_t max = 0;

    while (a->names && a->names[max])
        max++;
    if (*npos >= max)
        return cli_usage(ctx, "unexpected argument '%s'", word);
    a->pos[(*npos)++] = word;
    return CLI_EXIT_OK;
}

/* Copy the global flags into ctx and check the positional count. */
static int finish(struct cli_ctx *ctx, const struct globals *g,
                  const struct cli_args *a, size_t npos)
{
    if (g->help) {
        cli_print_help(ctx->verb);
        return CLI_PARSE_HELP;
    }
    if (g->dir_set)
        ctx->dir = g->dir;
    if (g->json)
        ctx->json = true;
    if (g->shared_store)
        ctx->shared_store = true;
    if (ctx->dir && !*ctx->dir)
        return cli_usage(ctx, "--dir needs a non-empty directory");
    if (a->names && a->names[npos])
        return cli_usage(ctx, "missing argument %s", a->names[npos]);
    return CLI_EXIT_OK;
}

int cli_parse(struct cli_ctx *ctx, int argc, char **argv, const struct cli_args *a)
{
    struct globals g;
    size_t npos = 0;
    bool flags_done = false;
    int rc;

    globals_init(&g);
    for (int i = 0; i < argc; i++) {
        const char *w = argv[i];
        if (!flags_done && strcmp(w, "--") == 0) {
            flags_done = true;
            continue;
        }
        if (!flags_done && w[0] == '-' && w[1] != '\0')
            rc = parse_flag(ctx, &g, a, argc, argv, &i);
        else
            rc = take_positional(ctx, a, &npos, w);
        if (rc != CLI_EXIT_OK)
            return rc;
    }
    return finish(ctx, &g, a, npos);
}

/* Does the flag word w ("--name", no '=') take the next word as value? */
static bool takes_value(const struct cli_args *a, const char *w)
{
    const char *name = w + 2;

    if (strchr(name, '='))
        return false;
    if (strcmp(name, "dir") == 0)
        return true;
    for (const struct cli_flag *f = a->flags; f && f->name; f++) {
        if (strcmp(f->name, name) == 0)
            return f->has_value;
    }
    return false;
}

int cli_parse_any(struct cli_ctx *ctx, int argc, char **argv, const struct cli_args *a,
                  const char ***pos, size_t *npos)
{
    char **flags = malloc(((size_t)argc + 1) * sizeof(*flags));
    bool done = false;
    int nf = 0, rc;

    *npos = 0;
    *pos = calloc((size_t)argc + 1, sizeof(**pos));
    if (!flags || !*pos) {
        free(flags);
        free(*pos);
        *pos = NULL;
        cli_err(ctx, "out of memory");
        return CLI_EXIT_FAIL;
    }
    for (int i = 0; i < argc; i++) {
        char *w = argv[i];
        if (!done && strcmp(w, "--") == 0) {
            done = true;
        } else if (!done && w[0] == '-' && w[1] != '\0') {
            flags[nf++] = w;
            if (w[1] != '-' || !takes_value(a, w) || i + 1 >= argc)
                continue;
            if (strncmp(argv[i + 1], "--", 2) == 0 && argv[i + 1][2] != '\0') {
                free(flags);
                free(*pos);
                *pos = NULL;
                return cli_usage(ctx,
                                 "flag %s needs a value, not the flag '%s' (write "
                                 "%s=VALUE for a value that starts with --)",
                                 w, argv[i + 1], w);
            }
            flags[nf++] = argv[++i];
        } else {
            (*pos)[(*npos)++] = w;
        }
    }
    rc = cli_parse(ctx, nf, flags, a);
    free(flags);
    return rc;
}
