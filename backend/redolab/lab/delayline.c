/*
 * redolab-delayline: the WAN between the lab's primary and standby hosts.
 *
 * It owns one TUN device per lab host (IFF_TUN, no packet information). An IPv4 packet read from
 * a primary host's device goes to the standby device that owns its destination address, and the
 * other way round, through one "link" per direction:
 *
 *   tail drop when the bottleneck queue is full (--queue bytes waiting for the link),
 *   random loss (--loss-ppm, per packet),
 *   serialisation at --rate-bps (0: no limit), the link shared by every node pair and every
 *   destination (the primary's uplink),
 *   then held for half the path's RTT, plus or minus half the jitter (at most the path's RTT).
 *
 * A path's RTT is its standby-side device's: the one given with its --dev (an extra destination,
 * far or near), else the parameters' rtt_us. Each such device has a path of its own, with one ring
 * per direction; the other standby-side devices share path 0 (they share its RTT). Delivery keeps
 * each path's order (a packet never overtakes the one before it on its path), as netem does when
 * it also shapes, and a packet on a 2 ms path never waits behind one on a 40 ms path. Packets
 * between two hosts on the same side are delivered at once.
 *
 * SIGHUP re-reads --params FILE ("rtt_us jitter_us loss_ppm rate_bps queue_bytes", one line), so
 * `redolab lab set` changes a running lab. Counters go to --stats FILE once a second: per direction
 * the packets forwarded, random losses, tail drops of the bottleneck queue (queue_drops: the only
 * drops a sender under the rate never causes), ring-full drops, and how late the line itself
 * delivered (late_packets: more than 1 ms after due; max_late_us), so a run can tell the WAN's
 * drops and delay from the delay line's own.
 * SIGTERM or SIGINT ends it; the TUN devices disappear with it.
 *
 *   redolab-delayline --params FILE --stats FILE --dev NAME:P:10.77.0.11 --dev NAME:S:10.77.0.41
 *                     --dev NAME:S:10.77.0.71:40000        (RTT_US: this device's own RTT, 0 to 2 s)
 *
 * Prints "ready" on stdout once every device exists. C11 + Linux, no other dependencies.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/if.h>
#include <linux/if_tun.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

#define MAX_DEVICES 32
#define MAX_PATHS 9 /* path 0 (the parameters' RTT) and up to 8 devices with an RTT of their own */
#define MAX_RTT_US 2000000ULL
#define MAX_PACKET 65536
#define RING_BYTES (128u << 20) /* per path and direction: 1 Gbit/s x 10 ms is 1.2 MiB, so ample */
#define READ_BATCH 64
#define LATE_NS 1000000ULL /* a delivery this much after its due time counts as late */

struct device {
    char name[IFNAMSIZ];
    int side; /* 0 primary, 1 standby */
    uint32_t address; /* network order */
    int fd;
    int path; /* standby side: 0 (the parameters' RTT) or its own path */
    uint64_t rtt_ns; /* its own RTT, when path > 0 */
};

struct params {
    uint64_t rtt_ns, jitter_ns, loss_ppm, rate_bps, queue_bytes;
};

/* A packet waiting in a direction's ring: header, then the packet, padded to 8 bytes. */
struct record {
    uint64_t due_ns;
    uint32_t length; /* 0 marks "wrap to the start of the ring" */
    int32_t device;
};

/* The packets of one path in one direction, due in the order they came. */
struct ring {
    unsigned char *bytes;
    size_t head, tail, used; /* byte offsets; used counts padding and wrap gaps too */
    uint64_t last_due_ns;
};

/* One direction: the bottleneck (shared by every path) and its counters, a ring per path. */
struct link {
    struct ring rings[MAX_PATHS];
    uint64_t link_free_ns; /* when the bottleneck finishes sending what it holds */
    uint64_t forwarded, bytes, lost, queue_drops, full_drops;
    uint64_t late_packets, max_late_ns; /* written more than LATE_NS after due: the line's own error */
};

static struct device devices[MAX_DEVICES];
static int device_count, path_count = 1;
static struct params params;
static struct link links[2];
static uint64_t unroutable, write_errors;
static volatile sig_atomic_t reload_requested, stop_requested;
static const char *params_path, *stats_path;
static uint64_t rng_state = 0x9e3779b97f4a7c15ULL;

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static uint64_t next_random(void) /* xorshift64*: loss and jitter need speed, not secrecy */
{
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return rng_state * 2685821657736338717ULL;
}

static void on_signal(int number)
{
    if (number == SIGHUP)
        reload_requested = 1;
    else
        stop_requested = 1;
}

