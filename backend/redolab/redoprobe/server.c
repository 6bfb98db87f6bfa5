/* redoprobe server: accept one test (or many), receive, acknowledge in sync mode, report. */
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "jsonl.h"
#include "net.h"
#include "probe.h"
#include "stream.h"
#include "tcpinfo.h"
#include "wire.h"

#define RECV_BUFFER_BYTES (1024 * 1024)
#define DATA_ACCEPT_SECONDS 10.0

struct server_test {
    const struct server_options *options;
    struct hello hello;
    struct payload payload; /* reverse: what the server sends */
    struct stream *streams;
    atomic_int *finished;
    int conns_open;
    atomic_int stop;
    int dir_fd;
    double start;
};

#define report_error(o, code, ...) emit_error((o)->json, "server", code, __VA_ARGS__)

/* Not an event: a stray connection is noted on stderr and the server keeps waiting. */
static void note(const char *format, ...) __attribute__((format(printf, 1, 2)));
static void note(const char *format, ...)
{
    va_list args;
    va_start(args, format);
    fprintf(stderr, "redoprobe server: ");
    vfprintf(stderr, format, args);
    fprintf(stderr, "\n");
    va_end(args);
}

static int write_received(struct stream *s, const struct server_options *o, const uint8_t *buf, size_t n)
{
    double before = now_seconds();
    size_t done = 0;
    while (done < n) {
        if (s->write_offset >= o->write_wrap_bytes)
            s->write_offset = 0;
        size_t chunk = n - done;
        if (chunk > o->write_wrap_bytes - s->write_offset)
            chunk = (size_t)(o->write_wrap_bytes - s->write_offset);
        ssize_t k = pwrite(s->write_fd, buf + done, chunk, (off_t)s->write_offset);
        if (k < 0) {
            if (errno == EINTR)
                continue;
            return -1;
        }
        done += (size_t)k;
        s->write_offset += (uint64_t)k;
    }
    s->write_seconds += now_seconds() - before;
    return 0;
}

static void *receiver(void *arg)
{
    struct stream *s = arg;
    struct server_test *t = s->test;
    const struct server_options *o = t->options;
    uint8_t *buf = page_aligned(RECV_BUFFER_BYTES);
    uint64_t in_message = 0, sequence = 0;
    int failure = buf == NULL ? ENOMEM : 0;
    while (!failure && !atomic_load(&t->stop)) {
        size_t want = RECV_BUFFER_BYTES;
        if (t->hello.mode == MODE_SYNC && t->hello.message_bytes - in_message < want)
            want = (size_t)(t->hello.message_bytes - in_message);
        ssize_t k = recv(s->fd, buf, want, 0);
        if (k == 0)
            break; /* the client finished: EOF after its last message */
        if (k < 0) {
            if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)
                continue;
            failure = errno;
            break;
        }
        atomic_fetch_add_explicit(&s->bytes, (uint64_t)k, memory_order_relaxed);
        if (s->write_fd >= 0 && write_received(s, o, buf, (size_t)k) < 0) {
            failure = errno;
            break;
        }
        if (t->hello.mode == MODE_SYNC) {
            in_message += (uint64_t)k;
            if (in_message == t->hello.message_bytes) {
                uint8_t ack[SYNC_ACK_BYTES];
                put_u64(ack, sequence++);
                if (send_all(s->fd, ack, sizeof ack, &t->stop, 0) < 0) {
                    failure = errno == ECANCELED ? 0 : errno;
                    break;
                }
                in_message = 0;
            }
        }
    }
    s->error = failure;
    free(buf);
    atomic_store(&t->finished[s->id], 1);
    return NULL;
}

/* What a --schedule receiver owes the client: its count since `owed_since` (0: nothing owed), when
 * the last byte counted arrived (now_seconds()), and the counts taken but not yet sent (`held`, at
 * most PROGRESS_HELD since `held_since`, each stamped with its bytes' arrival), the last packet of
 * them having left at `sent_at`. */
struct progress {
    uint64_t received, reported;
    double owed_since, arrived, sent_at, held_since;
    size_t held;
    uint8_t counts[PROGRESS_HELD * PROGRESS_BYTES];
};

/* Whether a count is due: SYNC as soon as the receive queue is empty (the message's last byte
 * is in); ASYNC once a message's worth arrived since the last count (a burst that ends on a message
 * needs no timer) or PROGRESS_SECONDS after the oldest byte not yet counted arrived. */
