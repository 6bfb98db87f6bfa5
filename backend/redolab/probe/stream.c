#include "stream.h"

#include <string.h>
#include <unistd.h>

#include "jsonl.h"

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
    uint64_t total = atomic_load(&s->bytes);
    uint64_t delta = total - s->bytes_reported;
    s->bytes_reported = total;
    json_object_begin(j, NULL);
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
    json_object_end(j);
    return delta;
}
