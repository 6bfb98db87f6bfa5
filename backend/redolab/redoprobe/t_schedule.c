/* The --schedule parser (schedule.c): good files as tools write them (comments, CRLF, tabs, blank
 * lines, a byte-order mark, exponents), every limit refused with its line number and what was
 * expected, --scale rounding that keeps totals, and the replay's questions (make check). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "schedule.h"
#include "t_check.h"

static char problem[600];

/* Parses `text` as a schedule named "t"; 0 or -1 as schedule_read. */
static int parse(const char *text, double scale, struct schedule *s)
{
    FILE *in = fmemopen((void *)text, strlen(text), "r");
    if (in == NULL)
        return -2;
    problem[0] = '\0';
    int rc = schedule_read(in, "t", scale, s, problem, sizeof problem);
    fclose(in);
    return rc;
}

/* The text must be refused, naming `line` and containing `words`. */
static int refused(const char *text, int line, const char *words)
{
    struct schedule s;
    char where[64];
    snprintf(where, sizeof where, "schedule t line %d:", line);
    int ok = parse(text, 1, &s) == -1 && strstr(problem, where) != NULL && strstr(problem, words) != NULL;
    if (!ok)
        fprintf(stderr, "  for %s: got '%s'\n", text, problem);
    return ok;
}

static void check_good_files(void)
{
    struct schedule s;
    const char *text = "\xEF\xBB\xBF# redo per RAC thread, as a tool wrote it\r\n"
                       "0 0 1000\r\n"
                       "\r\n"
                       "1\t0.5\t2000   # thread 2\r\n"
                       "   \t  \r\n"
                       "0 1.25 0\n"
                       "0 1.5 500 #\n"
                       "1 1e0 3000\n"
                       "# the end, no newline after the last slot\n"
                       "2 2.0 7";
    CHECK(parse(text, 1, &s) == 0);
    CHECK(s.conns == 3);
    CHECK(s.slots == 6);                  /* the zero-byte slot counts as a slot... */
    CHECK(s.streams[0].count == 2);       /* ...but releases nothing and is not stored */
    CHECK(s.total_bytes == 1000 + 2000 + 500 + 3000 + 7);
    CHECK(s.last_offset_seconds == 2.0 && s.last_data_offset_seconds == 2.0);
    CHECK(s.streams[0].slots[1].offset_seconds == 1.5 && s.streams[0].slots[1].cumulative_bytes == 1500);
    CHECK(s.streams[1].slots[1].cumulative_bytes == 5000);
    CHECK(s.timeline_count == 8 && s.timeline[7].after == (double)s.total_bytes); /* slots meeting share a point */
    /* generation is linear over each slot's width w: connection 0's offsets are 0, 1.25 (zero
     * bytes) and 1.5, its slot width 0.25 s; connection 1's 0.5 s; connection 2 has one slot: 0.1 s */
    CHECK(s.streams[0].slot_width_seconds == 0.25 && s.streams[1].slot_width_seconds == 0.5);
    CHECK(s.streams[2].slot_width_seconds == 0.1);
    CHECK(s.streams[0].slots[0].width_seconds == 0.25 && s.streams[1].slots[1].width_seconds == 0.5);
    CHECK(fabs(s.last_generated_seconds - 2.1) < 1e-12);
    CHECK(schedule_generated(&s, &s.streams[0], 0, 0) == 0);
    CHECK(schedule_generated(&s, &s.streams[0], 0, 1) == 0); /* a slot with a width starts at nothing */
    CHECK(schedule_generated(&s, &s.streams[0], 0.125, 0) == 500);
    CHECK(schedule_generated(&s, &s.streams[0], 0.25, 0) == 1000);
    CHECK(schedule_generated(&s, &s.streams[0], 1.5, 1) == 1000);
    CHECK(schedule_generated(&s, &s.streams[0], 1.625, 0) == 1250);
    CHECK(schedule_generated(&s, &s.streams[0], 9, 0) == 1500);
    CHECK(schedule_generated(&s, NULL, 1.0, 1) == 3000);  /* 1000 + connection 1's first 2000 */
    CHECK(schedule_generated(&s, NULL, 1.25, 0) == 4500); /* + half of its 3000 */
    CHECK(schedule_generated(&s, NULL, 2.05, 0) == 6503); /* + 3.5 of connection 2's 7, rounded down */
    CHECK(schedule_generated(&s, NULL, 2.1, 0) == s.total_bytes);
    CHECK(schedule_generation_of_byte(&s, &s.streams[0], 500) == 0.125);
    CHECK(schedule_generation_of_byte(&s, &s.streams[0], 1000) == 0.25);
    CHECK(fabs(schedule_generation_of_byte(&s, &s.streams[0], 1001) - 1.5005) < 1e-12);
    CHECK(schedule_generation_of_byte(&s, &s.streams[0], 1501) == -1);
    CHECK(schedule_slot_end_of_byte(&s.streams[0], 1) == 1000 && schedule_slot_end_of_byte(&s.streams[0], 1001) == 1500);
    s.speedup = 4; /* the replay clock: every time divided */
    CHECK(fabs(schedule_generation_of_byte(&s, &s.streams[1], 2001) - (0.25 + 0.125 / 3000)) < 1e-12);
    CHECK(schedule_generated(&s, &s.streams[0], 0.40625, 0) == 1250);
    CHECK(schedule_generated(&s, &s.streams[0], 0.4375, 0) == 1500);
    CHECK(schedule_generated(&s, NULL, 0.3125, 0) == 4500);
    schedule_free(&s);

    /* two slots of one connection at the same moment: the first has w = 0 (generated at once), an
     * interval ending then does not hold it; the width is the smallest positive gap, 0.05 s */
    CHECK(parse("0 1 10\n0 1 20\n0 1.05 5\n", 1, &s) == 0);
    CHECK(s.streams[0].count == 3 && s.total_bytes == 35);
    CHECK(s.streams[0].slots[0].width_seconds == 0);
    CHECK(schedule_generated(&s, &s.streams[0], 1, 0) == 0 && schedule_generated(&s, &s.streams[0], 1, 1) == 10);
    CHECK(schedule_generated(&s, NULL, 1, 0) == 0 && schedule_generated(&s, NULL, 1, 1) == 10);
    uint64_t half = schedule_generated(&s, &s.streams[0], 1.025, 0); /* 10 + 20 x 0.5, rounded down */
    CHECK(half == 19 || half == 20);
    CHECK(schedule_generation_of_byte(&s, &s.streams[0], 5) == 1.0);
    CHECK(fabs(s.last_generated_seconds - 1.1) < 1e-12);
    schedule_free(&s);

    /* a zero-byte line ends the slot before it: the last byte is generated at 0.05 s, not 0.1 s */
    CHECK(parse("0 0 1000\n0 0.05 0\n", 1, &s) == 0);
    CHECK(s.last_data_offset_seconds == 0 && s.last_offset_seconds == 0.05 && s.last_generated_seconds == 0.05);
    CHECK(schedule_generation_of_byte(&s, &s.streams[0], 1000) == 0.05);
    schedule_free(&s);
}

