/*
 * curl_opts.h -- the options every libcurl request of lil is made with, set
 * in one place: the http effect (effect_http.c, each hop) and the `llm`
 * agent harness (agents/agent_llm.c) both call lil__curl_setup on a fresh
 * or reset easy handle.
 *
 * What every request gets:
 *   - http: and https: only (CURLOPT_PROTOCOLS_STR), so a URL or a
 *     redirect cannot reach file:, ftp:, ...;
 *   - no signals (CURLOPT_NOSIGNAL): lil runs in the host's threads, and
 *     libcurl must not use SIGALRM for its DNS timeouts;
 *   - one timeout for the whole transfer (CURLOPT_TIMEOUT_MS);
 *   - every content encoding libcurl can decode (CURLOPT_ACCEPT_ENCODING
 *     ""), the size cap applied to a declared Content-Length at once
 *     (CURLOPT_MAXFILESIZE_LARGE; the write callback caps the rest);
 *   - the caller's write callback, optional header callback, error buffer
 *     (CURL_ERROR_SIZE bytes) and header list;
 *   - TLS and proxies as libcurl sets them by default: the system's CA
 *     store, peer and host verified, the proxy of the usual environment
 *     variables (http_proxy, https_proxy, no_proxy).
 * The method and body are the caller's (lil__curl_post_body for a body).
 *
 * Threads: one handle is used by one thread at a time (libcurl's rule).
 */
#ifndef LIL_EFFECTS_CURL_OPTS_H
#define LIL_EFFECTS_CURL_OPTS_H

#include "effects/curl_dl.h"

struct lil_curl_request {
    const char *url;
    long timeout_ms;
    curl_off_t max_file; /* a Content-Length above it fails at once; 0: none */
    curl_write_callback on_body;
    void *body_ud;
    curl_write_callback on_header; /* NULL: headers not read */
    void *header_ud;
    char *errbuf; /* CURL_ERROR_SIZE bytes */
    struct curl_slist *headers;
};

/* Set the options above on h; the first failing option's code. */
CURLcode lil__curl_setup(const struct lil_curl *c, CURL *h,
                         const struct lil_curl_request *r);

/* A request body of len bytes at data (not copied: it must outlive the
 * transfer); "" when data is NULL. */
CURLcode lil__curl_post_body(const struct lil_curl *c, CURL *h, const void *data,
                             curl_off_t len);

#endif
