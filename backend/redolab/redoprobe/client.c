/* redoprobe client: connect, handshake, stream messages on N connections, report. */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "client.h"
#include "jsonl.h"
#include "net.h"
#include "probe.h"
#include "replay.h"
#include "schedule.h"
#include "stream.h"
#include "tcpinfo.h"
#include "wire.h"

#define report_error(o, code, ...) emit_error((o)->json, "client", code, __VA_ARGS__)

/* A stream's pause (--delay, --rate): ends at the deadline or when the test stops; a signal alone
 * does not end it, the main thread stops the streams when it has reported. */
static void sleep_until(double deadline, atomic_int *stop)
{
    for (;;) {
        double left = deadline - now_seconds();
        if (left <= 0 || atomic_load(stop))
            return;
        if (left > 0.05)
            left = 0.05;
        struct timespec ts = {.tv_sec = 0, .tv_nsec = (long)(left * 1e9)};
        nanosleep(&ts, NULL);
    }
}

static void *sender(void *arg)
{
    struct stream *s = arg;
    struct client_test *t = s->test;
    const struct client_options *o = t->options;
    uint64_t sequence = 0;
    double next_send = now_seconds();
    int failure = 0;
    while (!atomic_load(&t->stop)) {
        double sent_at = now_seconds();
        if (stream_send_message(s, &t->payload, o->message_bytes, t->streaming, &t->stop) < 0) {
            failure = errno == ECANCELED ? 0 : errno;
            break;
        }
        if (o->mode == MODE_SYNC) {
            uint8_t ack[SYNC_ACK_BYTES];
            if (recv_all(s->fd, ack, sizeof ack, &t->stop, 0) < 0) {
                failure = errno == ECANCELED ? 0 : errno;
                break;
            }
            if (get_u64(ack) != sequence) {
                failure = EPROTO;
                break;
            }
            uint64_t latency_us = (uint64_t)((now_seconds() - sent_at) * 1e6);
            pthread_mutex_lock(&s->lock);
            hist_add(&s->latency_us, latency_us);
            samples_add(&s->interval_latency_us, latency_us);
            pthread_mutex_unlock(&s->lock);
        }
        sequence++;
        if (o->delay_us > 0)
            sleep_until(now_seconds() + (double)o->delay_us / 1e6, &t->stop);
        if (t->per_stream_bytes_per_second > 0) {
            next_send += (double)o->message_bytes / t->per_stream_bytes_per_second;
            sleep_until(next_send, &t->stop);
        }
    }
    if (failure) {
        s->error = failure;
        atomic_store(&t->stop, 1);
    }
    return NULL;
}

/* --reverse: receive what the server sends until it closes its side after the END message. */
static void *receiver(void *arg)
{
    struct stream *s = arg;
    struct client_test *t = s->test;
    uint8_t *buf = page_aligned(RECEIVE_BYTES);
    if (buf == NULL || stream_receive_all(s, buf, RECEIVE_BYTES, &t->stop) < 0) {
        s->error = buf == NULL ? ENOMEM : (errno == ECANCELED ? 0 : errno);
        if (s->error)
            atomic_store(&t->stop, 1);
    }
    free(buf);
    atomic_store(&t->finished[s->id], 1);
    return NULL;
}