static int read_params(const char *path, struct params *out)
{
    FILE *file = fopen(path, "r");
    if (!file) {
        fprintf(stderr, "delayline: cannot open %s: %s\n", path, strerror(errno));
        return -1;
    }
    unsigned long long rtt_us, jitter_us, loss_ppm, rate_bps, queue_bytes;
    int got = fscanf(file, "%llu %llu %llu %llu %llu", &rtt_us, &jitter_us, &loss_ppm, &rate_bps, &queue_bytes);
    fclose(file);
    if (got != 5 || loss_ppm > 1000000 || jitter_us > rtt_us) {
        fprintf(stderr, "delayline: %s: expected 'rtt_us jitter_us loss_ppm rate_bps queue_bytes' "
                        "with loss_ppm <= 1000000 and jitter_us <= rtt_us\n", path);
        return -1;
    }
    out->rtt_ns = rtt_us * 1000ULL;
    out->jitter_ns = jitter_us * 1000ULL;
    out->loss_ppm = loss_ppm;
    out->rate_bps = rate_bps;
    out->queue_bytes = queue_bytes;
    return 0;
}

static void write_stats(void)
{
    char temporary[4096];
    snprintf(temporary, sizeof temporary, "%s.tmp", stats_path);
    FILE *file = fopen(temporary, "w");
    if (!file)
        return;
    fprintf(file, "{\"rtt_us\":%llu,\"jitter_us\":%llu,\"loss_ppm\":%llu,\"rate_bps\":%llu,\"queue_bytes\":%llu,",
            (unsigned long long)(params.rtt_ns / 1000), (unsigned long long)(params.jitter_ns / 1000),
            (unsigned long long)params.loss_ppm, (unsigned long long)params.rate_bps,
            (unsigned long long)params.queue_bytes);
    fprintf(file, "\"unroutable\":%llu,\"write_errors\":%llu,\"directions\":{", (unsigned long long)unroutable,
            (unsigned long long)write_errors);
    for (int d = 0; d < 2; d++) {
        struct link *l = &links[d];
        size_t held = 0;
        for (int p = 0; p < path_count; p++)
            held += l->rings[p].used;
        fprintf(file,
                "%s\"%s\":{\"packets\":%llu,\"bytes\":%llu,\"lost\":%llu,\"queue_drops\":%llu,"
                "\"ring_full_drops\":%llu,\"held_bytes\":%llu,\"late_packets\":%llu,\"max_late_us\":%llu}",
                d ? "," : "", d ? "standby_to_primary" : "primary_to_standby", (unsigned long long)l->forwarded,
                (unsigned long long)l->bytes, (unsigned long long)l->lost, (unsigned long long)l->queue_drops,
                (unsigned long long)l->full_drops, (unsigned long long)held, (unsigned long long)l->late_packets,
                (unsigned long long)(l->max_late_ns / 1000));
    }
    fprintf(file, "}}\n");
    fclose(file);
    rename(temporary, stats_path);
}

static int open_tun(struct device *device)
{
    int fd = open("/dev/net/tun", O_RDWR | O_CLOEXEC);
    if (fd < 0) {
        fprintf(stderr, "delayline: cannot open /dev/net/tun: %s\n", strerror(errno));
        return -1;
    }
    struct ifreq request;
    memset(&request, 0, sizeof request);
    request.ifr_flags = IFF_TUN | IFF_NO_PI;
    memcpy(request.ifr_name, device->name, IFNAMSIZ - 1);
    if (ioctl(fd, TUNSETIFF, &request) < 0) {
        fprintf(stderr, "delayline: cannot create TUN device %s: %s\n", device->name, strerror(errno));
        close(fd);
        return -1;
    }
    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
    device->fd = fd;
    return 0;
}

/* A standby-side device's own RTT (microseconds, 0 to 2 s): a path of its own. */
static int parse_path_rtt(const char *text, const char *rtt_text, struct device *device)
{
    char *end;
    errno = 0;
    unsigned long long rtt_us = strtoull(rtt_text, &end, 10);
    if (!device->side || *rtt_text < '0' || *rtt_text > '9' || *end || errno || rtt_us > MAX_RTT_US) {
        fprintf(stderr, "delayline: --dev '%s': RTT_US is 0 to %llu microseconds, on a standby-side (S) device\n",
                text, MAX_RTT_US);
        return -1;
    }
    if (path_count == MAX_PATHS) {
        fprintf(stderr, "delayline: at most %d devices with an RTT of their own\n", MAX_PATHS - 1);
        return -1;
    }
    device->path = path_count++;
    device->rtt_ns = rtt_us * 1000ULL;
    return 0;
}

