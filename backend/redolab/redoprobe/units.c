#include "units.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static int parse_number(const char *text, double *number, const char **rest)
{
    char *end;
    if (text == NULL || *text == '\0' || isspace((unsigned char)*text) || *text == '-' || *text == '+')
        return -1;
    errno = 0;
    *number = strtod(text, &end);
    if (end == text || errno != 0 || !isfinite(*number) || *number < 0)
        return -1;
    *rest = end;
    return 0;
}

int parse_size(const char *text, uint64_t *bytes)
{
    double number;
    const char *unit;
    if (parse_number(text, &number, &unit) < 0)
        return -1;
    double factor = 1;
    switch (toupper((unsigned char)*unit)) {
    case '\0': break;
    case 'B': if (strcmp(unit, "B") != 0) return -1; break;
    case 'K': factor = 1024.0; break;
    case 'M': factor = 1024.0 * 1024; break;
    case 'G': factor = 1024.0 * 1024 * 1024; break;
    case 'T': factor = 1024.0 * 1024 * 1024 * 1024; break;
    default: return -1;
    }
    if (*unit != '\0' && toupper((unsigned char)*unit) != 'B') {
        const char *suffix = unit + 1;
        if (!(*suffix == '\0' || strcmp(suffix, "B") == 0 || strcmp(suffix, "iB") == 0))
            return -1;
    }
    double value = number * factor;
    if (value > 18e18 || value != floor(value))
        return -1;
    *bytes = (uint64_t)value;
    return 0;
}

int parse_rate(const char *text, double *bits_per_second)
{
    double number;
    const char *unit;
    if (parse_number(text, &number, &unit) < 0)
        return -1;
    double factor = 1;
    const char *suffix = unit;
    switch (*unit) {
    case 'k': case 'K': factor = 1e3; suffix++; break;
    case 'M': factor = 1e6; suffix++; break;
    case 'G': factor = 1e9; suffix++; break;
    case 'T': factor = 1e12; suffix++; break;
    default: break;
    }
    if (!(*suffix == '\0' || strcmp(suffix, "bit/s") == 0 || strcmp(suffix, "bps") == 0 ||
          strcmp(suffix, "b/s") == 0 || strcmp(suffix, "bit") == 0))
        return -1;
    *bits_per_second = number * factor;
    return 0;
}

int parse_duration(const char *text, double *seconds)
{
    double number;
    const char *unit;
    if (parse_number(text, &number, &unit) < 0)
        return -1;
    if (*unit == '\0' || strcmp(unit, "s") == 0)
        *seconds = number;
    else if (strcmp(unit, "ms") == 0)
        *seconds = number / 1e3;
    else if (strcmp(unit, "us") == 0)
        *seconds = number / 1e6;
    else if (strcmp(unit, "m") == 0 || strcmp(unit, "min") == 0)
        *seconds = number * 60;
    else if (strcmp(unit, "h") == 0)
        *seconds = number * 3600;
    else
        return -1;
    return 0;
}

int parse_int(const char *text, long min, long max, long *value)
{
    char *end;
    if (text == NULL || *text == '\0')
        return -1;
    errno = 0;
    long number = strtol(text, &end, 10);
    if (*end != '\0' || errno != 0 || number < min || number > max)
        return -1;
    *value = number;
    return 0;
}
