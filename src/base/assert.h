/*
 * assert.h -- LIL_ASSERT(cond): an invariant of lil's own code.
 *
 * Built with LIL_ASSERTS defined (the presets dev, asan and fuzz), a false
 * cond prints "file:line: assertion failed: cond" to stderr and aborts: it
 * is a bug in lil, for a debug build or a fuzzer to find.  Otherwise the
 * macro compiles to nothing; cond is still type-checked but never
 * evaluated, so it must have no side effects.
 *
 * Invariants only.  Bad input, a failed system call and a failed allocation
 * are errors returned to the caller: the library never aborts on them.
 */
#ifndef LIL_BASE_ASSERT_H
#define LIL_BASE_ASSERT_H

#ifdef LIL_ASSERTS
#include <stdio.h>
#include <stdlib.h>

#define LIL_ASSERT(cond)                                                            \
    ((cond) ? (void)0                                                               \
            : (fprintf(stderr, "%s:%d: assertion failed: %s\n", __FILE__, __LINE__, \
                       #cond),                                                      \
               abort()))
#else
#define LIL_ASSERT(cond) ((void)sizeof(!(cond)))
#endif

#endif
