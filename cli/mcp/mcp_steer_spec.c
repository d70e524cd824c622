/*
 * mcp_steer_spec.c -- what the steering tools of `lil mcp` know before
 * they run anything (mcp_steer.h): the spec a client names (held under
 * --spec-root, loaded, valid), the spec an existing run is bound to (its
 * journal names it; held under --spec-root all the same: a journal in a
 * shared store does not choose what runs), the id of a new run, and the
 * inputs file given to the child.
 */
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../spec_root.h"
#include "mcp_steer.h"

#define DIAG_TEXT_MAX 3500 /* bytes of diagnostics in a tool error */

/* ---- a spec the client names ---------------------------------------------- */

static const char *severity_name(lil_severity s)
{
    return s == LIL_SEV_ERROR ? "error" : s == LIL_SEV_WARNING ? "warning" : "info";
}

/* The spec's diagnostics as the CLI prints them, one a line:
 * "FILE:LINE:COLUMN: error: MESSAGE [code]". */
static void diag_text(const lil_spec *spec, const char *file, char *buf, size_t cap)
{
    size_t n = 0, count = lil_spec_diag_count(spec);

    buf[0] = '\0';
    for (size_t i = 0; i < count && n + 1 < cap; i++) {
        const lil_diag *d = lil_spec_diag(spec, i);
        int k;

        if (!d || d->severity != LIL_SEV_ERROR)
            continue;
        k = snprintf(buf + n, cap - n, "%s:%u:%u: %s: %s [%s]\n",
                     d->file && *d->file ? d->file : file, d->line, d->column,
                     severity_name(d->severity), d->message, d->code);
        if (k < 0)
            break;
        n += (size_t)k;
    }
    if (n >= cap)
        n = cap - 1;
    snprintf(buf + n, cap - n, "%s is not a valid loop spec: nothing was run", file);
}

lil_spec *steer_load_spec(struct mcp_req *r, const char *path, char **real)
{
    char msg[1024], *text;
    lil_spec *spec = NULL;
    lil_status rc;

    *real = cli_spec_root_path(r->srv->opts.spec_root, path, msg, sizeof(msg));
    if (!*real) {
        mcp_req_tool_error(r, NULL, "%s", msg);
        return NULL;
    }
    rc = lil_spec_load(NULL, *real, NULL, &spec);
    if (rc != LIL_OK) {
        mcp_req_tool_error(r, lil_status_name(rc), "%s", lil_errmsg());
    } else if (!lil_spec_ok(spec)) {
        text = malloc(DIAG_TEXT_MAX);
        if (text)
            diag_text(spec, path, text, DIAG_TEXT_MAX);
        mcp_req_tool_error(r, lil_status_name(LIL_E_SPEC), "%s",
                           text ? text : "the spec is not valid");
        free(text);
    } else {
        return spec;
    }
    lil_spec_free(spec);
    free(*real);
    *real = NULL;
    return NULL;
}

/* ---- the id of a new run ---------------------------------------------------- */

static bool run_exists(struct mcp_server *srv, const char *id)
{
    lil_bytes facts = {0};
    lil_status rc = lil_run_facts(srv->store, id, &facts);

    lil_free(facts.data);
    return rc != LIL_E_NOTFOUND;
}

int steer_new_run_id(struct mcp_req *r, const lil_spec *spec, const char *given,
                     bool fresh, char *id, size_t len)
{
    const char *base = lil_spec_id(spec);
    uint32_t rnd = 0;

    if (given || (!fresh && base)) {
        snprintf(id, len, "%s", given ? given : base);
        return 0;
    }
    for (int tries = 0; tries < 16; tries++) {
        if (getrandom(&rnd, sizeof(rnd), 0) != (ssize_t)sizeof(rnd))
            break;
        snprintf(id, len, "%.180s-%08x", base ? base : "run", (unsigned)rnd);
        if (!run_exists(r->srv, id))
            return 0;
    }
    mcp_req_tool_error(r, NULL, "no free run id found for a new run of spec '%s'",
                       base ? base : "run");
    return -1;
}

/* ---- the spec of a run --------------------------------------------------------- */

json_t *steer_loop_facts(struct mcp_req *r, const char *id)
{
    lil_bytes facts = {0};
    lil_status rc = lil_run_facts(r->srv->store, id, &facts);
    json_t *o = NULL, *loop;

    if (rc == LIL_E_NOTFOUND) {
        mcp_req_tool_error(r, lil_status_name(rc), "no run '%s' in the store", id);
        return NULL;
    }
    if (rc != LIL_OK) {
        mcp_req_tool_error(r, lil_status_name(rc), "cannot read run '%s': %s", id,
                           lil_store_errmsg(r->srv->store));
        return NULL;
    }
    o = json_loadb((const char *)facts.data, facts.len, 0, NULL);
    lil_free(facts.data);
    loop = json_incref(json_object_get(o, "loop"));
    json_decref(o);
    if (!json_is_object(loop)) {
        json_decref(loop);
        mcp_req_tool_error(r, NULL, "run %s is not a loop run", id);
        return NULL;
    }
    return loop;
}

char *steer_run_spec(struct mcp_req *r, const char *run_id)
{
    json_t *loop = steer_loop_facts(r, run_id);
    char msg[1024], *real;

    if (!loop)
        return NULL;
    real = cli_spec_root_run_path(
        r->srv->opts.spec_root, json_string_value(json_object_get(loop, "spec_path")),
        json_string_value(json_object_get(loop, "cwd")), msg, sizeof(msg));
    if (!real)
        mcp_req_tool_error(r, NULL, "run %s: %s", run_id, msg);
    json_decref(loop);
    return real;
}

/* ---- inputs ----------------------------------------------------------------- */

char *steer_inputs_file(struct mcp_req *r, json_t *inputs)
{
    char path[PATH_MAX], *tmp = NULL;
    char *text = json_dumps(inputs, JSON_COMPACT);
    int fd = -1, n;
    size_t len, done = 0;

    (void)lil_setting("TMPDIR", &tmp); /* the default: /tmp */
    n = snprintf(path, sizeof(path), "%s/lil-mcp-inputs-XXXXXX.json",
                 tmp && *tmp ? tmp : "/tmp");
    lil_free(tmp);
    if (text && n > 0 && (size_t)n < sizeof(path))
        fd = mkstemps(path, 5); /* mode 0600: inputs may hold secrets */
    len = text ? strlen(text) : 0;
    while (fd >= 0 && done < len) {
        ssize_t w = write(fd, text + done, len - done);
        if (w <= 0)
            break;
        done += (size_t)w;
    }
    free(text);
    if (fd >= 0 && close(fd) == 0 && done == len && len > 0 && (text = strdup(path)))
        return text;
    if (fd >= 0)
        (void)unlink(path);
    mcp_req_tool_error(r, NULL, "cannot write the inputs to a file: %s", path);
    return NULL;
}
