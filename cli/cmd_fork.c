/*
 * cmd_fork.c -- `lil fork RUN NEW --at N | --at-seq SEQ | --at-step N`: a
 * new run made of a run's journal up to a point (lil_run_fork), so that an
 * operator can run again from there, with the same spec or a changed one,
 * without touching the original.
 *
 * The source is read as `lil export` reads it (verified, never written);
 * the fork is made by the store's import, in the store of --dir or in
 * another (--to), from the store of --dir or another (--from).  What the
 * fork journals besides the records it keeps is one provenance record
 * (docs/format.md).  A spec change is not journaled here: the first `lil
 * resume SPEC --run-id NEW --accept-spec-change` does it, with its actor
 * and reason, as for any run (docs/loops.md, "What a run is bound to").
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

struct fork_args {
    const char *run, *new_id, *from, *to, *actor, *reason;
    lil_run_fork_opts opts;
};

/* A decimal number of at most 19 digits into *out. */
static bool parse_u64(const char *s, uint64_t *out)
{
    char *end = NULL;
    unsigned long long v;

    if (!s || *s < '0' || *s > '9' || strlen(s) > 19)
        return false;
    errno = 0;
    v = strtoull(s, &end, 10);
    if (errno || *end)
        return false;
    *out = (uint64_t)v;
    return true;
}

/* The one cut given: --at, --at-seq or --at-step. */
static int cut_of(const struct cli_ctx *ctx, const char *const val[3],
                  const bool set[3], lil_run_fork_opts *o)
{
    static const char *const names[3] = {"--at", "--at-seq", "--at-step"};
    static const int kinds[3] = {LIL_FORK_AT_ITERATION, LIL_FORK_AT_SEQ,
                                 LIL_FORK_AT_STEP};
    int given = -1;

    for (int i = 0; i < 3; i++) {
        if (!set[i])
            continue;
        if (given >= 0)
            return cli_usage(ctx, "%s and %s both given: cut at one point",
                             names[given], names[i]);
        given = i;
    }
    if (given < 0)
        return cli_usage(ctx, "where to cut? give --at ITERATION, --at-seq SEQ or "
                              "--at-step N");
    if (!parse_u64(val[given], &o->at))
        return cli_usage(ctx, "%s takes a number, not '%s'", names[given], val[given]);
    o->at_kind = kinds[given];
    return CLI_EXIT_OK;
}

static int parse_fork(struct cli_ctx *ctx, int argc, char **argv, struct fork_args *fa)
{
    static const char *const names[] = {"RUN", "NEW", NULL};
    const char *pos[2] = {NULL, NULL}, *val[3] = {NULL, NULL, NULL};
    bool set[3] = {false, false, false}, from_set = false, to_set = false;
    bool actor_set = false, reason_set = false;
    const struct cli_flag flags[] = {{"at", true, &val[0], &set[0]},
                                     {"at-seq", true, &val[1], &set[1]},
                                     {"at-step", true, &val[2], &set[2]},
                                     {"from", true, &fa->from, &from_set},
                                     {"to", true, &fa->to, &to_set},
                                     {"actor", true, &fa->actor, &actor_set},
                                     {"reason", true, &fa->reason, &reason_set},
                                     {NULL, false, NULL, NULL}};
    struct cli_args a = {flags, names, pos};
    int rc = cli_parse(ctx, argc, argv, &a);

    if (rc != CLI_EXIT_OK)
        return rc;
    fa->run = pos[0];
    fa->new_id = pos[1];
    if (cli_run_id_ok(ctx, fa->run) != CLI_EXIT_OK ||
        cli_run_id_ok(ctx, fa->new_id) != CLI_EXIT_OK)
        return CLI_EXIT_USAGE;
    if (!fa->actor || !*fa->actor)
        fa->actor = cli_user("cli");
    fa->opts.struct_size = sizeof(fa->opts);
    fa->opts.actor = fa->actor;
    fa->opts.reason = fa->reason ? fa->reason : "";
    return cut_of(ctx, val, set, &fa->opts);
}

/* The stores: the source (--from, else --dir) and the destination (--to,
 * else --dir; a missing directory is created).  One store when neither
 * --from nor --to is given. */
static int open_stores(const struct cli_ctx *ctx, const struct fork_args *fa,
                       lil_store **from, lil_store **to)
{
    struct cli_ctx c = *ctx;
    int rc;

    if (fa->from)
        c.dir = fa->from;
    rc = cli_store_open(&c, from);
    if (rc != CLI_EXIT_OK || (!fa->from && !fa->to)) {
        *to = *from;
        return rc;
    }
    c.dir = fa->to ? fa->to : ctx->dir;
    return cli_store_create(&c, to);
}

/* The next command, for a loop run: resume the fork. */
static void print_hint(const struct cli_ctx *ctx, const struct fork_args *fa,
                       const json_t *doc)
{
    const char *kind = json_string_value(json_object_get(doc, "kind"));
    const char *dir = fa->to ? fa->to : ctx->dir;
    char where[4200] = "";

    if (dir)
        snprintf(where, sizeof(where), " --dir %s", dir);
    if (kind && strcmp(kind, "loop") == 0)
        printf("next: lil resume SPEC --run-id %s%s (a changed spec: add "
               "--accept-spec-change)\n",
               fa->new_id, where);
    else
        printf("next: run the program again with run id %s%s\n", fa->new_id, where);
}

