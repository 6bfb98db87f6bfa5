/* redoprobe: argument parsing only; the work is in client.c, server.c and disk.c. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "probe.h"
#include "units.h"

#define EXIT_USAGE 2

static const char *program = "redoprobe";

static const char usage_text[] =
"redoprobe %s: stream data like redo transport and measure what the link carries.\n"
"\n"
"Usage:\n"
"  redoprobe server [options]        receive one test (or many without --once)\n"
"  redoprobe client HOST [options]   send to a redoprobe server\n"
"  redoprobe disk PATH [options]     sequential write test (PATH: a directory or a new file)\n"
"  redoprobe --version | --help\n"
"\n"
"Sizes are 1024-based (K, M, G, T; 1M = 1048576 bytes, as oratcptest); rates are bits per\n"
"second, 1000-based (k, M, G: 100M = 100 Mbit/s); durations in seconds unless suffixed\n"
"(ms, s, m, h).\n"
"\n"
"Common options:\n"
"  --json                    one JSON event per line on stdout (default: human-readable text)\n"
"  --interval S              seconds between interval reports (default 1)\n"
"\n"
"Server options:\n"
"  --bind ADDR               address to listen on (default: all); for the client, see below\n"
"  --port N                  TCP port (default 5201; 0 picks a free port, reported in the start event)\n"
"  --once                    serve one test, then exit (default: serve until stopped)\n"
"  --max-duration S          hard cap on one test, seconds (default 3600)\n"
"  --idle-timeout S          exit when no client connects within S seconds (default 0: wait forever)\n"
"  --write-dir DIR           write what is received to a file in DIR (removed afterwards)\n"
"  --sync-write              open that file O_DSYNC: a sync-mode acknowledgement waits for the\n"
"                            write, as SYNC AFFIRM does (default: off)\n"
"  --write-wrap SIZE         file size at which writes wrap, like a redo log (default 512M)\n"
"\n"
"Client options:\n"
"  --port N                  server port (default 5201)\n"
"  --mode async|sync         async: stream; sync: each message waits for the server's\n"
"                            acknowledgement and its latency is reported (default async)\n"
"  --conns N                 parallel connections, 1..1024 (default 1)\n"
"  --message-size SIZE       bytes per message (default 1M, as oratcptest)\n"
"  --sockbuf SIZE            explicit SO_SNDBUF/SO_RCVBUF on both ends (default: kernel\n"
"                            autotuning). Linux grants double the request and reports that.\n"
"  --duration S              test length in seconds (default 10)\n"
"  --delay US                pause between messages, microseconds (default 0)\n"
"  --rate RATE               pace the total to RATE bit/s, e.g. 500M (default: unpaced)\n"
"  --connect-timeout S       seconds to wait for the server (default 5)\n"
"  --zerocopy                send with sendfile() from a memfd (no copy from user space), as\n"
"                            iperf3 -Z; with --reverse the server sends that way\n"
"  --congestion NAME         TCP congestion control of the data connections, e.g. bbr or cubic\n"
"                            (see /proc/sys/net/ipv4/tcp_available_congestion_control)\n"
"  --fq-rate RATE            cap each connection's pacing rate (SO_MAX_PACING_RATE), e.g. 1G\n"
"  --bind ADDR               local address of the connections (the link to test)\n"
"  --cport N                 local port of data connection 0 (then N+1, ...), for firewalls\n"
"  --reverse                 the server sends and the client receives: the other direction\n"
"                            through the same firewall opening (async only)\n"
"\n"
"Disk options:\n"
"  --write-size SIZE         bytes per write (default 64K; 4K for small-write overhead)\n"
"  --duration S              seconds to write (default 5) or\n"
"  --writes N                number of writes (default: by duration)\n"
"  --sync dsync|fdatasync|none  how each write is made durable (default dsync)\n"
"\n"
"Exit status: 0 success, 1 test failed (an error event says why), 2 bad usage.\n";

static void usage(FILE *out)
{
    fprintf(out, usage_text, PROBE_VERSION);
}

static int fail_usage(const char *message, const char *value)
{
    fprintf(stderr, "%s: %s%s%s\n", program, message, value ? ": " : "", value ? value : "");
    fprintf(stderr, "Try '%s --help'.\n", program);
    return EXIT_USAGE;
}

enum {
    OPT_JSON = 1000, OPT_INTERVAL, OPT_BIND, OPT_PORT, OPT_ONCE, OPT_MAX_DURATION, OPT_IDLE,
    OPT_WRITE_DIR, OPT_SYNC_WRITE, OPT_WRITE_WRAP, OPT_MODE, OPT_CONNS, OPT_MESSAGE, OPT_SOCKBUF,
    OPT_DURATION, OPT_DELAY, OPT_RATE, OPT_CONNECT_TIMEOUT, OPT_WRITE_SIZE, OPT_WRITES, OPT_SYNC,
    OPT_HELP, OPT_VERSION, OPT_ZEROCOPY, OPT_CONGESTION, OPT_FQ_RATE, OPT_CPORT, OPT_REVERSE,
};

static const struct option long_options[] = {
    {"json", no_argument, 0, OPT_JSON},
    {"interval", required_argument, 0, OPT_INTERVAL},
    {"bind", required_argument, 0, OPT_BIND},
    {"port", required_argument, 0, OPT_PORT},
    {"once", no_argument, 0, OPT_ONCE},
    {"max-duration", required_argument, 0, OPT_MAX_DURATION},
    {"idle-timeout", required_argument, 0, OPT_IDLE},
    {"write-dir", required_argument, 0, OPT_WRITE_DIR},
    {"sync-write", no_argument, 0, OPT_SYNC_WRITE},
    {"write-wrap", required_argument, 0, OPT_WRITE_WRAP},
    {"mode", required_argument, 0, OPT_MODE},
    {"conns", required_argument, 0, OPT_CONNS},
    {"message-size", required_argument, 0, OPT_MESSAGE},
    {"sockbuf", required_argument, 0, OPT_SOCKBUF},
    {"duration", required_argument, 0, OPT_DURATION},
    {"delay", required_argument, 0, OPT_DELAY},
    {"rate", required_argument, 0, OPT_RATE},
    {"connect-timeout", required_argument, 0, OPT_CONNECT_TIMEOUT},
    {"write-size", required_argument, 0, OPT_WRITE_SIZE},
    {"writes", required_argument, 0, OPT_WRITES},
    {"sync", required_argument, 0, OPT_SYNC},
    {"zerocopy", no_argument, 0, OPT_ZEROCOPY},
    {"congestion", required_argument, 0, OPT_CONGESTION},
    {"fq-rate", required_argument, 0, OPT_FQ_RATE},
    {"cport", required_argument, 0, OPT_CPORT},
    {"reverse", no_argument, 0, OPT_REVERSE},
    {"help", no_argument, 0, OPT_HELP},
    {"version", no_argument, 0, OPT_VERSION},
    {0, 0, 0, 0},
};

struct all_options {
    struct client_options client;
    struct server_options server;
    struct disk_options disk;
    int json;
    double interval;
    int duration_given;
};

/* Each apply_*_option range-checks its options where they are parsed and returns 0 or an exit
 * status, or NOT_HANDLED for an option of another group. */
