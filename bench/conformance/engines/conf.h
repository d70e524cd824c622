/*
 * conf.h -- what the C adapters of the conformance benchmark share
 * (bench/conformance/engines/common.py describes the workload and the
 * protocol in full): the environment that names the servers and the
 * pipeline, the two requests of the workload made with libcurl, and the
 * lines an adapter prints.
 *
 * Step i of the pipeline is an LLM call when i is even (its result: the
 * tag of the answer) and a side effect on the ledger when i is odd (its
 * input: the tag of the LLM step before it).  A request that fails (no
 * answer from the benchmark's own servers) ends the process with status 1,
 * as a crash would: the benchmark starts it again.
 */
#ifndef CONF_H
#define CONF_H

#include <stddef.h>

#define CONF_TAG_MAX        128
#define CONF_EXIT_UNCERTAIN 3
#define CONF_EXIT_DAMAGED   4

struct conf_env {
    const char *llm_url;    /* CONF_LLM_URL: the fake server's base, .../v1 */
    const char *ledger_url; /* CONF_LEDGER_URL */
    const char *run;        /* CONF_RUN: the pipeline's id */
    const char *dir;        /* CONF_DIR: the store (a directory or a URL) */
    int steps;              /* CONF_STEPS */
};

/* Read the environment; 0, or -1 after a message when something is missing. */
int conf_env_read(struct conf_env *e);

/* LLM step i after the tag prev: the answer's tag into tag (CONF_TAG_MAX). */
void conf_llm(const struct conf_env *e, int i, const char *prev, char *tag);

/* Side effect i on the tag prev, with the idempotency key key (NULL: none):
 * the ledger's receipt into receipt (CONF_TAG_MAX). */
void conf_effect(const struct conf_env *e, int i, const char *prev, const char *key,
                 char *receipt);

/* The ledger's answer for an assumed outcome, as the effect returns it. */
void conf_receipt_json(const char *receipt, char *out, size_t cap);

/* "RESULT {"tags": [...]}" on stdout, for n tags. */
void conf_print_result(char (*tags)[CONF_TAG_MAX], size_t n);

#endif
