/*
 * api_util.h -- helpers shared by the black-box API tests.
 *
 * The tests see lil only through <lil/lil.h>.  These helpers open stores
 * and runs with defaults, provide a step function that counts its calls and
 * does what its context says, collect the records of a run, read and patch
 * journal files byte by byte (the layout is docs/format.md), and fork child
 * processes that die where a test wants them to.
 *
 * Every test runs in its own temporary working directory, so the default
 * store of these helpers is the relative directory "st", or, when the
 * suite runs against PostgreSQL, a schema made for the test (t.h,
 * t_store): u_store(dir) opens t_store(dir).  Journal paths are the file
 * store's, for the tests that only it can run (T_FILE_ONLY).
 */
#ifndef LIL_TESTS_API_UTIL_H
#define LIL_TESTS_API_UTIL_H

#include <lil/lil.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "t.h"

/* The test's store: the directory "st", or its PostgreSQL twin (t_store). */
#define U_STORE_DIR "st"
#define U_STORE     t_store(U_STORE_DIR)

/* What fn_generic does, and what it saw. */
struct fn_ctx {
    int calls;          /* times fn_generic ran */
    const void *result; /* set as the result when not NULL */
    size_t result_len;
    const char *json;     /* set with lil_call_set_json when not NULL */
    const char *fail_msg; /* lil_call_fail("%s") and return 1 when not NULL */
    int ret;              /* returned when fail_msg is NULL */
    int die;              /* _exit(0) inside the function */
    const char *key_file; /* write the idempotency key there first */
    lil_status set_rc;    /* status of the set_result / set_json call */
    char identity[256];   /* lil_call_identity of the last call */
    char key[64];         /* lil_call_idempotency_key of the last call */
    unsigned attempt;     /* lil_call_attempt of the last call */
};

int fn_generic(lil_call *call, void *ud);

/* A step function that must never run: counts into *(int *)ud. */
int fn_never(lil_call *call, void *ud);

/* Open the store at dir (U_STORE when NULL) with the default env. */
lil_store *u_store(const char *dir);

/* Open a run with default options, or with the given ones. */
lil_run *u_run(lil_store *st, const char *id);
lil_run *u_run_opts(lil_store *st, const char *id, lil_sync sync, unsigned flags,
                    size_t max_record);

/* Run step name with a fresh fn_ctx that sets result text; LIL_OK expected. */
lil_status u_step_text(lil_run *run, const char *name, const char *text);

/* Path of run id's journal in the store directory dir. */
const char *u_journal_path(const char *dir, const char *id);

/* The bytes of run id's journal in the store at dir (NULL: the test's):
 * the file, or, when the suite runs against PostgreSQL, the run exported
 * (lil_run_export: the same bytes, without a file's preallocated tail).
 * malloc'd, NULL on error. */
unsigned char *u_journal_read(const char *dir, const char *id, size_t *len);
/* Their number, or -1. */
long long u_journal_size(const char *dir, const char *id);

/* Whole file in a malloc'd buffer (NULL on error). */
unsigned char *u_read_file(const char *path, size_t *len);

/* Write len bytes at off of an existing file; 0 on success. */
int u_write_at(const char *path, uint64_t off, const void *data, size_t len);

/* Write text to path (created/truncated); 0 on success. */
int u_write_file(const char *path, const void *data, size_t len);

/* Size of a file, or -1. */
long long u_file_size(const char *path);

/* Little-endian fields. */
uint32_t u_rd32(const unsigned char *p);
void u_wr32(unsigned char *p, uint32_t v);

/* One record of a run, copied out of lil_run_foreach. */
struct u_rec {
    uint64_t seq;
    uint64_t offset;
    uint32_t size;
    int64_t ts_ns;
    int type;
    unsigned flags;
    char key[256];
    unsigned char *payload; /* malloc'd copy (NUL-terminated) */
    size_t payload_len;
};

struct u_recs {
    struct u_rec *r;
    size_t n, cap;
};

/* Collect every record of run (LIL_OK or the foreach status). */
lil_status u_collect(lil_run *run, struct u_recs *out);
void u_recs_free(struct u_recs *recs);

/* The first record with this type and key, or NULL. */
const struct u_rec *u_find(const struct u_recs *recs, int type, const char *key);

/* Fork: the child runs fn(ud) and _exits with its return value. */
pid_t u_fork(int (*fn)(void *ud), void *ud);

/* Wait for pid: its exit status, or 128 + signal. */
int u_wait(pid_t pid);

/* A pipe used to tell the parent that the child is ready. */
struct u_pipe {
    int fd[2];
};

int u_pipe_open(struct u_pipe *p);
void u_pipe_signal(struct u_pipe *p);        /* child: write one byte */
int u_pipe_wait(struct u_pipe *p, int secs); /* parent: 0 when a byte came */
void u_pipe_close(struct u_pipe *p);

/* 1 if s is "lil-" followed by 32 hex digits. */
int u_is_idem_key(const char *s);

/* The string of n copies of c (static buffer, n < 2048). */
const char *u_repeat(char c, size_t n);

/* The byte contains the decimal or the 0x-hex spelling of n. */
int u_mentions_offset(const char *msg, uint64_t n);

#endif
