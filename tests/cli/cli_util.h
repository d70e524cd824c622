/*
 * cli_util.h -- helpers for the black-box tests of the `lil` binary.
 *
 * The tests make runs through <lil/lil.h> in a store at t_path("store"),
 * then run the real binary (t_lil_bin()) in a shell and check its stdout,
 * its exit status and, through lil.h again, the journal afterwards.
 * Helpers report their own failures with t.h checks.
 */
#ifndef LIL_TESTS_CLI_UTIL_H
#define LIL_TESTS_CLI_UTIL_H

#include <lil/lil.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <jansson.h>

#define C_OUT_CAP 65536

/* The store of the current test: the directory t_path("store"), or its
 * PostgreSQL twin when the suite runs against PostgreSQL (t.h, t_store). */
const char *c_store(void);

/* The journal file of run id in the test's store (the file store's). */
const char *c_journal(const char *id);

/* Run `lil ARGS` in a shell (ARGS formatted with printf; the caller adds
 * --dir and quotes).  stdout goes to out and stderr to err, each NULL or
 * C_OUT_CAP bytes.  Returns the exit status (128 + signal if killed). */
int c_lil(char *out, char *err, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Open the test's store (created if missing). */
lil_store *c_open_store(void);

/* Open run id for writing (created if missing). */
lil_run *c_open_run(lil_store *st, const char *id);

/* A run with steps s1..sN (results "r1".."rN"), then completed with
 * result "all-good" when complete is true (else left running). */
void c_make_run(const char *id, int nsteps, bool complete);

/* A run whose step "parse" failed ("boom: bad input") and that then failed
 * with reason "gave up". */
void c_make_failed_run(const char *id);

/* A run left uncertain: step "prep" done, then a forked child dies (exit 9)
 * inside effect "charge" (request "amount=10"). */
void c_make_uncertain_run(const char *id);

/* Number of records in run id (read-only open), or -1. */
int64_t c_record_count(const char *id);

/* Offset of record seq (1-based) of run id, its key length and payload
 * length; false when not found. */
bool c_record_at(const char *id, uint64_t seq, uint64_t *off, size_t *key_len,
                 size_t *payload_len);

/* State of run id, opened read-only; 0 on error. */
lil_run_state c_state(const char *id);

/* Valid bytes of run id's journal (lil_run_info.journal_bytes). */
uint64_t c_journal_bytes(const char *id);

/* Write len bytes at off of file path / flip one byte (XOR 0x5a; under
 * PostgreSQL, of the run whose journal path is path, in the table that holds
 * it) / file size. */
bool c_pwrite(const char *path, uint64_t off, const void *data, size_t len);
bool c_flip_byte(const char *path, uint64_t off);
int64_t c_file_size(const char *path);

/* SHA-256-free fingerprint of a file's bytes (FNV-1a), to check that a
 * verb wrote nothing. */
uint64_t c_file_hash(const char *path);

/* Parse JSON text (NULL and a t.h failure when invalid). */
json_t *c_json(const char *text);

/* A forked child that holds run id open (its lock) until c_release.  The
 * child's pid is returned once the run is open; -1 on failure. */
pid_t c_hold(const char *id);
void c_release(pid_t pid);

#endif
