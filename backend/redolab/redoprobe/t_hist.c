#include <stdint.h>

#include "hist.h"
#include "t_check.h"

int main(void)
{
    CHECK(hist_bucket(0) == 0);
    CHECK(hist_bucket(1) == 1);
    CHECK(hist_bucket(2) == 2);
    CHECK(hist_bucket(3) == 2);
    CHECK(hist_bucket(4) == 3);
    CHECK(hist_bucket(1023) == 10);
    CHECK(hist_bucket(1024) == 11);
    CHECK(hist_bucket(UINT64_MAX) == HIST_BUCKETS - 1);
    uint64_t low, high;
    hist_bounds(11, &low, &high);
    CHECK(low == 1024 && high == 2047);
    hist_bounds(0, &low, &high);
    CHECK(low == 0 && high == 0);

    /* simhadr's example: 13 writes between 262144 and 524287 us land in one bucket */
    struct histogram h;
    hist_init(&h);
    for (int i = 0; i < 13; i++)
        hist_add(&h, 303356 + (uint64_t)i * 2000);
    CHECK(h.count == 13);
    CHECK(h.counts[hist_bucket(262144)] == 13);
    CHECK(h.min_us == 303356 && h.max_us == 303356 + 24000);

    struct histogram other;
    hist_init(&other);
    hist_add(&other, 5);
    hist_merge(&h, &other);
    CHECK(h.count == 14 && h.min_us == 5 && h.counts[3] == 1);

    struct samples s = {0};
    for (uint64_t v = 100; v >= 1; v--)
        samples_add(&s, v);
    CHECK(samples_percentile(&s, 50) == 50);
    CHECK(samples_percentile(&s, 99) == 99);
    CHECK(samples_percentile(&s, 0) == 1);
    CHECK(samples_percentile(&s, 100) == 100);
    samples_clear(&s);
    CHECK(samples_percentile(&s, 50) == 0);
    samples_free(&s);

    /* past the limit: a histogram, exact below 256, within 1/128 above; min and max exact */
    struct samples bounded = {.limit = 1000};
    for (uint64_t v = 1; v <= 100000; v++)
        samples_add(&bounded, v);
    CHECK(!samples_exact(&bounded) && samples_count(&bounded) == 100000 && bounded.cap <= 1000);
    uint64_t p50 = samples_percentile(&bounded, 50), p99 = samples_percentile(&bounded, 99);
    CHECK(p50 >= 50000 && p50 <= 50000 + 50000 / 128 + 1);
    CHECK(p99 >= 99000 && p99 <= 99000 + 99000 / 128 + 1);
    CHECK(samples_percentile(&bounded, 0) == 1 && samples_percentile(&bounded, 100) == 100000);
    struct samples merged = {0};
    samples_add(&merged, 7);
    CHECK(samples_merge(&merged, &bounded) == 0 && samples_count(&merged) == 100001 && !samples_exact(&merged));
    CHECK(samples_percentile(&merged, 0) == 1 && samples_percentile(&merged, 100) == 100000);
    samples_clear(&bounded);
    samples_add(&bounded, 200);
    CHECK(samples_exact(&bounded) && samples_percentile(&bounded, 50) == 200);
    samples_free(&bounded);
    samples_free(&merged);
    return T_DONE("t_hist");
}