static int progress_due(int fd, int sync, const struct progress *g, uint32_t message_bytes)
{
    if (g->received == g->reported)
        return 0;
    if (!sync)
        return g->received - g->reported >= message_bytes || now_seconds() - g->owed_since >= PROGRESS_SECONDS;
    int queued = 0;
    return ioctl(fd, FIONREAD, &queued) < 0 || queued == 0;
}

/* Whether the held counts leave now (`took`: a count was just taken): SYNC at once (a message waits
 * for its count); ASYNC with a count just taken once PROGRESS_PACKET_SECONDS passed since the last
 * packet, so every packet ends with a fresh count (the client sets its clock by the fresh ones; held
 * by a timer, a train of counts a packet period apart would all arrive late), when full, or the
 * oldest held PROGRESS_HELD_SECONDS after it was taken (no count came since). */
static int progress_send_due(int sync, int took, const struct progress *g)
{
    if (g->held == 0)
        return 0;
    double now = now_seconds();
    return sync || g->held == PROGRESS_HELD || (took && now - g->sent_at >= PROGRESS_PACKET_SECONDS) ||
           now - g->held_since >= PROGRESS_HELD_SECONDS;
}

/* How long to wait for bytes: ASYNC until an owed count is due or the held ones may leave (to the
 * microsecond), else 100 ms (a stop is seen within that). */
static struct timespec progress_wait(int sync, const struct progress *g)
{
    double wait = 0.1, now = now_seconds();
    if (!sync && g->received != g->reported && g->owed_since + PROGRESS_SECONDS - now < wait)
        wait = g->owed_since + PROGRESS_SECONDS - now;
    if (!sync && g->held && g->held_since + PROGRESS_HELD_SECONDS - now < wait)
        wait = g->held_since + PROGRESS_HELD_SECONDS - now;
    return seconds_timespec(wait);
}

/* Receive what is queued into g, with the kernel's arrival time of its last segment (else now); 1 at
 * EOF, 0, or -1 with errno. */
static int progress_receive(struct stream *s, uint8_t *buf, struct progress *g)
{
    union { /* aligned for struct cmsghdr */
        struct cmsghdr header;
        uint8_t bytes[CMSG_SPACE(sizeof(struct timespec))];
    } control;
    struct iovec v = {.iov_base = buf, .iov_len = RECV_BUFFER_BYTES};
    struct msghdr m = {.msg_iov = &v, .msg_iovlen = 1, .msg_control = &control, .msg_controllen = sizeof control};
    ssize_t k = recvmsg(s->fd, &m, MSG_DONTWAIT);
    if (k == 0)
        return 1;
    if (k < 0)
        return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR ? 0 : -1;
    double now = now_seconds(), arrived = net_arrival_seconds(&m);
    g->arrived = arrived >= 0 && arrived <= now ? arrived : now;
    if (g->received == g->reported)
        g->owed_since = now;
    g->received += (uint64_t)k;
    atomic_fetch_add_explicit(&s->bytes, (uint64_t)k, memory_order_relaxed);
    struct server_test *t = s->test;
    return s->write_fd >= 0 && write_received(s, t->options, buf, (size_t)k) < 0 ? -1 : 0;
}

/* Take a count (wire.h): the bytes received, and when the last of them arrived in nanoseconds. */
static void take_count(struct progress *g)
{
    if (g->held == 0)
        g->held_since = now_seconds();
    uint8_t *out = g->counts + g->held++ * PROGRESS_BYTES;
    put_u64(out, g->received);
    put_u64(out + 8, (uint64_t)(g->arrived * 1e9));
    g->reported = g->received;
}

/* Send the held counts in one write; 0 or -1 with errno. `timeout_seconds` as send_all's: 0 waits
 * as long as the test runs (`stop`), else gives up after that long without progress. */
static int send_counts(struct stream *s, struct progress *g, atomic_int *stop, double timeout_seconds)
{
    size_t bytes = g->held * PROGRESS_BYTES;
    g->held = 0;
    g->sent_at = now_seconds();
    return send_all(s->fd, g->counts, bytes, stop, timeout_seconds);
}

/* --schedule (HELLO_SCHEDULE): receive, and send back the cumulative counts (wire.h) so the client
 * knows what arrived when; once more at EOF. */
