/*
 * serve_client.c -- a client of `lil serve` for the C tests
 * (serve_client.h): the binary started and stopped, the login, requests
 * with libcurl, event streams read with libcurl's multi interface.
 */
#include "serve_client.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <curl/curl.h>

#include "t.h"

static int64_t now_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* ---- the process ------------------------------------------------------------- */

/* Read what the server wrote to stderr, waiting at most ms: bytes read. */
static ssize_t read_err(struct sc_server *sv, int ms)
{
    struct pollfd p = {.fd = sv->err_fd, .events = POLLIN};
    ssize_t n;

    if (sv->err_fd < 0 || poll(&p, 1, ms) <= 0)
        return 0;
    if (sv->err_len + 4096 >= sizeof(sv->err)) { /* full: keep the second half */
        size_t half = sizeof(sv->err) / 2;
        memmove(sv->err, sv->err + half, sv->err_len - half);
        sv->err_len -= half;
    }
    n = read(sv->err_fd, sv->err + sv->err_len, sizeof(sv->err) - 1 - sv->err_len);
    if (n <= 0) {
        close(sv->err_fd);
        sv->err_fd = -1;
        return 0;
    }
    sv->err_len += (size_t)n;
    sv->err[sv->err_len] = '\0';
    return n;
}

bool sc_wait_err(struct sc_server *sv, const char *pattern, int ms)
{
    int64_t end = now_ms() + ms;

    while (!strstr(sv->err, pattern) && now_ms() < end && sv->err_fd >= 0)
        read_err(sv, 50);
    return strstr(sv->err, pattern) != NULL;
}

/* Fork `lil ARGV...` with stderr into a pipe. */
static int spawn(struct sc_server *sv, const char *const *argv)
{
    int fds[2];

    memset(sv, 0, sizeof(*sv));
    sv->err_fd = -1;
    if (pipe2(fds, O_CLOEXEC) != 0)
        return -1;
    sv->pid = fork();
    if (sv->pid < 0) {
        close(fds[0]);
        close(fds[1]);
        sv->pid = 0;
        return -1;
    }
    if (sv->pid == 0) {
        char *args[32];
        size_t n = 0;
        int null = open("/dev/null", O_WRONLY);
        args[n++] = strdup("lil");
        for (size_t i = 0; argv[i] && n < 31; i++)
            args[n++] = strdup(argv[i]);
        args[n] = NULL;
        /* a test that fails early leaves no server behind holding its output */
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        dup2(fds[1], 2);
        if (null >= 0)
            dup2(null, 1);
        execv(t_lil_bin(), args);
        _exit(127);
    }
    close(fds[1]);
    sv->err_fd = fds[0];
    return 0;
}

/* Wait for the child at most ms: its exit status, or -1. */
static int reap(struct sc_server *sv, int ms)
{
    int64_t end = now_ms() + ms;
    int status;

    while (sv->pid > 0) {
        pid_t w = waitpid(sv->pid, &status, WNOHANG);
        if (w == sv->pid) {
            sv->pid = 0;
            while (read_err(sv, 0) > 0) {
            }
            return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
        }
        if (w < 0 || now_ms() >= end)
            return -1;
        read_err(sv, 20);
    }
    return -1;
}

int sc_stop(struct sc_server *sv, int sig)
{
    int rc;

    if (sv->pid <= 0)
        return -1;
    kill(sv->pid, sig);
    rc = reap(sv, 5000);
    if (sv->pid > 0) {
        kill(sv->pid, SIGKILL);
        (void)reap(sv, 5000);
    }
    if (sv->err_fd >= 0)
        close(sv->err_fd);
    sv->err_fd = -1;
    return rc;
}

int sc_run_to_exit(struct sc_server *sv, const char *const *argv, int ms)
{
    int rc;

    if (spawn(sv, argv) != 0)
        return -1;
    rc = reap(sv, ms);
    if (sv->pid > 0) {
        kill(sv->pid, SIGKILL);
        (void)reap(sv, 5000);
        rc = -1;
    }
    if (sv->err_fd >= 0)
        close(sv->err_fd);
    sv->err_fd = -1;
    return rc;
}

/* The token of the last "login?token=" line printed: 0, or -1. */
static int last_token(struct sc_server *sv)
{
    const char *at = NULL, *p = sv->err;

    while ((p = strstr(p, "login?token=")) != NULL)
        at = p++;
    if (!at || sscanf(at, "login?token=%128[0-9a-f]", sv->token) != 1)
        return -1;
    return 0;
}

