/*
 * text.h -- bytes a child process or a server sent, read as text the way
 * Node reads them, so that what lil stores is a valid JSON string and
 * equals what the reference implementation stores.
 *
 * Node decodes UTF-8 (Buffer.toString, StringDecoder, fetch's text()) with
 * the WHATWG decoder: each maximal subpart of an ill-formed sequence
 * becomes one U+FFFD (an overlong form, a surrogate, a byte past U+10FFFF,
 * a truncated sequence: "\xF0\x9F\x98" is one U+FFFD, "\xED\xA0\x80" is
 * three, "\xC0\xAF" two).  Valid sequences, NUL bytes and a leading BOM
 * (U+FEFF) are kept as they are.
 *
 * No state, no allocation of its own: the result goes to the caller's
 * buffer (its allocator and cap).
 */
#ifndef LIL_LOOP_TEXT_H
#define LIL_LOOP_TEXT_H

#include <stddef.h>

#include "base/buf.h"

/* Append data (len bytes) to out, decoded as Node decodes UTF-8: valid
 * UTF-8 with U+FFFD for every maximal ill-formed subpart.  At most 3 * len
 * bytes.  LIL_E_NOMEM, LIL_E_TOOBIG past out's cap (out keeps what it had). */
lil_status lil__text_from_utf8(struct lil_buf *out, const void *data, size_t len);

/* Length of data without an incomplete UTF-8 sequence at its very end (a
 * valid prefix of a sequence that was cut, e.g. by an output cap): len, or
 * up to 3 bytes less. */
size_t lil__text_cut_partial(const void *data, size_t len);

#endif
