/*
 * curl_opts.c -- the options of every libcurl request of lil (curl_opts.h).
 *
 * One function per type of value, as libcurl reads its variadic argument,
 * each setting its option only when all before it were set (cc is what
 * they gave).
 */
#include "effects/curl_opts.h"

static CURLcode opt_long(const struct lil_curl *c, CURL *h, CURLcode cc, CURLoption o,
                         long v)
{
    return cc != CURLE_OK ? cc : c->easy_setopt(h, o, v);
}

static CURLcode opt_off(const struct lil_curl *c, CURL *h, CURLcode cc, CURLoption o,
                        curl_off_t v)
{
    return cc != CURLE_OK ? cc : c->easy_setopt(h, o, v);
}

static CURLcode opt_ptr(const struct lil_curl *c, CURL *h, CURLcode cc, CURLoption o,
                        const void *v)
{
    return cc != CURLE_OK ? cc : c->easy_setopt(h, o, v);
}

static CURLcode opt_fn(const struct lil_curl *c, CURL *h, CURLcode cc, CURLoption o,
                       curl_write_callback v)
{
    return cc != CURLE_OK ? cc : c->easy_setopt(h, o, v);
}

CURLcode lil__curl_setup(const struct lil_curl *c, CURL *h,
                         const struct lil_curl_request *r)
{
    CURLcode cc = opt_ptr(c, h, CURLE_OK, CURLOPT_URL, r->url);

    cc = opt_ptr(c, h, cc, CURLOPT_PROTOCOLS_STR, "http,https");
    cc = opt_long(c, h, cc, CURLOPT_NOSIGNAL, 1L);
    cc = opt_long(c, h, cc, CURLOPT_TIMEOUT_MS, r->timeout_ms);
    cc = opt_ptr(c, h, cc, CURLOPT_ACCEPT_ENCODING, "");
    cc = opt_off(c, h, cc, CURLOPT_MAXFILESIZE_LARGE, r->max_file);
    cc = opt_fn(c, h, cc, CURLOPT_WRITEFUNCTION, r->on_body);
    cc = opt_ptr(c, h, cc, CURLOPT_WRITEDATA, r->body_ud);
    if (r->on_header) {
        cc = opt_fn(c, h, cc, CURLOPT_HEADERFUNCTION, r->on_header);
        cc = opt_ptr(c, h, cc, CURLOPT_HEADERDATA, r->header_ud);
    }
    cc = opt_ptr(c, h, cc, CURLOPT_ERRORBUFFER, r->errbuf);
    return opt_ptr(c, h, cc, CURLOPT_HTTPHEADER, r->headers);
}

CURLcode lil__curl_post_body(const struct lil_curl *c, CURL *h, const void *data,
                             curl_off_t len)
{
    CURLcode cc = opt_off(c, h, CURLE_OK, CURLOPT_POSTFIELDSIZE_LARGE, len);

    return opt_ptr(c, h, cc, CURLOPT_POSTFIELDS, data ? data : "");
}
