/*
 * err.h -- error codes plus messages.
 *
 * Every handle embeds a struct lil_err.  Internal functions that can fail
 * take a struct lil_err * and fill it with lil__seterr(), which returns the
 * code, so a failure reads `return lil__seterr(err, LIL_E_IO, errno, ...)`.
 * The public layer copies the final error to the handle and to the calling
 * thread's slot (lil_errmsg).
 */
#ifndef LIL_BASE_ERR_H
#define LIL_BASE_ERR_H

#include <lil/lil.h>

#define LIL_ERRMSG_MAX 256

struct lil_err {
    lil_status code;
    int sys_errno;
    char msg[LIL_ERRMSG_MAX];
};

/* Set code, errno and a formatted message; return code. */
lil_status lil__seterr(struct lil_err *err, lil_status code, int sys_errno,
                       const char *fmt, ...) LIL_PRINTF(4, 5);

/* The text of errno value e, for messages: strerror without its shared
 * buffer (the text lives in a per-thread buffer until the next call on
 * this thread, so use it once per message). */
const char *lil__errstr(int e);

/* Clear to LIL_OK and "". */
void lil__clearerr(struct lil_err *err);

/* Copy err to the calling thread's slot (what lil_errmsg returns). */
void lil__publish_err(const struct lil_err *err);

/* The calling thread's last published message (lil_errmsg). */
const char *lil__thread_errmsg(void);

/* A status's text ("unknown status" for none) and its name in lil.h
 * ("LIL_E_UNKNOWN" for none): static strings (lil_strerror,
 * lil_status_name). */
const char *lil__status_text(lil_status s);
const char *lil__status_name(lil_status s);

/* Copy src into dst (both may be the same). */
void lil__copyerr(struct lil_err *dst, const struct lil_err *src);

#endif
