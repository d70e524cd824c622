/*
 * cmd_new.c -- `lil new ID [--pattern P | --blueprint NAME | --from-shell
 * CMD --until EXPR] [--out FILE] [--force]` and `lil new --list`: start a
 * loop spec from a built-in blueprint (blueprints.c).
 *
 * The text is loaded with lil_spec_parse before anything is printed or
 * written: when it has an error nothing is written and the exit status is
 * 1.  The errors of EXPR are told once, in EXPR's terms: EXPR as typed and
 * the column in it (the generated spec holds EXPR twice, as terminate.until
 * and inside the wait step's `not (EXPR)`; only the first is told, its
 * position mapped back through the YAML quoting).  Other errors are shown
 * as the generated spec's.  --from-shell without --until is exit 1, as in
 * the reference's `loopc new` (an uncaught error there).  Without --out the
 * spec goes to stdout.  With --out FILE it is written to a temporary file
 * in FILE's directory, synced, and then linked to FILE (refused when FILE
 * exists: link(2) fails with EEXIST, so even a file created meanwhile is
 * not replaced) or, with --force, renamed over it; the directory is synced
 * last.  A FILE named *.json is refused: the spec is YAML, and lil reads a
 * .json name as JSON.
 *
 * A bad ID (not ^[A-Za-z0-9_.:-]+$), an unknown pattern or blueprint, a
 * bad combination of flags and CMD or EXPR that is not UTF-8 are usage
 * errors (64), like an invalid run id elsewhere.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>

#include "cli.h"
#include "spec_cli.h"

/* The flags of the verb. */
struct new_opts {
    const char *pattern, *blueprint, *from_shell, *until, *out;
    bool has_pattern, has_blueprint, has_from_shell, has_until, has_out;
    bool force, list;
};

/* ------------------------------------------------------------------------ */
/* --list                                                                    */

static int print_list(const struct cli_ctx *ctx)
{
    size_t n;
    const struct cli_blueprint *bp = cli_blueprints(&n);
    json_t *arr;

    if (!ctx->json) {
        for (size_t i = 0; i < n; i++)
            printf("%-16s %-21s %s\n", bp[i].name, bp[i].pattern, bp[i].summary);
        return CLI_EXIT_OK;
    }
    arr = json_array();
    for (size_t i = 0; arr && i < n; i++) {
        json_t *o = json_object();
        cli_json_set(o, "name", json_string(bp[i].name));
        cli_json_set(o, "pattern", json_string(bp[i].pattern));
        cli_json_set(o, "summary", json_string(bp[i].summary));
        if (json_array_append_new(arr, o) != 0) {
            json_decref(arr);
            arr = NULL;
        }
    }
    return cli_json_print(ctx, arr, false);
}

/* ------------------------------------------------------------------------ */
/* Choosing and rendering                                                    */

/* Check the flag combination; returns CLI_EXIT_OK or CLI_EXIT_USAGE. */
static int check_combination(const struct cli_ctx *ctx, const struct new_opts *o)
{
    int sources = o->has_pattern + o->has_blueprint + o->has_from_shell;

    if (sources > 1)
        return cli_usage(ctx, "--pattern, --blueprint and --from-shell exclude each "
                              "other");
    if (o->has_until && !o->has_from_shell)
        return cli_usage(ctx, "--until EXPR only applies with --from-shell CMD");
    if (o->has_from_shell && !o->has_until) {
        /* exit 1, not 64: the reference's `loopc new` fails this way */
        cli_err(ctx, "--from-shell CMD needs --until EXPR, the condition that ends "
                     "the poll (e.g. --until 'state.code == 0'); nothing written");
        return CLI_EXIT_FAIL;
    }
    if (o->has_out && !*o->out)
        return cli_usage(ctx, "--out needs a file name");
    if (!o->has_out && o->force)
        return cli_usage(ctx, "--force only applies with --out FILE");
    if (o->has_out) {
        size_t len = strlen(o->out);
        if (len >= 5 && strcmp(o->out + len - 5, ".json") == 0)
            return cli_usage(ctx,
                             "--out '%s': the spec is YAML; name it *.yaml "
                             "(a .json name is read as JSON)",
                             o->out);
    }
    return CLI_EXIT_OK;
}

/* The blueprint the flags ask for (NULL for --from-shell), or a usage
 * error in *rc. */
