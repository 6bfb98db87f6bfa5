/* redoprobe: common declarations (errors, options, protocol constants). */
#ifndef REDOPROBE_PROBE_H
#define REDOPROBE_PROBE_H

#include <stdatomic.h>
#include <stdint.h>

#define PROBE_VERSION "0.1.0"
#define PROBE_PROTOCOL 2 /* 2: the hello carries flags (reverse, zerocopy) */

/* Which step of setting up a connection failed (net_connect, net_listen); probe_strerror() turns
 * it into the words the error event leads with, errno's text follows. Errors after setup are
 * reported where they happen, with errno. */
enum probe_error {
    PE_OK = 0,
    PE_USAGE,        /* an option the kernel refused (congestion control, local address or port) */
    PE_RESOLVE,      /* host name did not resolve */
    PE_CONNECT,      /* connect failed */
    PE_LISTEN,       /* bind/listen failed */
    PE_TIMEOUT,      /* connect timed out */
};

const char *probe_strerror(enum probe_error error);

enum probe_mode { MODE_ASYNC = 0, MODE_SYNC = 1 };

struct client_options {
    const char *host;
    int port;
    enum probe_mode mode;
    int conns;
    uint64_t message_bytes;
    uint64_t sockbuf_bytes;      /* 0: kernel autotuning */
    double duration_seconds;
    double interval_seconds;
    uint64_t delay_us;           /* pause between messages, per connection */
    double rate_bits_per_second; /* 0: unpaced; else total across connections */
    double connect_timeout_seconds;
    int json;
    const char *bind;            /* local address of the data connections (NULL: any) */
    int cport;                   /* local port of data connection 0, then +1 each (0: any) */
    const char *congestion;      /* TCP_CONGESTION, e.g. bbr (NULL: the system default) */
    double fq_rate_bits_per_second; /* SO_MAX_PACING_RATE per connection (0: none) */
    int zerocopy;                /* send with sendfile() from a memfd: no copy from user space */
    int reverse;                 /* the server sends and the client receives */
};

/* Checks of client options that depend on each other; NULL when they fit, else the message. */
const char *client_options_problem(const struct client_options *o);
/* A congestion-control name as the kernel takes it: 1..15 of [a-z0-9_]. */
int valid_congestion_name(const char *name);

struct server_options {
    const char *bind;
    int port;
    int once;
    double max_duration_seconds;
    double idle_timeout_seconds;
    const char *write_dir;
    int sync_write;
    uint64_t write_wrap_bytes;
    double interval_seconds;
    int json;
};

enum disk_sync { DISK_DSYNC = 0, DISK_FDATASYNC = 1, DISK_NONE = 2 };

struct disk_options {
    const char *path;
    uint64_t write_bytes;
    double duration_seconds;
    uint64_t writes;             /* 0: run for duration */
    enum disk_sync sync;
    int json;
};

int run_client(const struct client_options *options);
int run_server(const struct server_options *options);
int run_disk(const struct disk_options *options);

/* Set by SIGINT/SIGTERM; long loops check it and finish with an end event. */
extern atomic_int probe_stop_requested;
void probe_install_signal_handlers(void);

double now_seconds(void);            /* CLOCK_MONOTONIC */
void cpu_seconds(double *user, double *system);

#endif