static int print_fork(const struct cli_ctx *ctx, const struct fork_args *fa,
                      const lil_bytes *out)
{
    json_t *doc = json_loadb(out->data, out->len, 0, NULL);
    const json_t *cut = json_object_get(doc, "cut");
    const json_t *it = json_object_get(cut, "iteration");

    if (!doc) {
        cli_err(ctx, "cannot read the library's answer");
        return CLI_EXIT_FAIL;
    }
    if (ctx->json)
        return cli_json_print(ctx, doc, false);
    printf("forked %s into %s at %s %" JSON_INTEGER_FORMAT " (seq %" JSON_INTEGER_FORMAT
           "): %" JSON_INTEGER_FORMAT " records kept, %" JSON_INTEGER_FORMAT
           " dropped\n",
           fa->run, fa->new_id, it ? "iteration" : "step",
           json_integer_value(it ? it : json_object_get(cut, "step")),
           json_integer_value(json_object_get(cut, "seq")),
           json_integer_value(json_object_get(doc, "records")) - 1,
           json_integer_value(json_object_get(doc, "dropped")));
    print_hint(ctx, fa, doc);
    json_decref(doc);
    return CLI_EXIT_OK;
}

static int cmd_fork(struct cli_ctx *ctx, int argc, char **argv)
{
    struct fork_args fa;
    lil_store *from = NULL, *to = NULL;
    lil_bytes out = {NULL, 0};
    lil_status s;
    int rc;

    memset(&fa, 0, sizeof(fa));
    rc = parse_fork(ctx, argc, argv, &fa);
    if (rc != CLI_EXIT_OK)
        return rc == CLI_PARSE_HELP ? CLI_EXIT_OK : rc;
    rc = open_stores(ctx, &fa, &from, &to);
    if (rc == CLI_EXIT_OK) {
        s = lil_run_fork(from, fa.run, &fa.opts, to, fa.new_id, &out);
        rc = s == LIL_OK ? print_fork(ctx, &fa, &out)
                         : cli_fail(ctx, s, "%s", lil_store_errmsg(to));
    }
    lil_free(out.data);
    if (to != from)
        lil_store_close(to);
    lil_store_close(from);
    return rc;
}

const struct cli_verb cli_verb_fork = {
    "fork",
    "copy a run up to a point into a new run, to run again from there",
    "Usage: lil fork RUN NEW (--at ITERATION | --at-seq SEQ | --at-step N)\n"
    "                [--to STORE] [--from STORE] [--actor WHO] [--reason TEXT]\n"
    "                [--dir DIR] [--json]\n"
    "\n"
    "Make a new run NEW of the records of RUN before a point: a loop run is\n"
    "cut between iterations (--at 3 keeps iterations 0 to 2 and drops\n"
    "iteration 3 and everything after it, its intents and control records\n"
    "too), an ordinary run between steps (--at-step 3 keeps steps 1 and 2),\n"
    "either by record (--at-seq 12 keeps records 1 to 11).  A cut inside an\n"
    "iteration or an effect is refused, naming the nearest valid cuts.  The\n"
    "records are sealed anew for NEW (its chain, under the destination's\n"
    "key), after a provenance record: the source run and store, the cut,\n"
    "the source's last chain value, the actor, the reason and the OS user.\n"
    "RUN is read, never written; NEW must not exist.\n"
    "\n"
    "Resume the fork to run again from the cut: its completed iterations\n"
    "replay from the journal, nothing of them runs again.\n"
    "\n"
    "  lil fork nightly try2 --at 3 --reason 'new prompt'\n"
    "  lil resume loop.yaml --run-id try2 --accept-spec-change\n"
    "  lil diff nightly try2\n"
    "\n"
    "Flags:\n"
    "  --at N        a loop run: cut before iteration N (0: after its start)\n"
    "  --at-seq SEQ  cut before record SEQ (2 or more)\n"
    "  --at-step N   an ordinary run: cut before its N-th step (1 or more)\n"
    "  --to STORE    make NEW in this store (a directory, created when\n"
    "                missing, or postgresql://...); default: --dir\n"
    "  --from STORE  RUN's store (default: --dir)\n"
    "  --actor WHO   who forks (default: $USER)\n"
    "  --reason TEXT why (journaled in the provenance record)\n"
    "  --json        the library's answer: {\"run\", \"store\", \"source\",\n"
    "                \"sourceStore\", \"kind\", \"cut\", \"records\", \"dropped\",\n"
    "                \"sourceHead\"}\n"
    "  --dir DIR     the store (default: $LIL_DIR, else .lil)\n"
    "\n"
    "Exit status: 0 forked; 1 no such run, NEW exists, a cut at no valid\n"
    "point, a damaged journal (see `lil check`), wrong key, I/O error; 64 on\n"
    "a usage error.\n",
    cmd_fork,
};
