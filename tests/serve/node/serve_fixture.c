/*
 * serve_fixture.c -- program runs for the browser tests of `lil serve`, made
 * through <lil/lil.h> as an application makes them.
 *
 *   serve_fixture STORE runs PREFIX N
 *       N completed program runs PREFIX-0001 ... PREFIX-N, one step each
 *       (the runs page's paging needs more than a page of runs, fast)
 *   serve_fixture STORE text RUN TEXT
 *       a failed program run whose names and outputs all say TEXT: a step
 *       named TEXT with the result {"out": TEXT}, a second step of that name
 *       that fails with the error TEXT, the run failed with the reason TEXT
 *   serve_fixture STORE uncertain RUN TEXT
 *       a program run left uncertain: an effect named TEXT whose request is
 *       TEXT, the process gone (_exit) before its outcome was journaled
 *
 * STORE is a directory or a postgresql:// URI.  Exit status 0, or 1 with
 * lil's message on stderr; 64 for bad arguments.
 */
#include <lil/lil.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* A step whose result is {"out": text}. */
static int say(lil_call *call, void *ud)
{
    return lil_call_set_jsonf(call, "{s:s}", "out", (const char *)ud) == LIL_OK ? 0 : 1;
}

/* A step that fails with text as its error. */
static int fail(lil_call *call, void *ud)
{
    lil_call_fail(call, "%s", (const char *)ud);
    return 1;
}

/* An effect whose process dies before its outcome: the run is uncertain. */
static int die(lil_call *call, void *ud)
{
    (void)call;
    (void)ud;
    _exit(0);
}

static int report(lil_status rc, const char *what)
{
    if (rc == LIL_OK)
        return 0;
    fprintf(stderr, "serve_fixture: %s: %s: %s\n", what, lil_status_name(rc),
            lil_errmsg());
    return 1;
}

/* n completed runs prefix-0001 .. prefix-n. */
static int make_runs(lil_store *st, const char *prefix, long n)
{
    for (long i = 1; i <= n; i++) {
        char id[128];
        lil_run *run = NULL;
        lil_status rc;

        snprintf(id, sizeof(id), "%s-%04ld", prefix, i);
        rc = lil_run_open(st, id, NULL, &run);
        if (rc == LIL_OK)
            rc = lil_step(run, "work", say, id, NULL);
        if (rc == LIL_OK)
            rc = lil_run_complete(run, "ok", 2);
        lil_run_close(run);
        if (report(rc, id))
            return 1;
    }
    return 0;
}

/* A failed run whose step names, outputs, error and reason are text. */
static int make_text_run(lil_store *st, const char *id, char *text)
{
    lil_run *run = NULL;
    lil_status rc = lil_run_open(st, id, NULL, &run);

    if (rc == LIL_OK)
        rc = lil_step(run, text, say, text, NULL);
    if (rc == LIL_OK) {
        rc = lil_step(run, text, fail, text, NULL);
        if (rc == LIL_E_FAILED)
            rc = lil_run_fail(run, text);
    }
    lil_run_close(run);
    return report(rc, id);
}

/* A run whose effect text (request text) never got its outcome. */
static int make_uncertain_run(lil_store *st, const char *id, char *text)
{
    lil_run *run = NULL;
    lil_status rc = lil_run_open(st, id, NULL, &run);

    if (rc == LIL_OK)
        rc = lil_step(run, "before", say, text, NULL);
    if (rc == LIL_OK)
        rc = lil_run_sync(run);
    if (rc == LIL_OK)
        rc = lil_effect(run, text, text, strlen(text), die, NULL, NULL);
    lil_run_close(run);
    return report(rc, id);
}

static int usage(void)
{
    fprintf(stderr, "usage: serve_fixture STORE runs PREFIX N | STORE text RUN TEXT"
                    " | STORE uncertain RUN TEXT\n");
    return 64;
}

int main(int argc, char **argv)
{
    lil_store *st = NULL;
    int rc;

    if (argc != 5)
        return usage();
    if (strcmp(argv[2], "runs") != 0 && strcmp(argv[2], "text") != 0 &&
        strcmp(argv[2], "uncertain") != 0)
        return usage();
    if (report(lil_store_open(NULL, argv[1], &st), argv[1]))
        return 1;
    if (strcmp(argv[2], "runs") == 0)
        rc = make_runs(st, argv[3], strtol(argv[4], NULL, 10));
    else if (strcmp(argv[2], "text") == 0)
        rc = make_text_run(st, argv[3], argv[4]);
    else
        rc = make_uncertain_run(st, argv[3], argv[4]);
    lil_store_close(st);
    return rc;
}