static int parse_device(const char *text)
{
    if (device_count == MAX_DEVICES) {
        fprintf(stderr, "delayline: at most %d devices\n", MAX_DEVICES);
        return -1;
    }
    struct device *device = &devices[device_count];
    const char *first = strchr(text, ':');
    const char *second = first ? strchr(first + 1, ':') : NULL;
    const char *third = second ? strchr(second + 1, ':') : NULL;
    char address[INET_ADDRSTRLEN];
    size_t address_length = second ? (third ? (size_t)(third - second - 1) : strlen(second + 1)) : 0;
    if (!first || !second || first == text || (size_t)(first - text) >= IFNAMSIZ || second != first + 2 ||
        (first[1] != 'P' && first[1] != 'S') || address_length == 0 || address_length >= sizeof address) {
        fprintf(stderr, "delayline: --dev '%s': expected NAME:P|S:IPV4[:RTT_US]\n", text);
        return -1;
    }
    memcpy(address, second + 1, address_length);
    address[address_length] = '\0';
    if (inet_pton(AF_INET, address, &device->address) != 1) {
        fprintf(stderr, "delayline: --dev '%s': '%s' is not an IPv4 address\n", text, address);
        return -1;
    }
    memset(device->name, 0, sizeof device->name);
    memcpy(device->name, text, (size_t)(first - text));
    device->side = first[1] == 'S';
    device->path = 0;
    if (third && parse_path_rtt(text, third + 1, device) < 0)
        return -1;
    device_count++;
    return 0;
}

static int route(uint32_t destination)
{
    for (int i = 0; i < device_count; i++)
        if (devices[i].address == destination)
            return i;
    return -1;
}

/* Room for a record of `size` bytes at the tail, wrapping if needed; NULL when full. */
static struct record *reserve(struct ring *r, size_t size)
{
    if (r->tail >= r->head || r->used == 0) {
        if (r->used == 0)
            r->head = r->tail = 0;
        if (RING_BYTES - r->tail >= size + sizeof(struct record))
            return (struct record *)(r->bytes + r->tail);
        if (r->head > size) { /* wrap: mark the rest of the ring as a gap */
            struct record *gap = (struct record *)(r->bytes + r->tail);
            gap->length = 0;
            r->used += RING_BYTES - r->tail;
            r->tail = 0;
            return (struct record *)r->bytes;
        }
        return NULL;
    }
    return r->head - r->tail > size ? (struct record *)(r->bytes + r->tail) : NULL;
}

/* Half the path's RTT, plus or minus half the jitter (the jitter at most the path's RTT). */
static uint64_t one_way_ns(const struct device *standby)
{
    uint64_t rtt = standby->path ? standby->rtt_ns : params.rtt_ns;
    uint64_t one_way = rtt / 2;
    uint64_t spread = params.jitter_ns < rtt ? params.jitter_ns : rtt;
    if (spread)
        one_way = one_way - spread / 2 + next_random() % (spread + 1);
    return one_way;
}

static void enqueue(int from, unsigned char *packet, size_t length, uint64_t now)
{
    if (length < 20 || (packet[0] >> 4) != 4) {
        unroutable++; /* IPv6 neighbour discovery and the like: the lab is IPv4 */
        return;
    }
    uint32_t destination;
    memcpy(&destination, packet + 16, 4);
    int to = route(destination);
    if (to < 0) {
        unroutable++;
        return;
    }
    if (devices[to].side == devices[from].side) {
        if (write(devices[to].fd, packet, length) < 0)
            write_errors++;
        return;
    }
    struct link *l = &links[devices[from].side];
    const struct device *standby = devices[from].side ? &devices[from] : &devices[to];
    struct ring *r = &l->rings[standby->path];
    uint64_t start = l->link_free_ns > now ? l->link_free_ns : now;
    uint64_t serialise = params.rate_bps ? (uint64_t)length * 8ULL * 1000000000ULL / params.rate_bps : 0;
    if (params.rate_bps && params.queue_bytes &&
        (double)(start - now) * (double)params.rate_bps / 8e9 + (double)length > (double)params.queue_bytes) {
        l->queue_drops++;
        return;
    }
    if (params.loss_ppm && next_random() % 1000000ULL < params.loss_ppm) {
        l->lost++;
        return;
    }
    size_t size = (sizeof(struct record) + length + 7) & ~(size_t)7;
    struct record *record = reserve(r, size);
    if (!record) {
        l->full_drops++;
        return;
    }
    l->link_free_ns = start + serialise;
    uint64_t due = l->link_free_ns + one_way_ns(standby);
    if (due < r->last_due_ns)
        due = r->last_due_ns;
    r->last_due_ns = due;
    record->due_ns = due;
    record->length = (uint32_t)length;
    record->device = to;
    memcpy((unsigned char *)(record + 1), packet, length);
    r->tail += size;
    r->used += size;
    l->forwarded++;
    l->bytes += length;
}