#define NOT_HANDLED (-1)

static int apply_common_option(struct all_options *o, int id, const char *arg)
{
    long number;
    double seconds;
    switch (id) {
    case OPT_JSON: o->json = 1; return 0;
    case OPT_BIND: o->server.bind = o->client.bind = arg; return 0;
    case OPT_PORT:
        if (parse_int(arg, 0, 65535, &number) < 0)
            return fail_usage("--port must be 0..65535", arg);
        o->server.port = o->client.port = (int)number;
        return 0;
    case OPT_INTERVAL:
        if (parse_duration(arg, &seconds) < 0 || seconds < 0.1 || seconds > 3600)
            return fail_usage("--interval must be 0.1..3600 seconds", arg);
        o->interval = seconds;
        return 0;
    case OPT_DURATION:
        if (parse_duration(arg, &seconds) < 0 || seconds <= 0 || seconds > 86400)
            return fail_usage("--duration must be more than 0 and at most 86400 seconds", arg);
        o->client.duration_seconds = o->disk.duration_seconds = seconds;
        o->duration_given = 1;
        return 0;
    default: return NOT_HANDLED;
    }
}

static int apply_server_option(struct all_options *o, int id, const char *arg)
{
    double seconds;
    uint64_t size;
    switch (id) {
    case OPT_ONCE: o->server.once = 1; return 0;
    case OPT_SYNC_WRITE: o->server.sync_write = 1; return 0;
    case OPT_WRITE_DIR: o->server.write_dir = arg; return 0;
    case OPT_MAX_DURATION:
        if (parse_duration(arg, &seconds) < 0 || seconds <= 0 || seconds > 86400)
            return fail_usage("--max-duration must be more than 0 and at most 86400 seconds", arg);
        o->server.max_duration_seconds = seconds;
        return 0;
    case OPT_IDLE:
        if (parse_duration(arg, &seconds) < 0 || seconds > 86400)
            return fail_usage("--idle-timeout must be 0..86400 seconds", arg);
        o->server.idle_timeout_seconds = seconds;
        return 0;
    case OPT_WRITE_WRAP:
        if (parse_size(arg, &size) < 0 || size < 1024 * 1024)
            return fail_usage("--write-wrap must be a size of at least 1M", arg);
        o->server.write_wrap_bytes = size;
        return 0;
    default: return NOT_HANDLED;
    }
}