static void *progress_receiver(void *arg)
{
    struct stream *s = arg;
    struct server_test *t = s->test;
    int sync = t->hello.mode == MODE_SYNC;
    uint8_t *buf = page_aligned(RECV_BUFFER_BYTES);
    struct progress g = {0};
    int failure = buf == NULL ? ENOMEM : 0, eof = 0, on = 1;
    setsockopt(s->fd, SOL_SOCKET, SO_TIMESTAMPNS, &on, sizeof on); /* refused: counts stamped when read */
    while (!failure && !eof && !atomic_load(&t->stop)) {
        struct timespec timeout = progress_wait(sync, &g);
        struct pollfd p = {.fd = s->fd, .events = POLLIN};
        if (ppoll(&p, 1, &timeout, NULL) > 0) {
            int got = progress_receive(s, buf, &g);
            eof = got == 1;
            failure = got < 0 ? errno : 0;
        }
        if (failure)
            break;
        int took = eof || progress_due(s->fd, sync, &g, t->hello.message_bytes);
        if (took)
            take_count(&g);
        int send_now = progress_send_due(sync, took, &g) || (eof && g.held);
        if (send_now && send_counts(s, &g, &t->stop, 0) < 0 && !eof) /* at EOF the client may be gone */
            failure = errno == ECANCELED ? 0 : errno;
    }
    if (!failure && !eof && (g.received != g.reported || g.held)) {
        /* stopped (the client's END, at its cap): the count the result is made of goes first, so the
         * client's intervals add up to the result it reads next */
        if (g.received != g.reported)
            take_count(&g);
        send_counts(s, &g, NULL, 1);
    }
    s->error = failure;
    free(buf);
    atomic_store(&t->finished[s->id], 1);
    return NULL;
}

/* 1 readable, 0 at the deadline (0: none), -1 error, -2 stopped: a SIGTERM wakes it at once. */
static int wait_readable(int fd, double deadline)
{
    for (;;) {
        if (atomic_load(&probe_stop_requested))
            return -2;
        double left = deadline > 0 ? deadline - now_seconds() : 3600;
        if (left <= 0)
            return 0;
        int ready = probe_wait_readable(fd, left);
        if (ready != 0)
            return ready;
    }
}

static int hello_is_valid(const struct hello *h)
{
    return h->conns >= 1 && h->conns <= 1024 && h->message_bytes >= 1 &&
           h->message_bytes <= 256u * 1024 * 1024 && h->mode <= MODE_SYNC &&
           (h->flags & ~(HELLO_REVERSE | HELLO_ZEROCOPY | HELLO_SCHEDULE)) == 0 &&
           !((h->flags & HELLO_REVERSE) && (h->mode == MODE_SYNC || (h->flags & HELLO_SCHEDULE)));
}

static int reversed(const struct server_test *t)
{
    return (t->hello.flags & HELLO_REVERSE) != 0;
}

/* --reverse: send messages until the client's END message stops the test. */
static void *sender(void *arg)
{
    struct stream *s = arg;
    struct server_test *t = s->test;
    while (!atomic_load(&t->stop)) {
        if (stream_send_message(s, &t->payload, t->hello.message_bytes, 1, &t->stop) < 0) {
            s->error = errno == ECANCELED ? 0 : errno;
            break;
        }
    }
    atomic_store(&t->finished[s->id], 1);
    return NULL;
}