static int handshake(const struct client_options *o, int control, struct ack *ack)
{
    struct hello hello = {
        .protocol = PROBE_PROTOCOL,
        .mode = (uint8_t)o->mode,
        .flags = (uint8_t)((o->reverse ? HELLO_REVERSE : 0) | (o->zerocopy ? HELLO_ZEROCOPY : 0) |
                           (o->schedule ? HELLO_SCHEDULE : 0)),
        .conns = (uint16_t)o->conns,
        .message_bytes = (uint32_t)o->message_bytes,
        .sockbuf_bytes = o->sockbuf_bytes,
        .duration_ms = (uint64_t)(o->duration_seconds * 1000),
    };
    uint8_t buf[HELLO_BYTES];
    encode_hello(&hello, buf);
    if (send_all(control, buf, sizeof buf, &probe_stop_requested, o->connect_timeout_seconds) < 0) {
        report_error(o, PE_HANDSHAKE, "cannot send the handshake to %s:%d: %s", o->host, o->port,
                     strerror(errno));
        return -1;
    }
    uint8_t reply[ACK_BYTES];
    if (recv_all(control, reply, sizeof reply, &probe_stop_requested, o->connect_timeout_seconds) < 0) {
        if (errno == ETIMEDOUT)
            report_error(o, PE_HANDSHAKE_TIMEOUT, "%s:%d accepted the connection but did not answer the "
                         "handshake within %.0f s: is a redoprobe server listening there, and not another "
                         "service?",
                         o->host, o->port, o->connect_timeout_seconds);
        else
            report_error(o, PE_HANDSHAKE, "%s:%d closed the connection during the handshake (%s): it is "
                         "not a redoprobe server, or one busy with another test",
                         o->host, o->port, errno == EPIPE ? "no answer" : strerror(errno));
        return -1;
    }
    if (decode_ack(reply, ack) < 0) {
        report_error(o, PE_NOT_REDOPROBE, "%s:%d is not a redoprobe server (its answer does not start "
                     "with the redoprobe magic): check the port", o->host, o->port);
        return -1;
    }
    if (ack->status == ACK_VERSION || ack->protocol != PROBE_PROTOCOL) {
        report_error(o, PE_VERSION_MISMATCH, "protocol version mismatch: this client speaks protocol %d, "
                     "the server at %s:%d speaks %u; deploy the same redoprobe version on both hosts",
                     PROBE_PROTOCOL, o->host, o->port, ack->protocol);
        return -1;
    }
    if (ack->status == ACK_TOO_LONG) {
        report_error(o, PE_PARAMS_REFUSED, "the server at %s:%d stops tests before this one's %.0f s (--duration%s): "
                     "start it with --max-duration of at least that, or give a shorter --duration", o->host, o->port,
                     o->duration_seconds, o->schedule ? ", for a replay by default twice its schedule plus a minute" : "");
        return -1;
    }
    if (ack->status != ACK_OK) {
        report_error(o, PE_PARAMS_REFUSED, "the server at %s:%d refused the test parameters%s", o->host,
                     o->port, o->schedule ? " (a --schedule replay needs a server of this redoprobe version)" : "");
        return -1;
    }
    return 0;
}

static int open_streams(struct client_test *t, const struct ack *ack)
{
    const struct client_options *o = t->options;
    for (int i = 0; i < o->conns; i++) {
        enum probe_error error = PE_OK;
        struct connect_options co = {
            .bind = o->bind,
            .local_port = o->cport ? o->cport + i : 0,
            .congestion = o->congestion,
            .fq_rate_bits_per_second = o->fq_rate_bits_per_second,
        };
        int fd = net_connect(o->host, o->port, o->connect_timeout_seconds, o->sockbuf_bytes, &co, &error);
        if (fd < 0 && error == PE_SOCKOPT && o->congestion && errno == ENOENT) {
            report_error(o, PE_CONGESTION, "congestion control '%s' is not available here: see "
                         "/proc/sys/net/ipv4/tcp_available_congestion_control (modprobe tcp_%s)",
                         o->congestion, o->congestion);
            return -1;
        }
        if (fd < 0 && error == PE_SOCKOPT) {
            report_error(o, error, "data connection %d: the kernel refused a socket option (--bind %s, "
                         "--cport %d, --congestion %s, --fq-rate): %s", i, o->bind ? o->bind : "any",
                         co.local_port, o->congestion ? o->congestion : "default", strerror(errno));
            return -1;
        }
        if (fd < 0) {
            report_error(o, error, "data connection %d to %s:%d failed: %s (%s)", i, o->host, o->port,
                         probe_strerror(error), strerror(errno));
            return -1;
        }
        uint8_t header[DATA_HEADER_BYTES];
        encode_data_header(ack->cookie, (uint32_t)i, header);
        stream_init(&t->streams[i], i, fd);
        t->streams[i].test = t;
        /* an interval's exact acknowledgement latencies: SAMPLES_LIMIT over all connections, at least
         * 4,096 each (over 256 connections, up to 4M values: 32 MiB at 1,024) */
        size_t share = SAMPLES_LIMIT / (size_t)o->conns;
        t->streams[i].interval_latency_us.limit = share > 4096 ? share : 4096;
        net_blocking_with_timeout(fd, 100);
        if (send_all(fd, header, sizeof header, &probe_stop_requested, o->connect_timeout_seconds) < 0) {
            report_error(o, PE_HANDSHAKE, "data connection %d to %s:%d: %s", i, o->host, o->port,
                         strerror(errno));
            return -1;
        }
    }
    return 0;
}

