/* What the kernel reports: TCP_INFO, a socket's granted buffers and congestion control, and the
 * buffer settings in /proc/sys. */
#ifndef REDOPROBE_TCPINFO_H
#define REDOPROBE_TCPINFO_H

#include <stddef.h>
#include <stdint.h>

#include "json_fwd.h"

struct tcp_sample {
    uint32_t rtt_us, rttvar_us, snd_cwnd, pmtu;
    uint32_t min_rtt_us; /* the kernel's windowed minimum (0: a kernel before 4.10) */
    uint32_t total_retrans;
};
/* TCP_INFO of a connected socket; 0, or -1 with errno. */
int tcp_sample(int fd, struct tcp_sample *sample);
/* SO_SNDBUF and SO_RCVBUF as granted (Linux doubles a request); 0 when unknown. */
void tcp_granted_buffers(int fd, uint64_t *sndbuf, uint64_t *rcvbuf);
/* The socket's congestion control into out (size >= 16); "" when unknown. */
void tcp_congestion(int fd, char *out, size_t size);
/* Kernel buffer settings from /proc/sys, into the start event under "kernel". */
void json_kernel_settings(struct json *j);

#endif
