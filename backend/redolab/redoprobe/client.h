/* The client's test, shared by client.c (constant traffic) and replay.c (--schedule). */
#ifndef REDOPROBE_CLIENT_H
#define REDOPROBE_CLIENT_H

#include <stdatomic.h>

#include "probe.h"
#include "stream.h"

struct replay;

struct client_test {
    const struct client_options *options;
    struct stream *streams;
    atomic_int stop;
    atomic_int *finished;    /* reverse: stream i saw the server's EOF */
    struct payload payload;
    double start;
    double per_stream_bytes_per_second; /* pacing; 0: unpaced */
    int streaming; /* ASYNC, unpaced, no delay: the next message follows at once (MSG_MORE) */
    int control;   /* the control connection; -1 before it opens */
    double last;   /* end of the last interval reported */
    const struct schedule *schedule; /* --schedule; NULL: constant traffic */
    struct replay *replay;
    double reported_seconds; /* --schedule: end of the last interval, exactly k x interval */
};

/* Reads of this size on the receiving side: with 256 KiB reads one stream of 1 MiB messages moved
 * 0.71 of iperf3's (which reads its message size) on loopback; with 1 MiB, 0.95-1.0. */
#define RECEIVE_BYTES (1024 * 1024)

#endif
