/* --schedule on the client (replay.h): pacing by an absolute clock, the server's counts, lag. */
#include "replay.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "client.h"
#include "jsonl.h"
#include "net.h"
#include "stream.h"
#include "tcpinfo.h"
#include "wire.h"

/* Schedule slip in microseconds, log-linear (hist.h): 32 buckets per power of two (within 3 %). */
#define SLIP_SUB_BITS 5
#define SLIP_BUCKETS (32 * 42)
/* How long a count's fastest way back is remembered (seconds): long enough to hold counts that came
 * straight, short enough that the two clocks' drift moves the offset little meanwhile (NTP-disciplined
 * clocks, under 1 ppm: 8 us; free-running at 50 ppm: 0.4 ms, the lag understated by up to that). */
#define OFFSET_SECONDS 8
/* The interval boundaries a report may still ask about: one made up to this many intervals late. */
#define SENT_RING 8

struct replay_stream {
    _Atomic uint64_t received;         /* the server's latest count, less the warm-up's filler */
    _Atomic uint64_t counted_raw;      /* the server's latest count as sent: filler included */
    uint64_t warmup_bytes;             /* filler sent before time zero (set before the senders start) */
    /* The sender's, under chunk_lock: for the last SENT_RING intervals in which a send began, the
     * interval and the bytes handed to sends begun before its start; and the bytes in all
     * (sent_started). S at an interval's end is what sends begun before it carried, never capped by
     * the schedule: an early byte shows (and a report made late still reads its own boundary). */
    pthread_mutex_t chunk_lock;
    long ring_interval[SENT_RING];
    uint64_t ring_before[SENT_RING];
    int ring_count, ring_next;
    uint64_t sent_started;
    /* ASYNC: whoever is awake reads the counts (the sender when it wakes for a release, the main
     * thread before each report, the progress reader), one at a time under count_lock */
    pthread_mutex_t count_lock;
    uint8_t partial[PROGRESS_BYTES];   /* a count split across reads */
    atomic_int timestamped;            /* counts carry the kernel's arrival time: read late, still exact */
    atomic_int closed;                 /* the server closed or failed: nothing more to read */
    /* under the lock: the connection's smoothed and minimum RTT when its latest count arrived, the
     * moment (replay clock) that count describes, and the longest way back of a count lately */
    double srtt_seconds, min_rtt_seconds, counted_at, slowest_back_seconds;
    double rtt_read_at; /* the reader's (count_lock): when TCP_INFO was last read, 0 never */
    /* under both locks: per second of arrival (now_seconds(), a ring), the smallest arrival less the
     * server's stamp seen (the clock offset plus the fastest way back that second), and the longest
     * way back */
    double offset_min[OFFSET_SECONDS], back_max[OFFSET_SECONDS];
    long offset_second[OFFSET_SECONDS];
    size_t partial_len;
    /* the main thread's: cumulative at the last report, and this interval's figures */
    uint64_t generated_reported, sent_reported, received_reported;
    uint64_t generated_interval, sent_interval, received_interval, backlog;
    double lag_seconds;
    /* under the lock */
    double max_lag_seconds;
    uint64_t max_backlog_bytes;
    /* under the lock: the last report's moment, G and R while no count came after it (pending) */
    int pending;
    double pending_at;
    uint64_t pending_generated, pending_received;
};

struct replay {
    const struct schedule *schedule;
    int sync;
    double interval_seconds;
    double start;
    struct replay_stream *streams;
    atomic_int wake;
    int wake_fd;          /* an eventfd written once and never read: readable from then on */
    pthread_t progress;
    int progress_running;
    pthread_mutex_t lock; /* what follows, and the streams' maxima */
    uint64_t received_total;
    double drained_at;    /* replay clock; -1 until every scheduled byte arrived */
    double max_lag_seconds, max_lag_at, max_backlog_at;
    /* --warmup, before time zero: asked, spent sending, waiting for the server's count; filler
     * bytes and retransmits (summed) */
    double warmup_seconds, warmup_sent_seconds, warmup_drain_seconds;
    int warmup_drained;
    uint64_t warmup_bytes, warmup_retransmits;
    uint64_t max_backlog_bytes;
    /* the last report's summed backlog while no count came after it (pending) */
    int pending;
    uint64_t pending_backlog;
    double pending_backlog_at;
    double slip_interval_max, slip_max;
    uint64_t slip_count, slip_buckets[SLIP_BUCKETS];
    /* the last report, summed over streams */
    uint64_t generated, sent, received, backlog;
    double lag_seconds, slip_reported;
    /* REDOPROBE_SEND_TRACE=FILE (for tests of the pacing): one line per send, `CONNECTION SECONDS
     * BYTES`, the moment the send began on the replay clock and the connection's bytes handed to
     * sends once it has; NULL without */
    FILE *trace;
};

struct replay *replay_new(const struct schedule *schedule, int sync, double interval_seconds)
{
    struct replay *r = calloc(1, sizeof *r);
    if (r == NULL)
        return NULL;
    r->streams = calloc((size_t)schedule->conns, sizeof *r->streams);
    if (r->streams == NULL) {
        free(r);
        return NULL;
    }
    r->wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    if (r->wake_fd < 0) {
        free(r->streams);
        free(r);
        return NULL;
    }
    r->schedule = schedule;
    r->sync = sync;
    r->interval_seconds = interval_seconds;
    for (int i = 0; i < schedule->conns; i++) {
        pthread_mutex_init(&r->streams[i].chunk_lock, NULL);
        pthread_mutex_init(&r->streams[i].count_lock, NULL);
        for (int k = 0; k < OFFSET_SECONDS; k++)
            r->streams[i].offset_second[k] = LONG_MIN;
    }
    r->drained_at = -1;
    atomic_init(&r->wake, 0);
    pthread_mutex_init(&r->lock, NULL);
    const char *trace = getenv("REDOPROBE_SEND_TRACE");
    if (trace != NULL && *trace != '\0')
        r->trace = fopen(trace, "we"); /* a trace that cannot be written is no trace, not a failed test */
    return r;
}