/* Wait for a client whose handshake is valid; returns the control fd, -1 idle, -2 stopped. */
static int accept_control(int listener, struct server_test *t, const uint8_t cookie[COOKIE_BYTES])
{
    const struct server_options *o = t->options;
    double deadline = o->idle_timeout_seconds > 0 ? now_seconds() + o->idle_timeout_seconds : 0;
    for (;;) {
        int ready = wait_readable(listener, deadline);
        if (ready <= 0)
            return ready == -2 ? -2 : -1;
        int control = accept4(listener, NULL, NULL, SOCK_CLOEXEC);
        if (control < 0)
            continue;
        uint8_t buf[HELLO_BYTES];
        if (recv_all(control, buf, sizeof buf, &probe_stop_requested, 5) < 0 || decode_hello(buf, &t->hello) < 0) {
            note("ignored a connection that is not a redoprobe client (no valid handshake within 5 s)");
            close(control);
            continue;
        }
        struct ack ack = {.protocol = PROBE_PROTOCOL, .status = ACK_OK};
        memcpy(ack.cookie, cookie, COOKIE_BYTES);
        if (t->hello.protocol != PROBE_PROTOCOL)
            ack.status = ACK_VERSION;
        else if (!hello_is_valid(&t->hello))
            ack.status = ACK_BAD_PARAMS;
        else if ((double)t->hello.duration_ms / 1000 > t->options->max_duration_seconds)
            ack.status = ACK_TOO_LONG;
        if (ack.status == ACK_OK && t->hello.sockbuf_bytes)
            net_set_sockbuf(listener, t->hello.sockbuf_bytes); /* accepted sockets inherit it */
        uint64_t sndbuf, rcvbuf;
        tcp_granted_buffers(listener, &sndbuf, &rcvbuf);
        ack.sndbuf_bytes = (uint32_t)sndbuf;
        ack.rcvbuf_bytes = (uint32_t)rcvbuf;
        uint8_t reply[ACK_BYTES];
        encode_ack(&ack, reply);
        send_all(control, reply, sizeof reply, NULL, 5);
        if (ack.status == ACK_OK)
            return control;
        if (ack.status == ACK_TOO_LONG)
            note("refused a client: its test may take %.0f s, over this server's --max-duration %g s",
                 (double)t->hello.duration_ms / 1000, t->options->max_duration_seconds);
        else
            note("refused a client: %s (client protocol %u, ours %d)",
                 ack.status == ACK_VERSION ? "protocol version mismatch" : "invalid test parameters",
                 t->hello.protocol, PROBE_PROTOCOL);
        close(control);
    }
}

static int open_write_file(struct server_test *t, struct stream *s)
{
    char name[64];
    snprintf(name, sizeof name, "redoprobe-%d-%d.dat", (int)getpid(), s->id);
    int flags = O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC;
    if (t->options->sync_write)
        flags |= O_DSYNC;
    s->write_fd = openat(t->dir_fd, name, flags, 0600);
    return s->write_fd < 0 ? -1 : 0;
}

static void remove_write_file(struct server_test *t, struct stream *s)
{
    if (s->write_fd < 0)
        return;
    char name[64];
    snprintf(name, sizeof name, "redoprobe-%d-%d.dat", (int)getpid(), s->id);
    close(s->write_fd);
    s->write_fd = -1;
    unlinkat(t->dir_fd, name, 0);
}

static int accept_streams(int listener, struct server_test *t, const uint8_t cookie[COOKIE_BYTES])
{
    int wanted = t->hello.conns, attempts = 0;
    double deadline = now_seconds() + DATA_ACCEPT_SECONDS;
    while (t->conns_open < wanted && attempts < wanted * 4) {
        if (wait_readable(listener, deadline) <= 0)
            return -1;
        int fd = accept4(listener, NULL, NULL, SOCK_CLOEXEC);
        if (fd < 0)
            continue;
        attempts++;
        uint8_t header[DATA_HEADER_BYTES];
        uint32_t id;
        if (recv_all(fd, header, sizeof header, &probe_stop_requested, 5) < 0 ||
            decode_data_header(header, cookie, &id) < 0 || id >= (uint32_t)wanted || t->streams[id].fd >= 0) {
            note("ignored a data connection that does not belong to this test");
            close(fd);
            continue;
        }
        /* the counts (--schedule) and acknowledgements are small writes: Nagle would hold each one
         * until the previous was acknowledged, up to one RTT (the client sets it on its side too) */
        int one = 1;
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        net_blocking_with_timeout(fd, 100);
        stream_init(&t->streams[id], (int)id, fd);
        t->streams[id].test = t;
        t->conns_open++;
    }
    return t->conns_open == wanted ? 0 : -1;
}

static void emit_interval(struct server_test *t, double from, double to)
{
    struct json j;
    json_event_begin(&j, "interval");
    json_key_double(&j, "start_seconds", from);
    json_key_double(&j, "end_seconds", to);
    json_array_begin(&j, "streams");
    uint64_t bytes = 0;
    for (int i = 0; i < t->hello.conns; i++)
        bytes += stream_interval_json(&t->streams[i], &j, 1);
    json_array_end(&j);
    double rate = to > from ? (double)bytes / (to - from) : 0;
    json_key_u64(&j, "bytes", bytes);
    json_key_double(&j, "bytes_per_second", rate);
    if (t->options->json) {
        json_event_emit(&j);
    } else {
        json_free(&j);
        printf("[%7.2f-%7.2f s] %12.2f MiB/s %10.2f Mbit/s received\n", from, to, rate / 1048576.0, rate * 8 / 1e6);
        fflush(stdout);
    }
}

