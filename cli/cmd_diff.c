/*
 * cmd_diff.c -- `lil diff RUN1 RUN2`: where two runs' journals stop
 * agreeing (the iteration, the step, the records on each side) and which
 * steps' results differ after that (lil_run_diff).  A fork and its source,
 * two runs of one spec, a run moved to PostgreSQL and the file it came
 * from (--from, --to).
 *
 * Exit status: 0 identical, 10 different, 1 failure (no such run, damaged,
 * wrong key), 64 usage.  Not diff(1)'s 1 and 2: lil's 1 is a failure and
 * 2 an uncertain run for every verb, so "they differ" has a code of its
 * own that no other verb uses.
 */
#include <stdio.h>
#include <string.h>

#include "cli.h"

#define DIFF_EXIT_DIFFERENT 10  /* the runs differ */
#define SHOW_MAX            160 /* bytes of a result shown in text */

/* "seq 12 step 2.0" for one side of the divergence, or "(ends here)". */
static void print_side(const char *run, const json_t *w, int width)
{
    char key[300];
    const char *k = json_string_value(json_object_get(w, "key"));

    if (!json_is_object(w)) {
        printf("  %-*s (no more records)\n", width, run);
        return;
    }
    cli_fmt_printable(k ? k : "", k ? strlen(k) : 0, 120, key, sizeof(key));
    printf("  %-*s seq %-6" JSON_INTEGER_FORMAT " %-11s %s\n", width, run,
           json_integer_value(json_object_get(w, "seq")),
           json_string_value(json_object_get(w, "type")), key);
}

static void print_divergence(const json_t *doc, const char *a, const char *b)
{
    const json_t *d = json_object_get(doc, "divergence");
    const json_t *it = json_object_get(d, "iteration");
    const char *step = json_string_value(json_object_get(d, "step"));
    int width = (int)(strlen(a) > strlen(b) ? strlen(a) : strlen(b));
    char key[300], at[64] = "";

    cli_fmt_printable(step ? step : "", step ? strlen(step) : 0, 120, key, sizeof(key));
    if (json_is_integer(it))
        snprintf(at, sizeof(at), "iteration %" JSON_INTEGER_FORMAT ", ",
                 json_integer_value(it));
    printf("%s and %s differ: %" JSON_INTEGER_FORMAT
           " records alike, then at %sstep %s:\n",
           a, b, json_integer_value(json_object_get(doc, "common")), at, key);
    print_side(a, json_object_get(d, "a"), width);
    print_side(b, json_object_get(d, "b"), width);
}

/* One side's result of a step that differs. */
static void print_result(const char *run, const json_t *o, int width)
{
    const char *r = json_string_value(json_object_get(o, "result"));
    const char *type = json_string_value(json_object_get(o, "type"));
    char text[4 * SHOW_MAX + 8];

    if (!json_is_object(o)) {
        printf("    %-*s -\n", width, run);
        return;
    }
    if (r)
        cli_fmt_printable(r, strlen(r), SHOW_MAX, text, sizeof(text));
    else
        snprintf(text, sizeof(text), "(bytes, sha256 %.16s)",
                 json_string_value(json_object_get(o, "sha256")));
    printf("    %-*s %s%s\n", width, run,
           type && strcmp(type, "step-failed") == 0 ? "FAILED " : "", text);
}

static void print_steps(const json_t *doc, const char *a, const char *b)
{
    const json_t *steps = json_object_get(doc, "steps");
    int width = (int)(strlen(a) > strlen(b) ? strlen(a) : strlen(b));
    size_t i;
    json_t *s;

    if (json_array_size(steps) == 0) {
        printf("no step's result differs\n");
        return;
    }
    printf("steps whose results differ (%zu):\n", json_array_size(steps));
    json_array_foreach(steps, i, s)
    {
        const char *step = json_string_value(json_object_get(s, "step"));
        const char *change = json_string_value(json_object_get(s, "change"));
        char key[300];

        cli_fmt_printable(step ? step : "", step ? strlen(step) : 0, 120, key,
                          sizeof(key));
        if (change && strcmp(change, "differs") != 0)
            printf("  %s  only in %s\n", key, strcmp(change, "only_a") == 0 ? a : b);
        else
            printf("  %s\n", key);
        print_result(a, json_object_get(s, "a"), width);
        print_result(b, json_object_get(s, "b"), width);
    }
}

