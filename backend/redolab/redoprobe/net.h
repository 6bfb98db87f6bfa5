/* Sockets, the control protocol, TCP_INFO and the kernel's buffer settings. */
#ifndef REDOPROBE_NET_H
#define REDOPROBE_NET_H

#include <stddef.h>
#include <stdint.h>

#include "json_fwd.h"
#include "probe.h"

/* Control messages, all fields in network byte order. */
#define MAGIC_HELLO "RDPB"
#define MAGIC_DATA "RDPD"
#define MAGIC_END "RDPE"
#define MAGIC_RESULT "RDPR"
#define HELLO_BYTES 32
#define ACK_BYTES 32
#define DATA_HEADER_BYTES 24
#define END_BYTES 12
#define RESULT_BYTES 44
#define COOKIE_BYTES 16

enum ack_status { ACK_OK = 0, ACK_VERSION = 1, ACK_BAD_PARAMS = 2 };

#define HELLO_REVERSE 0x01  /* flags: the server sends, the client receives */
#define HELLO_ZEROCOPY 0x02 /* the sending side uses sendfile() from a memfd */

struct hello {
    uint16_t protocol;
    uint8_t mode;
    uint8_t flags;
    uint16_t conns;
    uint32_t message_bytes;
    uint64_t sockbuf_bytes;
    uint64_t duration_ms;
};

struct ack {
    uint16_t protocol;
    uint16_t status;
    uint8_t cookie[COOKIE_BYTES];
    uint32_t rcvbuf_bytes;
    uint32_t sndbuf_bytes;
};

struct result {
    uint64_t bytes_received;
    uint64_t write_us;
    uint64_t cpu_user_us;
    uint64_t cpu_system_us;
    uint32_t streams;
    uint32_t flags; /* bit 0: the server wrote to disk */
};

void encode_hello(const struct hello *h, uint8_t out[HELLO_BYTES]);
int decode_hello(const uint8_t in[HELLO_BYTES], struct hello *h); /* -1: bad magic */
void encode_ack(const struct ack *a, uint8_t out[ACK_BYTES]);
int decode_ack(const uint8_t in[ACK_BYTES], struct ack *a);
void encode_result(const struct result *r, uint8_t out[RESULT_BYTES]);
int decode_result(const uint8_t in[RESULT_BYTES], struct result *r);
void put_u64(uint8_t *p, uint64_t v);
uint64_t get_u64(const uint8_t *p);
void put_u32(uint8_t *p, uint32_t v);
uint32_t get_u32(const uint8_t *p);

/* Options of a client socket, applied before connect(). */
struct connect_options {
    const char *bind;            /* local address (NULL: any) */
    int local_port;              /* 0: any */
    const char *congestion;      /* TCP_CONGESTION (NULL: system default) */
    double fq_rate_bits_per_second; /* SO_MAX_PACING_RATE (0: none) */
};

/* Connect with a timeout; sockbuf 0 leaves autotuning on; co may be NULL. Returns fd or -1
 * (errno set; *error says which step: PE_RESOLVE, PE_CONNECT, PE_TIMEOUT, or PE_USAGE for an
 * option the kernel refused: an unknown congestion control, a local address or port in use). */
int net_connect(const char *host, int port, double timeout_seconds, uint64_t sockbuf_bytes,
                const struct connect_options *co, enum probe_error *error);
/* The socket's congestion control into out (size >= 16); "" when unknown. */
void net_congestion(int fd, char *out, size_t size);
/* Listen on bind:port (port 0 picks one); returns fd, writes the bound port. */
int net_listen(const char *bind, int port, int *bound_port, enum probe_error *error);
int net_set_sockbuf(int fd, uint64_t bytes);
/* Blocking I/O that still returns every timeout_ms, so loops can check their stop flag. */
int net_blocking_with_timeout(int fd, int timeout_ms);
void net_granted_buffers(int fd, uint64_t *sndbuf, uint64_t *rcvbuf);
/* Send/receive exactly n bytes, retrying on EINTR/EAGAIN and partial transfers; gives up
 * when *stop is set or timeout_seconds passes without progress (<=0: no timeout).
 * Returns 0, or -1 with errno (ECONNRESET/EPIPE when the peer is gone, 0-byte read: EPIPE). */
int send_all(int fd, const void *buf, size_t n, atomic_int *stop, double timeout_seconds);
int recv_all(int fd, void *buf, size_t n, atomic_int *stop, double timeout_seconds);

struct tcp_sample {
    uint32_t rtt_us, rttvar_us, snd_cwnd, pmtu;
    uint32_t total_retrans;
};
int tcp_sample(int fd, struct tcp_sample *sample);

/* Kernel buffer settings from /proc/sys, into the start event under "kernel". */
void json_kernel_settings(struct json *j);
void random_bytes(uint8_t *out, size_t n);

#endif
