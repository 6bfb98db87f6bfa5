#include "net.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#include "jsonl.h"

void put_u32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)(v >> 24); p[1] = (uint8_t)(v >> 16); p[2] = (uint8_t)(v >> 8); p[3] = (uint8_t)v;
}

uint32_t get_u32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

void put_u64(uint8_t *p, uint64_t v)
{
    put_u32(p, (uint32_t)(v >> 32));
    put_u32(p + 4, (uint32_t)v);
}

uint64_t get_u64(const uint8_t *p) { return (uint64_t)get_u32(p) << 32 | get_u32(p + 4); }

static void put_u16(uint8_t *p, uint16_t v) { p[0] = (uint8_t)(v >> 8); p[1] = (uint8_t)v; }
static uint16_t get_u16(const uint8_t *p) { return (uint16_t)(p[0] << 8 | p[1]); }

void encode_hello(const struct hello *h, uint8_t out[HELLO_BYTES])
{
    memset(out, 0, HELLO_BYTES);
    memcpy(out, MAGIC_HELLO, 4);
    put_u16(out + 4, h->protocol);
    out[6] = h->mode;
    out[7] = h->flags;
    put_u16(out + 8, h->conns);
    put_u32(out + 12, h->message_bytes);
    put_u64(out + 16, h->sockbuf_bytes);
    put_u64(out + 24, h->duration_ms);
}

int decode_hello(const uint8_t in[HELLO_BYTES], struct hello *h)
{
    if (memcmp(in, MAGIC_HELLO, 4) != 0)
        return -1;
    h->protocol = get_u16(in + 4);
    h->mode = in[6];
    h->flags = in[7];
    h->conns = get_u16(in + 8);
    h->message_bytes = get_u32(in + 12);
    h->sockbuf_bytes = get_u64(in + 16);
    h->duration_ms = get_u64(in + 24);
    return 0;
}

void encode_ack(const struct ack *a, uint8_t out[ACK_BYTES])
{
    memset(out, 0, ACK_BYTES);
    memcpy(out, MAGIC_HELLO, 4);
    put_u16(out + 4, a->protocol);
    put_u16(out + 6, a->status);
    memcpy(out + 8, a->cookie, COOKIE_BYTES);
    put_u32(out + 24, a->rcvbuf_bytes);
    put_u32(out + 28, a->sndbuf_bytes);
}

int decode_ack(const uint8_t in[ACK_BYTES], struct ack *a)
{
    if (memcmp(in, MAGIC_HELLO, 4) != 0)
        return -1;
    a->protocol = get_u16(in + 4);
    a->status = get_u16(in + 6);
    memcpy(a->cookie, in + 8, COOKIE_BYTES);
    a->rcvbuf_bytes = get_u32(in + 24);
    a->sndbuf_bytes = get_u32(in + 28);
    return 0;
}

void encode_result(const struct result *r, uint8_t out[RESULT_BYTES])
{
    memcpy(out, MAGIC_RESULT, 4);
    put_u64(out + 4, r->bytes_received);
    put_u64(out + 12, r->write_us);
    put_u64(out + 20, r->cpu_user_us);
    put_u64(out + 28, r->cpu_system_us);
    put_u32(out + 36, r->streams);
    put_u32(out + 40, r->flags);
}

int decode_result(const uint8_t in[RESULT_BYTES], struct result *r)
{
    if (memcmp(in, MAGIC_RESULT, 4) != 0)
        return -1;
    r->bytes_received = get_u64(in + 4);
    r->write_us = get_u64(in + 12);
    r->cpu_user_us = get_u64(in + 20);
    r->cpu_system_us = get_u64(in + 28);
    r->streams = get_u32(in + 36);
    r->flags = get_u32(in + 40);
    return 0;
}

int net_set_sockbuf(int fd, uint64_t bytes)
{
    if (bytes == 0)
        return 0;
    int value = bytes > 0x7fffffff ? 0x7fffffff : (int)bytes;
    if (setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &value, sizeof value) < 0)
        return -1;
    return setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &value, sizeof value);
}