/* One line of the send trace (stdio locks the stream: senders may write at once). */
static void trace_send(struct replay *r, int i, uint64_t through)
{
    if (r->trace != NULL)
        fprintf(r->trace, "%d %.9f %llu\n", i, now_seconds() - r->start, (unsigned long long)through);
}

void replay_free(struct replay *r)
{
    if (r == NULL)
        return;
    close(r->wake_fd);
    if (r->trace != NULL)
        fclose(r->trace);
    pthread_mutex_destroy(&r->lock);
    for (int i = 0; i < r->schedule->conns; i++) {
        pthread_mutex_destroy(&r->streams[i].chunk_lock);
        pthread_mutex_destroy(&r->streams[i].count_lock);
    }
    free(r->streams);
    free(r);
}

atomic_int *replay_wake(struct replay *r) { return &r->wake; }

void replay_wake_all(struct replay *r)
{
    uint64_t one = 1;
    atomic_store(&r->wake, 1);
    ssize_t written = write(r->wake_fd, &one, sizeof one); /* non-blocking: never full for 1s */
    (void)written;
}

int replay_wait(struct replay *r, double deadline)
{
    for (;;) {
        if (atomic_load(&r->wake) || atomic_load(&probe_stop_requested))
            return 1;
        double left = deadline - now_seconds();
        if (left <= 0)
            return 0;
        if (probe_wait_readable(r->wake_fd, left) != 0)
            return 1;
    }
}

void replay_begin(struct replay *r, double start)
{
    r->start = start;
    /* The warm-up read the RTT on the monotonic clock (start was 0) and under its own queue: read it
     * afresh from the first count on the replay clock */
    for (int i = 0; i < r->schedule->conns; i++) {
        pthread_mutex_lock(&r->streams[i].count_lock);
        r->streams[i].rtt_read_at = 0;
        pthread_mutex_lock(&r->lock);
        r->streams[i].srtt_seconds = 0;
        pthread_mutex_unlock(&r->lock);
        pthread_mutex_unlock(&r->streams[i].count_lock);
    }
    if (r->schedule->total_bytes == 0) { /* nothing to send: drained from the start */
        r->drained_at = 0;
        replay_wake_all(r);
    }
}

/* A summed backlog seen at `seconds` (the moment a count describes). */
static void note_backlog(struct replay *r, uint64_t backlog, double seconds)
{
    if (backlog <= r->max_backlog_bytes)
        return;
    r->max_backlog_bytes = backlog;
    r->max_backlog_at = seconds;
}

/* Lag of stream i at `seconds` with `received` counted: the age of the oldest generated byte not
 * yet received, generation being linear inside a slot (schedule.h); 0 when all generated arrived. */
static double lag_at(const struct replay *r, int i, double seconds, uint64_t generated, uint64_t received)
{
    if (received >= generated)
        return 0;
    double lag = seconds - schedule_generation_of_byte(r->schedule, &r->schedule->streams[i], received + 1);
    return lag > 0 ? lag : 0;
}

/* Backlog and lag of stream i at `seconds` given its G and R, and the summed backlog; the maxima
 * (under the lock). */
static void sample(struct replay *r, int i, double seconds, uint64_t generated, uint64_t received,
                   uint64_t generated_total, uint64_t received_total)
{
    struct replay_stream *rs = &r->streams[i];
    if (received < generated) {
        double lag = lag_at(r, i, seconds, generated, received);
        if (lag > rs->max_lag_seconds)
            rs->max_lag_seconds = lag;
        if (lag > r->max_lag_seconds) {
            r->max_lag_seconds = lag;
            r->max_lag_at = seconds;
        }
        if (generated - received > rs->max_backlog_bytes)
            rs->max_backlog_bytes = generated - received;
    }
    if (generated_total > received_total)
        note_backlog(r, generated_total - received_total, seconds);
}

/* The moment (replay clock) `age` seconds before `seconds`, clamped to [0, seconds]. */
static double counted_moment(double seconds, double age)
{
    double moment = seconds - age;
    return moment < 0 ? 0 : (moment > seconds ? seconds : moment);
}

/* The server's count on stream i, less the warm-up's filler (which all went before the redo). */
static uint64_t redo_count(const struct replay_stream *rs, uint64_t raw)
{
    return raw > rs->warmup_bytes ? raw - rs->warmup_bytes : 0;
}

#define RTT_REFRESH_SECONDS 0.1

/* How long ago (seconds, >= 0) a count stamped `server_at` on its server's clock and arriving at `now`
 * (both now_seconds()-like, on two hosts) left the server. arrival - stamp is the clocks' offset plus
 * this count's way back; its smallest value over the last OFFSET_SECONDS is the offset plus the
 * fastest way back, taken as half the minimum RTT (the way out and back alike, as NTP takes them).
 * A count held up on its way back (a queue, a late delay line) is so not read as lag; a way back
 * always slow reads as the offset, as it must: one clock cannot tell them apart. */