static void check_scale(void)
{
    struct schedule s;
    /* 3 x 1 byte x 0.5: per-slot rounding would give 0+0+0 or 1+1+1; cumulative rounding gives 2 */
    CHECK(parse("0 0 1\n0 1 1\n0 2 1\n", 0.5, &s) == 0);
    CHECK(s.total_bytes == 2);
    CHECK(s.streams[0].slots[s.streams[0].count - 1].cumulative_bytes == 2);
    schedule_free(&s);
    CHECK(parse("0 0 1000\n1 0 333\n", 2.5, &s) == 0);
    CHECK(s.total_bytes == 2500 + 833);
    schedule_free(&s);
}

static void check_limits(void)
{
    CHECK(refused("0 0 10\n0 1\n", 2, "expected CONNECTION OFFSET_SECONDS BYTES (3 fields)"));
    CHECK(refused("0 0 10 extra\n", 1, "more than 3 fields"));
    CHECK(refused("# c\nx 0 10\n", 2, "connection 'x' is not a whole number"));
    CHECK(refused("-1 0 10\n", 1, "not a whole number"));
    CHECK(refused("0 0 1\n1023 0 1\n1024 0 1\n", 3, "at most 1024 connections"));
    CHECK(refused("0 zero 10\n", 1, "is not a number of seconds"));
    CHECK(refused("0 nan 10\n", 1, "is not a number of seconds"));
    CHECK(refused("0 0x10 10\n", 1, "is not a number of seconds"));
    CHECK(refused("0 -1 10\n", 1, "is negative"));
    CHECK(refused("0 -0 10\n", 1, "offset -0 is negative"));
    CHECK(refused("0 1000.0002 5\n0 1000.0001 5\n", 2, "offset 1000.0001 for connection 0 is before its previous "
                  "slot at 1000.0002 s"));
    CHECK(refused("00000001 1 5\n0 0 5\n0 0.5 x\n", 3, "bytes 'x'")); /* 00000001 is connection 1 */
    CHECK(refused("0 86400 1\n0 86400.5 1\n", 2, "beyond 86400 s"));
    CHECK(refused("0 2 10\n1 1 10\n0 1.5 10\n", 3, "before its previous slot at 2 s (line 1)"));
    CHECK(refused("0 0 -5\n", 1, "bytes -5 is negative"));
    CHECK(refused("0 0 1.5\n", 1, "bytes '1.5' is not a whole number"));
    CHECK(refused("0 0 1e6\n", 1, "is not a whole number"));
    CHECK(refused("0 0 99999999999999999999999\n", 1, "too large"));
    /* 1 TB/s: bytes over the gap to the connection's next slot, at least 0.1 s */
    CHECK(refused("0 0 2000000000000\n0 1 1\n", 1, "expected at most 1 TB/s"));
    CHECK(refused("0 5 100000000001\n", 1, "expected at most 1 TB/s"));        /* a single slot: 0.1 s */
    CHECK(refused("0 0 1\n0 0.1 0\n0 5 100000000001\n", 3, "1 TB/s"));      /* the last: the slot width */
    /* lines at one moment count together: all but the last are generated at once */
    CHECK(refused("0 0 60000000000\n0 0 60000000000\n0 1 0\n", 1, "120000000000 bytes at this moment"));
    /* generated over the slot width (the smallest gap), not over the gap to its next line */
    CHECK(refused("0 0 1000000000000000\n0 1000 0\n0 1000.1 0\n", 1, "over 0.100 s"));
    CHECK(refused("0 0 1000\n0 86400 1000\n", 2, "generated until 172800 s"));
    CHECK(refused("0 0 200000000000\n0 0.05 1\n", 1, "1 TB/s"));              /* closer than 0.1 s */
    /* the connections' total stays under 2^62 (a wrapped total read as nothing to send: drained at once) */
    char *many = malloc(65 * 64);
    size_t at = 0;
    for (int c = 0; c < 65; c++)
        at += (size_t)sprintf(many + at, "%d 0 72057594037927936\n%d 86400 0\n", c, c); /* 2^56 over 24 h each */
    CHECK(refused(many, 129, "the schedule's total passes 2^62 bytes"));
    free(many);
    CHECK(refused("\n# only comments\n\n", 3, "no slots"));
    CHECK(refused("", 0, "no slots"));
    char *long_line = malloc(SCHEDULE_LINE_MAX_BYTES + 100);
    memset(long_line, ' ', SCHEDULE_LINE_MAX_BYTES + 50);
    memcpy(long_line, "0 0 1\n0 1 1", 11);
    long_line[SCHEDULE_LINE_MAX_BYTES + 50] = '\0';
    CHECK(refused(long_line, 2, "longer than 4096 bytes"));
    struct schedule s;
    long_line[6] = '#'; /* "0 0 1\n#..." a long comment is skipped, not refused */
    CHECK(parse(long_line, 1, &s) == 0 && s.total_bytes == 1);
    schedule_free(&s);
    free(long_line);

    /* within the limits: 1 TB/s exactly, 24 h, connection 1023 */
    CHECK(parse("0 0 1000000000000\n0 1 100000000000\n1023 86400 0\n", 1, &s) == 0);
    CHECK(s.conns == 1024);
    schedule_free(&s);
    /* the rate limit is checked after --scale */
    CHECK(parse("0 0 100000000000\n0 1 1\n", 10, &s) == 0);
    schedule_free(&s);
    CHECK(parse("0 0 100000000000\n0 1 1\n", 11, &s) == -1 && strstr(problem, "after --scale"));
}

