/*
 * test_cli_ls.c -- `lil ls`: an empty store, several runs in every state,
 * a run held by another process (listed, with the holder's pid, and not
 * disturbed), runs that cannot be opened (damaged, keyed) and --json.
 * ls opens runs read-only: the journals must be byte-for-byte unchanged.
 */
#include <lil/lil.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "cli_util.h"
#include "t.h"

static char out[C_OUT_CAP], err[C_OUT_CAP];

/* The line of stdout that starts with "id " (static copy), or "". */
static const char *line_of(const char *text, const char *id)
{
    static char line[4096];
    size_t idlen = strlen(id);

    for (const char *p = text; p && *p;) {
        const char *nl = strchr(p, '\n');
        size_t len = nl ? (size_t)(nl - p) : strlen(p);
        if (len > idlen && strncmp(p, id, idlen) == 0 && p[idlen] == ' ') {
            snprintf(line, sizeof(line), "%.*s", (int)len, p);
            return line;
        }
        p = nl ? nl + 1 : NULL;
    }
    return "";
}

/* The run object with that id in a --json document. */
static json_t *run_obj(json_t *doc, const char *id)
{
    json_t *runs = json_object_get(doc, "runs"), *r;
    size_t i;

    json_array_foreach(runs, i, r)
    {
        if (strcmp(json_string_value(json_object_get(r, "id")), id) == 0)
            return r;
    }
    return NULL;
}

T_TEST(empty_store)
{
    lil_store *st = c_open_store();
    json_t *doc;

    lil_store_close(st);
    T_EQ_I64(c_lil(out, err, "ls --dir '%s'", c_store()), 0);
    T_CONTAINS(out, "no runs");
    T_EQ_STR(err, "");
    T_EQ_I64(c_lil(out, err, "ls --dir '%s' --json", c_store()), 0);
    doc = c_json(out);
    T_REQUIRE(doc);
    T_EQ_I64(json_array_size(json_object_get(doc, "runs")), 0);
    T_EQ_STR(json_string_value(json_object_get(doc, "store")), c_store());
    json_decref(doc);
}

T_TEST(several_runs_text)
{
    const char *l;

    c_make_run("done-run", 3, true);
    c_make_run("open-run", 2, false);
    c_make_failed_run("bad-run");
    c_make_uncertain_run("unsure-run");
    T_EQ_I64(c_lil(out, err, "ls --dir '%s'", c_store()), 0);
    T_CONTAINS(out, "RUN");
    T_CONTAINS(out, "STATUS");
    T_CONTAINS(out, "LAST ACTIVITY");
    l = line_of(out, "done-run");
    T_CONTAINS(l, "completed");
    T_CONTAINS(l, "     3      0");
    T_CONTAINS(l, " ago)");
    T_CONTAINS(l, "Z (");
    T_CONTAINS(line_of(out, "open-run"), "running");
    l = line_of(out, "bad-run");
    T_CONTAINS(l, "failed");
    T_CONTAINS(l, "     1      1");
    T_CONTAINS(line_of(out, "unsure-run"), "uncertain");
    /* byte order of ids */
    T_CHECK(strstr(out, "bad-run") < strstr(out, "done-run"));
    T_CHECK(strstr(out, "done-run") < strstr(out, "open-run"));
    T_CHECK(strstr(out, "open-run") < strstr(out, "unsure-run"));
}