static void emit_start(struct client_test *t, int port)
{
    const struct client_options *o = t->options;
    uint64_t sndbuf, rcvbuf;
    tcp_granted_buffers(t->streams[0].fd, &sndbuf, &rcvbuf);
    if (!o->json) {
        printf("redoprobe %s client: %s:%d, %s, %d connection%s, %llu-byte messages, socket buffer %s, %.1f s\n",
               PROBE_VERSION, o->host, port, o->mode == MODE_SYNC ? "sync" : "async", o->conns, o->conns == 1 ? "" : "s",
               (unsigned long long)o->message_bytes, o->sockbuf_bytes ? "explicit" : "autotuned",
               o->duration_seconds);
        printf("granted send buffer %llu bytes, receive buffer %llu bytes%s%s\n",
               (unsigned long long)sndbuf, (unsigned long long)rcvbuf, o->reverse ? "; reverse: the server sends" : "",
               o->zerocopy ? "; zerocopy" : "");
        if (t->replay)
            printf("replaying %s: %llu bytes over %.1f s (scale %g, speedup %g)\n", o->schedule,
                   (unsigned long long)t->schedule->total_bytes, schedule_length_seconds(t->schedule) / o->speedup,
                   o->scale, o->speedup);
        if (t->replay)
            replay_warmup_text(t->replay);
        fflush(stdout);
        return;
    }
    struct json j;
    json_event_begin(&j, "start");
    json_key_str(&j, "version", PROBE_VERSION);
    json_key_u64(&j, "protocol", PROBE_PROTOCOL);
    json_key_str(&j, "role", "client");
    json_key_str(&j, "mode", o->mode == MODE_SYNC ? "sync" : "async");
    json_key_str(&j, "host", o->host);
    json_key_u64(&j, "port", (uint64_t)port);
    json_key_u64(&j, "conns", (uint64_t)o->conns);
    json_key_u64(&j, "message_bytes", o->message_bytes);
    if (o->sockbuf_bytes)
        json_key_u64(&j, "sockbuf_requested_bytes", o->sockbuf_bytes);
    else
        json_key_null(&j, "sockbuf_requested_bytes");
    json_key_u64(&j, "sndbuf_granted_bytes", sndbuf);
    json_key_u64(&j, "rcvbuf_granted_bytes", rcvbuf);
    json_key_double(&j, "duration_seconds", o->duration_seconds);
    json_key_double(&j, "interval_seconds", o->interval_seconds);
    json_key_u64(&j, "delay_us", o->delay_us);
    if (o->rate_bits_per_second > 0)
        json_key_double(&j, "rate_bits_per_second", o->rate_bits_per_second);
    else
        json_key_null(&j, "rate_bits_per_second");
    char congestion[16];
    tcp_congestion(t->streams[0].fd, congestion, sizeof congestion);
    json_key_str(&j, "congestion", congestion);
    if (o->fq_rate_bits_per_second > 0)
        json_key_double(&j, "fq_rate_bits_per_second", o->fq_rate_bits_per_second);
    else
        json_key_null(&j, "fq_rate_bits_per_second");
    if (o->bind)
        json_key_str(&j, "bind", o->bind);
    else
        json_key_null(&j, "bind");
    if (o->cport)
        json_key_u64(&j, "cport", (uint64_t)o->cport);
    else
        json_key_null(&j, "cport");
    json_key_bool(&j, "zerocopy", o->zerocopy);
    json_key_bool(&j, "reverse", o->reverse);
    if (t->replay)
        replay_start_json(t->replay, &j, o->schedule);
    json_kernel_settings(&j);
    json_event_emit(&j);
}