/* Write every packet of one ring that is due; return the time of the next one (0 if none). */
static uint64_t deliver(struct link *l, struct ring *r, uint64_t now)
{
    while (r->used) {
        struct record *record = (struct record *)(r->bytes + r->head);
        if (record->length == 0) { /* a wrap gap */
            r->used -= RING_BYTES - r->head;
            r->head = 0;
            continue;
        }
        if (record->due_ns > now)
            return record->due_ns;
        uint64_t late = now - record->due_ns;
        if (late > l->max_late_ns)
            l->max_late_ns = late;
        if (late > LATE_NS)
            l->late_packets++;
        if (write(devices[record->device].fd, record + 1, record->length) < 0)
            write_errors++;
        size_t size = (sizeof(struct record) + record->length + 7) & ~(size_t)7;
        r->head += size;
        r->used -= size;
    }
    return 0;
}

int main(int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--params") && i + 1 < argc)
            params_path = argv[++i];
        else if (!strcmp(argv[i], "--stats") && i + 1 < argc)
            stats_path = argv[++i];
        else if (!strcmp(argv[i], "--dev") && i + 1 < argc) {
            if (parse_device(argv[++i]) < 0)
                return 2;
        } else {
            fprintf(stderr, "usage: redolab-delayline --params FILE --stats FILE --dev NAME:P|S:IPV4[:RTT_US] ...\n");
            return 2;
        }
    }
    if (!params_path || !stats_path || device_count < 2) {
        fprintf(stderr, "delayline: --params, --stats and at least two --dev are required\n");
        return 2;
    }
    if (read_params(params_path, &params) < 0)
        return 2;
    for (int d = 0; d < 2; d++)
        for (int p = 0; p < path_count; p++) { /* pages are only backed once a ring reaches them */
            struct ring *r = &links[d].rings[p];
            r->bytes = mmap(NULL, RING_BYTES, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
            if (r->bytes == MAP_FAILED) {
                fprintf(stderr, "delayline: cannot map %u bytes: %s\n", RING_BYTES, strerror(errno));
                return 1;
            }
        }
    for (int i = 0; i < device_count; i++)
        if (open_tun(&devices[i]) < 0)
            return 1;
    prctl(PR_SET_TIMERSLACK, 1UL); /* wake on time: the RTT is the product */
    rng_state ^= (uint64_t)now_ns();

    struct sigaction action;
    memset(&action, 0, sizeof action);
    action.sa_handler = on_signal;
    sigemptyset(&action.sa_mask);
    sigaction(SIGHUP, &action, NULL);
    sigaction(SIGTERM, &action, NULL);
    sigaction(SIGINT, &action, NULL);
    sigset_t blocked, during_poll;
    sigemptyset(&blocked);
    sigaddset(&blocked, SIGHUP);
    sigaddset(&blocked, SIGTERM);
    sigaddset(&blocked, SIGINT);
    sigprocmask(SIG_BLOCK, &blocked, &during_poll); /* signals arrive only inside ppoll: no lost wake-up */
    sigdelset(&during_poll, SIGHUP);
    sigdelset(&during_poll, SIGTERM);
    sigdelset(&during_poll, SIGINT);

    printf("ready\n");
    fflush(stdout);
    write_stats();

    static unsigned char packet[MAX_PACKET];
    struct pollfd polls[MAX_DEVICES];
    for (int i = 0; i < device_count; i++) {
        polls[i].fd = devices[i].fd;
        polls[i].events = POLLIN;
    }
    uint64_t next_stats = now_ns() + 1000000000ULL;
    while (!stop_requested) {
        if (reload_requested) {
            reload_requested = 0;
            struct params fresh;
            if (read_params(params_path, &fresh) == 0)
                params = fresh; /* on a bad file the running values stay */
            write_stats();
        }
        uint64_t now = now_ns();
        uint64_t next = 0;
        for (int d = 0; d < 2; d++)
            for (int p = 0; p < path_count; p++) {
                uint64_t due = deliver(&links[d], &links[d].rings[p], now);
                if (due && (!next || due < next))
                    next = due;
            }
        if (now >= next_stats) {
            write_stats();
            next_stats = now + 1000000000ULL;
        }
        uint64_t wake = next && next < next_stats ? next : next_stats;
        now = now_ns();
        uint64_t wait = wake > now ? wake - now : 0;
        struct timespec timeout = {(time_t)(wait / 1000000000ULL), (long)(wait % 1000000000ULL)};
        int ready = ppoll(polls, (nfds_t)device_count, &timeout, &during_poll);
        if (ready <= 0)
            continue;
        now = now_ns();
        for (int i = 0; i < device_count; i++) {
            if (!(polls[i].revents & POLLIN))
                continue;
            for (int n = 0; n < READ_BATCH; n++) {
                ssize_t length = read(devices[i].fd, packet, sizeof packet);
                if (length <= 0)
                    break;
                enqueue(i, packet, (size_t)length, now);
            }
        }
    }
    write_stats();
    return 0;
}