int sc_start(struct sc_server *sv, const char *dir, const char *const *extra)
{
    const char *argv[20] = {"serve", "--listen", "127.0.0.1:0", "--dir", dir};
    size_t n = 5;
    const char *at, *port;

    for (size_t i = 0; extra && extra[i] && n < 17; i++)
        argv[n++] = extra[i];
    argv[n] = NULL;
    if (spawn(sv, argv) != 0)
        return -1;
    if (!sc_wait_err(sv, "lil serve: log in at ", 15000) ||
        !sc_wait_err(sv, "\n", 1000))
        goto fail;
    while (!strchr(strstr(sv->err, "lil serve: log in at "), '\n'))
        if (read_err(sv, 1000) <= 0)
            goto fail;
    at = strstr(sv->err, "lil serve: listening on http://");
    if (!at || !strchr(at, '\n') || last_token(sv) != 0)
        goto fail;
    port = memrchr(at, ':', (size_t)(strchr(at, '\n') - at));
    if (!port || sscanf(port, ":%u/", &sv->port) != 1)
        goto fail;
    snprintf(sv->base, sizeof(sv->base), "http://127.0.0.1:%u", sv->port);
    return 0;
fail:
    (void)sc_stop(sv, SIGKILL);
    return -1;
}

/* ---- requests ----------------------------------------------------------------- */

struct grow {
    char *data;
    size_t len;
};

static size_t on_data(char *ptr, size_t size, size_t nmemb, void *ud)
{
    struct grow *g = ud;
    size_t n = size * nmemb;
    char *more = realloc(g->data, g->len + n + 1);

    if (!more)
        return 0;
    memcpy(more + g->len, ptr, n);
    g->len += n;
    more[g->len] = '\0';
    g->data = more;
    return n;
}

/* The header lines of a request: the extra ones first (they win). */
static struct curl_slist *header_list(const struct sc_server *sv, const char *method,
                                      const char *const *headers, unsigned flags)
{
    struct curl_slist *list = NULL;
    char line[SC_SECRET_MAX + 64];
    bool post = strcmp(method, "POST") == 0;

    for (size_t i = 0; headers && headers[i]; i++)
        list = curl_slist_append(list, headers[i]);
    if (!(flags & SC_NO_COOKIE) && sv->sess.cookie[0]) {
        snprintf(line, sizeof(line), "Cookie: %s", sv->sess.cookie);
        list = curl_slist_append(list, line);
    }
    if (post && !(flags & SC_NO_CSRF) && sv->sess.csrf[0]) {
        snprintf(line, sizeof(line), "X-CSRF-Token: %s", sv->sess.csrf);
        list = curl_slist_append(list, line);
    }
    if (post && !(flags & SC_NO_TYPE))
        list = curl_slist_append(list, "Content-Type: application/json");
    return curl_slist_append(list, "Expect:");
}

static double server_timing(const struct sc_reply *r)
{
    char buf[128];
    const char *v = sc_header(r, "Server-Timing", buf, sizeof(buf));
    const char *dur = v ? strstr(v, "dur=") : NULL;

    return dur ? strtod(dur + 4, NULL) : -1;
}

int sc_request(struct sc_server *sv, const char *method, const char *path,
               const char *body, size_t body_len, const char *const *headers,
               unsigned flags, struct sc_reply *r)
{
    CURL *c = curl_easy_init();
    struct curl_slist *list = header_list(sv, method, headers, flags);
    struct grow b = {0}, h = {0};
    char url[8192];
    CURLcode rc;

    memset(r, 0, sizeof(*r));
    r->server_ms = -1;
    if (!c) {
        curl_slist_free_all(list);
        return -1;
    }
    snprintf(url, sizeof(url), "%s%s", sv->base, path);
    curl_easy_setopt(c, CURLOPT_URL, url);
    curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, method);
    curl_easy_setopt(c, CURLOPT_HTTPHEADER, list);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_data);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, &b);
    curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, on_data);
    curl_easy_setopt(c, CURLOPT_HEADERDATA, &h);
    curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, 30000L);
    curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(c, CURLOPT_PATH_AS_IS, 1L); /* "/.." sent as it is */
    if (body) {
        curl_easy_setopt(c, CURLOPT_POSTFIELDS, body);
        curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)body_len);
    }
    rc = curl_easy_perform(c);
    if (rc == CURLE_OK)
        curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &r->status);
    curl_easy_cleanup(c);
    curl_slist_free_all(list);
    r->body = b.data ? b.data : strdup("");
    r->body_len = b.len;
    r->headers = h.data ? h.data : strdup("");
    r->json = json_loadb(r->body ? r->body : "", r->body_len, 0, NULL);
    r->server_ms = server_timing(r);
    return rc == CURLE_OK ? 0 : -1;
}

