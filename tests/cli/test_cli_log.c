/*
 * test_cli_log.c -- `lil log RUN`: the text form (one line per record) and
 * --jsonl (one JSON object per line), compared field by field with what
 * lil_run_foreach gives; binary payloads in base64; the effect flag; --json.
 */
#include <lil/lil.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "cli_util.h"
#include "t.h"

static char out[C_OUT_CAP], err[C_OUT_CAP];

#define MAXREC 64

/* What the library says about each record. */
struct recs {
    lil_record r[MAXREC];
    char key[MAXREC][64];
    size_t n;
};

static int collect(void *ud, const lil_record *rec)
{
    struct recs *rs = ud;

    if (rs->n == MAXREC)
        return 1;
    rs->r[rs->n] = *rec;
    snprintf(rs->key[rs->n], sizeof(rs->key[0]), "%.*s", (int)rec->key_len,
             (const char *)rec->key);
    rs->r[rs->n].key = NULL;
    rs->r[rs->n].payload = NULL;
    rs->n++;
    return 0;
}

static void load(const char *id, struct recs *rs)
{
    lil_store *st = c_open_store();
    lil_run_opts o = {sizeof(o), LIL_SYNC_DEFAULT, LIL_OPEN_READONLY, 0};
    lil_run *run = NULL;

    memset(rs, 0, sizeof(*rs));
    T_OK(lil_run_open(st, id, &o, &run));
    T_OK(lil_run_foreach(run, collect, rs));
    lil_run_close(run);
    lil_store_close(st);
}

static int fn_binary(lil_call *call, void *ud)
{
    (void)ud;
    return lil_call_set_result(call, "\0\xff\x01", 3) != LIL_OK;
}

static int fn_text(lil_call *call, void *ud)
{
    return lil_call_set_result(call, ud, strlen(ud)) != LIL_OK;
}

static char greet[] = "h\xc3\xa9llo \"w\"", sent[] = "sent";

/* A run with a text step, a binary step, an effect, and an outcome. */
static void make_mixed(const char *id)
{
    lil_store *st = c_open_store();
    lil_run *run = c_open_run(st, id);

    T_REQUIRE(run);
    T_OK(lil_step(run, "greet", fn_text, greet, NULL));
    T_OK(lil_step(run, "blob", fn_binary, NULL, NULL));
    T_OK(lil_effect(run, "send", "to=bob", 6, fn_text, sent, NULL));
    T_OK(lil_run_complete(run, "fin", 3));
    T_OK(lil_run_close(run));
    lil_store_close(st);
}

/* Split text into lines (in place); returns the count. */
static size_t split_lines(char *text, char **lines, size_t max)
{
    size_t n = 0;

    for (char *p = text; *p && n < max;) {
        char *nl = strchr(p, '\n');
        lines[n++] = p;
        if (!nl)
            break;
        *nl = '\0';
        p = nl + 1;
    }
    return n;
}

T_TEST(text_one_line_per_record)
{
    struct recs rs;
    char *lines[MAXREC + 4];
    size_t n;

    make_mixed("m");
    load("m", &rs);
    T_EQ_I64(c_lil(out, err, "log m --dir '%s'", c_store()), 0);
    T_EQ_STR(err, "");
    T_CONTAINS(out, "0x00ff01"); /* not text: shown in hex */
    T_CONTAINS(out, "effect");
    n = split_lines(out, lines, MAXREC + 4);
    T_EQ_I64(n, rs.n);
    for (size_t i = 0; i < n && i < rs.n; i++) {
        char at[32];
        snprintf(at, sizeof(at), "@%llu", (unsigned long long)rs.r[i].offset);
        T_CONTAINS(lines[i], at);
        T_CONTAINS(lines[i], lil_record_type_name(rs.r[i].type));
        T_CONTAINS(lines[i], rs.key[i]);
        T_CONTAINS(lines[i], "Z ");
    }
}

/* Check one --jsonl object against the library's record. */
static void check_obj(json_t *o, const lil_record *r, const char *key)
{
    json_t *flags = json_object_get(o, "flags");
    const char *ts = json_string_value(json_object_get(o, "ts"));

    T_EQ_I64(json_integer_value(json_object_get(o, "seq")), r->seq);
    T_EQ_I64(json_integer_value(json_object_get(o, "offset")), r->offset);
    T_EQ_I64(json_integer_value(json_object_get(o, "ts_ns")), r->ts_ns);
    T_EQ_I64(json_integer_value(json_object_get(o, "dur_us")), r->dur_us);
    T_EQ_I64(json_integer_value(json_object_get(o, "size")), r->size);
    T_EQ_I64(json_integer_value(json_object_get(o, "payload_len")), r->payload_len);
    T_EQ_STR(json_string_value(json_object_get(o, "type")),
             lil_record_type_name(r->type));
    T_EQ_STR(json_string_value(json_object_get(o, "key")), key);
    T_REQUIRE(ts && json_is_array(flags));
    T_CHECK(strlen(ts) == strlen("2024-05-01T10:00:00.123456789Z"));
    T_CHECK(ts[strlen(ts) - 1] == 'Z' && ts[19] == '.');
    T_EQ_I64(json_array_size(flags), (r->flags & LIL_RECF_EFFECT) ? 1 : 0);
    if (r->flags & LIL_RECF_EFFECT)
        T_EQ_STR(json_string_value(json_array_get(flags, 0)), "effect");
    T_CHECK(json_object_get(o, "payload") || json_object_get(o, "payload_b64"));
}

