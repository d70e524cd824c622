/*
 * lil_c_loop.c -- the loop face of the conformance workload in this
 * process (lil_c_loop.h): engines/lil_loop.yaml through lil_loop_open and
 * lil_loop_run (or lil_loop_recover), the calls `lil run` and `lil
 * recover` make, so that the power-cut layer can sit under them.  The
 * result's state holds the tags; an uncertain effect is printed as
 * "UNCERTAIN <kind>:<iteration>" (agent: step 2I, http: step 2I+1); a
 * journal the open refuses as damaged as "DAMAGED".
 */
#include "lil_c_loop.h"

#include <stdio.h>
#include <string.h>

#include <jansson.h>

static int print_result(const lil_loop_result *res)
{
    json_t *state = res->state_json ? json_loads(res->state_json, 0, NULL) : NULL;
    json_t *tags = json_object_get(state, "tags");
    char *text = NULL;

    if (json_is_array(tags)) {
        json_t *obj = json_pack("{s:O}", "tags", tags);
        text = json_dumps(obj, JSON_COMPACT);
        json_decref(obj);
    }
    json_decref(state);
    if (!text) {
        fprintf(stderr, "lil_c: the completed state has no tags\n");
        return 1;
    }
    printf("RESULT %s\n", text);
    fflush(stdout);
    free(text);
    return 0;
}

static int report(const lil_loop_result *res)
{
    switch (res->status) {
    case LIL_LOOP_COMPLETED:
        return print_result(res);
    case LIL_LOOP_UNCERTAIN:
        printf("UNCERTAIN %s:%lld\n", res->uncertain_kind ? res->uncertain_kind : "?",
               (long long)res->uncertain_iteration);
        fflush(stdout);
        return CONF_EXIT_UNCERTAIN;
    default:
        fprintf(stderr, "lil_c: the loop ended %s: %s\n",
                lil_loop_status_name(res->status), res->reason ? res->reason : "");
        return 1;
    }
}

static lil_status open_loop(const struct conf_env *e, lil_store *st,
                            const lil_spec *spec, lil_loop **lp)
{
    char run[256], steps[64], ledger[1024];
    const char *pairs[3] = {run, steps, ledger};
    lil_loop_opts o = {0};

    snprintf(run, sizeof(run), "run=%s", e->run);
    snprintf(steps, sizeof(steps), "steps=%d", e->steps);
    snprintf(ledger, sizeof(ledger), "ledger=%s", e->ledger_url);
    o.struct_size = sizeof(o);
    o.run_id = e->run;
    o.input_pairs = pairs;
    o.n_input_pairs = 3;
    o.actor = "conformance";
    return lil_loop_open(st, spec, &o, lp);
}

int conf_loop_run(const struct conf_env *e, lil_env *env, const char *spec_path,
                  const char *how, const char *result_json)
{
    lil_spec *spec = NULL;
    lil_store *st = NULL;
    lil_loop *lp = NULL;
    lil_loop_result res;
    lil_status rc;
    int code = 1;

    memset(&res, 0, sizeof(res));
    rc = lil_spec_load(env, spec_path, NULL, &spec);
    if (rc != LIL_OK || !lil_spec_ok(spec)) {
        fprintf(stderr, "lil_c: %s does not load\n", spec_path);
        goto out;
    }
    if ((rc = lil_store_open(env, e->dir, &st)) == LIL_OK &&
        (rc = open_loop(e, st, spec, &lp)) == LIL_E_CORRUPT) {
        fprintf(stderr, "lil_c: %s\n", lil_store_errmsg(st));
        printf("DAMAGED\n");
        fflush(stdout);
        code = CONF_EXIT_DAMAGED;
        goto out;
    }
    if (rc != LIL_OK) {
        fprintf(stderr, "lil_c: open: %s: %s\n", lil_status_name(rc),
                st ? lil_store_errmsg(st) : lil_errmsg());
        goto out;
    }
    if (!how)
        rc = lil_loop_run(lp, &res);
    else if (strcmp(how, "assume_done") == 0)
        rc = lil_loop_recover(lp, LIL_RESOLVE_ASSUME_DONE, result_json, "conformance",
                              "the operator looked the effect up in the ledger", &res);
    else
        rc = lil_loop_recover(lp, LIL_RESOLVE_RETRY, NULL, "conformance",
                              "the operator looked the effect up in the ledger", &res);
    if (rc == LIL_OK)
        code = report(&res);
    else
        fprintf(stderr, "lil_c: loop: %s: %s\n", lil_status_name(rc),
                lil_loop_errmsg(lp));
    lil_loop_result_free(&res);
out:
    lil_loop_close(lp);
    lil_store_close(st);
    lil_spec_free(spec);
    lil_env_free(env);
    return code;
}