static uint64_t total_received(struct server_test *t, double *write_seconds)
{
    uint64_t total = 0;
    *write_seconds = 0;
    for (int i = 0; i < t->hello.conns; i++) {
        total += atomic_load(&t->streams[i].bytes);
        *write_seconds += t->streams[i].write_seconds;
    }
    return total;
}

static void emit_end(struct server_test *t, double seconds, int interrupted)
{
    const struct server_options *o = t->options;
    double write_seconds, user, system;
    uint64_t bytes = total_received(t, &write_seconds);
    cpu_seconds(&user, &system);
    if (!o->json) {
        printf("received %llu bytes in %.2f s: %.2f MiB/s\n", (unsigned long long)bytes, seconds,
               seconds > 0 ? (double)bytes / seconds / 1048576.0 : 0);
        return;
    }
    uint64_t sndbuf = 0, rcvbuf = 0;
    if (t->conns_open > 0)
        tcp_granted_buffers(t->streams[0].fd, &sndbuf, &rcvbuf);
    struct json j;
    json_event_begin(&j, "end");
    json_key_str(&j, "role", "server");
    json_key_str(&j, "mode", t->hello.mode == MODE_SYNC ? "sync" : "async");
    json_key_u64(&j, "conns", t->hello.conns);
    json_key_u64(&j, "message_bytes", t->hello.message_bytes);
    if (t->hello.sockbuf_bytes)
        json_key_u64(&j, "sockbuf_requested_bytes", t->hello.sockbuf_bytes);
    else
        json_key_null(&j, "sockbuf_requested_bytes");
    json_key_u64(&j, "sndbuf_granted_bytes", sndbuf);
    json_key_u64(&j, "rcvbuf_granted_bytes", rcvbuf);
    json_key_double(&j, "seconds", seconds);
    json_key_u64(&j, "bytes_received", bytes);
    json_key_double(&j, "bytes_per_second", seconds > 0 ? (double)bytes / seconds : 0);
    json_key_double(&j, "cpu_user_seconds", user);
    json_key_double(&j, "cpu_system_seconds", system);
    if (o->write_dir)
        json_key_double(&j, "write_seconds", write_seconds);
    else
        json_key_null(&j, "write_seconds");
    json_key_bool(&j, "sync_write", o->sync_write);
    json_key_bool(&j, "reverse", reversed(t)); /* then bytes_received counts what this side sent */
    json_key_bool(&j, "interrupted", interrupted);
    json_event_emit(&j);
}

static void stop_streams(struct server_test *t)
{
    atomic_store(&t->stop, 1);
    for (int i = 0; t->streams && i < t->hello.conns; i++) {
        if (t->streams[i].running)
            pthread_join(t->streams[i].thread, NULL);
        t->streams[i].running = 0;
    }
}

/* Wait until every receiver saw EOF (the client closed its side after its last byte). */
static int wait_receivers(struct server_test *t, double deadline)
{
    for (;;) {
        int done = 1;
        for (int i = 0; i < t->hello.conns; i++)
            done &= atomic_load(&t->finished[i]);
        if (done)
            return 0;
        if (now_seconds() > deadline || probe_sleep_until(now_seconds() + 0.01, NULL))
            return -1;
    }
}

enum outcome { DONE, CLIENT_GONE, CAPPED, INTERRUPTED };

