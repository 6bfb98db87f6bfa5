/* Parsing of sizes (1024-based), bit rates (1000-based) and durations. */
#ifndef REDOPROBE_UNITS_H
#define REDOPROBE_UNITS_H

#include <stdint.h>

/* "1M", "512K", "4MiB", "1048576" -> bytes. K/M/G/T are 1024-based (as oratcptest). */
int parse_size(const char *text, uint64_t *bytes);
/* "100M", "1G", "500Mbit/s", "10k" -> bits/s. k/M/G are 1000-based (bits). */
int parse_rate(const char *text, double *bits_per_second);
/* "10", "10s", "500ms", "2m" -> seconds. A bare number is seconds. */
int parse_duration(const char *text, double *seconds);
/* "42" -> 42 within [min, max]. */
int parse_int(const char *text, long min, long max, long *value);

#endif