static const struct cli_blueprint *pick(const struct cli_ctx *ctx,
                                        const struct new_opts *o, int *rc)
{
    const struct cli_blueprint *bp = NULL;

    *rc = CLI_EXIT_OK;
    if (o->has_from_shell)
        return NULL;
    if (o->has_blueprint) {
        bp = cli_blueprint_named(o->blueprint);
        if (!bp)
            *rc =
                cli_usage(ctx, "no blueprint '%s' (see lil new --list)", o->blueprint);
        return bp;
    }
    bp = cli_blueprint_of_pattern(o->has_pattern ? o->pattern : "react");
    if (!bp)
        *rc = cli_usage(ctx,
                        "unknown pattern '%s' (react, plan-execute-reflect, "
                        "evaluator-optimizer, loop-until-dry, map-reduce, "
                        "poll-until, cron)",
                        o->pattern);
    return bp;
}

/* Render the text for id; NULL with *rc set on failure. */
static char *render(const struct cli_ctx *ctx, const struct new_opts *o,
                    const struct cli_blueprint *bp, const char *id, int *rc)
{
    bool bad = false;
    char *text;

    *rc = CLI_EXIT_OK;
    if (bp)
        text = cli_blueprint_render(bp, id);
    else
        text = cli_from_shell_render(id, o->from_shell, o->until, &bad);
    if (bad) {
        *rc = cli_usage(ctx, "--from-shell and --until must be valid UTF-8");
        return NULL;
    }
    if (!text) {
        cli_err(ctx, "out of memory");
        *rc = CLI_EXIT_FAIL;
    }
    return text;
}

/* ------------------------------------------------------------------------ */
/* Errors of --until EXPR, in the user's words                               */

/* The paths of the spec's two copies of EXPR: the wait step's guard
 * `not (EXPR)` and terminate.until. */
#define WHEN_PATH  "body[1]:wait.when"
#define UNTIL_PATH "terminate.until"

/* 1 when every error of spec is in one of the two copies of EXPR: its
 * errors are then EXPR's, and are told once, in EXPR's terms. */
static bool errors_are_expr(const lil_spec *spec)
{
    size_t n = lil_spec_diag_count(spec);

    for (size_t i = 0; i < n; i++) {
        const lil_diag *d = lil_spec_diag(spec, i);
        if (d->severity == LIL_SEV_ERROR && strcmp(d->path, UNTIL_PATH) != 0 &&
            strcmp(d->path, WHEN_PATH) != 0)
            return false;
    }
    return true;
}

/* Line and column (1-based, in characters) of byte off of expr; the line
 * starts at *bol. */
static void expr_line_col(const char *expr, size_t off, unsigned *line, unsigned *col,
                          size_t *bol)
{
    *line = 1;
    *col = 1;
    *bol = 0;
    for (size_t i = 0; i < off && expr[i]; i++) {
        unsigned char c = (unsigned char)expr[i];
        if (c == '\n') {
            (*line)++;
            *col = 1;
            *bol = i + 1;
        } else if ((c & 0xc0) != 0x80) {
            (*col)++;
        }
    }
}

/* The line of expr starting at bol, then a caret under its character
 * col (a tab where the line has one, a blank for any other character). */
static void print_expr_caret(const char *expr, size_t bol, unsigned col)
{
    size_t end = bol + strcspn(expr + bol, "\n");
    unsigned seen = 1;

    fprintf(stderr, "    %.*s\n    ", (int)(end - bol), expr + bol);
    for (size_t i = bol; i < end && seen < col; i++) {
        unsigned char c = (unsigned char)expr[i];
        if ((c & 0xc0) == 0x80)
            continue;
        fputc(c == '\t' ? '\t' : ' ', stderr);
        seen++;
    }
    fputs("^\n", stderr);
}

/* expr, each of its lines indented. */
static void print_expr_lines(const char *expr)
{
    const char *p = expr;

    for (;;) {
        size_t n = strcspn(p, "\n");
        fprintf(stderr, "    %.*s\n", (int)n, p);
        if (!p[n])
            break;
        p += n + 1;
    }
}

/* One error of terminate.until, told against EXPR.  The diagnostic's
 * column counts bytes of the generated line. */
/* The byte index in line of its col-th character (1-based; a byte that is
 * not valid UTF-8 counts as one character, as in diagnostics). */
static size_t byte_of_column(const char *line, unsigned col)
{
    const unsigned char *p = (const unsigned char *)line;
    size_t n = strlen(line), at = 0;
    uint32_t cp;

    for (unsigned c = 1; c < col && at < n; c++) {
        size_t k = cli_utf8_decode(p + at, n - at < 4 ? n - at : 4, &cp);
        at += k ? k : 1;
    }
    return at;
}