static enum outcome run_test(struct server_test *t, int control)
{
    const struct server_options *o = t->options;
    double last = t->start, cap = t->start + o->max_duration_seconds;
    for (;;) {
        double next = last + o->interval_seconds;
        int ready = wait_readable(control, next < cap ? next : cap);
        if (ready == -2)
            return INTERRUPTED;
        if (ready == 1) {
            uint8_t end[END_BYTES];
            uint64_t client_sent; /* not used: the server counts what arrived */
            if (recv_all(control, end, sizeof end, &probe_stop_requested, 5) < 0 || decode_end(end, &client_sent) < 0)
                return CLIENT_GONE;
            if (reversed(t)) { /* stop sending, then close our side: the client reads to EOF */
                stop_streams(t);
                for (int i = 0; i < t->hello.conns; i++)
                    shutdown(t->streams[i].fd, SHUT_WR);
                return DONE;
            }
            if (t->hello.flags & HELLO_SCHEDULE) /* the client has our counts: stop now, even at its cap */
                return DONE;
            if (wait_receivers(t, cap) < 0)
                return atomic_load(&probe_stop_requested) ? INTERRUPTED : CAPPED;
            return DONE;
        }
        double now = now_seconds();
        if (now >= cap)
            return CAPPED;
        if (now >= next) {
            emit_interval(t, last - t->start, next - t->start);
            last = next;
        }
    }
}

/* Accept the data connections, create the --write-dir files, prepare what --reverse sends; 0, or
 * -1 after the error event. Whatever it did, cleanup_test() undoes. */
static int prepare_test(int listener, struct server_test *t, const uint8_t cookie[COOKIE_BYTES])
{
    const struct server_options *o = t->options;
    t->conns_open = 0;
    t->payload.memfd = -1;
    atomic_store(&t->stop, 0);
    t->streams = calloc(t->hello.conns, sizeof *t->streams);
    t->finished = calloc(t->hello.conns, sizeof *t->finished);
    for (int i = 0; t->streams && i < t->hello.conns; i++)
        t->streams[i].fd = t->streams[i].write_fd = -1;
    int allocated = t->streams != NULL && t->finished != NULL;
    if (!allocated || accept_streams(listener, t, cookie) < 0) {
        report_error(o, allocated ? PE_ACCEPT : PE_OUT_OF_MEMORY, "the client did not open its %u data "
                     "connection%s within %.0f s; check that nothing blocks further connections to this port",
                     t->hello.conns, t->hello.conns == 1 ? "" : "s", DATA_ACCEPT_SECONDS);
        return -1;
    }
    for (int i = 0; i < t->hello.conns; i++) {
        if (o->write_dir && !reversed(t) && open_write_file(t, &t->streams[i]) < 0) { /* reverse: nothing arrives */
            report_error(o, PE_FILE_CREATE, "cannot create a file in --write-dir %s: %s", o->write_dir,
                         strerror(errno));
            return -1;
        }
    }
    if (reversed(t) && payload_init(&t->payload, t->hello.message_bytes, (t->hello.flags & HELLO_ZEROCOPY) != 0) < 0) {
        report_error(o, PE_PAYLOAD, "cannot prepare the %u-byte message to send (--reverse): %s",
                     t->hello.message_bytes, strerror(errno));
        return -1;
    }
    return 0;
}

/* The test ended normally: tell the client what arrived (in reverse: what was sent). */
static void send_result(struct server_test *t, int control, uint64_t received, double write_seconds)
{
    double user, system;
    cpu_seconds(&user, &system);
    struct result result = {
        .bytes_received = received,
        .write_us = (uint64_t)(write_seconds * 1e6),
        .cpu_user_us = (uint64_t)(user * 1e6),
        .cpu_system_us = (uint64_t)(system * 1e6),
        .streams = t->hello.conns,
        .flags = t->options->write_dir && !reversed(t) ? 1 : 0,
    };
    uint8_t reply[RESULT_BYTES];
    encode_result(&result, reply);
    send_all(control, reply, sizeof reply, NULL, 5);
}

/* The end event, or the error event when the test was capped or the client went away; the
 * exit status. */
static int report_test(struct server_test *t, int control, enum outcome outcome, double seconds)
{
    const struct server_options *o = t->options;
    double write_seconds;
    uint64_t received = total_received(t, &write_seconds);
    if (outcome == DONE || outcome == INTERRUPTED) {
        if (outcome == DONE)
            send_result(t, control, received, write_seconds);
        emit_end(t, seconds, outcome == INTERRUPTED);
        return 0;
    }
    if (outcome == CAPPED) {
        report_error(o, PE_MAX_DURATION, "the test reached --max-duration %.0f s after %llu bytes and was "
                     "stopped", o->max_duration_seconds, (unsigned long long)received);
        return 1;
    }
    int stream_errno = 0;
    for (int i = 0; i < t->hello.conns && !stream_errno; i++)
        stream_errno = t->streams[i].error;
    report_error(o, PE_PEER_LOST, "the client went away after %.1f s and %llu bytes received (%s); "
                 "the client process or the network path failed", seconds, (unsigned long long)received,
                 stream_errno ? strerror(stream_errno) : "control connection closed");
    return 1;
}

