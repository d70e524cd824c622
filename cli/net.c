/*
 * net.c -- what the HTTP servers of the `lil` command share (net.h).
 */
#include "net.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

int cli_net_split(const char *spec, char *host, size_t len, unsigned *port)
{
    const char *colon = strrchr(spec, ':');
    const char *h = spec;
    size_t n;
    char *end;
    unsigned long p;

    if (!colon || colon == spec)
        return -1;
    n = (size_t)(colon - spec);
    if (spec[0] == '[' && n >= 2 && colon[-1] == ']') {
        h = spec + 1;
        n -= 2;
    }
    if (colon[1] < '0' || colon[1] > '9')
        return -1;
    p = strtoul(colon + 1, &end, 10);
    if (n == 0 || n >= len || *end || p > 65535)
        return -1;
    memcpy(host, h, n);
    host[n] = '\0';
    *port = (unsigned)p;
    return 0;
}

bool cli_net_is_loopback(const struct sockaddr *sa)
{
    if (sa->sa_family == AF_INET)
        return (ntohl(((const struct sockaddr_in *)sa)->sin_addr.s_addr) >> 24) == 127;
    if (sa->sa_family == AF_INET6)
        return IN6_IS_ADDR_LOOPBACK(&((const struct sockaddr_in6 *)sa)->sin6_addr);
    return false;
}

bool cli_net_is_wildcard(const struct sockaddr *sa)
{
    if (sa->sa_family == AF_INET)
        return ((const struct sockaddr_in *)sa)->sin_addr.s_addr == htonl(INADDR_ANY);
    if (sa->sa_family == AF_INET6)
        return IN6_IS_ADDR_UNSPECIFIED(&((const struct sockaddr_in6 *)sa)->sin6_addr);
    return false;
}

void cli_net_bound(const struct sockaddr_storage *ss, char *host, size_t len,
                   unsigned *port)
{
    char text[INET6_ADDRSTRLEN] = "";

    if (ss->ss_family == AF_INET6) {
        const struct sockaddr_in6 *a = (const struct sockaddr_in6 *)ss;
        inet_ntop(AF_INET6, &a->sin6_addr, text, sizeof(text));
        snprintf(host, len, "[%s]", text);
        *port = ntohs(a->sin6_port);
    } else {
        const struct sockaddr_in *a = (const struct sockaddr_in *)ss;
        inet_ntop(AF_INET, &a->sin_addr, text, sizeof(text));
        snprintf(host, len, "%s", text);
        /* NOLINTNEXTLINE(clang-analyzer-core.CallAndMessage): getsockname filled it */
        *port = ntohs(a->sin_port);
    }
}

int cli_net_random_hex(char *out, size_t nbytes)
{
    static const char digits[] = "0123456789abcdef";
    unsigned char raw[64];

    if (nbytes > sizeof(raw) || getrandom(raw, nbytes, 0) != (ssize_t)nbytes)
        return -1;
    for (size_t i = 0; i < nbytes; i++) {
        out[2 * i] = digits[raw[i] >> 4];
        out[2 * i + 1] = digits[raw[i] & 15];
    }
    out[2 * nbytes] = '\0';
    return 0;
}

bool cli_net_same_secret(const char *a, const char *b)
{
    size_t n = strlen(a);
    unsigned char diff = 0;

    if (n != strlen(b))
        return false;
    for (size_t i = 0; i < n; i++)
        diff |= (unsigned char)(a[i] ^ b[i]);
    return diff == 0;
}