static double way_back(struct replay_stream *rs, double server_at, double now, int counted_more)
{
    double arrival_less_stamp = now - server_at, fastest = arrival_less_stamp;
    long second = (long)floor(now);
    int b = (int)(((second % OFFSET_SECONDS) + OFFSET_SECONDS) % OFFSET_SECONDS);
    if (rs->offset_second[b] != second) {
        rs->offset_second[b] = second;
        rs->offset_min[b] = arrival_less_stamp;
        rs->back_max[b] = 0;
    } else if (arrival_less_stamp < rs->offset_min[b]) {
        rs->offset_min[b] = arrival_less_stamp;
    }
    for (int k = 0; k < OFFSET_SECONDS; k++)
        if (rs->offset_second[k] > second - OFFSET_SECONDS && rs->offset_min[k] < fastest)
            fastest = rs->offset_min[k];
    double back = arrival_less_stamp - fastest + rs->min_rtt_seconds / 2;
    if (counted_more && back > rs->back_max[b]) /* a count repeated at EOF carries its old stamp */
        rs->back_max[b] = back;
    rs->slowest_back_seconds = 0;
    for (int k = 0; k < OFFSET_SECONDS; k++)
        if (rs->offset_second[k] > second - OFFSET_SECONDS && rs->back_max[k] > rs->slowest_back_seconds)
            rs->slowest_back_seconds = rs->back_max[k];
    return back;
}

/* The server counted `raw` bytes on stream i, the last arriving there at `server_at` (its clock),
 * the count arriving here at now_seconds() `now` on socket fd; the warm-up's filler included. Lag and
 * backlog are evaluated with that count at the moment it describes, now less its way back (above;
 * the RTTs from TCP_INFO, read every RTT_REFRESH_SECONDS). */
static void count_arrived(struct replay *r, int i, uint64_t raw, double server_at, double now, int fd)
{
    struct replay_stream *rs = &r->streams[i];
    atomic_store(&rs->counted_raw, raw);
    uint64_t count = redo_count(rs, raw);
    struct tcp_sample rtt = {0};
    double seconds = now - r->start;
    /* The RTTs move slowly: read them (a getsockopt) every RTT_REFRESH_SECONDS, not per count
     * (100 a second at 100 MiB/s of 1 MiB messages) */
    int known = 0;
    if (rs->rtt_read_at == 0 || seconds - rs->rtt_read_at >= RTT_REFRESH_SECONDS) {
        known = tcp_sample(fd, &rtt) == 0;
        rs->rtt_read_at = seconds != 0 ? seconds : 1e-9;
    }
    pthread_mutex_lock(&r->lock);
    uint64_t before = atomic_load(&rs->received);
    if (known) {
        rs->srtt_seconds = rtt.rtt_us / 1e6;
        if (rtt.min_rtt_us != 0) /* the kernel's windowed minimum */
            rs->min_rtt_seconds = rtt.min_rtt_us / 1e6;
        else if (rtt.rtt_us != 0 && (rs->min_rtt_seconds == 0 || rtt.rtt_us / 1e6 < rs->min_rtt_seconds))
            rs->min_rtt_seconds = rtt.rtt_us / 1e6; /* a kernel before 4.10: the smallest smoothed RTT seen */
    }
    double back = way_back(rs, server_at, now, count > before);
    if (count > before) {
        const struct schedule *s = r->schedule;
        double moment = counted_moment(seconds, back);
        uint64_t generated = schedule_generated(s, &s->streams[i], moment, 1);
        uint64_t generated_total = schedule_generated(s, NULL, moment, 1);
        /* Just before this count the receiver held `before`: the lag and backlog peak then (a byte
         * generated at 0 and received at 0.1 s was 0.1 s old, which the count after it no longer shows) */
        sample(r, i, moment, generated, before, generated_total, r->received_total);
        rs->pending = r->pending = 0; /* a report's guess, covered by that sample or proved wrong by it */
        atomic_store(&rs->received, count);
        r->received_total += count - before;
        rs->counted_at = moment;
        sample(r, i, moment, generated, count, generated_total, r->received_total);
        if (r->received_total >= s->total_bytes && r->drained_at < 0) {
            r->drained_at = moment;
            replay_wake_all(r);
        }
    }
    pthread_mutex_unlock(&r->lock);
}

static int slip_bucket(uint64_t us)
{
    int bucket = loglin_bucket(us, SLIP_SUB_BITS);
    return bucket < SLIP_BUCKETS ? bucket : SLIP_BUCKETS - 1;
}

static void record_slip(struct replay *r, double seconds)
{
    if (seconds < 0)
        seconds = 0;
    pthread_mutex_lock(&r->lock);
    if (seconds > r->slip_interval_max)
        r->slip_interval_max = seconds;
    if (seconds > r->slip_max)
        r->slip_max = seconds;
    r->slip_buckets[slip_bucket((uint64_t)(seconds * 1e6))]++;
    r->slip_count++;
    pthread_mutex_unlock(&r->lock);
}

/* A send of `bytes` begins now: in which interval, for S at the interval ends. */
static void chunk_begins(struct replay *r, int i, uint64_t bytes)
{
    struct replay_stream *rs = &r->streams[i];
    long interval = (long)((now_seconds() - r->start) / r->interval_seconds + 1e-9); /* on a boundary: the next */
    pthread_mutex_lock(&rs->chunk_lock);
    int latest = (rs->ring_next + SENT_RING - 1) % SENT_RING;
    if (rs->ring_count == 0 || interval > rs->ring_interval[latest]) {
        rs->ring_interval[rs->ring_next] = interval;
        rs->ring_before[rs->ring_next] = rs->sent_started;
        rs->ring_next = (rs->ring_next + 1) % SENT_RING;
        if (rs->ring_count < SENT_RING)
            rs->ring_count++;
    }
    rs->sent_started += bytes;
    pthread_mutex_unlock(&rs->chunk_lock);
}

/* Bytes handed to sends begun before `seconds`: exact at interval ends (k x interval) up to SENT_RING
 * intervals with sends back; for the last, partial interval every send begun so far. Between two
 * recorded intervals no send began: the bytes before boundary b are those before the first recorded
 * interval at or after b. */
