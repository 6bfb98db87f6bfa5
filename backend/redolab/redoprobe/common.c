#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "probe.h"

atomic_int probe_stop_requested = 0;
atomic_int probe_stop_insisted = 0; /* a second signal: stop waiting for anything */

/* Both switches have no default: -Wswitch (in -Wall, an error with -Werror) names a member of
 * enum probe_error either leaves out; t_errors checks the strings are distinct. */
const char *probe_strerror(enum probe_error error)
{
    switch (error) {
    case PE_OK: return "no error";
    case PE_SOCKOPT: return "the kernel refused a socket option";
    case PE_RESOLVE: return "the name did not resolve";
    case PE_CONNECT: return "cannot connect";
    case PE_LISTEN: return "cannot listen";
    case PE_TIMEOUT: return "timed out";
    case PE_CONGESTION: return "the congestion control is not available";
    case PE_HANDSHAKE: return "the handshake failed";
    case PE_HANDSHAKE_TIMEOUT: return "no answer to the handshake";
    case PE_NOT_REDOPROBE: return "not a redoprobe peer";
    case PE_VERSION_MISMATCH: return "protocol version mismatch";
    case PE_PARAMS_REFUSED: return "the server refused the test parameters";
    case PE_OUT_OF_MEMORY: return "out of memory";
    case PE_PAYLOAD: return "cannot prepare the message";
    case PE_THREAD: return "cannot start a thread";
    case PE_PEER_LOST: return "the peer went away";
    case PE_IDLE_TIMEOUT: return "no client connected in time";
    case PE_ACCEPT: return "the data connections did not arrive";
    case PE_MAX_DURATION: return "the test reached its maximum duration";
    case PE_WRITE_DIR: return "the write directory is not usable";
    case PE_FILE_EXISTS: return "the file exists";
    case PE_FILE_CREATE: return "cannot create the file";
    case PE_FILE_WRITE: return "a write failed";
    case PE_SCHEDULE: return "the schedule cannot be replayed";
    case PE_COUNT: break;
    }
    return "unknown error";
}

const char *probe_error_name(enum probe_error error)
{
    switch (error) {
    case PE_OK: return "ok";
    case PE_SOCKOPT: return "sockopt";
    case PE_RESOLVE: return "resolve";
    case PE_CONNECT: return "connect";
    case PE_LISTEN: return "listen";
    case PE_TIMEOUT: return "timeout";
    case PE_CONGESTION: return "congestion";
    case PE_HANDSHAKE: return "handshake";
    case PE_HANDSHAKE_TIMEOUT: return "handshake_timeout";
    case PE_NOT_REDOPROBE: return "not_redoprobe";
    case PE_VERSION_MISMATCH: return "version_mismatch";
    case PE_PARAMS_REFUSED: return "params_refused";
    case PE_OUT_OF_MEMORY: return "out_of_memory";
    case PE_PAYLOAD: return "payload";
    case PE_THREAD: return "thread";
    case PE_PEER_LOST: return "peer_lost";
    case PE_IDLE_TIMEOUT: return "idle_timeout";
    case PE_ACCEPT: return "accept";
    case PE_MAX_DURATION: return "max_duration";
    case PE_WRITE_DIR: return "write_dir";
    case PE_FILE_EXISTS: return "file_exists";
    case PE_FILE_CREATE: return "file_create";
    case PE_FILE_WRITE: return "file_write";
    case PE_SCHEDULE: return "schedule";
    case PE_COUNT: break;
    }
    return "unknown";
}

/* The self-pipe of SIGINT/SIGTERM: the handler writes a byte and nobody reads it, so from the first
 * signal on its read end stays readable and every poll() that includes it returns at once, in
 * whichever thread the signal landed (a nanosleep() is interrupted only in that one). */
static int stop_pipe[2] = {-1, -1};

static void on_signal(int signal_number)
{
    (void)signal_number;
    int saved = errno;
    if (atomic_exchange(&probe_stop_requested, 1))
        atomic_store(&probe_stop_insisted, 1);
    if (stop_pipe[1] >= 0) {
        ssize_t written = write(stop_pipe[1], "", 1); /* non-blocking: a full pipe is readable already */
        (void)written;
    }
    errno = saved;
}

void probe_install_signal_handlers(void)
{
    if (stop_pipe[0] < 0 && pipe2(stop_pipe, O_CLOEXEC | O_NONBLOCK) < 0)
        stop_pipe[0] = stop_pipe[1] = -1; /* then the waits below poll in slices of STOP_SLICE_SECONDS */
    struct sigaction action;
    memset(&action, 0, sizeof action);
    action.sa_handler = on_signal;
    sigemptyset(&action.sa_mask);
    sigaction(SIGINT, &action, NULL);
    sigaction(SIGTERM, &action, NULL);
    signal(SIGPIPE, SIG_IGN);
}

