#include "hist.h"

#include "jsonl.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

void hist_init(struct histogram *h)
{
    memset(h, 0, sizeof *h);
    h->min_us = UINT64_MAX;
}

int hist_bucket(uint64_t value_us)
{
    int k = 0;
    while (value_us > 0 && k < HIST_BUCKETS - 1) {
        value_us >>= 1;
        k++;
    }
    return k;
}

void hist_bounds(int k, uint64_t *low_us, uint64_t *high_us)
{
    *low_us = k == 0 ? 0 : (uint64_t)1 << (k - 1);
    *high_us = k == 0 ? 0 : ((uint64_t)1 << k) - 1;
}

void hist_add(struct histogram *h, uint64_t value_us)
{
    h->counts[hist_bucket(value_us)]++;
    h->count++;
    h->sum_us += value_us;
    if (value_us < h->min_us)
        h->min_us = value_us;
    if (value_us > h->max_us)
        h->max_us = value_us;
}

void hist_merge(struct histogram *into, const struct histogram *from)
{
    for (int k = 0; k < HIST_BUCKETS; k++)
        into->counts[k] += from->counts[k];
    into->count += from->count;
    into->sum_us += from->sum_us;
    if (from->min_us < into->min_us)
        into->min_us = from->min_us;
    if (from->max_us > into->max_us)
        into->max_us = from->max_us;
}

int loglin_bucket(uint64_t v, int sub_bits)
{
    uint64_t sub = 1ULL << sub_bits;
    if (v < 2 * sub)
        return (int)v;
    int shift = 63 - __builtin_clzll(v) - sub_bits; /* v >> shift in [sub, 2 x sub) */
    return shift * (int)sub + (int)(v >> shift);
}

uint64_t loglin_high(int bucket, int sub_bits)
{
    int sub = 1 << sub_bits;
    if (bucket < 2 * sub)
        return (uint64_t)bucket;
    int shift = bucket / sub - 1;
    uint64_t mantissa = (uint64_t)(bucket - shift * sub);
    return ((mantissa + 1) << shift) - 1;
}

static void fine_add(struct samples *s, uint64_t value, uint64_t count)
{
    s->fine[loglin_bucket(value, FINE_SUB_BITS)] += count;
    s->fine_count += count;
}

/* Past the limit: every value kept so far moves into the histogram. */
static int go_fine(struct samples *s)
{
    s->fine = calloc(FINE_BUCKETS, sizeof *s->fine);
    if (s->fine == NULL)
        return -1;
    for (size_t k = 0; k < s->len; k++)
        fine_add(s, s->values[k], 1);
    s->len = 0;
    return 0;
}

int samples_add(struct samples *s, uint64_t value)
{
    if (samples_count(s) == 0 || value < s->min)
        s->min = value;
    if (samples_count(s) == 0 || value > s->max)
        s->max = value;
    size_t limit = s->limit ? s->limit : SAMPLES_LIMIT;
    if (s->fine == NULL && s->len >= limit && go_fine(s) < 0)
        return -1;
    if (s->fine != NULL) {
        fine_add(s, value, 1);
        return 0;
    }
    if (s->len == s->cap) {
        size_t cap = s->cap ? s->cap * 2 : 256;
        cap = cap < limit ? cap : limit;
        uint64_t *grown = realloc(s->values, cap * sizeof *grown);
        if (grown == NULL)
            return -1;
        s->values = grown;
        s->cap = cap;
    }
    s->values[s->len++] = value;
    return 0;
}

int samples_merge(struct samples *into, const struct samples *from)
{
    for (size_t k = 0; k < from->len; k++)
        if (samples_add(into, from->values[k]) < 0)
            return -1;
    if (from->fine == NULL || from->fine_count == 0)
        return 0;
    if (into->fine == NULL && go_fine(into) < 0)
        return -1;
    if (samples_count(into) == 0 || from->min < into->min)
        into->min = from->min;
    if (samples_count(into) == 0 || from->max > into->max)
        into->max = from->max;
    for (int b = 0; b < FINE_BUCKETS; b++)
        into->fine[b] += from->fine[b];
    into->fine_count += from->fine_count;
    return 0;
}

size_t samples_count(const struct samples *s) { return s->len + (size_t)s->fine_count; }

int samples_exact(const struct samples *s) { return s->fine == NULL || s->fine_count == 0; }

static int compare_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

uint64_t samples_percentile(struct samples *s, double p)
{
    size_t count = samples_count(s);
    if (count == 0)
        return 0;
    size_t rank = (size_t)ceil(p / 100.0 * (double)count);
    if (rank < 1)
        rank = 1;
    if (rank > count)
        rank = count;
    if (s->fine == NULL) {
        qsort(s->values, s->len, sizeof *s->values, compare_u64);
        return s->values[rank - 1];
    }
    if (rank == 1)
        return s->min;
    if (rank == count)
        return s->max;
    uint64_t seen = 0;
    for (int b = 0; b < FINE_BUCKETS; b++) {
        seen += s->fine[b];
        if (seen >= rank) {
            uint64_t high = loglin_high(b, FINE_SUB_BITS);
            return high < s->min ? s->min : (high > s->max ? s->max : high);
        }
    }
    return s->max;
}

void samples_clear(struct samples *s)
{
    s->len = 0;
    s->fine_count = 0;
    free(s->fine); /* exact again for the next interval */
    s->fine = NULL;
}

void samples_free(struct samples *s)
{
    free(s->values);
    free(s->fine);
    memset(s, 0, sizeof *s);
}

void hist_json(struct json *j, const char *key, const struct histogram *h)
{
    json_array_begin(j, key);
    for (int k = 0; k < HIST_BUCKETS; k++) {
        if (!h->counts[k])
            continue;
        uint64_t low, high;
        hist_bounds(k, &low, &high);
        json_object_begin(j, NULL);
        json_key_u64(j, "from_us", low);
        json_key_u64(j, "to_us", high);
        json_key_u64(j, "count", h->counts[k]);
        json_object_end(j);
    }
    json_array_end(j);
}