static uint64_t sent_by(struct replay *r, int i, double seconds)
{
    struct replay_stream *rs = &r->streams[i];
    double k = seconds / r->interval_seconds;
    long boundary = (long)(k + 1e-9);
    int on_grid = fabs(k - (double)boundary) < 1e-9;
    pthread_mutex_lock(&rs->chunk_lock);
    uint64_t sent = rs->sent_started;
    for (int n = 0; on_grid && n < rs->ring_count; n++) { /* newest to oldest */
        int at = (rs->ring_next + SENT_RING - 1 - n) % SENT_RING;
        if (rs->ring_interval[at] < boundary)
            break;
        sent = rs->ring_before[at];
    }
    pthread_mutex_unlock(&rs->chunk_lock);
    return sent;
}

/* Counts read by one recvmsg(); read_counts() reads again while a read fills the buffer, up to
 * COUNT_READS_MAX times: the sender reads at most every PROGRESS_PACKET_SECONDS, and the server
 * takes a count per message's worth (64 KiB messages at 1,000 MiB/s: 16,000 a second, 80 per 5 ms),
 * so one buffer a read would leave counts queued, growing, and the lag overstated. */
#define COUNTS_PER_READ 64
#define COUNT_READS_MAX 64
#define COUNT_BUFFER_BYTES (PROGRESS_BYTES * COUNTS_PER_READ)

/* One recvmsg() of stream i's counts, without waiting (count_lock held): whole counts, keeping a
 * split one. They arrived when the kernel says, else now. The bytes read (0: the server closed), or
 * -1 with errno. */
static ssize_t read_counts_once(struct replay *r, int i, int fd)
{
    struct replay_stream *rs = &r->streams[i];
    uint8_t buf[COUNT_BUFFER_BYTES];
    union { /* aligned for struct cmsghdr */
        struct cmsghdr header;
        uint8_t bytes[CMSG_SPACE(sizeof(struct timespec))];
    } control;
    memcpy(buf, rs->partial, rs->partial_len);
    struct iovec v = {.iov_base = buf + rs->partial_len, .iov_len = sizeof buf - rs->partial_len};
    struct msghdr m = {.msg_iov = &v, .msg_iovlen = 1, .msg_control = &control, .msg_controllen = sizeof control};
    ssize_t k = recvmsg(fd, &m, MSG_DONTWAIT);
    if (k > 0) {
        double arrived = net_arrival_seconds(&m);
        if (arrived >= 0)
            atomic_store(&rs->timestamped, 1);
        size_t have = rs->partial_len + (size_t)k, words = have / PROGRESS_BYTES;
        if (arrived < 0)
            arrived = now_seconds();
        /* every count, each at the moment it describes: taking only the last of a burst held up on
         * its way back would have the receiver hold the count before the burst until the last's moment */
        for (size_t w = 0; w < words; w++)
            count_arrived(r, i, get_u64(buf + w * PROGRESS_BYTES), (double)get_u64(buf + w * PROGRESS_BYTES + 8) / 1e9,
                          arrived, fd);
        rs->partial_len = have - words * PROGRESS_BYTES;
        memmove(rs->partial, buf + words * PROGRESS_BYTES, rs->partial_len);
    }
    return k;
}

/* Read what stream i's server sent, without waiting: every count queued (COUNT_READS_MAX buffers at
 * most), each at its moment. 0, or -1 when the server closed or failed (the sender sees it and says
 * so). */
static int read_counts(struct replay *r, int i, int fd)
{
    struct replay_stream *rs = &r->streams[i];
    int failed = 0;
    pthread_mutex_lock(&rs->count_lock);
    for (int reads = 0; reads < COUNT_READS_MAX && !atomic_load(&rs->closed); reads++) {
        size_t room = COUNT_BUFFER_BYTES - rs->partial_len;
        ssize_t k = read_counts_once(r, i, fd);
        failed = k == 0 || (k < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR);
        if (failed)
            atomic_store(&rs->closed, 1);
        if (k < (ssize_t)room) /* the queue is empty (or closed, or failed): nothing more to read now */
            break;
    }
    if (atomic_load(&rs->closed) && !failed)
        failed = 1; /* closed before (a previous read saw the end) */
    pthread_mutex_unlock(&rs->count_lock);
    return failed ? -1 : 0;
}

/* A release this close or closer is slept to with clock_nanosleep() on the absolute clock, not on the
 * wake eventfd: at 1,000 MiB/s in 1 MiB messages a release comes every millisecond, and ppoll() of
 * the eventfd (the fd looked up and referenced, a wait queue joined and left under its lock) cost
 * the sender 2.6 % more CPU than the nanosleep() of --rate in a cpu-clock profile of each (perf
 * record, 15 s). A stop then waits for at most this long. */
#define NAP_SECONDS 0.02

/* Sleep until `deadline` (now_seconds(), CLOCK_MONOTONIC); 1 when the test stops. A single wake-up
 * per release (a timer never fires early), never a spin: up to NAP_SECONDS away one nanosleep,
 * further one ppoll() of the wake eventfd, which a stop ends at once. */
static int sleep_until_release(struct replay *r, double deadline, atomic_int *stop)
{
    struct pollfd p = {.fd = r->wake_fd, .events = POLLIN};
    for (;;) {
        if (atomic_load(stop))
            return 1;
        double left = deadline - now_seconds();
        if (!(left > 0)) /* due (a NaN deadline too: released now, never a spin on a zero timeout) */
            return 0;
        if (left <= NAP_SECONDS) {
            struct timespec at = seconds_timespec(deadline);
            clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &at, NULL); /* EINTR: the loop looks again */
            continue;
        }
        struct timespec timeout = seconds_timespec(left > 3600 ? 3600 : left);
        if (ppoll(&p, 1, &timeout, NULL) > 0)
            return 1; /* woken: the test stops */
    }
}

/* ASYNC, every byte sent: read the counts until they cover `total`, the server goes away or the
 * replay is woken (drained, stopped). */