static void emit_interval(struct client_test *t, double from, double to)
{
    const struct client_options *o = t->options;
    struct json j;
    json_event_begin(&j, "interval");
    json_key_double(&j, "start_seconds", from);
    json_key_double(&j, "end_seconds", to);
    json_array_begin(&j, "streams");
    uint64_t bytes = 0;
    struct samples all = {0};
    if (t->replay)
        replay_snapshot(t->replay, t->streams, to);
    for (int i = 0; i < o->conns; i++) {
        json_object_begin(&j, NULL);
        bytes += stream_interval_fields(&t->streams[i], &j, 1);
        if (t->replay)
            replay_stream_json(t->replay, i, &j);
        json_object_end(&j);
        if (o->mode == MODE_SYNC) {
            struct stream *s = &t->streams[i];
            pthread_mutex_lock(&s->lock);
            samples_merge(&all, &s->interval_latency_us);
            samples_clear(&s->interval_latency_us);
            pthread_mutex_unlock(&s->lock);
        }
    }
    json_array_end(&j);
    double seconds = to - from;
    double rate = seconds > 0 ? (double)bytes / seconds : 0;
    json_key_u64(&j, "bytes", bytes);
    json_key_double(&j, "bytes_per_second", rate);
    if (o->mode == MODE_SYNC) {
        json_object_begin(&j, "ack_latency_us");
        json_key_u64(&j, "count", samples_count(&all));
        json_key_bool(&j, "exact", samples_exact(&all)); /* false: within 1/FINE_SUB (hist.h) */
        if (samples_count(&all)) {
            json_key_u64(&j, "min", samples_percentile(&all, 0));
            json_key_u64(&j, "p50", samples_percentile(&all, 50));
            json_key_u64(&j, "p99", samples_percentile(&all, 99));
            json_key_u64(&j, "max", samples_percentile(&all, 100));
        }
        json_object_end(&j);
    }
    if (t->replay)
        replay_interval_json(t->replay, &j);
    if (o->json) {
        json_event_emit(&j);
    } else {
        json_free(&j);
        if (t->replay) /* what the link carried: the server's count */
            rate = seconds > 0 ? (double)replay_received_bytes(t->replay) / seconds : 0;
        printf("[%7.2f-%7.2f s] %12.2f MiB/s %10.2f Mbit/s", from, to, rate / 1048576.0, rate * 8 / 1e6);
        if (o->mode == MODE_SYNC && samples_count(&all))
            printf("  ack p50 %llu us p99 %llu us", (unsigned long long)samples_percentile(&all, 50),
                   (unsigned long long)samples_percentile(&all, 99));
        if (t->replay)
            replay_interval_text(t->replay);
        printf("\n");
        fflush(stdout);
    }
    samples_free(&all);
}

