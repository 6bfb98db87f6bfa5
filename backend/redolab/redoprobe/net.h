/* Sockets: connect and listen, socket options, blocking transfers with a stop flag. */
#ifndef REDOPROBE_NET_H
#define REDOPROBE_NET_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "probe.h"

/* Options of a client socket, applied before connect(). */
struct connect_options {
    const char *bind;            /* local address (NULL: any) */
    int local_port;              /* 0: any */
    const char *congestion;      /* TCP_CONGESTION (NULL: system default) */
    double fq_rate_bits_per_second; /* SO_MAX_PACING_RATE (0: none) */
};

/* Connect with a timeout; sockbuf 0 leaves autotuning on; co may be NULL. Returns fd or -1
 * (errno set; *error says which step: PE_RESOLVE, PE_CONNECT, PE_TIMEOUT, or PE_SOCKOPT for an
 * option the kernel refused: an unknown congestion control, a local address or port in use). */
int net_connect(const char *host, int port, double timeout_seconds, uint64_t sockbuf_bytes,
                const struct connect_options *co, enum probe_error *error);
/* Listen on bind:port (port 0 picks one); returns fd, writes the bound port; or -1 with *error
 * PE_RESOLVE or PE_LISTEN. */
int net_listen(const char *bind, int port, int *bound_port, enum probe_error *error);
int net_set_sockbuf(int fd, uint64_t bytes);
/* Blocking I/O that still returns every timeout_ms, so loops can check their stop flag. */
int net_blocking_with_timeout(int fd, int timeout_ms);
/* Send/receive exactly n bytes, retrying on EINTR/EAGAIN and partial transfers; gives up
 * when *stop is set or timeout_seconds passes without progress (<=0: no timeout).
 * Returns 0, or -1 with errno (ECONNRESET/EPIPE when the peer is gone, 0-byte read: EPIPE). */
int send_all(int fd, const void *buf, size_t n, atomic_int *stop, double timeout_seconds);
int recv_all(int fd, void *buf, size_t n, atomic_int *stop, double timeout_seconds);

struct msghdr;
/* When the bytes a recvmsg() read arrived, on now_seconds()'s clock: the kernel's receive time of
 * their last segment (SO_TIMESTAMPNS on the socket, a wall-clock stamp) moved back from now by its
 * age; -1 when the message carries none. */
double net_arrival_seconds(struct msghdr *m);

#endif
