/*
 * mcp_stdio.c -- the stdio transport of `lil mcp` (mcp.h): one JSON-RPC
 * message per line on stdin, one per line on stdout, nothing else on
 * stdout (diagnostics go to stderr).
 *
 * One thread polls stdin with the timeout mcp_server_tick asks for.  A line
 * longer than MCP_MESSAGE_MAX is skipped to its newline and answered with
 * a parse error.  At EOF the server stops reading, lets the requests in
 * flight finish (a tool waiting for its child), and returns; children that
 * run loops go on.  A stdout that cannot be written (the client went away)
 * ends the server the same way, answers dropped.
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mcp.h"

#define READ_CHUNK 65536

struct stdio_state {
    struct mcp_out out;
    struct mcp_session *s;
    char *line; /* bytes of the line being read */
    size_t len, cap;
    bool skipping; /* the line is over the cap: drop to its newline */
    bool broken;   /* stdout failed */
};

static void write_msg(struct stdio_state *st, json_t *msg)
{
    char *text;

    if (st->broken)
        return;
    text = json_dumps(msg, JSON_COMPACT);
    if (!text)
        return;
    if (fputs(text, stdout) == EOF || fputc('\n', stdout) == EOF || fflush(stdout) != 0)
        st->broken = true;
    free(text);
}

static void out_send(struct mcp_out *o, json_t *msg)
{
    write_msg((struct stdio_state *)o, msg);
}

static void out_done(struct mcp_out *o)
{
    (void)o; /* stdout stays open */
}

static void session_notify(struct mcp_session *s, json_t *msg)
{
    write_msg(s->transport, msg);
}

static void take_line(struct mcp_server *srv, struct stdio_state *st)
{
    size_t len = st->len;

    while (len > 0 && (st->line[len - 1] == '\r' || st->line[len - 1] == ' ' ||
                       st->line[len - 1] == '\t'))
        len--;
    if (len > 0)
        mcp_receive(srv, st->s, st->line, len, &st->out);
    st->len = 0;
}

static void too_long(struct stdio_state *st)
{
    json_t *err =
        mcp_rpc_error(NULL, MCP_PARSE_ERROR, "Parse error: message too large", NULL);

    write_msg(st, err);
    json_decref(err);
    st->len = 0;
    st->skipping = true;
}

static bool append(struct stdio_state *st, const char *p, size_t n)
{
    return mcp_append(&st->line, &st->len, &st->cap, p, n);
}

/* Split what was read into lines and take each. */
static void feed(struct mcp_server *srv, struct stdio_state *st, const char *buf,
                 size_t n)
{
    while (n > 0) {
        const char *nl = memchr(buf, '\n', n);
        size_t part = nl ? (size_t)(nl - buf) : n;

        if (!st->skipping && st->len + part > MCP_MESSAGE_MAX)
            too_long(st);
        if (!st->skipping && !append(st, buf, part))
            too_long(st);
        if (nl) {
            if (!st->skipping)
                take_line(srv, st);
            st->skipping = false;
            part++;
        }
        buf += part;
        n -= part;
    }
}

/* Read what stdin has: false at EOF or on an error. */
static bool read_input(struct mcp_server *srv, struct stdio_state *st)
{
    char buf[READ_CHUNK];
    ssize_t n = read(STDIN_FILENO, buf, sizeof(buf));

    if (n < 0 && (errno == EINTR || errno == EAGAIN))
        return true;
    if (n <= 0) {
        if (st->len > 0 && !st->skipping)
            take_line(srv, st); /* a last line without its newline */
        return false;
    }
    feed(srv, st, buf, (size_t)n);
    return true;
}

int mcp_stdio_serve(struct mcp_server *srv)
{
    struct stdio_state st = {.out = {.send = out_send, .done = out_done}};
    bool open_in = true;
    int timeout = 0;

    st.s = mcp_session_new(srv);
    if (!st.s) {
        fputs("lil: mcp: out of memory\n", stderr);
        return 1;
    }
    st.s->id[0] = '\0';
    st.s->notify = session_notify;
    st.s->transport = &st;
    while (!st.broken && (open_in || mcp_server_busy(srv))) {
        struct pollfd pfd = {.fd = open_in ? STDIN_FILENO : -1, .events = POLLIN};
        int n = poll(&pfd, 1, timeout);
        if (n < 0 && errno != EINTR)
            break;
        if (n > 0 && (pfd.revents & (POLLIN | POLLHUP | POLLERR)))
            open_in = read_input(srv, &st);
        timeout = mcp_server_tick(srv);
        if (!open_in && timeout < 0)
            timeout = 50;
    }
    mcp_session_free(st.s);
    free(st.line);
    return 0;
}
