/*
 * watch_args.c -- `lil watch`'s command line split between lil watch and
 * the command, and the command made ready to run (watch_args.h).
 *
 * The settings read here (VIRTUAL_ENV, PATH, through lil_setting) are
 * those of the environment the command inherits: PATH is where its exec
 * looks for a program without '/'.
 */
#include "watch_args.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- the split ----------------------------------------------------------- */

/* lil watch's global options (cli_parse knows them for every verb). */
static const struct {
    const char *name;
    bool has_value;
} globals[] = {
    {"dir", true}, {"json", false}, {"help", false}, {"shared-store", false}};

/* Is word ("-h", "--name" or "--name=value") one of lil watch's options?
 * *takes_value: its value is the next word. */
static bool known_option(const struct cli_flag *flags, const char *word,
                         bool *takes_value)
{
    const char *name = word + 2, *eq;
    size_t len;

    *takes_value = false;
    if (strcmp(word, "-h") == 0)
        return true;
    if (strncmp(word, "--", 2) != 0 || !*name)
        return false;
    eq = strchr(name, '=');
    len = eq ? (size_t)(eq - name) : strlen(name);
    for (const struct cli_flag *f = flags; f->name; f++)
        if (strlen(f->name) == len && memcmp(f->name, name, len) == 0) {
            *takes_value = f->has_value && !eq;
            return true;
        }
    for (size_t i = 0; i < sizeof(globals) / sizeof(globals[0]); i++)
        if (strlen(globals[i].name) == len && memcmp(globals[i].name, name, len) == 0) {
            *takes_value = globals[i].has_value && !eq;
            return true;
        }
    return false;
}

/* A word that starts with '-' and is not a number ("-1", "-0.5"). */
static bool looks_like_option(const char *word)
{
    char *end = NULL;

    if (word[0] != '-' || word[1] == '\0')
        return false;
    (void)strtod(word, &end);
    return !(end && end != word && *end == '\0');
}

/* Before the command: the options up to "--" or the first other word.
 * Returns the index of the command's first word; *lil_form: "--" came. */
static int leading_options(const struct cli_flag *flags, int argc, char **argv,
                           struct watch_split *s, bool *lil_form)
{
    int i = 0;
    bool takes;

    *lil_form = false;
    for (; i < argc; i++) {
        const char *w = argv[i];
        if (strcmp(w, "--") == 0) {
            *lil_form = true;
            return i + 1;
        }
        if (w[0] != '-' || w[1] == '\0')
            break;
        s->opts[s->nopts++] = argv[i];
        (void)known_option(flags, w, &takes);
        if (takes && i + 1 < argc)
            s->opts[s->nopts++] = argv[++i];
    }
    return i;
}

static int refuse(const struct cli_ctx *ctx, const char *word, const char *target)
{
    return cli_usage(ctx,
                     "unknown option '%s' after the command '%s': the command's own "
                     "options go after '--' (lil watch %s -- %s ..., or lil watch "
                     "[OPTIONS] -- %s %s ...)",
                     word, target, target, word, target, word);
}

/* After the command's first word: lil watch's options anywhere until "--",
 * the rest the command's. */
static int trailing_words(const struct cli_ctx *ctx, const struct cli_flag *flags,
                          int argc, char **argv, int i, struct watch_split *s)
{
    const char *target = argv[i];
    bool takes, done = false;

    s->cmd[s->ncmd++] = argv[i++];
    for (; i < argc; i++) {
        const char *w = argv[i];
        if (!done && strcmp(w, "--") == 0) {
            done = true;
        } else if (!done && known_option(flags, w, &takes)) {
            s->opts[s->nopts++] = argv[i];
            if (takes && i + 1 < argc)
                s->opts[s->nopts++] = argv[++i];
        } else if (!done && looks_like_option(w)) {
            return refuse(ctx, w, target);
        } else {
            s->cmd[s->ncmd++] = argv[i];
        }
    }
    return CLI_EXIT_OK;
}