static void check_files(void)
{
    struct schedule s;
    CHECK(schedule_load("/nonexistent/redo.txt", 1, &s, problem, sizeof problem) == -1);
    CHECK(strstr(problem, "cannot read the schedule /nonexistent/redo.txt") != NULL);
    CHECK(schedule_load("/", 1, &s, problem, sizeof problem) == -1); /* a directory */
    CHECK(strstr(problem, "cannot read the schedule /") != NULL);
}

/* The summed curve's points are in time order, one per moment: a slot's end rounded past the next
 * slot's start (0.3 + (0.9 - 0.3) > 0.9 in binary) is that start; decimal grids share their points. */
static void check_timeline_order(void)
{
    struct schedule s;
    CHECK(parse("0 0.3 100\n0 0.9 100\n0 1.5 100\n1 0.9 50\n1 1.5 50\n", 1, &s) == 0);
    int ordered = 1;
    for (size_t k = 1; k < s.timeline_count; k++)
        ordered &= s.timeline[k].seconds > s.timeline[k - 1].seconds;
    CHECK(ordered && s.timeline_count == 4); /* 0.3, 0.9, 1.5 and 2.1, each shared */
    CHECK(s.timeline[s.timeline_count - 1].after == (double)s.total_bytes);
    schedule_free(&s);
    char grid[64 * 3000];
    size_t at = 0;
    for (int k = 0; k < 3000; k++) /* offsets k / 10 written as decimals: 3,000 slots, 3,001 points */
        at += (size_t)snprintf(grid + at, sizeof grid - at, "0 %.1f 1000\n", k / 10.0);
    CHECK(parse(grid, 1, &s) == 0);
    CHECK(s.timeline_count == 3001);
    schedule_free(&s);
}

int main(void)
{
    check_timeline_order();
    check_good_files();
    check_scale();
    check_limits();
    check_files();
    return T_DONE("t_schedule");
}