/* What the client sends: mode, connections, message size and pacing. */
static int apply_traffic_option(struct all_options *o, int id, const char *arg)
{
    long number;
    double rate;
    uint64_t size;
    switch (id) {
    case OPT_MODE:
        if (strcmp(arg, "async") == 0)
            o->client.mode = MODE_ASYNC;
        else if (strcmp(arg, "sync") == 0)
            o->client.mode = MODE_SYNC;
        else
            return fail_usage("--mode must be async or sync", arg);
        return 0;
    case OPT_CONNS:
        if (parse_int(arg, 1, 1024, &number) < 0)
            return fail_usage("--conns must be 1..1024", arg);
        o->client.conns = (int)number;
        return 0;
    case OPT_MESSAGE:
        if (parse_size(arg, &size) < 0 || size < 1 || size > 256ULL * 1024 * 1024)
            return fail_usage("--message-size must be 1 byte..256M", arg);
        o->client.message_bytes = size;
        return 0;
    case OPT_DELAY:
        if (parse_int(arg, 0, 60000000, &number) < 0)
            return fail_usage("--delay must be 0..60000000 microseconds", arg);
        o->client.delay_us = (uint64_t)number;
        return 0;
    case OPT_RATE:
        if (parse_rate(arg, &rate) < 0 || rate < 1000)
            return fail_usage("--rate must be a rate of at least 1k bit/s, e.g. 500M", arg);
        o->client.rate_bits_per_second = rate;
        return 0;
    default: return NOT_HANDLED;
    }
}

/* How the client's sockets are set up. */
static int apply_socket_option(struct all_options *o, int id, const char *arg)
{
    long number;
    double seconds, rate;
    uint64_t size;
    switch (id) {
    case OPT_ZEROCOPY: o->client.zerocopy = 1; return 0;
    case OPT_REVERSE: o->client.reverse = 1; return 0;
    case OPT_CONGESTION:
        if (!valid_congestion_name(arg))
            return fail_usage("--congestion must be a congestion control name such as bbr or cubic", arg);
        o->client.congestion = arg;
        return 0;
    case OPT_FQ_RATE:
        if (parse_rate(arg, &rate) < 0 || rate < 8000)
            return fail_usage("--fq-rate must be a rate of at least 8k bit/s, e.g. 1G", arg);
        o->client.fq_rate_bits_per_second = rate;
        return 0;
    case OPT_CPORT:
        if (parse_int(arg, 1, 65535, &number) < 0)
            return fail_usage("--cport must be 1..65535", arg);
        o->client.cport = (int)number;
        return 0;
    case OPT_SOCKBUF:
        if (parse_size(arg, &size) < 0 || size < 4096 || size > 1024ULL * 1024 * 1024)
            return fail_usage("--sockbuf must be 4K..1G", arg);
        o->client.sockbuf_bytes = size;
        return 0;
    case OPT_CONNECT_TIMEOUT:
        if (parse_duration(arg, &seconds) < 0 || seconds <= 0 || seconds > 600)
            return fail_usage("--connect-timeout must be more than 0 and at most 600 seconds", arg);
        o->client.connect_timeout_seconds = seconds;
        return 0;
    default: return NOT_HANDLED;
    }
}