static void await_counts(struct replay *r, struct stream *s, uint64_t total, atomic_int *stop)
{
    struct replay_stream *rs = &r->streams[s->id];
    struct pollfd p[2] = {{.fd = r->wake_fd, .events = POLLIN}, {.fd = s->fd, .events = POLLIN}};
    while (!atomic_load(stop) && atomic_load(&rs->received) < total && !atomic_load(&rs->closed)) {
        int ready = poll(p, 2, 100);
        if (ready < 0 && errno != EINTR)
            return;
        if (ready > 0 && p[0].revents)
            return;
        if (ready > 0 && p[1].revents)
            read_counts(r, s->id, s->fd);
    }
}

/* The end of the next send from `sent`: a whole message, or the rest of its slot. */
static uint64_t next_target(const struct schedule_stream *ss, uint64_t sent, uint64_t message)
{
    uint64_t slot_end = schedule_slot_end_of_byte(ss, sent + 1);
    return sent + message < slot_end ? sent + message : slot_end;
}

/* ASYNC: bytes leave as they are generated (schedule.h), never ahead: a message as soon as a
 * whole message, or the rest of its slot, is generated, sleeping on the absolute clock until then;
 * behind, whatever is generated goes out back to back in message-size sends, each saying MSG_MORE
 * only when the next one is due already (else its tail would wait for the next release). 0, or an
 * errno. */
static int send_async(struct stream *s, struct client_test *t, const struct schedule_stream *ss)
{
    struct replay *r = t->replay;
    const struct schedule *schedule = r->schedule;
    uint64_t sent = 0, message = t->options->message_bytes;
    uint64_t total = ss->count ? ss->slots[ss->count - 1].cumulative_bytes : 0;
    uint64_t due = 0; /* generated by the moment slept to: rounding never makes us wait again */
    double read_at = -1; /* the last read of the counts */
    while (!atomic_load(&t->stop) && sent < total) {
        double now = now_seconds();
        uint64_t generated = schedule_generated(schedule, ss, now - r->start, 1);
        if (generated < due)
            generated = due;
        uint64_t target = next_target(ss, sent, message);
        if (generated >= target) {
            /* Awake anyway: the counts need no wake-up of their own. A read before a send: the
             * count of a message arrives after its send returns, so a read then, before the sleep,
             * mostly found nothing (a syscall on a cold cache each time); what it found, the next
             * read finds with the moment it arrived. At most one read per PROGRESS_PACKET_SECONDS,
             * as often as counts come back (wire.h): a read per send, a thousand a second at
             * 1,000 MiB/s in 1 MiB messages, four in five finding nothing, was 1.2 to 1.5 % of the
             * sender's CPU in a cpu-clock profile (perf record, 15 s). */
            if (now - read_at >= PROGRESS_PACKET_SECONDS) {
                read_counts(r, s->id, s->fd);
                read_at = now;
            }
            uint64_t chunk = generated - sent < message ? generated - sent : message;
            int more = sent + chunk < total && generated >= next_target(ss, sent + chunk, message);
            chunk_begins(r, s->id, chunk);
            trace_send(r, s->id, sent + chunk);
            if (stream_send_message(s, &t->payload, chunk, more, &t->stop) < 0)
                return errno == ECANCELED ? 0 : errno;
            sent += chunk;
            continue;
        }
        if (sleep_until_release(r, r->start + schedule_generation_of_byte(schedule, ss, target), &t->stop))
            return 0;
        due = target;
    }
    await_counts(r, s, total, &t->stop);
    return 0;
}

/* SYNC: wait until the server's count (less the filler) covers `sent`; 0, or -1 with errno. A
 * count the warm-up read in part is completed first. */
static int await_count(struct replay *r, struct stream *s, uint64_t sent, atomic_int *stop)
{
    struct replay_stream *rs = &r->streams[s->id];
    uint8_t word[PROGRESS_BYTES];
    uint64_t count = 0;
    size_t have = rs->partial_len;
    memcpy(word, rs->partial, have);
    rs->partial_len = 0;
    while (count < sent) {
        if (recv_all(s->fd, word + have, sizeof word - have, stop, 0) < 0)
            return -1;
        have = 0;
        uint64_t raw = get_u64(word);
        count = redo_count(rs, raw);
        count_arrived(r, s->id, raw, (double)get_u64(word + 8) / 1e9, now_seconds(), s->fd);
    }
    return 0;
}

/* SYNC: each slot's bytes as message-size commits (the last shorter), each released when its last
 * byte is generated and waiting for its acknowledgement; slip = how late each left. 0, or an errno. */
static int send_sync(struct stream *s, struct client_test *t, const struct schedule_stream *ss)
{
    struct replay *r = t->replay;
    uint64_t sent = 0, message = t->options->message_bytes;
    for (size_t k = 0; k < ss->count; k++) {
        uint64_t slot_end = ss->slots[k].cumulative_bytes;
        while (sent < slot_end) {
            uint64_t size = slot_end - sent < message ? slot_end - sent : message;
            double release_at = r->start + schedule_generation_of_byte(r->schedule, ss, sent + size);
            if (sleep_until_release(r, release_at, &t->stop))
                return 0;
            double sent_at = now_seconds();
            record_slip(r, sent_at - release_at);
            chunk_begins(r, s->id, size);
            trace_send(r, s->id, sent + size);
            if (stream_send_message(s, &t->payload, size, 0, &t->stop) < 0 ||
                await_count(r, s, sent + size, &t->stop) < 0)
                return errno == ECANCELED ? 0 : errno;
            sent += size;
            uint64_t latency_us = (uint64_t)((now_seconds() - sent_at) * 1e6);
            pthread_mutex_lock(&s->lock);
            hist_add(&s->latency_us, latency_us);
            samples_add(&s->interval_latency_us, latency_us);
            pthread_mutex_unlock(&s->lock);
        }
    }
    return 0;
}

