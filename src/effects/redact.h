/*
 * redact.h -- secrets kept out of what lil journals and prints: the values
 * of environment variables whose names say they are secrets, wherever they
 * appear in a text (a rendered command line, a command's output, a log
 * line) or in the strings of a JSON value (an effect's result).
 *
 * The rules, exact and simple:
 *   - a name is a secret's when it contains KEY, TOKEN, SECRET, PASSWORD,
 *     PASSWD or CREDENTIAL, in any case (OPENAI_API_KEY, github_token,
 *     LIL_JOURNAL_KEY, DB_PASSWORD, AWS_SHARED_CREDENTIALS_FILE);
 *   - its value is redacted when it has at least LIL_REDACT_MIN_LEN bytes
 *     and is valid UTF-8: a shorter value ("1", "true", "us") would blank
 *     out ordinary text, and real keys and tokens are longer;
 *   - every occurrence of a value, byte for byte, becomes "[redacted]";
 *     where values overlap, the longest one that starts first wins (the
 *     text is scanned left to right, the longest value tried first);
 *   - in a JSON value, at any depth: strings are redacted; a number whose
 *     text (as JSON writes it) holds a value becomes the string
 *     "[redacted]" (a secret of digits read as a number); an object key
 *     holding a value is renamed to its redacted text, "#2", "#3" ...
 *     appended where two renamed keys (or a renamed key and another)
 *     would meet.
 *
 * Redacting a result changes what a replay returns (the loop sees
 * "[redacted]" where the fresh run saw the value): the caller decides what
 * it journals; this module only rewrites what it is given.
 *
 * Ownership: lil__redact_new copies the values it keeps; lil__redact_free
 * wipes them (explicit_bzero) and frees them.  A struct lil_redact is
 * read-only after lil__redact_new and may be shared by threads.  Reading
 * environ (vars NULL) is as safe as getenv: not while another thread
 * changes the environment.
 */
#ifndef LIL_LOOP_REDACT_H
#define LIL_LOOP_REDACT_H

#include <stdbool.h>
#include <stddef.h>

#include "base/buf.h"
#include "base/env.h"
#include "json/json.h"

#define LIL_REDACTED       "[redacted]"
#define LIL_REDACT_MIN_LEN 8

struct lil_redact;

/* Does a variable named name (len bytes) hold a secret? */
bool lil__redact_name_is_secret(const char *name, size_t len);

/* The secret values of vars ("NAME=value", NULL-terminated; NULL: this
 * process's environ).  LIL_E_NOMEM. */
lil_status lil__redact_new(const struct lil_env *env, struct lil_err *err,
                           const char *const *vars, struct lil_redact **out);

/* Add one more value (len bytes) that the caller knows is a secret (a
 * secret input's), under the same rules of length and UTF-8; only while
 * r is not yet shared.  LIL_E_NOMEM. */
lil_status lil__redact_add(struct lil_redact *r, struct lil_err *err, const char *value,
                           size_t len);

/* Wipe and free.  NULL is a no-op. */
void lil__redact_free(struct lil_redact *r);

/* How many distinct values are redacted. */
size_t lil__redact_count(const struct lil_redact *r);

/* Append text (len bytes) to out with every secret value replaced.
 * LIL_E_NOMEM, LIL_E_TOOBIG past out's cap (out keeps what it had). */
lil_status lil__redact_text(const struct lil_redact *r, struct lil_err *err,
                            const char *text, size_t len, struct lil_buf *out);

/* Append text (len bytes) to out with every occurrence of the one value
 * (vlen bytes, any length: the caller knows it is a secret, e.g. an API key
 * it holds) replaced; vlen 0 copies text.  Errors as lil__redact_text. */
lil_status lil__redact_value(struct lil_err *err, const char *value, size_t vlen,
                             const char *text, size_t len, struct lil_buf *out);

/* Redact the strings, numbers and keys of *v in place (v's allocations
 * under r's env); a number at the top is replaced: *v then holds the new
 * value (the old one released).  LIL_E_NOMEM (v may then be partly
 * redacted), LIL_E_TOOBIG for a value nested deeper than
 * LIL_REDACT_MAX_DEPTH. */
#define LIL_REDACT_MAX_DEPTH 4096
lil_status lil__redact_json(const struct lil_redact *r, struct lil_err *err,
                            json_t **v);

/* One call: lil__redact_new(vars), lil__redact_text, lil__redact_free. */
lil_status lil__redact_env_values(const struct lil_env *env, struct lil_err *err,
                                  const char *const *vars, const char *text, size_t len,
                                  struct lil_buf *out);

#endif
