/* One data connection and its counters, shared by the sending and receiving sides. */
#ifndef REDOPROBE_STREAM_H
#define REDOPROBE_STREAM_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#include "hist.h"
#include "json_fwd.h"

struct stream {
    int id;
    int fd;
    pthread_t thread;
    int running;
    _Atomic uint64_t bytes;       /* sent (client) or received (server) so far */
    uint64_t bytes_reported;      /* at the last interval */
    uint32_t retrans_start;       /* TCP_INFO total_retrans at the start */
    uint32_t retrans_reported;
    int error;                    /* errno of the failure; 0 if none */
    pthread_mutex_t lock;         /* guards the latency fields */
    struct samples interval_latency_us;
    struct histogram latency_us;
    /* server side: optional disk write */
    int write_fd;
    uint64_t write_offset;
    double write_seconds;
    void *test;                   /* back pointer to the owning test */
};

/* What a sending side sends, repeated: random bytes (incompressible, as oratcptest's RANDOM
 * payload), at most PAYLOAD_MAX_BYTES, and with zerocopy the same bytes in a memfd for sendfile(). */
#define PAYLOAD_MAX_BYTES (1024 * 1024)
struct payload {
    uint8_t *bytes;
    size_t size;
    int memfd; /* -1: send() from bytes */
};
/* Buffers start on a page: a malloc()ed 1 MiB buffer starts 16 bytes into one, so every copy
 * to or from the kernel touches one page more and splits every page. free() releases it. */
void *page_aligned(size_t size);
int payload_init(struct payload *p, uint64_t message_bytes, int zerocopy); /* 0, or -1 with errno */
void payload_free(struct payload *p);
/* Send one n-byte message from the payload, counting bytes in s->bytes as they leave (smooth
 * intervals on slow links); one send() or sendfile() of up to 1 MiB at a time. With `streaming`
 * (another message follows at once) send() says MSG_MORE: the message's tail waits for the next
 * message instead of leaving as a small segment of its own (TCP_NODELAY is on for SYNC's sake).
 * 0, or -1 with errno (ECANCELED when *stop was set mid-message). */
int stream_send_message(struct stream *s, const struct payload *p, uint64_t n, int streaming, atomic_int *stop);
/* Receive until EOF, counting into s->bytes, in reads of up to `size` bytes. 0 at EOF, or -1 with
 * errno (ECANCELED when *stop was set first). */
int stream_receive_all(struct stream *s, uint8_t *buf, size_t size, atomic_int *stop);

void stream_init(struct stream *s, int id, int fd);
void stream_free(struct stream *s);
/* Appends one interval's streams[] entry and updates the reported counters; returns bytes. */
uint64_t stream_interval_json(struct stream *s, struct json *j, int with_tcp_info);
/* The same keys into an object the caller opened (and closes, after keys of its own). */
uint64_t stream_interval_fields(struct stream *s, struct json *j, int with_tcp_info);

#endif