int sc_get(struct sc_server *sv, const char *path, struct sc_reply *r)
{
    return sc_request(sv, "GET", path, NULL, 0, NULL, 0, r);
}

int sc_post(struct sc_server *sv, const char *path, const char *json,
            struct sc_reply *r)
{
    if (!json)
        json = "{}";
    return sc_request(sv, "POST", path, json, strlen(json), NULL, 0, r);
}

void sc_reply_free(struct sc_reply *r)
{
    free(r->body);
    free(r->headers);
    json_decref(r->json);
    memset(r, 0, sizeof(*r));
}

const char *sc_header(const struct sc_reply *r, const char *name, char *buf, size_t cap)
{
    size_t n = strlen(name);

    for (const char *l = r->headers; l && *l;
         l += strcspn(l, "\n") + (l[strcspn(l, "\n")] != 0)) {
        size_t len = strcspn(l, "\r\n");
        if (len > n && l[n] == ':' && strncasecmp(l, name, n) == 0) {
            const char *v = l + n + 1;
            while (*v == ' ')
                v++;
            snprintf(buf, cap, "%.*s", (int)(len - (size_t)(v - l)), v);
            return buf;
        }
    }
    return NULL;
}

const char *sc_str(const struct sc_reply *r, const char *key)
{
    return json_string_value(json_object_get(r->json, key));
}

/* ---- the login ------------------------------------------------------------------ */

/* The cookie lil_session=<id> of a Set-Cookie into sess. */
static int keep_cookie(const struct sc_reply *r, struct sc_session *sess)
{
    char v[512];
    const char *set = sc_header(r, "Set-Cookie", v, sizeof(v));
    size_t n = set ? strcspn(set, ";") : 0;

    if (!set || strncmp(set, "lil_session=", 12) != 0 || n <= 12 ||
        n >= sizeof(sess->cookie))
        return -1;
    snprintf(sess->cookie, sizeof(sess->cookie), "%.*s", (int)n, set);
    return 0;
}

int sc_login(struct sc_server *sv, const char *user)
{
    char form[512], old[SC_SECRET_MAX + 1];
    int64_t end = now_ms() + 2000;
    struct sc_reply r;
    const char *hdr[] = {"Content-Type: application/x-www-form-urlencoded", NULL};
    int rc = -1;

    while (read_err(sv, 0) > 0) { /* the last token printed */
    }
    (void)last_token(sv);
    if (user)
        snprintf(form, sizeof(form), "token=%s&user=%s", sv->token, user);
    else
        snprintf(form, sizeof(form), "token=%s", sv->token);
    memset(&sv->sess, 0, sizeof(sv->sess));
    if (sc_request(sv, "POST", "/login", form, strlen(form), hdr,
                   SC_NO_COOKIE | SC_NO_CSRF | SC_NO_TYPE, &r) != 0 ||
        r.status != 303 || keep_cookie(&r, &sv->sess) != 0) {
        sc_reply_free(&r);
        return -1;
    }
    sc_reply_free(&r);
    /* the next token is printed before the answer is sent: read until it */
    snprintf(old, sizeof(old), "%s", sv->token);
    while (last_token(sv) == 0 && strcmp(old, sv->token) == 0 && now_ms() < end)
        if (read_err(sv, 100) <= 0 && sv->err_fd < 0)
            break;
    if (sc_get(sv, "/api/session", &r) == 0 && r.status == 200 && sc_str(&r, "csrf")) {
        snprintf(sv->sess.csrf, sizeof(sv->sess.csrf), "%s", sc_str(&r, "csrf"));
        snprintf(sv->sess.user, sizeof(sv->sess.user), "%s",
                 sc_str(&r, "user") ? sc_str(&r, "user") : "");
        rc = 0;
    }
    sc_reply_free(&r);
    return rc;
}

/* ---- event streams -----------------------------------------------------------------
 */