static void emit_end(struct client_test *t, double seconds, uint64_t sent, const struct result *r,
                     int interrupted)
{
    const struct client_options *o = t->options;
    double user, system;
    cpu_seconds(&user, &system);
    uint64_t retransmits = 0;
    struct histogram latency;
    hist_init(&latency);
    for (int i = 0; i < o->conns; i++) {
        struct tcp_sample sample;
        if (tcp_sample(t->streams[i].fd, &sample) == 0)
            retransmits += sample.total_retrans - t->streams[i].retrans_start;
        hist_merge(&latency, &t->streams[i].latency_us);
    }
    double rate = seconds > 0 ? (double)r->bytes_received / seconds : 0;
    if (!o->json) {
        printf("sent %llu bytes, received by the server %llu bytes in %.2f s: %.2f MiB/s, %.2f Mbit/s, %llu retransmits\n",
               (unsigned long long)sent, (unsigned long long)r->bytes_received, seconds,
               rate / 1048576.0, rate * 8 / 1e6, (unsigned long long)retransmits);
        if (o->mode == MODE_SYNC && latency.count)
            printf("ack latency: %llu messages, min %llu us, avg %llu us, max %llu us\n",
                   (unsigned long long)latency.count, (unsigned long long)latency.min_us,
                   (unsigned long long)(latency.sum_us / latency.count), (unsigned long long)latency.max_us);
        if (t->replay)
            replay_end_text(t->replay);
        return;
    }
    struct json j;
    json_event_begin(&j, "end");
    json_key_double(&j, "seconds", seconds);
    json_key_u64(&j, "bytes_sent", sent);
    json_key_u64(&j, "bytes_received", r->bytes_received);
    json_key_double(&j, "bytes_per_second", rate);
    json_key_u64(&j, "retransmits", retransmits);
    json_key_double(&j, "cpu_user_seconds", user);
    json_key_double(&j, "cpu_system_seconds", system);
    json_key_double(&j, "server_cpu_user_seconds", (double)r->cpu_user_us / 1e6);
    json_key_double(&j, "server_cpu_system_seconds", (double)r->cpu_system_us / 1e6);
    json_key_bool(&j, "interrupted", interrupted);
    if (r->flags & 1)
        json_key_double(&j, "server_write_seconds", (double)r->write_us / 1e6);
    else
        json_key_null(&j, "server_write_seconds");
    if (o->mode == MODE_SYNC) {
        json_object_begin(&j, "ack_latency_us");
        json_key_u64(&j, "count", latency.count);
        if (latency.count) {
            json_key_u64(&j, "min", latency.min_us);
            json_key_u64(&j, "avg", latency.sum_us / latency.count);
            json_key_u64(&j, "max", latency.max_us);
        }
        hist_json(&j, "histogram", &latency);
        json_object_end(&j);
    }
    if (t->replay)
        replay_end_json(t->replay, &j);
    json_event_emit(&j);
}

/* --reverse: tell the server to stop, take every byte it sent until it closes each connection,
 * then read its count of what it sent. The rate is what this side received. */
static int finish_reverse(struct client_test *t, int control, uint64_t *sent, struct result *r)
{
    const struct client_options *o = t->options;
    uint8_t end[END_BYTES];
    encode_end(0, end);
    if (send_all(control, end, sizeof end, NULL, 5) < 0)
        return -1;
    double deadline = now_seconds() + 10 + o->duration_seconds;
    for (int i = 0; i < o->conns; i++)
        while (!atomic_load(&t->finished[i]) && now_seconds() < deadline) {
            struct timespec ts = {.tv_sec = 0, .tv_nsec = 5 * 1000 * 1000};
            nanosleep(&ts, NULL);
        }
    atomic_store(&t->stop, 1);
    uint64_t received = 0;
    for (int i = 0; i < o->conns; i++) {
        if (t->streams[i].running)
            pthread_join(t->streams[i].thread, NULL);
        t->streams[i].running = 0;
        received += atomic_load(&t->streams[i].bytes);
    }
    uint8_t reply[RESULT_BYTES];
    if (recv_all(control, reply, sizeof reply, NULL, 10) < 0 || decode_result(reply, r) < 0)
        return -1;
    *sent = r->bytes_received; /* in reverse the server reports what it sent */
    r->bytes_received = received;
    return 0;
}

/* How long a client stopped by a signal waits for the server's count before it reports without it. */
#define STOPPED_RESULT_WAIT_SECONDS 10.0

