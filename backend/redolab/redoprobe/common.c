#include <signal.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "probe.h"

atomic_int probe_stop_requested = 0;

const char *probe_strerror(enum probe_error error)
{
    switch (error) {
    case PE_OK: return "no error";
    case PE_USAGE: return "the kernel refused a socket option";
    case PE_RESOLVE: return "the name did not resolve";
    case PE_CONNECT: return "cannot connect";
    case PE_LISTEN: return "cannot listen";
    case PE_TIMEOUT: return "timed out";
    }
    return "unknown error";
}

static void on_signal(int signal_number)
{
    (void)signal_number;
    atomic_store(&probe_stop_requested, 1);
}

void probe_install_signal_handlers(void)
{
    struct sigaction action;
    memset(&action, 0, sizeof action);
    action.sa_handler = on_signal;
    sigemptyset(&action.sa_mask);
    sigaction(SIGINT, &action, NULL);
    sigaction(SIGTERM, &action, NULL);
    signal(SIGPIPE, SIG_IGN);
}

double now_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
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
    if (o->cport && o->cport + o->conns - 1 > 65535)
        return "--cport: the data connections use --cport, --cport+1, ... which must stay within 65535";
    return NULL;
}