T_TEST(jsonl_fields_match_the_journal)
{
    struct recs rs;
    char *lines[MAXREC + 4];
    size_t n;

    make_mixed("m");
    load("m", &rs);
    T_EQ_I64(c_lil(out, err, "log m --jsonl --dir '%s'", c_store()), 0);
    n = split_lines(out, lines, MAXREC + 4);
    T_EQ_I64(n, rs.n);
    for (size_t i = 0; i < n && i < rs.n; i++) {
        json_t *o = c_json(lines[i]);
        T_REQUIRE(o);
        check_obj(o, &rs.r[i], rs.key[i]);
        json_decref(o);
    }
}

/* The --jsonl object whose key is key and type type. */
static json_t *find_obj(char *text, const char *key, const char *type)
{
    char *lines[MAXREC + 4];
    size_t n = split_lines(text, lines, MAXREC + 4);

    for (size_t i = 0; i < n; i++) {
        json_t *o = json_loads(lines[i], 0, NULL);
        const char *k = json_string_value(json_object_get(o, "key"));
        const char *t = json_string_value(json_object_get(o, "type"));
        if (k && t && strcmp(k, key) == 0 && strcmp(t, type) == 0)
            return o;
        json_decref(o);
    }
    return NULL;
}

T_TEST(jsonl_payloads)
{
    char copy[C_OUT_CAP];
    json_t *o;

    make_mixed("m");
    T_EQ_I64(c_lil(out, err, "log m --jsonl --dir '%s'", c_store()), 0);
    memcpy(copy, out, sizeof(copy));
    o = find_obj(copy, "greet", "step");
    T_REQUIRE(o);
    T_EQ_STR(json_string_value(json_object_get(o, "payload")), "h\xc3\xa9llo \"w\"");
    json_decref(o);
    memcpy(copy, out, sizeof(copy));
    o = find_obj(copy, "blob", "step");
    T_REQUIRE(o);
    T_CHECK(json_object_get(o, "payload") == NULL);
    T_EQ_STR(json_string_value(json_object_get(o, "payload_b64")), "AP8B");
    json_decref(o);
    memcpy(copy, out, sizeof(copy));
    o = find_obj(copy, "send", "step");
    T_REQUIRE(o);
    T_EQ_STR(json_string_value(json_array_get(json_object_get(o, "flags"), 0)),
             "effect");
    T_EQ_STR(json_string_value(json_object_get(o, "payload")), "sent");
    json_decref(o);
    memcpy(copy, out, sizeof(copy));
    o = find_obj(copy, "send", "intent");
    T_REQUIRE(o);
    T_CHECK(json_object_get(o, "payload_b64") != NULL); /* a raw SHA-256 */
    T_EQ_I64(json_integer_value(json_object_get(o, "payload_len")), 32);
    json_decref(o);
}

T_TEST(json_document)
{
    struct recs rs;
    json_t *doc, *recs;

    make_mixed("m");
    load("m", &rs);
    T_EQ_I64(c_lil(out, err, "log m --json --dir '%s'", c_store()), 0);
    doc = c_json(out);
    T_REQUIRE(doc);
    T_EQ_STR(json_string_value(json_object_get(doc, "run")), "m");
    recs = json_object_get(doc, "records");
    T_EQ_I64(json_array_size(recs), rs.n);
    for (size_t i = 0; i < rs.n && i < json_array_size(recs); i++)
        check_obj(json_array_get(recs, i), &rs.r[i], rs.key[i]);
    json_decref(doc);
}

T_TEST(missing_run_and_store)
{
    lil_store_close(c_open_store());
    T_EQ_I64(c_lil(out, err, "log nope --dir '%s'", c_store()), 1);
    T_CONTAINS(err, "lil: log: no run 'nope'");
    T_EQ_I64(c_lil(out, err, "log nope --jsonl --dir '%s'", t_path("none")), 1);
    T_CONTAINS(err, "lil: log: no store at");
}

T_MAIN()