void *replay_sender(void *arg)
{
    struct stream *s = arg;
    struct client_test *t = s->test;
    struct replay *r = t->replay;
    const struct schedule_stream *ss = &r->schedule->streams[s->id];
    int failure = r->sync ? send_sync(s, t, ss) : send_async(s, t, ss);
    if (failure) {
        s->error = failure;
        atomic_store(&t->stop, 1);
        replay_wake_all(r);
    }
    return NULL;
}

/* Until every byte arrived or the test stops (the wake eventfd says either at once): the counts of
 * connections whose counts carry no arrival time, read as they arrive. Once a connection's do,
 * its sender and the reports read them when awake anyway, and this thread leaves it alone; once
 * every connection's do, it sleeps until the wake with no timeout (every stop and the drain write
 * the eventfd; a wake-up a second costs the client what a release does). */
static void *progress_reader(void *arg)
{
    struct client_test *t = arg;
    struct replay *r = t->replay;
    int conns = t->options->conns;
    struct pollfd *p = calloc((size_t)conns + 1, sizeof *p);
    while (p && !atomic_load(&t->stop)) {
        int watched = 0;
        for (int i = 0; i < conns; i++) {
            int watch = !atomic_load(&r->streams[i].timestamped) && !atomic_load(&r->streams[i].closed);
            p[i] = (struct pollfd){.fd = watch ? t->streams[i].fd : -1, .events = POLLIN};
            watched += watch;
        }
        p[conns] = (struct pollfd){.fd = r->wake_fd, .events = POLLIN};
        if (poll(p, (nfds_t)conns + 1, watched ? 1000 : -1) <= 0)
            continue;
        if (p[conns].revents)
            break;
        for (int i = 0; i < conns; i++)
            if (p[i].revents)
                read_counts(r, i, p[i].fd);
    }
    free(p);
    return NULL;
}

/* The warm-up's filler: random (incompressible), sent in pieces of this size whatever the message. */
#define WARMUP_PIECE_BYTES (256 * 1024)
/* How long to wait, after the filler, for the server to count it all before starting anyway. */
#define WARMUP_DRAIN_MAX_SECONDS 10.0

/* Poll the connections (events: POLLOUT|POLLIN while filling, POLLIN for those not yet counted
 * while draining) and the stop fd until `deadline`; sends filler to the writable, reads the counts
 * of the readable. 1 when every filler byte is counted (draining), 0 at the deadline, -1 stopped,
 * or an errno > 1 when a connection failed. */