int watch_split(const struct cli_ctx *ctx, const struct cli_flag *flags, int argc,
                char **argv, struct watch_split *out)
{
    bool lil_form;
    int start, rc = CLI_EXIT_OK;

    memset(out, 0, sizeof(*out));
    out->opts = calloc((size_t)argc + 1, sizeof(*out->opts));
    out->cmd = calloc((size_t)argc + 1, sizeof(*out->cmd));
    if (!out->opts || !out->cmd) {
        watch_split_free(out);
        cli_err(ctx, "out of memory");
        return CLI_EXIT_FAIL;
    }
    start = leading_options(flags, argc, argv, out, &lil_form);
    if (lil_form) {
        for (int i = start; i < argc; i++)
            out->cmd[out->ncmd++] = argv[i];
    } else if (start < argc) {
        rc = trailing_words(ctx, flags, argc, argv, start, out);
    }
    if (rc != CLI_EXIT_OK)
        watch_split_free(out);
    return rc;
}

void watch_split_free(struct watch_split *s)
{
    free((void *)s->opts);
    free((void *)s->cmd);
    s->opts = NULL;
    s->cmd = NULL;
    s->nopts = s->ncmd = 0;
}

/* ---- the command --------------------------------------------------------- */

static bool is_executable_file(const char *path)
{
    struct stat st;

    return stat(path, &st) == 0 && S_ISREG(st.st_mode) && access(path, X_OK) == 0;
}

/* The setting's value (lil_setting: the variable, else its default), or
 * NULL; free with lil_free. */
static char *setting(const char *name)
{
    char *v = NULL;

    return lil_setting(name, &v) == LIL_OK ? v : NULL;
}

/* In the directories of path ("a:b:c"), the first that holds an
 * executable `name` (malloc'd), or NULL.  An empty entry is the working
 * directory, as for exec. */
static char *search(const char *path, const char *name)
{
    for (const char *p = path; p && *p;) {
        const char *colon = strchr(p, ':');
        size_t len = colon ? (size_t)(colon - p) : strlen(p);
        size_t cap = len + strlen(name) + 3;
        char *full = malloc(cap);
        if (!full)
            return NULL;
        snprintf(full, cap, "%.*s/%s", (int)(len ? len : 1), len ? p : ".", name);
        if (is_executable_file(full))
            return full;
        free(full);
        p = colon ? colon + 1 : NULL;
    }
    return NULL;
}

/* `name` looked up in PATH (malloc'd), or NULL. */
static char *path_lookup(const char *name)
{
    char *path = setting("PATH");
    char *found = search(path, name);

    lil_free(path);
    return found;
}

/* The python3 of the environment lil watch was started from. */
static char *find_python(void)
{
    char *venv = setting("VIRTUAL_ENV");
    char *p = NULL;

    if (venv && *venv) {
        size_t cap = strlen(venv) + sizeof("/bin/python3");
        p = malloc(cap);
        if (p)
            snprintf(p, cap, "%s/bin/python3", venv);
        if (p && !is_executable_file(p)) {
            free(p);
            p = NULL;
        }
    }
    lil_free(venv);
    if (!p)
        p = path_lookup("python3");
    return p ? p : strdup("python3");
}

static bool same_file(const char *a, const char *b)
{
    struct stat sa, sb;

    return stat(a, &sa) == 0 && stat(b, &sb) == 0 && sa.st_dev == sb.st_dev &&
           sa.st_ino == sb.st_ino;
}

/* Is prog lil: named "lil", or this very executable? */
static bool program_is_lil(const char *prog)
{
    const char *slash = strrchr(prog, '/');
    const char *base = slash ? slash + 1 : prog;
    char *found;
    bool same;

    if (strcmp(base, "lil") == 0)
        return true;
    if (slash)
        return same_file(prog, "/proc/self/exe");
    found = path_lookup(prog);
    same = found && same_file(found, "/proc/self/exe");
    free(found);
    return same;
}

static bool ends_with_py(const char *word)
{
    size_t len = strlen(word);

    return len > 3 && strcmp(word + len - 3, ".py") == 0;
}

bool watch_command(char **words, int n, struct watch_command *out)
{
    bool py = ends_with_py(words[0]);
    int k = 0;

    memset(out, 0, sizeof(*out));
    out->argv = calloc((size_t)n + 2, sizeof(*out->argv));
    if (py)
        out->python = find_python();
    if (!out->argv || (py && !out->python)) {
        watch_command_free(out);
        return false;
    }
    if (py)
        out->argv[k++] = out->python;
    for (int i = 0; i < n; i++)
        out->argv[k++] = words[i];
    out->is_lil = !py && program_is_lil(words[0]);
    return true;
}

void watch_command_free(struct watch_command *c)
{
    free((void *)c->argv);
    free(c->python);
    c->argv = NULL;
    c->python = NULL;
}