/* Stop senders, close the write side so the server sees every byte, then ask for its count. */
static int finish(struct client_test *t, int control, uint64_t *sent, struct result *r)
{
    const struct client_options *o = t->options;
    if (o->reverse)
        return finish_reverse(t, control, sent, r);
    atomic_store(&t->stop, 1);
    if (t->replay)
        replay_wake_all(t->replay); /* senders waiting for a release stop at once */
    *sent = 0;
    for (int i = 0; i < o->conns; i++) {
        if (t->streams[i].running)
            pthread_join(t->streams[i].thread, NULL);
        t->streams[i].running = 0;
        *sent += atomic_load(&t->streams[i].bytes);
        shutdown(t->streams[i].fd, SHUT_WR);
    }
    replay_stop_progress(t);
    uint8_t end[END_BYTES];
    encode_end(*sent, end);
    uint8_t reply[RESULT_BYTES];
    /* The server counts once the bytes still queued have arrived: at the end of the test that may take
     * as long as the test did (a slow link, big buffers), and a stop request (TERM) then ends the wait;
     * a test stopped by one already waits briefly for the count, which a silent server never sends, and a
 * second TERM ends that wait too. */
    int stopping = atomic_load(&probe_stop_requested);
    double wait = stopping ? STOPPED_RESULT_WAIT_SECONDS : 10 + o->duration_seconds;
    if (send_all(control, end, sizeof end, &probe_stop_insisted, 5) < 0 ||
        recv_all(control, reply, sizeof reply, stopping ? &probe_stop_insisted : &probe_stop_requested, wait) < 0 ||
        decode_result(reply, r) < 0)
        return -1;
    if (t->replay) { /* the server counted the warm-up's filler too: it is not redo */
        uint64_t filler = replay_warmup_bytes(t->replay);
        r->bytes_received = r->bytes_received > filler ? r->bytes_received - filler : 0;
    }
    return 0;
}

/* The control connection; -1 after the error event. */
static int connect_control(const struct client_options *o)
{
    enum probe_error error = PE_OK;
    struct connect_options control_options = {.bind = o->bind};
    int control = net_connect(o->host, o->port, o->connect_timeout_seconds, 0, &control_options, &error);
    if (control >= 0)
        return control;
    if (error == PE_RESOLVE)
        report_error(o, error, "cannot resolve host '%s': check the name or use an IP address", o->host);
    else
        report_error(o, error, "cannot connect to %s:%d: %s (%s); check that redoprobe server runs there "
                     "and that no firewall blocks the port", o->host, o->port, probe_strerror(error),
                     strerror(errno));
    return -1;
}

/* Connect, handshake, open the data connections; 0, or -1 after the error event. Whatever it
 * did, client_teardown() undoes. */
static int client_setup(struct client_test *t, const struct client_options *o)
{
    memset(t, 0, sizeof *t);
    t->options = o;
    atomic_init(&t->stop, 0);
    t->payload.memfd = -1;
    t->control = connect_control(o);
    if (t->control < 0)
        return -1;
    t->streams = calloc((size_t)o->conns, sizeof *t->streams);
    t->finished = calloc((size_t)o->conns, sizeof *t->finished);
    for (int i = 0; t->streams && i < o->conns; i++)
        t->streams[i].fd = -1;
    if (t->streams == NULL || t->finished == NULL) {
        report_error(o, PE_OUT_OF_MEMORY, "out of memory for %d connections", o->conns);
        return -1;
    }
    if (!o->reverse && payload_init(&t->payload, o->message_bytes, o->zerocopy) < 0) {
        report_error(o, PE_PAYLOAD, "cannot prepare the %llu-byte message%s: %s",
                     (unsigned long long)o->message_bytes, o->zerocopy ? " in a memfd for --zerocopy" : "",
                     strerror(errno));
        return -1;
    }
    struct ack ack;
    if (handshake(o, t->control, &ack) < 0 || open_streams(t, &ack) < 0)
        return -1;
    return 0;
}

/* One thread per stream; a thread that cannot start stops the test (the others are joined). */
static void start_threads(struct client_test *t)
{
    const struct client_options *o = t->options;
    for (int i = 0; i < o->conns; i++) {
        void *(*work)(void *) = o->reverse ? receiver : t->replay ? replay_sender : sender;
        if (pthread_create(&t->streams[i].thread, NULL, work, &t->streams[i]) != 0) {
            report_error(o, PE_THREAD, "cannot start thread %d: %s", i, strerror(errno));
            atomic_store(&t->stop, 1);
            break;
        }
        t->streams[i].running = 1;
    }
}