static int apply_disk_option(struct all_options *o, int id, const char *arg)
{
    long number;
    uint64_t size;
    switch (id) {
    case OPT_WRITE_SIZE:
        if (parse_size(arg, &size) < 0 || size < 512 || size > 256ULL * 1024 * 1024)
            return fail_usage("--write-size must be 512..256M", arg);
        o->disk.write_bytes = size;
        return 0;
    case OPT_WRITES:
        if (parse_int(arg, 1, 100000000, &number) < 0)
            return fail_usage("--writes must be 1..100000000", arg);
        o->disk.writes = (uint64_t)number;
        return 0;
    case OPT_SYNC:
        if (strcmp(arg, "dsync") == 0)
            o->disk.sync = DISK_DSYNC;
        else if (strcmp(arg, "fdatasync") == 0)
            o->disk.sync = DISK_FDATASYNC;
        else if (strcmp(arg, "none") == 0)
            o->disk.sync = DISK_NONE;
        else
            return fail_usage("--sync must be dsync, fdatasync or none", arg);
        return 0;
    default: return NOT_HANDLED;
    }
}

static int apply_option(struct all_options *o, int id, const char *arg)
{
    int (*const groups[])(struct all_options *, int, const char *) = {
        apply_common_option, apply_server_option, apply_traffic_option, apply_socket_option, apply_disk_option,
    };
    for (size_t i = 0; i < sizeof groups / sizeof groups[0]; i++) {
        int status = groups[i](o, id, arg);
        if (status != NOT_HANDLED)
            return status;
    }
    return fail_usage("unknown option", NULL);
}

static void defaults(struct all_options *o)
{
    memset(o, 0, sizeof *o);
    o->client.port = o->server.port = 5201;
    o->client.mode = MODE_ASYNC;
    o->client.conns = 1;
    o->client.message_bytes = 1024 * 1024;
    o->client.duration_seconds = 10;
    o->client.connect_timeout_seconds = 5;
    o->server.max_duration_seconds = 3600;
    o->server.write_wrap_bytes = 512ULL * 1024 * 1024;
    o->disk.write_bytes = 64 * 1024;
    o->disk.duration_seconds = 5;
    o->disk.sync = DISK_DSYNC;
    o->interval = 1;
}

/* Checks that depend on the command, then runs it; the exit status. */
static int run_command(const char *command, const char *positional, struct all_options *o)
{
    if (strcmp(command, "server") == 0) {
        if (positional)
            return fail_usage("the server takes no positional argument", positional);
        if (o->server.sync_write && o->server.write_dir == NULL)
            return fail_usage("--sync-write needs --write-dir", NULL);
        o->server.json = o->json;
        o->server.interval_seconds = o->interval;
        return run_server(&o->server);
    }
    if (strcmp(command, "client") == 0) {
        if (positional == NULL)
            return fail_usage("client needs the server's HOST", NULL);
        o->client.host = positional;
        o->client.json = o->json;
        const char *problem = client_options_problem(&o->client);
        if (problem)
            return fail_usage(problem, NULL);
        o->client.interval_seconds = o->interval;
        return run_client(&o->client);
    }
    if (positional == NULL)
        return fail_usage("disk needs a PATH (a directory, or a file that does not exist)", NULL);
    o->disk.path = positional;
    o->disk.json = o->json;
    if (o->disk.writes && !o->duration_given)
        o->disk.duration_seconds = 0;
    return run_disk(&o->disk);
}

int main(int argc, char **argv)
{
    struct all_options o;
    defaults(&o);
    if (argc < 2)
        return usage(stderr), EXIT_USAGE;
    if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)
        return usage(stdout), 0;
    if (strcmp(argv[1], "--version") == 0)
        return printf("redoprobe %s (protocol %d)\n", PROBE_VERSION, PROBE_PROTOCOL), 0;
    const char *command = argv[1];
    if (strcmp(command, "server") != 0 && strcmp(command, "client") != 0 && strcmp(command, "disk") != 0)
        return fail_usage("unknown command (server, client or disk)", command);

    opterr = 0;
    optind = 2;
    int id;
    while ((id = getopt_long(argc, argv, "", long_options, NULL)) != -1) {
        if (id == '?' || id == ':')
            return fail_usage("unknown option or missing value", argv[optind - 1]);
        if (id == OPT_HELP)
            return usage(stdout), 0;
        if (id == OPT_VERSION)
            return printf("redoprobe %s (protocol %d)\n", PROBE_VERSION, PROBE_PROTOCOL), 0;
        int status = apply_option(&o, id, optarg);
        if (status != 0)
            return status;
    }
    const char *positional = optind < argc ? argv[optind] : NULL;
    if (optind + 1 < argc)
        return fail_usage("unexpected argument", argv[optind + 1]);

    probe_install_signal_handlers();
    return run_command(command, positional, &o);
}
