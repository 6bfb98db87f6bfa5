#include "stream.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/sendfile.h>
#include <sys/socket.h>
#include <unistd.h>

#include "jsonl.h"
#include "probe.h"
#include "tcpinfo.h"

void *page_aligned(size_t size)
{
    void *memory = NULL;
    return posix_memalign(&memory, 4096, size ? size : 1) == 0 ? memory : NULL;
}

int payload_init(struct payload *p, uint64_t message_bytes, int zerocopy)
{
    p->size = message_bytes < PAYLOAD_MAX_BYTES ? (size_t)message_bytes : PAYLOAD_MAX_BYTES;
    p->memfd = -1;
    p->bytes = page_aligned(p->size);
    if (p->bytes == NULL)
        return -1;
    random_bytes(p->bytes, p->size);
    if (!zerocopy)
        return 0;
    p->memfd = memfd_create("redoprobe-payload", MFD_CLOEXEC);
    if (p->memfd < 0)
        return -1;
    size_t done = 0;
    while (done < p->size) {
        ssize_t k = write(p->memfd, p->bytes + done, p->size - done);
        if (k <= 0)
            return -1;
        done += (size_t)k;
    }
    return 0;
}

void payload_free(struct payload *p)
{
    free(p->bytes);
    p->bytes = NULL;
    if (p->memfd >= 0)
        close(p->memfd);
    p->memfd = -1;
}

int stream_send_message(struct stream *s, const struct payload *p, uint64_t n, int streaming, atomic_int *stop)
{
    uint64_t done = 0;
    while (done < n) {
        size_t offset = (size_t)(done % p->size), chunk = p->size - offset;
        if (chunk > n - done)
            chunk = (size_t)(n - done);
        /* Blocking with SO_SNDTIMEO: the timeout lets the loop see a stop request. */
        ssize_t k;
        if (p->memfd >= 0) {
            off_t from = (off_t)offset;
            k = sendfile(s->fd, p->memfd, &from, chunk);
        } else {
            k = send(s->fd, p->bytes + offset, chunk, MSG_NOSIGNAL | (streaming ? MSG_MORE : 0));
        }
        if (k > 0) {
            done += (uint64_t)k;
            atomic_fetch_add_explicit(&s->bytes, (uint64_t)k, memory_order_relaxed);
        } else if (k < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
            return -1;
        }
        if (done < n && atomic_load(stop)) {
            errno = ECANCELED;
            return -1;
        }
    }
    return 0;
}

int stream_receive_all(struct stream *s, uint8_t *buf, size_t size, atomic_int *stop)
{
    for (;;) {
        ssize_t k = recv(s->fd, buf, size, 0);
        if (k == 0)
            return 0;
        if (k > 0) {
            atomic_fetch_add_explicit(&s->bytes, (uint64_t)k, memory_order_relaxed);
            continue;
        }
        if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
            return -1;
        if (atomic_load(stop)) {
            errno = ECANCELED;
            return -1;
        }
    }
}

void stream_init(struct stream *s, int id, int fd)
{
    memset(s, 0, sizeof *s);
    s->id = id;
    s->fd = fd;
    s->write_fd = -1;
    atomic_init(&s->bytes, 0);
    pthread_mutex_init(&s->lock, NULL);
    hist_init(&s->latency_us);
    struct tcp_sample sample;
    if (fd >= 0 && tcp_sample(fd, &sample) == 0)
        s->retrans_start = s->retrans_reported = sample.total_retrans;
}

void stream_free(struct stream *s)
{
    if (s->fd >= 0)
        close(s->fd);
    s->fd = -1;
    samples_free(&s->interval_latency_us);
    pthread_mutex_destroy(&s->lock);
}

uint64_t stream_interval_json(struct stream *s, struct json *j, int with_tcp_info)
{
    json_object_begin(j, NULL);
    uint64_t delta = stream_interval_fields(s, j, with_tcp_info);
    json_object_end(j);
    return delta;
}

uint64_t stream_interval_fields(struct stream *s, struct json *j, int with_tcp_info)
{
    uint64_t total = atomic_load(&s->bytes);
    uint64_t delta = total - s->bytes_reported;
    s->bytes_reported = total;
    json_key_u64(j, "id", (uint64_t)s->id);
    json_key_u64(j, "bytes", delta);
    struct tcp_sample sample;
    if (with_tcp_info && s->fd >= 0 && tcp_sample(s->fd, &sample) == 0) {
        json_key_u64(j, "rtt_us", sample.rtt_us);
        json_key_u64(j, "rttvar_us", sample.rttvar_us);
        json_key_u64(j, "snd_cwnd", sample.snd_cwnd);
        json_key_u64(j, "retransmits", sample.total_retrans - s->retrans_reported);
        json_key_u64(j, "pmtu", sample.pmtu);
        s->retrans_reported = sample.total_retrans;
    }
    return delta;
}
