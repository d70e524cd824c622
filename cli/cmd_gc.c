/*
 * cmd_gc.c -- `lil gc [--older-than DURATION] [--status S]...
 * [--segments KEEP] [--dry-run]`: retention.
 *
 * Every run of the store whose facts (lil_run_facts) say it has ended --
 * completed, failed or stopped -- and whose last record is older than
 * DURATION is removed with lil_run_remove (which checks again, under the
 * run's lock, that nobody holds it).  --status keeps only those statuses
 * (repeatable, or a comma-separated list).  A run that is live, held, not
 * ended or unreadable is never removed.
 *
 * --segments KEEP: of every compacted run (any status, held or not: a run
 * goes on from its live segment, never dropped) the segments older than
 * the newest KEEP are dropped with lil_run_drop_segments.  --dry-run names
 * what would go.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

#define STATUSES 3

struct gc {
    const struct cli_ctx *ctx;
    lil_store *st;
    int64_t before_ns; /* runs whose last record is older go */
    bool want[STATUSES];
    bool dry_run;
    bool retention;           /* --older-than given */
    unsigned keep;            /* --segments KEEP; 0: not given */
    json_t *removed, *failed; /* --json */
    json_t *segments;         /* --json: [{"run", "dropped"}] */
    size_t n_removed, n_dropped;
    int exit;
};

static const char *const ended_names[STATUSES] = {"completed", "failed", "stopped"};

static int status_index(const char *s, size_t len)
{
    for (int i = 0; i < STATUSES; i++)
        if (strlen(ended_names[i]) == len && strncmp(ended_names[i], s, len) == 0)
            return i;
    return -1;
}

/* "30d", "12h", "90m", "45s", "2w": seconds into *out; false when not such. */
static bool parse_duration(const char *s, int64_t *out)
{
    static const struct {
        char unit;
        int64_t secs;
    } units[] = {{'s', 1}, {'m', 60}, {'h', 3600}, {'d', 86400}, {'w', 604800}};

    char *end = NULL;
    long long n;

    if (!s || *s < '0' || *s > '9')
        return false;
    n = strtoll(s, &end, 10);
    if (!end || !end[0] || end[1] || n < 0 || n > 100LL * 365 * 86400)
        return false;
    for (size_t i = 0; i < sizeof(units) / sizeof(*units); i++)
        if (*end == units[i].unit) {
            *out = (int64_t)n * units[i].secs;
            return true;
        }
    return false;
}

/* "1".."100000": segments to keep; false when not such. */
static bool parse_keep(const char *s, unsigned *out)
{
    char *end = NULL;
    long n;

    if (!s || *s < '0' || *s > '9')
        return false;
    n = strtol(s, &end, 10);
    if (!end || *end || n < 1 || n > 100000)
        return false;
    *out = (unsigned)n;
    return true;
}

/* Take every --status S out of argv (a list "a,b" too) into g->want. */
static int take_statuses(struct cli_ctx *ctx, int *argc, char **argv, struct gc *g)
{
    bool any = false;
    int out = 0;

    for (int i = 0; i < *argc; i++) {
        const char *v = NULL;

        if (strncmp(argv[i], "--status=", 9) == 0)
            v = argv[i] + 9;
        else if (strcmp(argv[i], "--status") == 0 && i + 1 < *argc)
            v = argv[++i];
        else if (strcmp(argv[i], "--status") == 0)
            return cli_usage(ctx, "--status needs completed, failed or stopped");
        if (!v) {
            argv[out++] = argv[i];
            continue;
        }
        for (const char *p = v; *p;) {
            size_t len = strcspn(p, ",");
            int k = status_index(p, len);

            if (k < 0)
                return cli_usage(ctx,
                                 "--status '%.*s': a run gc removes is completed, "
                                 "failed or stopped",
                                 (int)len, p);
            g->want[k] = any = true;
            p += len + (p[len] == ',');
        }
    }
    *argc = out;
    for (int k = 0; !any && k < STATUSES; k++)
        g->want[k] = true;
    return CLI_EXIT_OK;
}

