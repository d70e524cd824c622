/*
 * test_cli_mcp.c -- the framing and lifecycle of `lil mcp` over stdio,
 * from the data files tests/data/mcp/ (files NAME.test) (their first lines say the
 * format): every ">>>" line goes to one server's stdin, and its stdout must
 * hold, in order, an answer matching each "<<<" line.  Also: what stdin's
 * end does (the server exits 0 at once when nothing is in flight), a line
 * over the size cap, and a last line without its newline.
 */
#include <lil/lil.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli_util.h"
#include "t.h"

static char out[C_OUT_CAP * 4], err[C_OUT_CAP];

/* Does actual hold everything expected holds (see the data files)? */
static bool matches(json_t *expected, json_t *actual)
{
    const char *key;
    json_t *v;
    size_t i;

    if (json_is_object(expected)) {
        if (!json_is_object(actual))
            return false;
        json_object_foreach(expected, key, v)
        {
            if (!matches(v, json_object_get(actual, key)))
                return false;
        }
        return true;
    }
    if (json_is_array(expected)) {
        if (!json_is_array(actual) ||
            json_array_size(actual) != json_array_size(expected))
            return false;
        json_array_foreach(expected, i, v)
        {
            if (!matches(v, json_array_get(actual, i)))
                return false;
        }
        return true;
    }
    return actual && json_equal(expected, actual);
}

/* The data file split: its ">>>" lines into a file for stdin, its "<<<"
 * lines (with "-" for none) in order. */
struct script {
    char *expected[256];
    size_t n_expected;
};

static void load_script(const char *path, const char *stdin_path, struct script *sc)
{
    FILE *in, *to;
    char line[8192];

    memset(sc, 0, sizeof(*sc));
    in = fopen(path, "r");
    to = fopen(stdin_path, "w");
    T_REQUIRE(in && to);
    while (fgets(line, sizeof(line), in)) {
        line[strcspn(line, "\n")] = '\0';
        if (strncmp(line, ">>> ", 4) == 0)
            fprintf(to, "%s\n", line + 4);
        else if (strncmp(line, "<<< ", 4) == 0 && strcmp(line + 4, "-") != 0 &&
                 sc->n_expected < 256)
            sc->expected[sc->n_expected++] = strdup(line + 4);
    }
    fclose(in);
    fclose(to);
}

static void check_answers(const struct script *sc, const char *answers)
{
    const char *p = answers;

    for (size_t i = 0; i < sc->n_expected; i++) {
        const char *nl = strchr(p, '\n');
        json_t *want = json_loads(sc->expected[i], 0, NULL);
        json_t *got = nl ? json_loadb(p, (size_t)(nl - p), 0, NULL) : NULL;

        T_CHECK(want != NULL);
        if (!got || !matches(want, got)) {
            fprintf(stderr, "answer %zu:\n  want %s\n  got  %.*s\n", i + 1,
                    sc->expected[i], nl ? (int)(nl - p) : 40,
                    nl ? p : "(no more lines)");
            t_fail();
        }
        json_decref(want);
        json_decref(got);
        if (!nl)
            return;
        p = nl + 1;
    }
    if (*p) {
        fprintf(stderr, "answers past the script: %.300s\n", p);
        t_fail();
    }
}

static void run_data_file(const char *name)
{
    char path[1024];
    struct script sc;

    snprintf(path, sizeof(path), "%s/mcp/%s", T_DATA_DIR, name);
    load_script(path, t_path("stdin"), &sc);
    T_EQ_I64(c_lil(out, err, "--dir '%s' mcp < '%s'", c_store(), t_path("stdin")), 0);
    check_answers(&sc, out);
    for (size_t i = 0; i < sc.n_expected; i++)
        free(sc.expected[i]);
}

T_TEST(protocol)
{
    c_make_run("run-a1", 1, true);
    c_make_run("run-a2", 1, false);
    c_make_run("run-b", 1, true);
    run_data_file("protocol.test");
}

/* An empty stdin: the server exits 0 without a word on stdout. */
T_TEST(eof_at_once)
{
    T_EQ_I64(c_lil(out, err, "--dir '%s' mcp < /dev/null", c_store()), 0);
    T_EQ_STR(out, "");
}

/* A line over the 4 MiB cap is answered with a parse error and skipped to
 * its newline; the next line is served; a last line without its newline is
 * served too. */
T_TEST(long_line_and_last_line)
{
    FILE *f = fopen(t_path("in"), "w");

    T_REQUIRE(f != NULL);
    fputs("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\",\"params\":{\"x\":\"", f);
    for (int i = 0; i < 5 * 1024; i++)
        fputs(
            "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"
            "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"
            "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"
            "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"
            "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"
            "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"
            "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"
            "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"
            "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"
            "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"
            "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"
            "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"
            "xxxxxxxxxxxxxxxx",
            f);
    fputs("\"}}\n{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"ping\"}\n", f);
    fputs("{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"ping\"}", f);
    fclose(f);
    T_EQ_I64(c_lil(out, err, "--dir '%s' mcp < '%s'", c_store(), t_path("in")), 0);
    T_CONTAINS(out, "\"code\":-32700,\"message\":\"Parse error: message too large\"");
    T_CONTAINS(out, "{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{}}");
    T_CONTAINS(out, "{\"jsonrpc\":\"2.0\",\"id\":3,\"result\":{}}");
}

T_MAIN()
