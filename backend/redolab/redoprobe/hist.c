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

int samples_add(struct samples *s, uint64_t value)
{
    if (s->len == s->cap) {
        size_t cap = s->cap ? s->cap * 2 : 256;
        uint64_t *grown = realloc(s->values, cap * sizeof *grown);
        if (grown == NULL)
            return -1;
        s->values = grown;
        s->cap = cap;
    }
    s->values[s->len++] = value;
    return 0;
}

static int compare_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

uint64_t samples_percentile(struct samples *s, double p)
{
    if (s->len == 0)
        return 0;
    qsort(s->values, s->len, sizeof *s->values, compare_u64);
    size_t rank = (size_t)ceil(p / 100.0 * (double)s->len);
    if (rank < 1)
        rank = 1;
    if (rank > s->len)
        rank = s->len;
    return s->values[rank - 1];
}

void samples_clear(struct samples *s) { s->len = 0; }

void samples_free(struct samples *s)
{
    free(s->values);
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