/* Whether run id's facts make it one to remove. */
static bool to_remove(struct gc *g, const char *id)
{
    lil_bytes facts = {0};
    json_t *o = NULL;
    bool yes = false;

    if (lil_run_facts(g->st, id, &facts) != LIL_OK)
        return false; /* unreadable: never removed by gc */
    o = json_loadb((const char *)facts.data, facts.len, 0, NULL);
    lil_free(facts.data);
    if (o && json_is_null(json_object_get(o, "holder"))) {
        const char *status = json_string_value(json_object_get(o, "status"));
        int k = status ? status_index(status, strlen(status)) : -1;
        int64_t last = (int64_t)json_integer_value(json_object_get(o, "last_ns"));

        yes = k >= 0 && g->want[k] && last > 0 && last < g->before_ns;
    }
    json_decref(o);
    return yes;
}

static void gc_one(struct gc *g, const char *id)
{
    lil_status rc = g->dry_run ? LIL_OK : lil_run_remove(g->st, id, 0u);

    if (rc != LIL_OK) {
        cli_err(g->ctx, "%s", lil_store_errmsg(g->st));
        json_array_append_new(g->failed, json_pack("{s:o, s:s}", "run",
                                                   cli_json_str(id, strlen(id)),
                                                   "error", lil_store_errmsg(g->st)));
        g->exit = CLI_EXIT_FAIL;
        return;
    }
    g->n_removed++;
    json_array_append_new(g->removed, cli_json_str(id, strlen(id)));
    if (!g->ctx->json)
        printf("%s run '%s'\n", g->dry_run ? "would remove" : "removed", id);
}

/* --segments: the segments of run id older than the newest g->keep. */
static void drop_segments(struct gc *g, const char *id)
{
    lil_segments_info si = {.struct_size = sizeof(si)};
    unsigned dropped = 0;
    lil_status rc = lil_run_segments(g->st, id, &si);

    if (rc == LIL_E_NOTFOUND || (rc == LIL_OK && si.live - si.first + 1 <= g->keep))
        return; /* removed above, or nothing to drop */
    if (rc == LIL_OK && g->dry_run)
        dropped = si.live - si.first + 1 - g->keep;
    else if (rc == LIL_OK)
        rc = lil_run_drop_segments(g->st, id, g->keep, &dropped);
    if (rc != LIL_OK) {
        cli_err(g->ctx, "%s", lil_store_errmsg(g->st));
        json_array_append_new(g->failed, json_pack("{s:o, s:s}", "run",
                                                   cli_json_str(id, strlen(id)),
                                                   "error", lil_store_errmsg(g->st)));
        g->exit = CLI_EXIT_FAIL;
        return;
    }
    if (!dropped)
        return;
    g->n_dropped += dropped;
    json_array_append_new(g->segments,
                          json_pack("{s:o, s:I}", "run", cli_json_str(id, strlen(id)),
                                    "dropped", (json_int_t)dropped));
    if (!g->ctx->json)
        printf("%s %u older segment%s of run '%s'\n",
               g->dry_run ? "would drop" : "dropped", dropped, dropped == 1 ? "" : "s",
               id);
}

/* The ids first (removing while the store lists its runs is not asked of
 * a backend), then each judged and removed. */
static int collect(void *ud, const char *run_id)
{
    return json_array_append_new((json_t *)ud, json_string(run_id)) != 0;
}

