/*
 * utf8.h -- UTF-8 as RFC 3629 defines it (run ids, expression strings).
 */
#ifndef LIL_BASE_UTF8_H
#define LIL_BASE_UTF8_H

#include <stddef.h>
#include <stdint.h>

/* Length of the valid UTF-8 sequence at s (1-4) with its code point, or 0
 * for an invalid byte. */
size_t lil__utf8_decode(const unsigned char *s, size_t len, uint32_t *cp);

/* Offset of the first byte of s that does not start a valid sequence, or
 * len when all of s is valid UTF-8. */
size_t lil__utf8_invalid_at(const char *s, size_t len);

/* True for a code point that changes how a terminal shows the text
 * around it rather than showing itself: C0 and C1 controls, DEL, and the
 * bidirectional marks, embeddings, overrides and isolates (U+061C,
 * U+200E-U+200F, U+202A-U+202E, U+2066-U+2069). */
int lil__utf8_is_control(uint32_t cp);

#endif
