#include "tcpinfo.h"

#include <netinet/in.h>
#ifdef __GLIBC__
#include <linux/tcp.h> /* glibc's struct tcp_info stops before tcpi_min_rtt; musl's has it */
#else
#include <netinet/tcp.h>
#endif
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#include "jsonl.h"

int tcp_sample(int fd, struct tcp_sample *sample)
{
    struct tcp_info info;
    socklen_t len = sizeof info;
    memset(&info, 0, sizeof info);
    if (getsockopt(fd, IPPROTO_TCP, TCP_INFO, &info, &len) < 0)
        return -1;
    sample->rtt_us = info.tcpi_rtt;
    sample->min_rtt_us = len >= offsetof(struct tcp_info, tcpi_min_rtt) + sizeof info.tcpi_min_rtt ? info.tcpi_min_rtt : 0;
    if (sample->min_rtt_us == UINT32_MAX) /* no RTT sample yet */
        sample->min_rtt_us = 0;
    sample->rttvar_us = info.tcpi_rttvar;
    sample->snd_cwnd = info.tcpi_snd_cwnd;
    sample->pmtu = info.tcpi_pmtu;
    sample->total_retrans = info.tcpi_total_retrans;
    return 0;
}

static int read_numbers(const char *path, uint64_t *values, int max)
{
    FILE *f = fopen(path, "r");
    if (f == NULL)
        return 0;
    int n = 0;
    unsigned long long v;
    while (n < max && fscanf(f, "%llu", &v) == 1)
        values[n++] = v;
    fclose(f);
    return n;
}

static void json_sysctl(struct json *j, const char *key, const char *path, int expected)
{
    uint64_t values[3];
    int n = read_numbers(path, values, 3);
    if (n != expected) {
        json_key_null(j, key);
    } else if (expected == 1) {
        json_key_u64(j, key, values[0]);
    } else {
        json_array_begin(j, key);
        for (int i = 0; i < n; i++)
            json_u64(j, values[i]);
        json_array_end(j);
    }
}

void json_kernel_settings(struct json *j)
{
    json_object_begin(j, "kernel");
    json_sysctl(j, "tcp_rmem_bytes", "/proc/sys/net/ipv4/tcp_rmem", 3);
    json_sysctl(j, "tcp_wmem_bytes", "/proc/sys/net/ipv4/tcp_wmem", 3);
    json_sysctl(j, "rmem_max_bytes", "/proc/sys/net/core/rmem_max", 1);
    json_sysctl(j, "wmem_max_bytes", "/proc/sys/net/core/wmem_max", 1);
    json_object_end(j);
}

void tcp_granted_buffers(int fd, uint64_t *sndbuf, uint64_t *rcvbuf)
{
    int value = 0;
    socklen_t len = sizeof value;
    *sndbuf = getsockopt(fd, SOL_SOCKET, SO_SNDBUF, &value, &len) == 0 ? (uint64_t)value : 0;
    len = sizeof value;
    *rcvbuf = getsockopt(fd, SOL_SOCKET, SO_RCVBUF, &value, &len) == 0 ? (uint64_t)value : 0;
}

void tcp_congestion(int fd, char *out, size_t size)
{
    socklen_t len = (socklen_t)(size - 1);
    memset(out, 0, size);
    if (getsockopt(fd, IPPROTO_TCP, TCP_CONGESTION, out, &len) < 0)
        out[0] = 0;
}
