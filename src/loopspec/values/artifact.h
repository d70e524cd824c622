/*
 * artifact.h -- safety rules of `artifacts` patterns and `notify` channels
 * (docs/loopspec.md, "Validation"; unsafe-artifact-*, unsafe-notify-*).
 */
#ifndef LIL_SPEC_ARTIFACT_H
#define LIL_SPEC_ARTIFACT_H

#include <stdbool.h>
#include <stddef.h>

/* Is pattern safe as an include (include = true) or exclude pattern?  If
 * not, say why in why. */
bool lil__artifact_pattern_safe(const char *pattern, bool include, char *why,
                                size_t why_len);

/* ^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$ */
bool lil__notify_channel_safe(const char *channel);

#endif