static void print_expr_error(const struct cli_ctx *ctx, const lil_diag *d,
                             const char *expr)
{
    const char *msg = d->message;
    size_t plen = strlen(UNTIL_PATH ": ");
    long off = -1;
    unsigned line, col;
    size_t bol;

    if (strncmp(msg, UNTIL_PATH ": ", plen) == 0)
        msg += plen; /* a path of the generated spec, not of EXPR */
    if (d->line && d->column && d->source_line)
        off = cli_from_shell_until_offset(
            d->source_line, byte_of_column(d->source_line, d->column), expr);
    if (off < 0) {
        /* no position inside EXPR: EXPR as typed, without a caret */
        cli_err(ctx, "--until: %s [%s]", msg, d->code);
        print_expr_lines(expr);
        return;
    }
    expr_line_col(expr, (size_t)off, &line, &col, &bol);
    if (strchr(expr, '\n'))
        cli_err(ctx, "--until, line %u, column %u: %s [%s]", line, col, msg, d->code);
    else
        cli_err(ctx, "--until, column %u: %s [%s]", col, msg, d->code);
    print_expr_caret(expr, bol, col);
}

/* Tell the errors of EXPR once: those of terminate.until, which holds
 * EXPR as the user typed it (the wait step's `not (EXPR)` has the same
 * ones, in words the user did not type). */
static void print_expr_errors(const struct cli_ctx *ctx, const lil_spec *spec,
                              const char *expr)
{
    size_t n = lil_spec_diag_count(spec), told = 0;

    for (size_t i = 0; i < n; i++) {
        const lil_diag *d = lil_spec_diag(spec, i);
        if (d->severity == LIL_SEV_ERROR && strcmp(d->path, UNTIL_PATH) == 0) {
            print_expr_error(ctx, d, expr);
            told++;
        }
    }
    if (told == 0)
        cli_err(ctx,
                "--until: '%s' cannot be negated as the guard not (EXPR) of "
                "the wait step",
                expr);
    cli_err(ctx, "--until EXPR has errors (above); nothing written");
}

/* Load the text; print its diagnostics to stderr when it has an error:
 * in terms of EXPR (expr, for --from-shell) when they are all EXPR's,
 * else as the generated spec's. */
static int check_text(const struct cli_ctx *ctx, const char *text, const char *expr)
{
    const char *name = "(generated)";
    lil_spec *spec = NULL;
    lil_status s = lil_spec_parse(NULL, name, text, strlen(text), NULL, &spec);
    int ok;

    if (s != LIL_OK) {
        cli_err(ctx, "cannot check the generated spec: %s", lil_strerror(s));
        return CLI_EXIT_FAIL;
    }
    ok = lil_spec_ok(spec);
    if (!ok && expr && errors_are_expr(spec)) {
        print_expr_errors(ctx, spec, expr);
    } else if (!ok) {
        cli_diag_print(stderr, spec, name);
        cli_diag_summary(stderr, spec, name);
        cli_err(ctx, "the generated spec has errors (above); nothing written");
    }
    lil_spec_free(spec);
    return ok ? CLI_EXIT_OK : CLI_EXIT_FAIL;
}

/* ------------------------------------------------------------------------ */
/* Writing --out FILE                                                        */

/* The directory part of path ("." when none); free() it. */
static char *dir_of(const char *path)
{
    const char *slash = strrchr(path, '/');
    size_t n = slash ? (size_t)(slash - path) : 1;
    char *d = malloc(n + 1);

    if (!d)
        return NULL;
    if (!slash)
        memcpy(d, ".", 1);
    else if (n == 0)
        memcpy(d, "/", (n = 1));
    else
        memcpy(d, path, n);
    d[n] = '\0';
    return d;
}

static bool write_all(int fd, const char *p, size_t len)
{
    while (len > 0) {
        ssize_t w = write(fd, p, len);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return false;
        p += w;
        len -= (size_t)w;
    }
    return true;
}

/* Create a temporary file beside path; its name goes to tmp. */
static int open_temp(const char *path, char *tmp, size_t cap)
{
    char *dir = dir_of(path);
    char prefix[4096];
    int fd = -1;

    if (!dir)
        return -1;
    /* 0644 at most (less with the umask): a spec holds no secret */
    if ((size_t)snprintf(prefix, sizeof(prefix), "%s/.lil-new", dir) < sizeof(prefix))
        fd = cli_create_temp(prefix, 0644, tmp, cap);
    else
        errno = ENAMETOOLONG;
    free(dir);
    return fd;
}