static int gc_store(struct gc *g)
{
    json_t *ids = json_array();
    size_t i;
    json_t *v;
    lil_status rc = lil_store_foreach_run(g->st, collect, ids);

    if (rc != LIL_OK) {
        json_decref(ids);
        return cli_fail(g->ctx, rc, "%s", lil_store_errmsg(g->st));
    }
    json_array_foreach(ids, i, v)
    {
        bool removed = g->retention && to_remove(g, json_string_value(v));

        if (removed)
            gc_one(g, json_string_value(v));
        if (g->keep && !removed)
            drop_segments(g, json_string_value(v));
    }
    json_decref(ids);
    if (g->ctx->json)
        return cli_json_print(g->ctx,
                              json_pack("{s:O, s:O, s:O, s:b}", "removed", g->removed,
                                        "segments", g->segments, "failed", g->failed,
                                        "dry_run", g->dry_run),
                              false) == CLI_EXIT_OK
                   ? g->exit
                   : CLI_EXIT_FAIL;
    if (!g->n_removed && !g->n_dropped)
        printf("nothing to remove\n");
    return g->exit;
}

static int cmd_gc(struct cli_ctx *ctx, int argc, char **argv)
{
    struct gc g = {
        ctx,          NULL,         0, {false}, false, false, 0, json_array(),
        json_array(), json_array(), 0, 0,       0};
    const char *older = NULL, *segments = NULL;
    const struct cli_flag flags[] = {{"older-than", true, &older, NULL},
                                     {"segments", true, &segments, NULL},
                                     {"dry-run", false, NULL, &g.dry_run},
                                     {NULL, false, NULL, NULL}};
    const char *const names[] = {NULL};
    const char *pos[1] = {NULL};
    struct cli_args args = {flags, names, pos};
    int64_t secs = 0;
    int rc = take_statuses(ctx, &argc, argv, &g);

    if (rc == CLI_EXIT_OK)
        rc = cli_parse(ctx, argc, argv, &args);
    if (rc == CLI_EXIT_OK && !older && !segments)
        rc = cli_usage(ctx, "gc requires --older-than DURATION (e.g. 30d, 12h) or "
                            "--segments KEEP");
    if (rc == CLI_EXIT_OK && segments && !parse_keep(segments, &g.keep))
        rc = cli_usage(ctx,
                       "--segments '%s': how many of a run's newest segments to "
                       "keep, 1 or more (the live one counts)",
                       segments);
    g.retention = older != NULL;
    if (rc == CLI_EXIT_OK && older && !parse_duration(older, &secs))
        rc = cli_usage(ctx,
                       "--older-than '%s' is no duration: a number and s, m, h, d or "
                       "w (30d, 12h)",
                       older);
    if (rc == CLI_EXIT_OK)
        rc = cli_store_open(ctx, &g.st);
    if (rc == CLI_EXIT_OK) {
        g.before_ns = cli_now_ns() - secs * 1000000000;
        rc = gc_store(&g);
    }
    lil_store_close(g.st);
    json_decref(g.removed);
    json_decref(g.failed);
    json_decref(g.segments);
    return rc == CLI_PARSE_HELP ? CLI_EXIT_OK : rc;
}

const struct cli_verb cli_verb_gc = {
    "gc", "remove ended runs older than a duration, old segments (retention)",
    "Usage: lil gc [--older-than DURATION] [--status S]... [--segments KEEP]\n"
    "              [--dry-run] [--json]\n"
    "\n"
    "Remove every run that has ended -- completed, failed or stopped -- and\n"
    "whose last record is older than DURATION (a number and s, m, h, d or w:\n"
    "30d, 12h), as `lil rm` removes it.  --status keeps only runs of that\n"
    "status (repeatable, or completed,failed).  A run that has not ended, is\n"
    "held by a live process or cannot be read is never removed.  --dry-run\n"
    "only names what would be removed.\n"
    "--segments KEEP drops the older segments of every compacted run (any\n"
    "status, held or not), keeping its newest KEEP (the live one counts);\n"
    "the history before them is gone, the run goes on unaffected.\n"
    "Prints one line per run removed or dropped from; --json prints\n"
    "{\"removed\": [RUN...], \"segments\": [{\"run\", \"dropped\"}],\n"
    "\"failed\": [{\"run\", \"error\"}], \"dry_run\"}.\n"
    "\n"
    "Exit status: 0 (also when nothing was old enough); 1 a run could not be\n"
    "removed, or no such store; 64 usage.\n",
    cmd_gc};