int net_blocking_with_timeout(int fd, int timeout_ms)
{
    int flags = fcntl(fd, F_GETFL);
    if (flags < 0 || fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) < 0)
        return -1;
    struct timeval tv = {.tv_sec = timeout_ms / 1000, .tv_usec = (timeout_ms % 1000) * 1000};
    if (setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv) < 0)
        return -1;
    return setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
}

void net_granted_buffers(int fd, uint64_t *sndbuf, uint64_t *rcvbuf)
{
    int value = 0;
    socklen_t len = sizeof value;
    *sndbuf = getsockopt(fd, SOL_SOCKET, SO_SNDBUF, &value, &len) == 0 ? (uint64_t)value : 0;
    len = sizeof value;
    *rcvbuf = getsockopt(fd, SOL_SOCKET, SO_RCVBUF, &value, &len) == 0 ? (uint64_t)value : 0;
}

static int wait_fd(int fd, short events, int timeout_ms)
{
    struct pollfd p = {.fd = fd, .events = events};
    for (;;) {
        int n = poll(&p, 1, timeout_ms);
        if (n < 0 && errno == EINTR)
            continue;
        return n;
    }
}

#ifndef SO_MAX_PACING_RATE
#define SO_MAX_PACING_RATE 47
#endif

/* Apply the options that must precede connect(); 0, or -1 with errno. */
static int apply_connect_options(int fd, int family, const struct connect_options *co)
{
    if (co == NULL)
        return 0;
    if (co->congestion && setsockopt(fd, IPPROTO_TCP, TCP_CONGESTION, co->congestion, strlen(co->congestion)) < 0)
        return -1;
    if (co->fq_rate_bits_per_second > 0) {
        uint64_t rate = (uint64_t)(co->fq_rate_bits_per_second / 8);
        if (setsockopt(fd, SOL_SOCKET, SO_MAX_PACING_RATE, &rate, sizeof rate) < 0) {
            uint32_t narrow = rate > UINT32_MAX ? UINT32_MAX : (uint32_t)rate; /* kernels before 4.20 */
            if (setsockopt(fd, SOL_SOCKET, SO_MAX_PACING_RATE, &narrow, sizeof narrow) < 0)
                return -1;
        }
    }
    if (co->bind || co->local_port) {
        struct addrinfo hints = {.ai_family = family, .ai_socktype = SOCK_STREAM, .ai_flags = AI_PASSIVE}, *local;
        char service[16];
        snprintf(service, sizeof service, "%d", co->local_port);
        if (getaddrinfo(co->bind, service, &hints, &local) != 0) {
            errno = EADDRNOTAVAIL;
            return -1;
        }
        int one = 1;
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
        int rc = bind(fd, local->ai_addr, local->ai_addrlen);
        freeaddrinfo(local);
        if (rc < 0)
            return -1;
    }
    return 0;
}

void net_congestion(int fd, char *out, size_t size)
{
    socklen_t len = (socklen_t)(size - 1);
    memset(out, 0, size);
    if (getsockopt(fd, IPPROTO_TCP, TCP_CONGESTION, out, &len) < 0)
        out[0] = 0;
}

