/* Latency statistics: a power-of-two histogram (whole run) and exact percentiles (interval). */
#ifndef REDOPROBE_HIST_H
#define REDOPROBE_HIST_H

#include <stddef.h>
#include <stdint.h>

#define HIST_BUCKETS 40 /* bucket 0: [0,1) us; bucket k: [2^(k-1), 2^k) us */

struct histogram {
    uint64_t counts[HIST_BUCKETS];
    uint64_t count, sum_us, min_us, max_us;
};

void hist_init(struct histogram *h);
void hist_add(struct histogram *h, uint64_t value_us);
void hist_merge(struct histogram *into, const struct histogram *from);
int hist_bucket(uint64_t value_us);
/* Lower and upper (inclusive) bound of bucket k, in microseconds. */
void hist_bounds(int k, uint64_t *low_us, uint64_t *high_us);

struct json;
/* Writes "histogram": [{"from_us", "to_us", "count"}, ...] for the non-empty buckets. */
void hist_json(struct json *j, const char *key, const struct histogram *h);

/* A growable list of samples for exact per-interval percentiles. */
struct samples {
    uint64_t *values;
    size_t len, cap;
};

int samples_add(struct samples *s, uint64_t value);
/* Sorts in place; p in [0,100]; nearest-rank. Returns 0 for an empty list. */
uint64_t samples_percentile(struct samples *s, double p);
void samples_clear(struct samples *s);
void samples_free(struct samples *s);

#endif