T_TEST(several_runs_json)
{
    json_t *doc, *r;

    c_make_run("a", 3, true);
    c_make_failed_run("b");
    c_make_uncertain_run("c");
    T_EQ_I64(c_lil(out, err, "ls --json --dir '%s'", c_store()), 0);
    doc = c_json(out);
    T_REQUIRE(doc);
    T_EQ_I64(json_array_size(json_object_get(doc, "runs")), 3);
    r = run_obj(doc, "a");
    T_REQUIRE(r);
    T_EQ_STR(json_string_value(json_object_get(r, "status")), "completed");
    T_EQ_I64(json_integer_value(json_object_get(r, "steps_done")), 3);
    T_EQ_I64(json_integer_value(json_object_get(r, "steps_failed")), 0);
    T_EQ_I64(json_integer_value(json_object_get(r, "records")), c_record_count("a"));
    T_EQ_I64(json_integer_value(json_object_get(r, "journal_bytes")),
             c_journal_bytes("a"));
    T_CHECK(json_is_null(json_object_get(r, "holder_pid")));
    T_CHECK(json_is_string(json_object_get(r, "last_activity")));
    T_CHECK(json_integer_value(json_object_get(r, "last_activity_ns")) >=
            json_integer_value(json_object_get(r, "created_ns")));
    r = run_obj(doc, "b");
    T_REQUIRE(r);
    T_EQ_STR(json_string_value(json_object_get(r, "status")), "failed");
    T_EQ_I64(json_integer_value(json_object_get(r, "steps_failed")), 1);
    r = run_obj(doc, "c");
    T_REQUIRE(r);
    T_EQ_STR(json_string_value(json_object_get(r, "status")), "uncertain");
    json_decref(doc);
}

T_TEST(held_run_listed_with_pid_and_untouched)
{
    char pid[32];
    uint64_t before;
    json_t *doc, *r;
    pid_t holder;

    c_make_run("busy", 2, false);
    holder = c_hold("busy");
    T_REQUIRE(holder > 0);
    before = c_file_hash(c_journal("busy"));
    T_EQ_I64(c_lil(out, err, "ls --dir '%s'", c_store()), 0);
    snprintf(pid, sizeof(pid), " %d", (int)holder);
    T_CONTAINS(line_of(out, "busy"), "running");
    T_CONTAINS(line_of(out, "busy"), pid);
    T_EQ_I64(c_lil(out, err, "ls --dir '%s' --json", c_store()), 0);
    doc = c_json(out);
    r = doc ? run_obj(doc, "busy") : NULL;
    T_CHECK(r && json_integer_value(json_object_get(r, "holder_pid")) == holder);
    json_decref(doc);
    T_CHECK(c_file_hash(c_journal("busy")) == before);
    c_release(holder);
}

T_TEST(damaged_run_listed_with_reason)
{
    uint64_t off;
    size_t klen, plen;
    json_t *doc, *r, *e;

    c_make_run("ok", 1, true);
    c_make_run("broken", 5, true);
    T_REQUIRE(c_record_at("broken", 3, &off, &klen, &plen));
    T_REQUIRE(c_flip_byte(c_journal("broken"), off + 32 + klen));
    T_EQ_I64(c_lil(out, err, "ls --dir '%s'", c_store()), 0);
    T_CONTAINS(line_of(out, "broken"), "damaged");
    T_CONTAINS(line_of(out, "ok"), "completed");
    T_EQ_I64(c_lil(out, err, "ls --dir '%s' --json", c_store()), 0);
    doc = c_json(out);
    r = doc ? run_obj(doc, "broken") : NULL;
    T_REQUIRE(r);
    T_EQ_STR(json_string_value(json_object_get(r, "status")), "damaged");
    e = json_object_get(r, "error");
    T_EQ_STR(json_string_value(json_object_get(e, "code")), "LIL_E_CORRUPT");
    T_CHECK(json_string_length(json_object_get(e, "message")) > 0);
    json_decref(doc);
}

T_TEST(keyed_run_without_key)
{
    setenv("LIL_JOURNAL_KEY", "sesame", 1);
    c_make_run("secret", 1, true);
    unsetenv("LIL_JOURNAL_KEY");
    c_make_run("plain", 1, true);
    T_EQ_I64(c_lil(out, err, "ls --dir '%s'", c_store()), 0);
    T_CONTAINS(line_of(out, "secret"), "key?");
    T_CONTAINS(line_of(out, "plain"), "completed");
    /* c_lil prefixes the binary; the key goes in through the environment */
    setenv("LIL_JOURNAL_KEY", "sesame", 1);
    T_EQ_I64(c_lil(out, err, "ls --dir '%s'", c_store()), 0);
    unsetenv("LIL_JOURNAL_KEY");
    T_CONTAINS(line_of(out, "secret"), "completed");
}

T_MAIN()
