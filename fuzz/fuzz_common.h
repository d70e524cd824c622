/*
 * fuzz_common.h -- what the journal fuzz targets share: an env whose
 * allocator refuses to let any single request look "huge" (a parser that
 * trusts a length field from the input would ask for gigabytes), and the
 * list of statuses that count as a clean answer to damaged input.
 */
#ifndef LIL_FUZZ_COMMON_H
#define LIL_FUZZ_COMMON_H

#include <lil/lil.h>
#include <stddef.h>
#include <stdint.h>

/* No single allocation may exceed this: the targets give max_record of at
 * most 64 KiB and inputs are small, so anything near it is a length taken
 * from the input without a bound. */
#define FUZZ_ALLOC_LIMIT ((size_t)64 << 20)

/* The env every target uses (created once, never freed). */
lil_env *fuzz_env(void);

/* A new directory for a target's store, in /dev/shm when it can be (the
 * fsyncs then cost nothing), removed with all it holds at exit. */
const char *fuzz_temp_dir(const char *prefix);

/* abort() unless s is LIL_OK or an error that bad bytes may produce. */
void fuzz_check_status(const char *where, lil_status s);

/* abort() with a message (the fuzzer then saves the input). */
void fuzz_fail(const char *fmt, ...) __attribute__((noreturn, format(printf, 1, 2)));

#endif