static int print_diff(const struct cli_ctx *ctx, const char *a, const char *b,
                      const lil_bytes *out)
{
    json_t *doc = json_loadb(out->data, out->len, 0, NULL);
    bool same = json_is_true(json_object_get(doc, "identical"));
    int rc;

    if (!doc) {
        cli_err(ctx, "cannot read the library's answer");
        return CLI_EXIT_FAIL;
    }
    if (ctx->json) {
        rc = cli_json_print(ctx, doc, false);
        return rc != CLI_EXIT_OK ? rc : same ? CLI_EXIT_OK : DIFF_EXIT_DIFFERENT;
    }
    if (same) {
        printf("%s and %s are identical (%" JSON_INTEGER_FORMAT " records alike)\n", a,
               b, json_integer_value(json_object_get(doc, "common")));
    } else {
        print_divergence(doc, a, b);
        print_steps(doc, a, b);
    }
    json_decref(doc);
    return same ? CLI_EXIT_OK : DIFF_EXIT_DIFFERENT;
}

static int open_store_at(const struct cli_ctx *ctx, const char *where, lil_store **st)
{
    struct cli_ctx c = *ctx;

    if (where)
        c.dir = where;
    return cli_store_open(&c, st);
}

static int cmd_diff(struct cli_ctx *ctx, int argc, char **argv)
{
    static const char *const names[] = {"RUN1", "RUN2", NULL};
    const char *pos[2] = {NULL, NULL}, *from = NULL, *to = NULL;
    bool from_set = false, to_set = false;
    const struct cli_flag flags[] = {{"from", true, &from, &from_set},
                                     {"to", true, &to, &to_set},
                                     {NULL, false, NULL, NULL}};
    struct cli_args a = {flags, names, pos};
    lil_store *sa = NULL, *sb = NULL;
    lil_bytes out = {NULL, 0};
    lil_status s;
    int rc = cli_parse(ctx, argc, argv, &a);

    if (rc != CLI_EXIT_OK)
        return rc == CLI_PARSE_HELP ? CLI_EXIT_OK : rc;
    if (cli_run_id_ok(ctx, pos[0]) != CLI_EXIT_OK ||
        cli_run_id_ok(ctx, pos[1]) != CLI_EXIT_OK)
        return CLI_EXIT_USAGE;
    rc = open_store_at(ctx, from, &sa);
    if (rc == CLI_EXIT_OK)
        rc = open_store_at(ctx, to, &sb);
    if (rc == CLI_EXIT_OK) {
        s = lil_run_diff(sa, pos[0], sb, pos[1], &out);
        rc = s == LIL_OK ? print_diff(ctx, pos[0], pos[1], &out)
                         : cli_fail(ctx, s, "%s", lil_store_errmsg(sa));
    }
    lil_free(out.data);
    lil_store_close(sb);
    lil_store_close(sa);
    return rc;
}

const struct cli_verb cli_verb_diff = {
    "diff",
    "show where two runs stop agreeing and how their steps' results differ",
    "Usage: lil diff RUN1 RUN2 [--from STORE] [--to STORE] [--dir DIR] [--json]\n"
    "\n"
    "Compare two runs' journals record by record (type, key and payload;\n"
    "which process opened or closed a run, its id and a fork's provenance\n"
    "record are left out) and show the first divergence: the iteration of a\n"
    "loop run, the step, and the record on each side there.  Then the steps\n"
    "whose last results differ, and those only one run has.  A fork and its\n"
    "source agree up to the cut.  Both runs are verified first (a keyed run\n"
    "under its store's key) and read as they are, never written.\n"
    "\n"
    "  lil diff nightly try2\n"
    "  lil diff nightly nightly --to postgresql://db/lil\n"
    "\n"
    "Flags:\n"
    "  --from STORE  RUN1's store (default: --dir)\n"
    "  --to STORE    RUN2's store (default: --dir)\n"
    "  --json        {\"identical\", \"a\", \"b\", \"common\", \"divergence\",\n"
    "                \"steps\"} (docs/api.md, lil_run_diff)\n"
    "  --dir DIR     the store (default: $LIL_DIR, else .lil)\n"
    "\n"
    "Exit status: 0 the runs are identical; 10 they differ; 1 no such run or\n"
    "store, a damaged journal (see `lil check`), wrong key, I/O error; 64 on\n"
    "a usage error.  (Not diff(1)'s 1 and 2: lil's 1 and 2 mean failure and\n"
    "uncertain for every verb.)\n",
    cmd_diff,
};
