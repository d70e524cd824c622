/*
 * mcp_steer.h -- what the steering tools of `lil mcp` share
 * (mcp_tools_steer.c: the tools; mcp_steer_child.c: the loop verbs they
 * run in children; mcp_steer_spec.c: specs, run ids and inputs).
 */
#ifndef LIL_CLI_MCP_STEER_H
#define LIL_CLI_MCP_STEER_H

#include "mcp.h"

/* The reason of a steering call when the client gave none. */
#define STEER_REASON_DEFAULT "via MCP"

/* A loop verb to run in a child for request r. */
struct steer_child {
    const char *verb; /* "run", "step", "resume", "approve", "recover" */
    const char *spec; /* the spec's real path (under --spec-root) */
    const char *run_id;
    const char *reason;       /* journaled with the actor */
    const char *const *extra; /* the verb's own flags, NULL-terminated, or NULL */
    bool env_allow;           /* the verb takes --env-allow (run, step) */
    bool wait;                /* answer when the child exits */
    char *inputs_file;        /* --inputs FILE, taken: removed once read */
};

/* Run c's verb in a child and answer r: when it has started the work
 * (its first progress event; c->wait false) or when it exits (its loop
 * result, or a tool error with its words).  Every path answers r once. */
void steer_child_start(struct mcp_req *r, struct steer_child *c);

/* The loop facts of run_id ("loop" of lil_run_facts: a new reference), or
 * NULL once r is answered with a tool error (no such run, not a loop
 * run). */
json_t *steer_loop_facts(struct mcp_req *r, const char *run_id);

/* The spec that run_id (an existing loop run) is bound to, checked to be
 * under --spec-root: a new string (free), or NULL once r is answered with
 * a tool error (no such run, not a loop run, a spec outside the root). */
char *steer_run_spec(struct mcp_req *r, const char *run_id);

/* The spec at the client's path, loaded and valid: the spec (lil_spec_free)
 * and *real (free) its real path, or NULL once r is answered with a tool
 * error (outside --spec-root, unreadable, its diagnostics). */
lil_spec *steer_load_spec(struct mcp_req *r, const char *path, char **real);

/* The run id of a new run of spec: the client's, a new unique one with
 * fresh, else the spec's id.  0 and id filled, or -1 once r is answered. */
int steer_new_run_id(struct mcp_req *r, const lil_spec *spec, const char *given,
                     bool fresh, char *id, size_t len);

/* inputs (an object) written to a new private file for --inputs: its path
 * (free; remove when done), or NULL once r is answered. */
char *steer_inputs_file(struct mcp_req *r, json_t *inputs);

#endif