/* Sync the directory of path so the new name is durable (best effort:
 * some file systems refuse to sync a directory). */
static void sync_dir(const char *path)
{
    char *dir = dir_of(path);
    int fd = dir ? open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC) : -1;

    if (fd >= 0) {
        (void)fsync(fd);
        close(fd);
    }
    free(dir);
}

/* Give tmp the name path: link (no overwrite) or rename (force). */
static int publish(const struct cli_ctx *ctx, const char *tmp, const char *path,
                   bool force)
{
    if (force) {
        if (rename(tmp, path) == 0)
            return CLI_EXIT_OK;
        cli_err(ctx, "cannot write '%s': %s", path, strerror(errno));
        return CLI_EXIT_FAIL;
    }
    if (link(tmp, path) == 0)
        return CLI_EXIT_OK;
    if (errno == EEXIST)
        cli_err(ctx, "'%s' exists; use --force to replace it", path);
    else
        cli_err(ctx, "cannot write '%s': %s", path, strerror(errno));
    return CLI_EXIT_FAIL;
}

static int write_file(const struct cli_ctx *ctx, const char *path, const char *text,
                      bool force)
{
    char tmp[4096];
    struct stat st;
    int fd, rc;

    if (!force && lstat(path, &st) == 0) {
        cli_err(ctx, "'%s' exists; use --force to replace it", path);
        return CLI_EXIT_FAIL;
    }
    if (strlen(path) > sizeof(tmp) - 64 ||
        (fd = open_temp(path, tmp, sizeof(tmp))) < 0) {
        cli_err(ctx, "cannot create a file beside '%s': %s", path, strerror(errno));
        return CLI_EXIT_FAIL;
    }
    if (!write_all(fd, text, strlen(text)) || fsync(fd) != 0) {
        cli_err(ctx, "cannot write '%s': %s", tmp, strerror(errno));
        close(fd);
        unlink(tmp);
        return CLI_EXIT_FAIL;
    }
    if (close(fd) != 0) {
        cli_err(ctx, "cannot write '%s': %s", tmp, strerror(errno));
        unlink(tmp);
        return CLI_EXIT_FAIL;
    }
    rc = publish(ctx, tmp, path, force);
    unlink(tmp); /* after link: the extra name; after rename: already gone */
    if (rc == CLI_EXIT_OK)
        sync_dir(path);
    return rc;
}

/* ------------------------------------------------------------------------ */
/* The verb                                                                  */

static int emit(const struct cli_ctx *ctx, const struct new_opts *o, const char *id,
                const struct cli_blueprint *bp, const char *text)
{
    const char *name = bp ? bp->name : "from-shell";
    const char *pattern = bp ? bp->pattern : "poll-until";
    int rc = CLI_EXIT_OK;
    json_t *doc;

    if (o->has_out)
        rc = write_file(ctx, o->out, text, o->force);
    if (rc != CLI_EXIT_OK)
        return rc;
    if (ctx->json) {
        doc = json_object();
        cli_json_set(doc, "id", json_string(id));
        cli_json_set(doc, "blueprint", json_string(name));
        cli_json_set(doc, "pattern", json_string(pattern));
        cli_json_set(doc, "file",
                     o->has_out ? cli_json_str(o->out, strlen(o->out)) : json_null());
        if (!o->has_out)
            cli_json_set(doc, "text", json_string(text));
        return cli_json_print(ctx, doc, false);
    }
    if (o->has_out)
        printf("wrote %s (blueprint %s, pattern %s)\n", o->out, name, pattern);
    else
        fputs(text, stdout);
    return CLI_EXIT_OK;
}

static int make_spec(const struct cli_ctx *ctx, const struct new_opts *o,
                     const char *id)
{
    const struct cli_blueprint *bp;
    char *text;
    int rc = check_combination(ctx, o);

    if (rc != CLI_EXIT_OK)
        return rc;
    if (!cli_loop_id_ok(id))
        return cli_usage(ctx, "invalid loop id '%s': use letters, digits and _ . : -",
                         id);
    bp = pick(ctx, o, &rc);
    if (rc != CLI_EXIT_OK)
        return rc;
    text = render(ctx, o, bp, id, &rc);
    if (!text)
        return rc;
    rc = check_text(ctx, text, o->has_from_shell ? o->until : NULL);
    if (rc == CLI_EXIT_OK)
        rc = emit(ctx, o, id, bp, text);
    free(text);
    return rc;
}

