/*
 * safe_out.h -- stdout and stderr that escape every terminal control from
 * outside (safe_out.c).
 */
#ifndef LIL_CLI_SAFE_OUT_H
#define LIL_CLI_SAFE_OUT_H

#include <stdio.h>

/* Put the filter under stdout and stderr (once, first thing in main). */
void cli_safe_streams(void);

/* Write the command's own control sequence seq (e.g. "\r\033[K") to f's
 * descriptor around the filter, after what f holds. */
void cli_term_raw(FILE *f, const char *seq);

#endif
