/*
 * index.h -- an open-addressing hash map from identity bytes to what the
 * journal says about that step.  Built once by the open scan, so replaying
 * a step is one lookup.  Keys are borrowed (they point into the journal's
 * mapping, or into memory the owner keeps) unless the map owns them.
 *
 * Not thread-safe: the run's mutex guards it.
 */
#ifndef LIL_ENGINE_INDEX_H
#define LIL_ENGINE_INDEX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/env.h"

enum ientry_state {
    IE_NONE = 0,
    IE_DONE,    /* completed: payload is the result */
    IE_FAILED,  /* failed: payload is the reason */
    IE_PENDING, /* an effect's intent without outcome */
    IE_RETRY,   /* an uncertain effect resolved with retry: run it again */
};

struct ientry {
    const uint8_t *key;
    uint32_t key_len;
    uint32_t hash;
    uint8_t state;
    uint8_t effect;       /* 1 if the journal holds an effect here */
    uint8_t intent_flags; /* flags of its latest intent (LIL_SREC_REQUEST) */
    uint32_t attempts;    /* intents seen (effects) */
    uint32_t calls;       /* calls of this name in this execution (first
                             occurrences only: "fetch" counts fetch#2...) */
    uint32_t note_len;    /* bytes of the intent's payload after request */
    const uint8_t *payload;
    size_t payload_len;
    const uint8_t *request; /* the payload of the effect's latest intent: 32
                               bytes SHA-256 of its request, then note_len
                               bytes (engine/intent.h) */
};

/* Entries live in a dense array in insertion order (journal order); the
 * hash table holds (hash, index + 1) pairs, 0 marking an empty slot, so
 * growing the table touches 8 bytes per slot, not a whole entry. */
struct islot {
    uint32_t hash;
    uint32_t idx1; /* index into entries, plus one; 0: empty */
};

struct imap {
    const struct lil_env *env;
    struct islot *slots;
    size_t cap; /* slots, a power of two; 0 when empty */
    struct ientry *entries;
    size_t n;
    size_t n_alloc;
};

void lil__imap_init(struct imap *m, const struct lil_env *env);
void lil__imap_free(struct imap *m);
struct ientry *lil__imap_find(const struct imap *m, const void *key, size_t len);
/* Make room for n entries in all, so that adding them grows nothing;
 * -1 on OOM (the map is unchanged). */
int lil__imap_reserve(struct imap *m, size_t n);
/* Find or insert (the key is borrowed); NULL on OOM.  Pointers to entries
 * stay valid only until the next upsert (the array may move). */
struct ientry *lil__imap_upsert(struct imap *m, const void *key, size_t len);

/* Like lil__imap_upsert, but a new entry borrows keep(ud, key, len): a copy
 * that lives as long as the map (NULL from keep is OOM). */
typedef const uint8_t *(*imap_keep_fn)(void *ud, const void *key, size_t len);
struct ientry *lil__imap_upsert_keep(struct imap *m, const void *key, size_t len,
                                     imap_keep_fn keep, void *ud);

#endif
