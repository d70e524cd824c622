/*
 * test_index.c -- the identity index: insertion order, lookups across
 * growth, keys that differ only in length or share a prefix.
 */
#include <stdio.h>
#include <string.h>

#include "base/env.h"
#include "engine/index.h"
#include "t.h"

T_TEST(many_keys_survive_growth)
{
    static char keys[20000][16];
    struct lil_env env;
    struct imap m;

    lil__env_init(&env);
    lil__imap_init(&m, &env);
    for (int i = 0; i < 20000; i++) {
        struct ientry *e;
        snprintf(keys[i], sizeof(keys[i]), "k%d", i);
        e = lil__imap_upsert(&m, keys[i], strlen(keys[i]));
        T_REQUIRE(e != NULL);
        e->attempts = (uint32_t)i;
    }
    T_EQ_I64(m.n, 20000);
    for (int i = 0; i < 20000; i++) {
        struct ientry *e = lil__imap_find(&m, keys[i], strlen(keys[i]));
        T_REQUIRE(e != NULL);
        T_EQ_I64(e->attempts, i);
        T_CHECK(&m.entries[i] == e); /* dense, in insertion order */
    }
    T_CHECK(lil__imap_find(&m, "k20000", 6) == NULL);
    T_CHECK(lil__imap_find(&m, "k1", 1) == NULL); /* prefix "k" */
    T_CHECK(lil__imap_upsert(&m, keys[7], strlen(keys[7])) == &m.entries[7]);
    T_EQ_I64(m.n, 20000);
    lil__imap_free(&m);
}

T_TEST(empty_map_finds_nothing)
{
    struct lil_env env;
    struct imap m;

    lil__env_init(&env);
    lil__imap_init(&m, &env);
    T_CHECK(lil__imap_find(&m, "a", 1) == NULL);
    lil__imap_free(&m);
}

T_MAIN()
