/*
 * artifacts_view.c -- the artifacts of a loop run for `lil inspect`
 * (artifacts_view.h): one walk over the run's records, the last record
 * named "artifacts.N" wins.
 */
#include "artifacts_view.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

static int last_artifacts(void *ud, const lil_record *rec)
{
    json_t **out = ud;
    json_t *v;

    if (rec->type != LIL_REC_STEP || rec->key_len < 11 ||
        memcmp(rec->key, "artifacts.", 10) != 0)
        return 0;
    v = json_loadb(rec->payload, rec->payload_len, 0, NULL);
    if (json_is_object(v)) {
        json_decref(*out);
        *out = v;
    } else {
        json_decref(v);
    }
    return 0;
}

json_t *cli_artifacts_json(lil_run *run)
{
    json_t *found = NULL;

    if (lil_run_foreach(run, last_artifacts, &found) != LIL_OK) {
        json_decref(found);
        found = NULL;
    }
    return found ? found : json_null();
}

static void print_file(const json_t *f)
{
    const char *path = json_string_value(json_object_get(f, "path"));
    const char *sum = json_string_value(json_object_get(f, "sha256"));
    const char *error = json_string_value(json_object_get(f, "error"));

    if (error)
        printf("  %s  (%s)\n", path ? path : "?", error);
    else
        printf("  %s  %" JSON_INTEGER_FORMAT " bytes  sha256 %s\n", path ? path : "?",
               json_integer_value(json_object_get(f, "size")), sum ? sum : "?");
}

void cli_artifacts_print(lil_run *run)
{
    json_t *a = cli_artifacts_json(run);
    const json_t *files = json_object_get(a, "files");
    const char *cut = json_string_value(json_object_get(a, "truncated"));

    if (json_is_array(files)) {
        printf("%-14s%zu file%s%s%s%s\n", "artifacts", json_array_size(files),
               json_array_size(files) == 1 ? "" : "s", cut ? " (stopped at " : "",
               cut ? cut : "", cut ? ")" : "");
        for (size_t i = 0; i < json_array_size(files); i++)
            print_file(json_array_get(files, i));
    }
    json_decref(a);
}
