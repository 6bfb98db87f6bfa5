#include "net.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

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

/* With wake_on_stop, a SIGINT/SIGTERM ends the wait at once (0, as a timeout would). */
static int wait_fd(int fd, short events, int timeout_ms, int wake_on_stop)
{
    struct pollfd p[2] = {{.fd = fd, .events = events}, {.fd = wake_on_stop ? probe_stop_fd() : -1, .events = POLLIN}};
    for (;;) {
        int n = poll(p, 2, timeout_ms);
        if (n < 0 && errno == EINTR)
            continue;
        return n > 0 && p[0].revents == 0 ? 0 : n;
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
            failed = PE_SOCKOPT;
            close(fd);
            fd = -1;
            continue;
        }
        if (connect(fd, ai->ai_addr, ai->ai_addrlen) == 0)
            break;
        if (errno == EINPROGRESS) {
            int ready = wait_fd(fd, POLLOUT, (int)(timeout_seconds * 1000), 0);
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

/* Poll in slices so a stop flag is seen within 100 ms even when the peer is silent (a SIGINT or
 * SIGTERM at once, when the flag is probe_stop_requested). */
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
        int ready = wait_fd(fd, sending ? POLLOUT : POLLIN, 100, stop == &probe_stop_requested);
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

double net_arrival_seconds(struct msghdr *m)
{
    for (struct cmsghdr *c = CMSG_FIRSTHDR(m); c != NULL; c = CMSG_NXTHDR(m, c)) {
        if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_TIMESTAMPNS ||
            c->cmsg_len != CMSG_LEN(sizeof(struct timespec)))
            continue;
        struct timespec at, wall;
        memcpy(&at, CMSG_DATA(c), sizeof at);
        clock_gettime(CLOCK_REALTIME, &wall);
        double now = now_seconds();
        double age = (double)(wall.tv_sec - at.tv_sec) + (double)(wall.tv_nsec - at.tv_nsec) / 1e9;
        return age > 0 ? now - age : now; /* a wall clock stepped back: now */
    }
    return -1;
}
