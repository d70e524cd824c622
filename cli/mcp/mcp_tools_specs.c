/*
 * mcp_tools_specs.c -- the read tools of `lil mcp` about loop specs:
 * validate_spec, explain_spec and doctor (docs/mcp.md, "Reading specs").
 *
 * A spec is named by its path, held under --spec-root (cli_spec_root_path:
 * a path outside it, or no such file, is a tool error with its words) and
 * loaded as `lil validate` loads it.  What the tools answer is what the
 * verbs print with --json -- the same code makes it (diag_print.c,
 * cmd_doctor.c) -- and a broken spec's diagnostics read as `lil validate`
 * prints them (file:line:column: error: message, the source line and a
 * caret under the column).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../spec_cli.h"
#include "../spec_root.h"
#include "mcp_read.h"

/* The spec of args, loaded, and its real path in *path (free); or NULL
 * once r is answered with a tool error. */
static lil_spec *load_spec(struct mcp_req *r, json_t *args, char **path)
{
    lil_spec *spec = NULL;
    char msg[1024];
    lil_status rc;

    *path = cli_spec_root_path(r->srv->opts.spec_root, mcp_arg_str(args, "spec", ""),
                               msg, sizeof(msg));
    if (!*path) {
        mcp_req_tool_error(
            r, strncmp(msg, "no such", 7) == 0 ? "LIL_E_NOTFOUND" : "LIL_E_INVAL", "%s",
            msg);
        return NULL;
    }
    rc = cli_spec_load(NULL, *path, &spec, msg, sizeof(msg));
    if (rc != LIL_OK) {
        mcp_req_tool_error(r, lil_status_name(rc), "%s", msg);
        free(*path);
        *path = NULL;
    }
    return spec;
}

/* The diagnostics of spec as `lil validate` prints them, and its verdict
 * line: a string (free), or NULL when out of memory. */
static char *diag_text(const lil_spec *spec, const char *file)
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);

    if (!f)
        return NULL;
    cli_diag_print(f, spec, file);
    cli_diag_summary(f, spec, file);
    if (fclose(f) != 0) {
        free(text);
        return NULL;
    }
    return text;
}

/* Answer r with the failure of a spec that has errors: code, the
 * diagnostics as text and then the line after (may be NULL). */
static void spec_broken(struct mcp_req *r, const lil_spec *spec, const char *file,
                        const char *after)
{
    char *text = diag_text(spec, file);

    if (!text)
        mcp_req_tool_error(r, "LIL_E_NOMEM", "out of memory");
    else
        mcp_req_tool_error(r, "LIL_E_SPEC", "%s%s", text, after ? after : "");
    free(text);
}

/* ---- validate_spec ------------------------------------------------------------- */

/* `lil validate --json`'s document, with "valid", "spec" (the spec's id)
 * and each diagnostic's "file". */
static json_t *validate_doc(const lil_spec *spec, const char *file)
{
    json_t *doc = cli_diag_json(spec, file), *d;
    const char *id = lil_spec_id(spec);
    size_t i;

    if (!doc)
        return NULL;
    json_object_set_new(doc, "valid", json_boolean(lil_spec_ok(spec)));
    json_object_set_new(doc, "spec", id ? json_string(id) : json_null());
    json_array_foreach(json_object_get(doc, "diagnostics"), i, d)
    {
        const lil_diag *g = lil_spec_diag(spec, i);
        const char *in = g && g->file && *g->file ? g->file : file;
        json_object_set_new(d, "file", json_string(in));
    }
    return doc;
}

void mcp_read_validate_spec(struct mcp_req *r, json_t *args)
{
    char *path = NULL, *text = NULL;
    lil_spec *spec = load_spec(r, args, &path);
    json_t *doc;

    if (!spec)
        return;
    doc = validate_doc(spec, path);
    if (doc && !lil_spec_ok(spec))
        text = diag_text(spec, path);
    if (!doc || (!lil_spec_ok(spec) && !text)) {
        json_decref(doc);
        mcp_req_tool_error(r, "LIL_E_NOMEM", "out of memory");
    } else if (text) {
        mcp_req_tool_fail(r, doc, text);
    } else {
        mcp_req_tool(r, doc);
    }
    free(text);
    free(path);
    lil_spec_free(spec);
}

/* ---- explain_spec -------------------------------------------------------------- */

void mcp_read_explain_spec(struct mcp_req *r, json_t *args)
{
    char *path = NULL;
    lil_spec *spec = load_spec(r, args, &path);
    lil_bytes b = {NULL, 0};
    json_t *doc = NULL;
    lil_status rc;

    if (!spec)
        return;
    if (!lil_spec_ok(spec)) {
        spec_broken(r, spec, path, NULL);
    } else if ((rc = lil_spec_explain(spec, &b)) != LIL_OK) {
        mcp_req_tool_error(r, lil_status_name(rc), "cannot explain '%s': %s", path,
                           lil_strerror(rc));
    } else if (!(doc = json_loadb(b.data, b.len, 0, NULL))) {
        mcp_req_tool_error(r, "LIL_E_NOMEM", "out of memory");
    } else {
        mcp_req_tool(r, doc);
    }
    lil_free(b.data);
    free(path);
    lil_spec_free(spec);
}

/* ---- doctor -------------------------------------------------------------------- */

/* Where the store is, as doctor may show it: a PostgreSQL URL may hold a
 * password, so only its scheme is shown. */
static const char *store_shown(const char *where)
{
    return strncmp(where, "postgres", 8) == 0 ? "postgresql://..." : where;
}

void mcp_read_doctor(struct mcp_req *r, json_t *args)
{
    char *path = NULL, after[1200];
    const char *where = r->srv->opts.store ? r->srv->opts.store : ".lil";
    lil_spec *spec = load_spec(r, args, &path); /* NULL: r is answered and gone */
    json_t *doc;

    if (!spec)
        return;
    if (!lil_spec_ok(spec)) {
        snprintf(after, sizeof(after), "%.1000s is not a valid loop spec\n", path);
        spec_broken(r, spec, path, after);
    } else if (!(doc = cli_doctor_json(spec, path, where))) {
        mcp_req_tool_error(r, "LIL_E_NOMEM", "out of memory");
    } else {
        json_object_set_new(doc, "store", json_string(store_shown(where)));
        mcp_req_tool(r, doc);
    }
    free(path);
    lil_spec_free(spec);
}
