/*
 * lil_c_loop.h -- the conformance workload's loop face run in-process
 * (lil_c.c's `loop` and `loop-recover` commands).
 */
#ifndef LIL_C_LOOP_H
#define LIL_C_LOOP_H

#include <lil/lil.h>

#include "conf.h"

/* Run the loop of spec_path as run e->run of store e->dir, through env
 * (NULL: the default one); with how ("retry" or "assume_done", and
 * result_json for the latter) decide its uncertain effect first.  Prints
 * the protocol's lines; returns the exit status (0, 3, or 1 on an error).
 * env is freed. */
int conf_loop_run(const struct conf_env *e, lil_env *env, const char *spec_path,
                  const char *how, const char *result_json);

#endif
