/* One data connection and its counters, shared by the sending and receiving sides. */
#ifndef REDOPROBE_STREAM_H
#define REDOPROBE_STREAM_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#include "hist.h"
#include "net.h"

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

void stream_init(struct stream *s, int id, int fd);
void stream_free(struct stream *s);
/* Appends one interval's streams[] entry and updates the reported counters; returns bytes. */
uint64_t stream_interval_json(struct stream *s, struct json *j, int with_tcp_info);

#endif
