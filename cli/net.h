/*
 * net.h -- what the HTTP servers of the `lil` command share (`lil mcp
 * --http`, `lil serve`): the address to listen on, whether it is
 * loopback, the address bound as a URL writes it, random tokens, and
 * secrets compared in constant time (net.c).
 */
#ifndef LIL_CLI_NET_H
#define LIL_CLI_NET_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/socket.h>

/* Split HOST:PORT ("[::1]:8080" too: the brackets dropped) into host (len
 * bytes) and *port (0 to 65535, digits only).  0, or -1. */
int cli_net_split(const char *spec, char *host, size_t len, unsigned *port);
/* The address is loopback: 127.0.0.0/8 or ::1. */
bool cli_net_is_loopback(const struct sockaddr *sa);
/* The address is every address: 0.0.0.0 or ::. */
bool cli_net_is_wildcard(const struct sockaddr *sa);
/* The address bound (getsockname's) as a URL writes its host
 * ("127.0.0.1", "[::1]") into host (len bytes), its port into *port. */
void cli_net_bound(const struct sockaddr_storage *ss, char *host, size_t len,
                   unsigned *port);
/* nbytes random bytes as lower-case hex into out (2 * nbytes + 1 bytes
 * with the NUL).  0, or -1 with errno (no random bytes). */
int cli_net_random_hex(char *out, size_t nbytes);
/* Two secrets are equal, in a time that does not depend on where they
 * differ (their length may show). */
bool cli_net_same_secret(const char *a, const char *b);

#endif