int probe_stop_fd(void)
{
    return stop_pipe[0];
}

/* The longest single poll(): bounds the wait without a stop pipe, and for a *stop flag that no
 * descriptor signals. */
#define STOP_SLICE_SECONDS 0.05

int probe_wait_readable(int fd, double seconds)
{
    struct pollfd p[2] = {{.fd = fd, .events = POLLIN}, {.fd = probe_stop_fd(), .events = POLLIN}};
    double deadline = now_seconds() + seconds;
    for (;;) {
        if (atomic_load(&probe_stop_requested))
            return 0;
        double left = deadline - now_seconds();
        if (left <= 0)
            return 0;
        double slice = p[1].fd >= 0 ? left : (left < STOP_SLICE_SECONDS ? left : STOP_SLICE_SECONDS);
        if (slice > 3600)
            slice = 3600; /* fits poll()'s int milliseconds */
        int n = poll(p, 2, (int)(slice * 1000) + 1);
        if (n < 0 && errno != EINTR)
            return -1;
        if (n > 0 && p[0].revents != 0)
            return 1;
    }
}

int probe_sleep_until(double deadline, atomic_int *stop)
{
    struct pollfd p = {.fd = probe_stop_fd(), .events = POLLIN};
    for (;;) {
        if (atomic_load(&probe_stop_requested) || (stop != NULL && atomic_load(stop)))
            return 1;
        double left = deadline - now_seconds();
        if (left <= 0)
            return 0;
        if ((stop != NULL || p.fd < 0) && left > STOP_SLICE_SECONDS)
            left = STOP_SLICE_SECONDS;
        if (left > 3600)
            left = 3600;
        poll(&p, 1, (int)(left * 1000) + 1); /* EINTR: the loop looks at the flags again */
    }
}

double now_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

struct timespec seconds_timespec(double seconds)
{
    if (!(seconds > 0))
        return (struct timespec){0};
    struct timespec at = {.tv_sec = (time_t)seconds};
    at.tv_nsec = (long)((seconds - (double)at.tv_sec) * 1e9) + 1; /* round up: at or after */
    if (at.tv_nsec >= 1000000000L) {
        at.tv_sec++;
        at.tv_nsec -= 1000000000L;
    }
    return at;
}

void cpu_seconds(double *user, double *system)
{
    struct rusage usage;
    getrusage(RUSAGE_SELF, &usage);
    *user = (double)usage.ru_utime.tv_sec + (double)usage.ru_utime.tv_usec / 1e6;
    *system = (double)usage.ru_stime.tv_sec + (double)usage.ru_stime.tv_usec / 1e6;
}

int valid_congestion_name(const char *name)
{
    size_t n = strlen(name);
    if (n < 1 || n > 15)
        return 0;
    for (size_t i = 0; i < n; i++) {
        char c = name[i];
        if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_'))
            return 0;
    }
    return 1;
}

const char *client_options_problem(const struct client_options *o)
{
    if (o->reverse && o->mode == MODE_SYNC)
        return "--reverse measures one direction's throughput: it works with --mode async only";
    if (o->reverse && (o->rate_bits_per_second > 0 || o->delay_us > 0))
        return "--reverse: the server sends as fast as it can; --rate and --delay pace the client's sending only";
    if (o->schedule && o->reverse)
        return "--schedule replays what the client sends: it does not work with --reverse";
    if (o->schedule && (o->rate_bits_per_second > 0 || o->delay_us > 0))
        return "--schedule paces the sending itself: it does not work with --rate or --delay";
    if (!o->schedule && (o->scale > 0 || o->speedup > 0))
        return "--scale and --speedup apply to a --schedule replay: give --schedule FILE";
    if (!o->schedule && o->warmup_given)
        return "--warmup opens the connections before a --schedule replay: give --schedule FILE";
    if (o->cport && o->cport + o->conns - 1 > 65535)
        return "--cport: the data connections use --cport, --cport+1, ... which must stay within 65535";
    return NULL;
}

void random_bytes(uint8_t *out, size_t n)
{
    int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
    size_t done = 0;
    while (fd >= 0 && done < n) {
        ssize_t k = read(fd, out + done, n - done);
        if (k <= 0)
            break;
        done += (size_t)k;
    }
    if (fd >= 0)
        close(fd);
    /* Fallback mixes time and pid: the cookie guards against stray connections, not attackers. */
    for (; done < n; done++)
        out[done] = (uint8_t)(rand() ^ (int)time(NULL) ^ getpid());
}
