/*
 * safe_out.c -- nothing the command prints can steer the terminal that
 * shows it (safe_out.h).
 *
 * Text from outside -- a failure reason a server wrote, a step's output, a
 * run id given on the command line, a journal brought in from elsewhere --
 * reaches stdout and stderr through printf in many places.  Rather than
 * trusting each of them to escape it, main() puts a filter under both
 * streams (fopencookie): every byte written passes through it, and the
 * filter writes to the descriptor:
 *
 *   - \n and \t as they are; \r, \b and \f as the two characters `\r`,
 *     `\b`, `\f`; every other C0 control and DEL as `\u00XX`;
 *   - the C1 controls (U+0080-U+009F) and the bidirectional marks
 *     (lil__utf8_is_control's list) as `\uXXXX`;
 *   - a byte that does not start valid UTF-8 as `\xNN`;
 *   - everything else as it is.
 *
 * Each escape is also a valid JSON escape, so the output of --json (whose
 * strings jansson already escapes for C0) stays valid JSON with the same
 * values.  A UTF-8 sequence cut between two writes is held until the next
 * write or the close.  The command's own control sequences (the progress
 * line) go around the filter with cli_term_raw.
 */
#include "safe_out.h"

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

#define OUT_CHUNK 4096

struct guard {
    int fd;
    unsigned char held[4]; /* the start of a UTF-8 sequence cut by a write */
    size_t nheld;
    char out[OUT_CHUNK + 16];
    size_t nout;
    bool failed;
};

static struct guard guards[2];

static void drain(struct guard *g)
{
    size_t at = 0;

    while (at < g->nout && !g->failed) {
        ssize_t w = write(g->fd, g->out + at, g->nout - at);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            g->failed = true;
        else
            at += (size_t)w;
    }
    g->nout = 0;
}

static void put(struct guard *g, const char *s, size_t n)
{
    if (g->nout + n > OUT_CHUNK)
        drain(g);
    memcpy(g->out + g->nout, s, n);
    g->nout += n;
}

/* The escape of code point cp (a control) or of an invalid byte. */
static void put_escape(struct guard *g, uint32_t cp, bool invalid_byte)
{
    char e[12];
    int n;

    if (invalid_byte)
        n = snprintf(e, sizeof(e), "\\x%02x", (unsigned)cp);
    else if (cp == '\r' || cp == '\b' || cp == '\f')
        n = snprintf(e, sizeof(e), "\\%c", cp == '\r' ? 'r' : cp == '\b' ? 'b' : 'f');
    else
        n = snprintf(e, sizeof(e), "\\u%04x", (unsigned)cp);
    put(g, e, (size_t)n);
}

/* Length of the UTF-8 sequence that byte c starts (1 for ASCII). */
static size_t seq_len(unsigned char c)
{
    return c < 0x80 ? 1 : c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : 2;
}

/* Filter the bytes p[0..n).  Returns how many bytes at the end start a
 * sequence that the next write may complete (held, not written); none
 * when final. */
static size_t filter(struct guard *g, const unsigned char *p, size_t n, bool final)
{
    size_t i = 0;

    while (i < n) {
        uint32_t cp = p[i];
        size_t k = seq_len(p[i]);

        if (k > n - i && !final && p[i] >= 0xc2 && p[i] <= 0xf4)
            return n - i; /* cut: held for the next write */
        k = k == 1 ? 1 : cli_utf8_decode(p + i, n - i, &cp);
        if (k == 0) {
            put_escape(g, p[i], true);
            i++;
            continue;
        }
        if (cli_is_control_cp(cp) && cp != '\n' && cp != '\t')
            put_escape(g, cp, false);
        else
            put(g, (const char *)p + i, k);
        i += k;
    }
    return 0;
}

static ssize_t guard_write(void *cookie, const char *buf, size_t size)
{
    struct guard *g = cookie;
    const unsigned char *p = (const unsigned char *)buf;
    size_t used = 0;

    if (g->nheld) { /* complete the held sequence from the new bytes */
        unsigned char seq[4];
        size_t want = seq_len(g->held[0]), take = want - g->nheld;

        take = take < size ? take : size;
        memcpy(seq, g->held, g->nheld);
        memcpy(seq + g->nheld, p, take);
        if (g->nheld + take < want) {
            memcpy(g->held + g->nheld, p, take);
            g->nheld += take;
            return (ssize_t)size;
        }
        used = take;
        g->nheld = 0;
        (void)filter(g, seq, want, true);
    }
    g->nheld = filter(g, p + used, size - used, false);
    memcpy(g->held, p + size - g->nheld, g->nheld);
    drain(g);
    return g->failed ? -1 : (ssize_t)size;
}

static int guard_close(void *cookie)
{
    struct guard *g = cookie;

    (void)filter(g, g->held, g->nheld, true);
    g->nheld = 0;
    drain(g);
    return g->failed ? -1 : 0;
}

static FILE *guarded(struct guard *g, int fd, FILE *was)
{
    cookie_io_functions_t io = {NULL, guard_write, NULL, guard_close};
    FILE *f;

    g->fd = fd;
    f = fopencookie(g, "w", io);
    if (!f)
        return was;
    if (fd == STDERR_FILENO)
        (void)setvbuf(f, NULL, _IONBF, 0);
    else if (isatty(fd))
        (void)setvbuf(f, NULL, _IOLBF, 0);
    return f;
}

void cli_safe_streams(void)
{
    (void)fflush(stdout);
    (void)fflush(stderr);
    stdout = guarded(&guards[0], STDOUT_FILENO, stdout);
    stderr = guarded(&guards[1], STDERR_FILENO, stderr);
}

void cli_term_raw(FILE *f, const char *seq)
{
    int fd = f == stdout ? STDOUT_FILENO : STDERR_FILENO;
    size_t n = strlen(seq), at = 0;

    (void)fflush(f);
    while (at < n) {
        ssize_t w = write(fd, seq + at, n - at);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return;
        at += (size_t)w;
    }
}