struct sc_stream {
    CURLM *multi;
    CURL *easy;
    struct curl_slist *headers;
    struct grow in; /* bytes not yet taken as events */
    bool done;      /* the transfer ended */
};

/* Run the transfer for at most ms (or until something arrives). */
static void pump(struct sc_stream *st, int ms)
{
    int running = 0, numfds = 0;
    CURLMsg *msg;
    int left;

    curl_multi_perform(st->multi, &running);
    if (running && ms > 0) {
        curl_multi_poll(st->multi, NULL, 0, ms, &numfds);
        curl_multi_perform(st->multi, &running);
    }
    while ((msg = curl_multi_info_read(st->multi, &left)) != NULL)
        if (msg->msg == CURLMSG_DONE)
            st->done = true;
    if (!running)
        st->done = true;
}

int sc_stream_open(struct sc_server *sv, const char *run, struct sc_stream **out,
                   long *status)
{
    struct sc_stream *st = calloc(1, sizeof(*st));
    char url[1024];
    int64_t end = now_ms() + 5000;

    *out = NULL;
    *status = 0;
    if (!st)
        return -1;
    snprintf(url, sizeof(url), "%s/api/stream%s%s", sv->base, run ? "?run=" : "",
             run ? run : "");
    st->multi = curl_multi_init();
    st->easy = curl_easy_init();
    st->headers = header_list(sv, "GET", NULL, 0);
    curl_easy_setopt(st->easy, CURLOPT_URL, url);
    curl_easy_setopt(st->easy, CURLOPT_HTTPHEADER, st->headers);
    curl_easy_setopt(st->easy, CURLOPT_WRITEFUNCTION, on_data);
    curl_easy_setopt(st->easy, CURLOPT_WRITEDATA, &st->in);
    curl_easy_setopt(st->easy, CURLOPT_NOSIGNAL, 1L);
    curl_multi_add_handle(st->multi, st->easy);
    while (*status == 0 && !st->done && now_ms() < end) {
        pump(st, 50);
        curl_easy_getinfo(st->easy, CURLINFO_RESPONSE_CODE, status);
    }
    *out = st;
    return *status ? 0 : -1;
}

/* Take the first complete event off the buffer: true with its type and
 * data (a comment is skipped, an event without data has ""). */
static bool take_event(struct sc_stream *st, char *type, size_t type_cap, char **data)
{
    char *end = st->in.data ? strstr(st->in.data, "\n\n") : NULL;
    size_t used;

    *data = NULL;
    if (!end)
        return false;
    *end = '\0';
    snprintf(type, type_cap, "message");
    for (char *line = st->in.data; line;
         line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL) {
        size_t n = strcspn(line, "\n");
        if (strncmp(line, "event: ", 7) == 0)
            snprintf(type, type_cap, "%.*s", (int)(n - 7), line + 7);
        else if (strncmp(line, "data: ", 6) == 0 && !*data)
            *data = strndup(line + 6, n - 6);
        else if (line[0] == ':' && !*data)
            type[0] = '\0'; /* a comment */
    }
    used = (size_t)(end - st->in.data) + 2;
    memmove(st->in.data, st->in.data + used, st->in.len - used + 1);
    st->in.len -= used;
    if (!*data)
        *data = strdup("");
    return true;
}

bool sc_stream_wait(struct sc_stream *st, const char *type, int ms, json_t **data)
{
    int64_t end = now_ms() + ms;
    char got[80];
    char *text;

    if (data)
        *data = NULL;
    for (;;) {
        while (take_event(st, got, sizeof(got), &text)) {
            bool match = strcmp(got, type) == 0;
            if (match && data)
                *data = json_loads(text, 0, NULL);
            free(text);
            if (match)
                return true;
        }
        if (st->done || now_ms() >= end)
            return false;
        pump(st, (int)(end - now_ms() < 100 ? end - now_ms() : 100));
    }
}

bool sc_stream_ended(struct sc_stream *st, int ms)
{
    int64_t end = now_ms() + ms;

    while (!st->done && now_ms() < end)
        pump(st, 50);
    return st->done;
}

void sc_stream_close(struct sc_stream *st)
{
    if (!st)
        return;
    curl_multi_remove_handle(st->multi, st->easy);
    curl_easy_cleanup(st->easy);
    curl_multi_cleanup(st->multi);
    curl_slist_free_all(st->headers);
    free(st->in.data);
    free(st);
}
