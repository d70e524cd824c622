/*
 * agent_llm_pool.c -- the libcurl easy handles the `llm` harness keeps
 * between calls, so that a loop's next call reuses the connection (and the
 * TLS session) of the last one instead of connecting again
 * (agent_llm_int.h).
 *
 * Why: a fresh handle per call costs a connect, the server's accept, a
 * socketpair for libcurl's wake-ups and a close every call -- on
 * 127.0.0.1 more than everything else the runner does around the call
 * together (docs/performance.md, "Agent calls").  A handle keeps its live
 * connections until libcurl's own limits close them (an idle connection
 * lives at most CURLOPT_MAXAGE_CONN, 118 s by default, and one the server
 * closed is noticed before it is reused).
 *
 * The pool: POOL_MAX slots, each an atomic pointer.  A call takes any
 * non-empty slot (atomic exchange; none: curl_easy_init) and gives the
 * handle back afterwards, reset (curl_easy_reset keeps live connections and
 * drops every option, so that no kept handle points to the call's memory),
 * to an empty slot (compare and swap; none empty: the handle is cleaned
 * up).  A handle is used by one thread at a time; no lock is held during a
 * transfer.
 *
 * Process-wide, like libcurl's own global state (curl_dl.h): the slots are
 * the one mutable static of the harness, set up once (pthread_once).  A
 * fork()ed child must never write to its parent's connections: a fork
 * handler (pthread_atfork, child side) empties the slots in the child
 * without touching the handles, which stay the parent's.  The handles are
 * never freed at exit (libcurl is never unloaded either).
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>

#include "agents/agent_llm_int.h"

#define POOL_MAX 4

static CURL *_Atomic slots[POOL_MAX];
static pthread_once_t pool_once = PTHREAD_ONCE_INIT;

/* In a fork()ed child: forget the parent's handles (not cleaned up: that
 * could write to the parent's connections). */
static void forget_in_child(void)
{
    for (size_t i = 0; i < POOL_MAX; i++)
        atomic_store(&slots[i], NULL);
}

static void pool_init(void)
{
    (void)pthread_atfork(NULL, NULL, forget_in_child);
}

CURL *lil__llm_handle_take(const struct lil_curl *c)
{
    (void)pthread_once(&pool_once, pool_init);
    for (size_t i = 0; i < POOL_MAX; i++) {
        CURL *h = atomic_exchange(&slots[i], NULL);

        if (h)
            return h;
    }
    return c->easy_init();
}

void lil__llm_handle_give(const struct lil_curl *c, CURL *h)
{
    if (!h)
        return;
    c->easy_reset(h);
    for (size_t i = 0; i < POOL_MAX; i++) {
        CURL *empty = NULL;

        if (atomic_compare_exchange_strong(&slots[i], &empty, h))
            return;
    }
    c->easy_cleanup(h);
}
