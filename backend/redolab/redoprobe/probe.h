/* redoprobe: common declarations (errors, options, protocol constants). */
#ifndef REDOPROBE_PROBE_H
#define REDOPROBE_PROBE_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#define PROBE_VERSION "0.1.0"
#define PROBE_PROTOCOL 3 /* 2: the hello carries flags (reverse, zerocopy); 3: --schedule counts carry a time */

/* The one error enum: every error event carries its code (probe_error_name(), e.g. "resolve"),
 * and probe_strerror() gives its words. Setup functions (net_connect, net_listen) return -1 and
 * set one; the error event's message adds the context and errno's text. */
enum probe_error {
    PE_OK = 0,
    PE_SOCKOPT,           /* the kernel refused a socket option (congestion control, local address or port) */
    PE_RESOLVE,           /* host name did not resolve */
    PE_CONNECT,           /* connect failed */
    PE_LISTEN,            /* bind/listen failed */
    PE_TIMEOUT,           /* connect timed out */
    PE_CONGESTION,        /* the congestion control asked for is not available */
    PE_HANDSHAKE,         /* the handshake could not be sent or the peer closed during it */
    PE_HANDSHAKE_TIMEOUT, /* the peer accepted the connection but did not answer the handshake */
    PE_NOT_REDOPROBE,     /* the peer's answer is not redoprobe's */
    PE_VERSION_MISMATCH,  /* the peer speaks another protocol version */
    PE_PARAMS_REFUSED,    /* the server refused the test parameters */
    PE_OUT_OF_MEMORY,     /* an allocation failed */
    PE_PAYLOAD,           /* the message to send could not be prepared (memory, memfd) */
    PE_THREAD,            /* a stream's thread could not start */
    PE_PEER_LOST,         /* the other side or the network path went away during the test */
    PE_IDLE_TIMEOUT,      /* server: no client connected within --idle-timeout */
    PE_ACCEPT,            /* server: the client's data connections did not arrive */
    PE_MAX_DURATION,      /* server: the test reached --max-duration */
    PE_WRITE_DIR,         /* server: --write-dir is not a usable directory */
    PE_FILE_EXISTS,       /* disk: the file exists and is not overwritten */
    PE_FILE_CREATE,       /* disk, --write-dir: the file could not be created */
    PE_FILE_WRITE,        /* disk: a write or fdatasync failed */
    PE_SCHEDULE,          /* client: the --schedule file cannot be read or breaks a limit */
    PE_COUNT              /* not an error: the number of codes */
};

const char *probe_strerror(enum probe_error error); /* words, e.g. "cannot connect" */
const char *probe_error_name(enum probe_error error); /* code, e.g. "connect" */

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
    int conns_given;             /* --conns was given (a schedule sets the count otherwise) */
    int duration_given;          /* --duration was given (a schedule's default cap otherwise) */
    const char *schedule;        /* --schedule FILE or "-": replay a recorded redo profile (NULL: none) */
    double scale;                /* --scale: multiplies the schedule's bytes (0: not given, 1) */
    double speedup;              /* --speedup: divides the schedule's offsets (0: not given, 1) */
    double warmup_seconds;       /* --warmup: filler at full speed before the replay's time zero */
    int warmup_given;            /* --warmup was given (it needs --schedule) */
};

/* --warmup's default: long enough at 20 ms RTT for slow start to leave IW10 far behind. */
#define WARMUP_DEFAULT_SECONDS 1.0

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
extern atomic_int probe_stop_insisted; /* a second SIGINT/SIGTERM */
void probe_install_signal_handlers(void);
/* Readable from the first SIGINT/SIGTERM on (-1 before the handlers are installed): a poll() that
 * includes it wakes at once on a stop request, in every thread. */
int probe_stop_fd(void);
/* Sleep until `deadline` (now_seconds()): 0 then, 1 as soon as SIGINT/SIGTERM arrives (at once) or
 * *stop is set (within 50 ms; stop may be NULL). */
int probe_sleep_until(double deadline, atomic_int *stop);
/* Wait up to `seconds` for fd to be readable: 1 readable, 0 timed out or SIGINT/SIGTERM (at once),
 * -1 error (errno). */
int probe_wait_readable(int fd, double seconds);

double now_seconds(void);            /* CLOCK_MONOTONIC */
/* seconds (a wait, or a now_seconds() deadline) as a timespec, rounded up to the nanosecond so that
 * a timer set by it never ends before; 0 for a negative or NaN wait */
struct timespec seconds_timespec(double seconds);
/* From /dev/urandom (payloads, the test cookie); falls back to time and pid. */
void random_bytes(uint8_t *out, size_t n);
void cpu_seconds(double *user, double *system);

#endif
