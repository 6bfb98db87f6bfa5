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

/* Log-linear buckets of a value (e.g. microseconds), 2^sub_bits of them per power of two: exact below
 * 2^(sub_bits + 1), within 2^-sub_bits above; a bucket's upper bound (inclusive). A value up to 2^64 - 1
 * falls in a bucket below 2^sub_bits x (65 - sub_bits). */
int loglin_bucket(uint64_t v, int sub_bits);
uint64_t loglin_high(int bucket, int sub_bits);

/* Per-interval samples: a growable list for exact percentiles, up to `limit` values (0:
 * SAMPLES_LIMIT); past it, every value goes to a log-linear histogram instead (FINE_SUB buckets per
 * power of two: exact below 2 x FINE_SUB, within 1/FINE_SUB above), so a long --interval of fast
 * acknowledgements holds a fixed amount of memory. */
#define SAMPLES_LIMIT (1u << 20)
#define FINE_SUB_BITS 7
#define FINE_SUB (1 << FINE_SUB_BITS)
#define FINE_BUCKETS (FINE_SUB * 58)
struct samples {
    uint64_t *values;
    size_t len, cap, limit;
    uint64_t *fine; /* NULL while exact */
    uint64_t fine_count, min, max;
};

/* 0, or -1 when memory ran out (the value is lost). */
int samples_add(struct samples *s, uint64_t value);
/* Adds every value of `from` (its histogram's values as their buckets). */
int samples_merge(struct samples *into, const struct samples *from);
size_t samples_count(const struct samples *s);
/* 1 while every value is kept (percentiles exact). */
int samples_exact(const struct samples *s);
/* Sorts in place; p in [0,100]; nearest-rank (past the limit the rank's bucket's upper bound, within
 * [min, max]; 0 and 100 stay exact). Returns 0 for an empty list. */
uint64_t samples_percentile(struct samples *s, double p);
void samples_clear(struct samples *s);
void samples_free(struct samples *s);

#endif