static int warmup_poll(struct client_test *t, struct pollfd *p, const uint8_t *filler, int filling, double deadline)
{
    struct replay *r = t->replay;
    int conns = t->options->conns;
    for (;;) {
        if (atomic_load(&probe_stop_requested) || atomic_load(&t->stop))
            return -1;
        int counted = 1;
        for (int i = 0; i < conns; i++) {
            struct replay_stream *rs = &r->streams[i];
            int owed = atomic_load(&rs->counted_raw) < rs->warmup_bytes;
            counted &= !owed;
            p[i] = (struct pollfd){.fd = filling || owed ? t->streams[i].fd : -1,
                                   .events = (short)(filling ? POLLOUT | POLLIN : POLLIN)};
        }
        if (!filling && counted)
            return 1;
        double left = deadline - now_seconds();
        if (left <= 0)
            return 0;
        p[conns] = (struct pollfd){.fd = probe_stop_fd(), .events = POLLIN};
        int ready = poll(p, (nfds_t)conns + 1, (int)ceil(left * 1000));
        if (ready < 0 && errno != EINTR)
            return errno;
        for (int i = 0; ready > 0 && i < conns; i++) {
            struct replay_stream *rs = &r->streams[i];
            if ((p[i].revents & (POLLIN | POLLHUP | POLLERR)) && read_counts(r, i, p[i].fd) < 0)
                return EPIPE; /* the server closed or failed */
            if (!(p[i].revents & POLLOUT))
                continue;
            ssize_t k = send(p[i].fd, filler, WARMUP_PIECE_BYTES, MSG_DONTWAIT | MSG_NOSIGNAL);
            if (k > 0)
                rs->warmup_bytes += (uint64_t)k;
            else if (k < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
                return errno;
        }
    }
}

int replay_warmup(struct client_test *t, double seconds)
{
    struct replay *r = t->replay;
    int conns = t->options->conns;
    r->warmup_seconds = seconds;
    r->warmup_drained = 1;
    if (seconds <= 0)
        return 0;
    struct pollfd *p = calloc((size_t)conns + 1, sizeof *p);
    uint8_t *filler = page_aligned(WARMUP_PIECE_BYTES);
    if (p == NULL || filler == NULL) {
        free(p);
        free(filler);
        return ENOMEM;
    }
    random_bytes(filler, WARMUP_PIECE_BYTES);
    double begin = now_seconds();
    int rc = warmup_poll(t, p, filler, 1, begin + seconds);
    double filled = now_seconds();
    if (rc == 0) /* the queued filler out, and counted: the replay's first bytes queue behind nothing */
        rc = warmup_poll(t, p, filler, 0, filled + WARMUP_DRAIN_MAX_SECONDS);
    double drained = now_seconds();
    free(p);
    free(filler);
    r->warmup_sent_seconds = filled - begin;
    r->warmup_drain_seconds = drained - filled;
    r->warmup_drained = rc == 1;
    for (int i = 0; i < conns; i++) {
        struct stream *s = &t->streams[i];
        r->warmup_bytes += r->streams[i].warmup_bytes;
        struct tcp_sample sample;
        if (tcp_sample(s->fd, &sample) == 0) { /* the client's retransmits are the replay's from here */
            r->warmup_retransmits += sample.total_retrans - s->retrans_start;
            s->retrans_start = s->retrans_reported = sample.total_retrans;
        }
    }
    return rc > 1 ? rc : 0;
}

uint64_t replay_warmup_bytes(const struct replay *r) { return r->warmup_bytes; }

int replay_start_progress(struct client_test *t)
{
    if (t->replay->sync)
        return 0; /* each sender reads its own acknowledgements */
    int on = 1;
    for (int i = 0; i < t->options->conns; i++) /* refused, or an old kernel's TCP: read as they arrive */
        setsockopt(t->streams[i].fd, SOL_SOCKET, SO_TIMESTAMPNS, &on, sizeof on);
    int rc = pthread_create(&t->replay->progress, NULL, progress_reader, t);
    if (rc != 0) {
        errno = rc;
        return -1;
    }
    t->replay->progress_running = 1;
    return 0;
}

void replay_stop_progress(struct client_test *t)
{
    if (t->replay == NULL || !t->replay->progress_running)
        return;
    atomic_store(&t->stop, 1);
    replay_wake_all(t->replay);
    pthread_join(t->replay->progress, NULL);
    t->replay->progress_running = 0;
}

void replay_snapshot(struct replay *r, const struct stream *streams, double seconds)
{
    const struct schedule *s = r->schedule;
    for (int i = 0; i < s->conns && !r->sync; i++)
        read_counts(r, i, streams[i].fd); /* the latest, however late read: they carry their moment */
    pthread_mutex_lock(&r->lock);
    r->generated = r->sent = r->received = r->backlog = 0;
    r->lag_seconds = 0;
    uint64_t generated_total = 0, received_total = 0;
    double latest = 0;
    for (int i = 0; i < s->conns; i++) {
        struct replay_stream *rs = &r->streams[i];
        uint64_t received = atomic_load(&rs->received); /* before sent: the server may count first */
        uint64_t sent = atomic_load(&streams[i].bytes), begun = sent_by(r, i, seconds);
        uint64_t generated = schedule_generated(s, &s->streams[i], seconds, 0);
        sent = sent < begun ? sent : begun;
        if (received > sent) /* the server counted bytes before send() returned to tally them: they left */
            sent = received < begun ? received : begun;
        received = received < sent ? received : sent;
        /* lag and backlog at the moment the latest count surely describes: a later count would
         * have been taken within PROGRESS_SECONDS of new bytes, left within PROGRESS_HELD_SECONDS
         * and travelled back for srtt/2, or as long as the slowest count of the last OFFSET_SECONDS did
         * (a way back held up now and then) */
        double back = rs->slowest_back_seconds > rs->srtt_seconds / 2 ? rs->slowest_back_seconds : rs->srtt_seconds / 2;
        double moment = counted_moment(seconds, back + PROGRESS_SECONDS + PROGRESS_HELD_SECONDS);
        if (moment < rs->counted_at)
            moment = rs->counted_at < seconds ? rs->counted_at : seconds;
        if (moment > latest)
            latest = moment;
        uint64_t generated_then = schedule_generated(s, &s->streams[i], moment, 1);
        rs->generated_interval = generated - rs->generated_reported;
        rs->sent_interval = sent - rs->sent_reported;
        rs->received_interval = received - rs->received_reported;
        rs->generated_reported = generated;
        rs->sent_reported = sent;
        rs->received_reported = received;
        rs->backlog = generated_then > received ? generated_then - received : 0;
        rs->lag_seconds = lag_at(r, i, moment, generated_then, received);
        rs->pending = 1;
        rs->pending_at = moment;
        rs->pending_generated = generated_then;
        rs->pending_received = received;
        generated_total += generated_then;
        received_total += received;
        r->generated += rs->generated_interval;
        r->sent += rs->sent_interval;
        r->received += rs->received_interval;
        r->backlog += rs->backlog;
        if (rs->lag_seconds > r->lag_seconds)
            r->lag_seconds = rs->lag_seconds;
    }
    r->pending = generated_total > received_total;
    r->pending_backlog = generated_total - received_total;
    r->pending_backlog_at = latest;
    r->slip_reported = r->slip_interval_max;
    r->slip_interval_max = 0;
    pthread_mutex_unlock(&r->lock);
}

void replay_start_json(const struct replay *r, struct json *j, const char *name)
{
    const struct schedule *s = r->schedule;
    json_key_str(j, "schedule", name);
    json_key_u64(j, "schedule_bytes", s->total_bytes);
    json_key_double(j, "schedule_seconds", schedule_length_seconds(s) / s->speedup);
    json_key_double(j, "schedule_recorded_seconds", schedule_length_seconds(s));
    json_key_u64(j, "slots", s->slots);
    json_key_double(j, "scale", s->scale);
    json_key_double(j, "speedup", s->speedup);
    json_key_bool(j, "compressed", s->speedup != 1);
    replay_warmup_json(r, j);
}

void replay_warmup_json(const struct replay *r, struct json *j)
{
    json_key_double(j, "warmup_seconds", r->warmup_seconds);
    json_key_double(j, "warmup_sent_seconds", r->warmup_sent_seconds);
    json_key_u64(j, "warmup_bytes", r->warmup_bytes);
    json_key_double(j, "warmup_drain_seconds", r->warmup_drain_seconds);
    json_key_bool(j, "warmup_drained", r->warmup_drained);
    json_key_u64(j, "warmup_retransmits", r->warmup_retransmits);
}

void replay_warmup_text(const struct replay *r)
{
    if (r->warmup_seconds <= 0) {
        printf("no warm-up: the connections start the replay in slow start\n");
        return;
    }
    printf("warm-up (not redo, left out of every figure): %.2f s of filler, %.2f MiB, %llu retransmits; "
           "counted by the server %.3f s later%s\n", r->warmup_sent_seconds, r->warmup_bytes / 1048576.0,
           (unsigned long long)r->warmup_retransmits, r->warmup_drain_seconds,
           r->warmup_drained ? "" : " (not all: started anyway)");
}

static void five_keys(struct json *j, uint64_t generated, uint64_t sent, uint64_t received, uint64_t backlog,
                      double lag)
{
    json_key_u64(j, "bytes_generated", generated);
    json_key_u64(j, "bytes_sent", sent);
    json_key_u64(j, "bytes_received", received);
    json_key_u64(j, "backlog_bytes", backlog);
    json_key_double(j, "lag_seconds", lag);
}

void replay_stream_json(const struct replay *r, int id, struct json *j)
{
    const struct replay_stream *rs = &r->streams[id];
    five_keys(j, rs->generated_interval, rs->sent_interval, rs->received_interval, rs->backlog, rs->lag_seconds);
}

void replay_interval_json(const struct replay *r, struct json *j)
{
    five_keys(j, r->generated, r->sent, r->received, r->backlog, r->lag_seconds);
    json_key_double(j, "lag_recorded_seconds", r->lag_seconds * r->schedule->speedup);
    if (r->sync)
        json_key_double(j, "slip_seconds_max", r->slip_reported);
}

uint64_t replay_received_bytes(const struct replay *r) { return r->received; }

void replay_interval_text(const struct replay *r)
{
    printf("  generated %.2f MiB received %.2f MiB backlog %.2f MiB lag %.3f s", r->generated / 1048576.0,
           r->received / 1048576.0, r->backlog / 1048576.0, r->lag_seconds);
    if (r->sync)
        printf(" slip max %.3f s", r->slip_reported);
}

static double slip_p99(const struct replay *r)
{
    if (r->slip_count == 0)
        return 0;
    uint64_t rank = (r->slip_count * 99 + 99) / 100, seen = 0; /* nearest rank */
    for (int b = 0; b < SLIP_BUCKETS; b++) {
        seen += r->slip_buckets[b];
        if (seen >= rank) {
            double high = (double)loglin_high(b, SLIP_SUB_BITS) / 1e6;
            return high < r->slip_max ? high : r->slip_max;
        }
    }
    return r->slip_max;
}

/* drain_seconds: from the generation of the last scheduled byte until every byte was received
 * (the moment the last count describes); -1 if never. */
static double drain_seconds(const struct replay *r)
{
    if (r->drained_at < 0)
        return -1;
    double drain = r->drained_at - r->schedule->last_generated_seconds / r->schedule->speedup;
    return drain > 0 ? drain : 0;
}

/* A report's lag and backlog are a guess (a newer count would have come by then, which a way back
 * held up belies): they enter the maxima only when no count came after the last report (a stalled
 * link at the end); any count after it sampled a later moment with what the report had, or showed
 * the receiver had more. Under the lock. */
static void commit_pending(struct replay *r)
{
    for (int i = 0; i < r->schedule->conns; i++) {
        struct replay_stream *rs = &r->streams[i];
        if (rs->pending)
            sample(r, i, rs->pending_at, rs->pending_generated, rs->pending_received, 0, 0);
        rs->pending = 0;
    }
    if (r->pending)
        note_backlog(r, r->pending_backlog, r->pending_backlog_at);
    r->pending = 0;
}

void replay_end_json(struct replay *r, struct json *j)
{
    const struct schedule *s = r->schedule;
    pthread_mutex_lock(&r->lock);
    commit_pending(r);
    json_key_u64(j, "schedule_bytes", s->total_bytes);
    uint64_t generated = 0;
    for (int i = 0; i < s->conns; i++)
        generated += r->streams[i].generated_reported;
    json_key_u64(j, "bytes_generated", generated);
    json_key_double(j, "max_lag_seconds", r->max_lag_seconds);
    json_key_double(j, "max_lag_recorded_seconds", r->max_lag_seconds * s->speedup);
    json_key_double(j, "max_lag_at_seconds", r->max_lag_at);
    json_key_u64(j, "warmup_bytes", r->warmup_bytes);
    json_key_u64(j, "max_backlog_bytes", r->max_backlog_bytes);
    json_key_double(j, "max_backlog_at_seconds", r->max_backlog_at);
    json_key_bool(j, "drained", r->drained_at >= 0);
    if (r->drained_at >= 0)
        json_key_double(j, "drain_seconds", drain_seconds(r));
    else
        json_key_null(j, "drain_seconds");
    if (r->sync) {
        json_key_double(j, "max_slip_seconds", r->slip_max);
        json_key_double(j, "slip_p99_seconds", slip_p99(r));
    }
    json_array_begin(j, "streams");
    for (int i = 0; i < s->conns; i++) {
        json_object_begin(j, NULL);
        json_key_u64(j, "id", (uint64_t)i);
        json_key_double(j, "max_lag_seconds", r->streams[i].max_lag_seconds);
        json_key_u64(j, "max_backlog_bytes", r->streams[i].max_backlog_bytes);
        json_object_end(j);
    }
    json_array_end(j);
    pthread_mutex_unlock(&r->lock);
}

void replay_end_text(struct replay *r)
{
    pthread_mutex_lock(&r->lock);
    commit_pending(r);
    printf("replay: max lag %.3f s, max backlog %.2f MiB at %.2f s, ", r->max_lag_seconds,
           r->max_backlog_bytes / 1048576.0, r->max_backlog_at);
    if (r->drained_at >= 0)
        printf("drained %.3f s after the last byte was generated", drain_seconds(r));
    else
        printf("not drained by the end");
    if (r->sync)
        printf("; slip max %.3f s, p99 %.3f s", r->slip_max, slip_p99(r));
    printf("\n");
    pthread_mutex_unlock(&r->lock);
}