/* Start the streams, then report intervals until the duration ends, a stream fails or a signal. */
static void client_loop(struct client_test *t)
{
    const struct client_options *o = t->options;
    emit_start(t, o->port);
    if (o->rate_bits_per_second > 0)
        t->per_stream_bytes_per_second = o->rate_bits_per_second / 8 / o->conns;
    t->streaming = o->mode == MODE_ASYNC && o->rate_bits_per_second <= 0 && o->delay_us == 0;
    t->start = now_seconds();
    start_threads(t);
    double end_at = t->start + o->duration_seconds;
    t->last = t->start;
    while (!atomic_load(&t->stop) && !atomic_load(&probe_stop_requested)) {
        double next = t->last + o->interval_seconds;
        if (next > end_at)
            next = end_at;
        if (probe_sleep_until(next, &t->stop)) /* a SIGTERM wakes it at once, not at the interval's end */
            break;
        if (now_seconds() >= next) {
            emit_interval(t, t->last - t->start, next - t->start);
            t->last = next;
        }
        if (t->last >= end_at)
            break;
    }
}

/* --schedule: the warm-up (--warmup, before time zero), then start the senders and the reader of
 * the server's counts, then report intervals on an exact grid (k x interval, so a slot released on
 * a boundary is always the next interval's) until every scheduled byte is received, the cap
 * (--duration), a failed stream or a signal. */
static void replay_loop(struct client_test *t)
{
    const struct client_options *o = t->options;
    t->start = now_seconds(); /* for an error's "after N s" during the warm-up */
    int failure = replay_warmup(t, o->warmup_seconds);
    if (failure) { /* the error event (a lost connection) follows in client_report() */
        t->streams[0].error = failure;
        atomic_store(&t->stop, 1);
        return;
    }
    emit_start(t, o->port); /* with the warm-up's figures */
    t->start = now_seconds();
    replay_begin(t->replay, t->start);
    if (atomic_load(&probe_stop_requested)) /* stopped during the warm-up: the end event follows */
        return;
    start_threads(t);
    if (replay_start_progress(t) < 0) {
        report_error(o, PE_THREAD, "cannot start the thread that reads the server's counts: %s", strerror(errno));
        atomic_store(&t->stop, 1);
    }
    double cap = t->start + o->duration_seconds;
    t->last = t->start;
    t->reported_seconds = 0;
    for (long k = 1; !atomic_load(&t->stop) && !atomic_load(&probe_stop_requested); k++) {
        double end = (double)k * o->interval_seconds;
        if (t->start + end > cap) {
            replay_wait(t->replay, cap);
            break;
        }
        if (replay_wait(t->replay, t->start + end))
            break;
        emit_interval(t, t->reported_seconds, end);
        t->reported_seconds = end;
        t->last = t->start + end;
    }
}

/* The last partial interval, the server's count and the end event; 0, or -1 after the error
 * event when a stream or the control connection failed. */
static int client_report(struct client_test *t)
{
    const struct client_options *o = t->options;
    int interrupted = atomic_load(&probe_stop_requested);
    int failed = 0;
    for (int i = 0; i < o->conns; i++)
        failed |= atomic_load(&t->stop) && t->streams[i].error;
    uint64_t sent = 0;
    struct result result;
    memset(&result, 0, sizeof result);
    if (!failed && !t->replay) {
        double stopped = now_seconds();
        if (stopped - t->last > 0.05 && !interrupted)
            emit_interval(t, t->last - t->start, stopped - t->start);
    }
    int finished = finish(t, t->control, &sent, &result) == 0;
    /* A replay's last interval once its senders stopped and the server counted what arrived (each data
     * connection's count at its end came before the result): the intervals add up to the end's totals,
     * also when the cap or a signal ended the replay before it drained. */
    if (!failed && t->replay && now_seconds() - t->start > t->reported_seconds)
        emit_interval(t, t->reported_seconds, now_seconds() - t->start);
    if (!finished || failed) {
        if (!failed && atomic_load(&probe_stop_requested)) {
            report_error(o, PE_PEER_LOST, "stopped after %.1f s and %llu bytes sent while waiting for the count of "
                         "the server %s:%d (%s): the intervals reported so far stand, the server's total is unknown",
                         now_seconds() - t->start, (unsigned long long)sent, o->host, o->port, strerror(errno));
            return -1;
        }
        int stream_errno = 0;
        for (int i = 0; i < o->conns && !stream_errno; i++)
            stream_errno = t->streams[i].error;
        report_error(o, PE_PEER_LOST, "connection to the server %s:%d lost after %.1f s and %llu bytes "
                     "sent: %s; the server process or the network path went away",
                     o->host, o->port, now_seconds() - t->start, (unsigned long long)sent,
                     strerror(stream_errno ? stream_errno : errno));
        return -1;
    }
    emit_end(t, now_seconds() - t->start, sent, &result, interrupted);
    return 0;
}

