/*
 * libm_dl.h -- the C library's fmod, reached through libm.so.6 loaded with
 * dlopen on first use.
 *
 * Why: every process pays for each shared library it starts with, and
 * libm.so.6 is a dear one to start (it resolves the IFUNCs of its hundreds
 * of functions at load time).  lil needs one libm function, fmod, for
 * JavaScript's % in LoopSpec expressions, and only when an operand is not
 * an integer (expr_eval.c does integers itself).  So liblil.so has no
 * libm.so.6 in its DT_NEEDED, and the first such % loads it here, once per
 * process (pthread_once), RTLD_NOW | RTLD_LOCAL, and never unloads it.  A
 * host that links libm already gets that same copy back.
 *
 * Threads: lil__libm_fmod may be called from any thread at any time.
 */
#ifndef LIL_BASE_LIBM_DL_H
#define LIL_BASE_LIBM_DL_H

typedef double (*lil_fmod_fn)(double x, double y);

/* libm's fmod, or NULL if libm.so.6 cannot be loaded (lil__libm_error says
 * why). */
lil_fmod_fn lil__libm_fmod(void);

/* Why the load failed: dlerror()'s text; "" while it has not failed. */
const char *lil__libm_error(void);

#endif
