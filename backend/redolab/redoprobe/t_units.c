#include <math.h>
#include <stdint.h>

#include "t_check.h"
#include "units.h"

int main(void)
{
    uint64_t b;
    CHECK(parse_size("1M", &b) == 0 && b == 1048576);
    CHECK(parse_size("512K", &b) == 0 && b == 524288);
    CHECK(parse_size("4MiB", &b) == 0 && b == 4194304);
    CHECK(parse_size("2GB", &b) == 0 && b == 2147483648ULL);
    CHECK(parse_size("1.5M", &b) == 0 && b == 1572864);
    CHECK(parse_size("4096", &b) == 0 && b == 4096);
    CHECK(parse_size("100B", &b) == 0 && b == 100);
    CHECK(parse_size("-1M", &b) < 0);
    CHECK(parse_size("1X", &b) < 0);
    CHECK(parse_size("1Mbit", &b) < 0);
    CHECK(parse_size("", &b) < 0);
    CHECK(parse_size("0.3", &b) < 0); /* not a whole byte */

    double r;
    CHECK(parse_rate("100M", &r) == 0 && r == 100e6);
    CHECK(parse_rate("1G", &r) == 0 && r == 1e9);
    CHECK(parse_rate("500Mbit/s", &r) == 0 && r == 500e6);
    CHECK(parse_rate("10k", &r) == 0 && r == 1e4);
    CHECK(parse_rate("1Mbps", &r) == 0 && r == 1e6);
    CHECK(parse_rate("1MB/s", &r) < 0); /* bytes are not a bit rate */
    CHECK(parse_rate("fast", &r) < 0);

    double s;
    CHECK(parse_duration("10", &s) == 0 && s == 10);
    CHECK(parse_duration("500ms", &s) == 0 && fabs(s - 0.5) < 1e-12);
    CHECK(parse_duration("2m", &s) == 0 && s == 120);
    CHECK(parse_duration("1h", &s) == 0 && s == 3600);
    CHECK(parse_duration("3 s", &s) < 0);
    CHECK(parse_duration("3d", &s) < 0);

    long n;
    CHECK(parse_int("42", 0, 100, &n) == 0 && n == 42);
    CHECK(parse_int("101", 0, 100, &n) < 0);
    CHECK(parse_int("4x", 0, 100, &n) < 0);
    return T_DONE("t_units");
}