static void client_teardown(struct client_test *t)
{
    const struct client_options *o = t->options;
    atomic_store(&t->stop, 1);
    replay_stop_progress(t); /* and wakes the senders */
    for (int i = 0; t->streams && i < o->conns; i++) {
        if (t->streams[i].running)
            pthread_join(t->streams[i].thread, NULL);
        if (t->streams[i].fd >= 0 || t->streams[i].test)
            stream_free(&t->streams[i]);
    }
    free(t->streams);
    free((void *)t->finished);
    payload_free(&t->payload);
    if (t->control >= 0)
        close(t->control);
}

/* --schedule: read the file before any connection; the connection count and the default cap
 * (schedule length / speedup x 2 + 60 s) come from it. 0, or -1 after the error event. */
static int load_schedule(const struct client_options *o, struct schedule *s, struct client_options *effective)
{
    char problem[600];
    *effective = *o;
    effective->scale = o->scale > 0 ? o->scale : 1;
    effective->speedup = o->speedup > 0 ? o->speedup : 1;
    if (schedule_load(o->schedule, effective->scale, s, problem, sizeof problem) < 0) {
        report_error(o, PE_SCHEDULE, "%s", problem);
        return -1;
    }
    s->speedup = effective->speedup;
    if (o->conns_given && o->conns != s->conns) {
        report_error(o, PE_SCHEDULE, "--conns %d but the schedule %s has %d connection%s (highest connection "
                     "number + 1): leave --conns out or make them agree", o->conns, o->schedule, s->conns,
                     s->conns == 1 ? "" : "s");
        schedule_free(s);
        return -1;
    }
    effective->conns = s->conns;
    if (o->cport && o->cport + s->conns - 1 > 65535) {
        report_error(o, PE_SCHEDULE, "--cport %d: the schedule's %d connections would use ports past 65535",
                     o->cport, s->conns);
        schedule_free(s);
        return -1;
    }
    if (!o->duration_given)
        effective->duration_seconds = schedule_length_seconds(s) / effective->speedup * 2 + 60;
    return 0;
}

static int run_test(const struct client_options *o, const struct schedule *schedule)
{
    struct client_test t;
    int status = 1;
    struct replay *replay = schedule ? replay_new(schedule, o->mode == MODE_SYNC, o->interval_seconds) : NULL;
    if (schedule && replay == NULL) {
        report_error(o, PE_OUT_OF_MEMORY, "out of memory for the replay of %d connections", o->conns);
        return 1;
    }
    if (client_setup(&t, o) == 0) {
        t.schedule = schedule;
        t.replay = replay;
        if (replay)
            replay_loop(&t);
        else
            client_loop(&t);
        status = client_report(&t) == 0 ? 0 : 1;
    }
    client_teardown(&t);
    replay_free(replay);
    return status;
}

int run_client(const struct client_options *o)
{
    if (o->schedule == NULL)
        return run_test(o, NULL);
    struct schedule schedule;
    struct client_options effective;
    if (load_schedule(o, &schedule, &effective) < 0)
        return 1;
    int status = run_test(&effective, &schedule);
    schedule_free(&schedule);
    return status;
}