static int dispatch(struct cli_ctx *ctx, struct new_opts *o, const char **pos, size_t n)
{
    if (o->list) {
        if (n > 0 || o->has_pattern || o->has_blueprint || o->has_from_shell ||
            o->has_until || o->has_out || o->force)
            return cli_usage(ctx, "--list takes no other argument");
        return print_list(ctx);
    }
    if (n == 0)
        return cli_usage(ctx, "missing argument ID");
    if (n > 1)
        return cli_usage(ctx, "unexpected argument '%s'", pos[1]);
    return make_spec(ctx, o, pos[0]);
}

static int cmd_new(struct cli_ctx *ctx, int argc, char **argv)
{
    struct new_opts o;
    const char **pos = NULL;
    size_t n = 0;
    int rc;

    memset(&o, 0, sizeof(o));
    const struct cli_flag flags[] = {
        {"pattern", true, &o.pattern, &o.has_pattern},
        {"blueprint", true, &o.blueprint, &o.has_blueprint},
        {"from-shell", true, &o.from_shell, &o.has_from_shell},
        {"until", true, &o.until, &o.has_until},
        {"out", true, &o.out, &o.has_out},
        {"force", false, NULL, &o.force},
        {"list", false, NULL, &o.list},
        {NULL, false, NULL, NULL},
    };
    const struct cli_args a = {flags, NULL, NULL};

    rc = cli_parse_any(ctx, argc, argv, &a, &pos, &n);
    if (rc == CLI_PARSE_HELP)
        rc = CLI_EXIT_OK;
    else if (rc == CLI_EXIT_OK)
        rc = dispatch(ctx, &o, pos, n);
    free(pos);
    return rc;
}

const struct cli_verb cli_verb_new = {
    "new",
    "start a loop spec from a blueprint (--list shows them)",
    "Usage: lil new ID [--pattern P | --blueprint NAME] [--out FILE [--force]]\n"
    "       lil new ID --from-shell CMD --until EXPR [--out FILE [--force]]\n"
    "       lil new --list\n"
    "\n"
    "Print a new loop spec (LoopSpec v0.1, YAML with comments that explain\n"
    "it) for loop id ID, or write it to FILE.  It is checked first: it\n"
    "validates with no error, or nothing is written.\n"
    "\n"
    "  (default)           the blueprint of pattern react\n"
    "  --pattern P         the blueprint of pattern P: react, plan-execute-\n"
    "                      reflect, evaluator-optimizer, loop-until-dry,\n"
    "                      map-reduce, poll-until, cron\n"
    "  --blueprint NAME    a blueprint by name (lil new --list)\n"
    "  --from-shell CMD --until EXPR\n"
    "                      a poll-until loop that runs the shell command CMD\n"
    "                      every 30s until the guard EXPR holds.  EXPR can read\n"
    "                      state.out (CMD's result: its stdout parsed as JSON,\n"
    "                      else {stdout, code}), state.code (its exit code) and\n"
    "                      state.polls, e.g. 'state.out.ready == true' or\n"
    "                      'state.code == 0'.  CMD runs as given (a ${ in it is\n"
    "                      for the shell).  A bad EXPR is told with its\n"
    "                      column and nothing is written (exit 1); so is a\n"
    "                      missing --until.  The poll fails after 2 hours or\n"
    "                      240 polls.\n"
    "  --out FILE          write FILE (atomically: temporary file, fsync,\n"
    "                      rename) instead of printing; an existing FILE is\n"
    "                      refused...\n"
    "  --force             ...unless --force is given\n"
    "  --list              name, pattern and purpose of each blueprint\n"
    "  --json              --list as [{\"name\", \"pattern\", \"summary\"}]; else\n"
    "                      {\"id\", \"blueprint\", \"pattern\", \"file\", \"text\"}\n"
    "\n"
    "ID follows the loop id rule: letters, digits and _ . : - only.\n"
    "\n"
    "Exit status (the table is in `lil --help`): 0 done; 1 the spec has\n"
    "errors (a bad or missing --until), FILE exists (without --force) or cannot\n"
    "be written; 64 on a usage\n"
    "error (a bad ID, an unknown pattern or blueprint, flags that do not go\n"
    "together).\n",
    cmd_new,
};