static void cleanup_test(struct server_test *t, int control)
{
    stop_streams(t);
    for (int i = 0; t->streams && i < t->hello.conns; i++) {
        remove_write_file(t, &t->streams[i]);
        if (t->streams[i].test)
            stream_free(&t->streams[i]);
    }
    free(t->streams);
    free(t->finished);
    payload_free(&t->payload);
    t->streams = NULL;
    t->finished = NULL;
    close(control);
}

static int serve_one(int listener, struct server_test *t)
{
    const struct server_options *o = t->options;
    uint8_t cookie[COOKIE_BYTES];
    random_bytes(cookie, sizeof cookie);
    int control = accept_control(listener, t, cookie);
    if (control == -2)
        return 0;
    if (control < 0) {
        report_error(o, PE_IDLE_TIMEOUT, "no client connected within %.0f s (--idle-timeout); exiting",
                     o->idle_timeout_seconds);
        return 1;
    }
    int status = 1;
    if (prepare_test(listener, t, cookie) == 0) {
        t->start = now_seconds();
        for (int i = 0; i < t->hello.conns; i++) {
            void *(*work)(void *) = reversed(t) ? sender : receiver;
            if (!reversed(t) && (t->hello.flags & HELLO_SCHEDULE))
                work = progress_receiver;
            if (pthread_create(&t->streams[i].thread, NULL, work, &t->streams[i]) == 0)
                t->streams[i].running = 1;
        }
        enum outcome outcome = run_test(t, control);
        double seconds = now_seconds() - t->start;
        stop_streams(t);
        status = report_test(t, control, outcome, seconds);
    }
    cleanup_test(t, control);
    return status;
}

static void emit_listening(const struct server_options *o, int port)
{
    if (!o->json) {
        printf("redoprobe %s server listening on %s port %d\n", PROBE_VERSION, o->bind ? o->bind : "*", port);
        fflush(stdout);
        return;
    }
    struct json j;
    json_event_begin(&j, "start");
    json_key_str(&j, "version", PROBE_VERSION);
    json_key_u64(&j, "protocol", PROBE_PROTOCOL);
    json_key_str(&j, "role", "server");
    if (o->bind)
        json_key_str(&j, "host", o->bind);
    else
        json_key_null(&j, "host");
    json_key_u64(&j, "port", (uint64_t)port);
    json_key_u64(&j, "pid", (uint64_t)getpid());
    json_key_bool(&j, "once", o->once);
    json_key_double(&j, "max_duration_seconds", o->max_duration_seconds);
    json_key_double(&j, "idle_timeout_seconds", o->idle_timeout_seconds);
    if (o->write_dir)
        json_key_str(&j, "write_dir", o->write_dir);
    else
        json_key_null(&j, "write_dir");
    json_key_bool(&j, "sync_write", o->sync_write);
    json_key_double(&j, "interval_seconds", o->interval_seconds);
    json_kernel_settings(&j);
    json_event_emit(&j);
}

int run_server(const struct server_options *o)
{
    struct server_test t;
    memset(&t, 0, sizeof t);
    t.options = o;
    t.dir_fd = -1;
    if (o->write_dir) {
        t.dir_fd = open(o->write_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (t.dir_fd < 0) {
            report_error(o, PE_WRITE_DIR, "--write-dir %s is not a usable directory: %s", o->write_dir,
                         strerror(errno));
            return 1;
        }
    }
    enum probe_error error = PE_OK;
    int port = 0;
    int listener = net_listen(o->bind, o->port, &port, &error);
    if (listener < 0) {
        report_error(o, error, "cannot listen on %s port %d: %s (%s); is another process using the port?",
                     o->bind ? o->bind : "*", o->port, probe_strerror(error), strerror(errno));
        if (t.dir_fd >= 0)
            close(t.dir_fd);
        return 1;
    }
    emit_listening(o, port);
    int status;
    do {
        status = serve_one(listener, &t);
    } while (!o->once && status == 0 && !atomic_load(&probe_stop_requested));
    close(listener);
    if (t.dir_fd >= 0)
        close(t.dir_fd);
    return status;
}