int net_connect(const char *host, int port, double timeout_seconds, uint64_t sockbuf_bytes,
                const struct connect_options *co, enum probe_error *error)
{
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM}, *list = NULL;
    char service[16];
    snprintf(service, sizeof service, "%d", port);
    int rc = getaddrinfo(host, service, &hints, &list);
    if (rc != 0) {
        *error = PE_RESOLVE;
        errno = EHOSTUNREACH;
        return -1;
    }
    int fd = -1, saved = ECONNREFUSED;
    enum probe_error failed = PE_CONNECT;
    for (struct addrinfo *ai = list; ai != NULL; ai = ai->ai_next) {
        fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, ai->ai_protocol);
        if (fd < 0)
            continue;
        int one = 1;
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        if (net_set_sockbuf(fd, sockbuf_bytes) < 0 || apply_connect_options(fd, ai->ai_family, co) < 0) {
            saved = errno;
            failed = PE_USAGE;
            close(fd);
            fd = -1;
            continue;
        }
        if (connect(fd, ai->ai_addr, ai->ai_addrlen) == 0)
            break;
        if (errno == EINPROGRESS) {
            int ready = wait_fd(fd, POLLOUT, (int)(timeout_seconds * 1000));
            int soerr = 0;
            socklen_t len = sizeof soerr;
            if (ready == 1 && getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &len) == 0 && soerr == 0)
                break;
            saved = ready == 0 ? ETIMEDOUT : (soerr ? soerr : errno);
        } else {
            saved = errno;
        }
        failed = saved == ETIMEDOUT ? PE_TIMEOUT : PE_CONNECT;
        close(fd);
        fd = -1;
    }
    freeaddrinfo(list);
    if (fd < 0) {
        *error = failed;
        errno = saved;
    }
    return fd;
}

int net_listen(const char *bind_address, int port, int *bound_port, enum probe_error *error)
{
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM, .ai_flags = AI_PASSIVE},
                    *list = NULL;
    char service[16];
    snprintf(service, sizeof service, "%d", port);
    if (getaddrinfo(bind_address, service, &hints, &list) != 0) {
        *error = PE_RESOLVE;
        return -1;
    }
    int fd = -1;
    for (struct addrinfo *ai = list; ai != NULL; ai = ai->ai_next) {
        fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, ai->ai_protocol);
        if (fd < 0)
            continue;
        int one = 1;
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
        if (bind(fd, ai->ai_addr, ai->ai_addrlen) == 0 && listen(fd, 128) == 0)
            break;
        close(fd);
        fd = -1;
    }
    freeaddrinfo(list);
    if (fd < 0) {
        *error = PE_LISTEN;
        return -1;
    }
    struct sockaddr_storage address;
    socklen_t len = sizeof address;
    getsockname(fd, (struct sockaddr *)&address, &len);
    *bound_port = ntohs(address.ss_family == AF_INET6 ? ((struct sockaddr_in6 *)&address)->sin6_port
                                                     : ((struct sockaddr_in *)&address)->sin_port);
    return fd;
}

/* Poll in slices so a stop request is seen within 100 ms even when the peer is silent. */
static int transfer_all(int fd, void *buf, size_t n, atomic_int *stop, double timeout_seconds, int sending)
{
    size_t done = 0;
    double idle = 0;
    while (done < n) {
        ssize_t k = sending ? send(fd, (char *)buf + done, n - done, MSG_NOSIGNAL | MSG_DONTWAIT)
                            : recv(fd, (char *)buf + done, n - done, MSG_DONTWAIT);
        if (k > 0) {
            done += (size_t)k;
            idle = 0;
            continue;
        }
        if (k == 0 && !sending) {
            errno = EPIPE;
            return -1;
        }
        if (k < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
            return -1;
        if (stop != NULL && atomic_load(stop)) {
            errno = ECANCELED;
            return -1;
        }
        int ready = wait_fd(fd, sending ? POLLOUT : POLLIN, 100);
        if (ready == 0) {
            idle += 0.1;
            if (timeout_seconds > 0 && idle >= timeout_seconds) {
                errno = ETIMEDOUT;
                return -1;
            }
        }
    }
    return 0;
}

int send_all(int fd, const void *buf, size_t n, atomic_int *stop, double timeout_seconds)
{
    return transfer_all(fd, (void *)buf, n, stop, timeout_seconds, 1);
}

int recv_all(int fd, void *buf, size_t n, atomic_int *stop, double timeout_seconds)
{
    return transfer_all(fd, buf, n, stop, timeout_seconds, 0);
}


int tcp_sample(int fd, struct tcp_sample *sample)
{
    struct tcp_info info;
    socklen_t len = sizeof info;
    memset(&info, 0, sizeof info);
    if (getsockopt(fd, IPPROTO_TCP, TCP_INFO, &info, &len) < 0)
        return -1;
    sample->rtt_us = info.tcpi_rtt;
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
