/* The --schedule parser: linear, one bounded line at a time, every limit named with its line. */
#include "schedule.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "probe.h"

/* What the parser remembers of each connection between its slots. */
struct connection_state {
    int seen;
    double last_offset;        /* recorded clock */
    unsigned long last_line;
    uint64_t last_bytes;       /* the last slot's bytes after scale: its rate is known at the next slot */
    uint64_t original_total;   /* before scale */
    uint64_t scaled_total;
    int last_stored;           /* the last line had bytes: its slot ends at most at this line's offset */
    double min_gap;            /* smallest positive distance between consecutive offsets; 0: none yet */
    /* the bytes of the lines at last_offset (one moment: the rate limit counts them together) and the
     * line that began them; the largest such group and its line (its rate is known once min_gap is) */
    uint64_t group_bytes, max_group_bytes;
    unsigned long group_line, max_group_line, data_line; /* data_line: the last line with bytes */
};

struct parser {
    const char *name;
    double scale;
    struct schedule *s;
    char *problem;
    size_t size;
    unsigned long line;
    int highest;
    struct connection_state conn[SCHEDULE_MAX_CONNS];
    uint64_t total; /* every connection's bytes after --scale: at most 2^62 in all */
};

static int fail(struct parser *p, unsigned long line, const char *format, ...) __attribute__((format(printf, 3, 4)));
static int fail(struct parser *p, unsigned long line, const char *format, ...)
{
    int n = snprintf(p->problem, p->size, "schedule %s line %lu: ", p->name, line);
    if (n < 0 || (size_t)n >= p->size)
        return -1;
    va_list args;
    va_start(args, format);
    vsnprintf(p->problem + n, p->size - (size_t)n, format, args);
    va_end(args);
    return -1;
}

/* One line into buf (without its newline, and of a comment only its '#'); 1 read, 0 end of file,
 * -1 too long or a NUL byte (the message is set), -2 read error (errno). Stores at most
 * SCHEDULE_LINE_MAX_BYTES characters of a line before refusing it: memory stays bounded whatever
 * the input, and a comment of any length (a header naming 1,024 threads) is skipped. */
static int read_line(struct parser *p, FILE *in, char *buf, size_t *len)
{
    size_t n = 0;
    int c, any = 0, comment = 0;
    while ((c = getc_unlocked(in)) != EOF) { /* one thread reads: no lock per character */
        any = 1;
        if (c == '\n')
            break;
        if (comment)
            continue; /* a comment is skipped, not stored: any length */
        if (c == '#')
            comment = 1;
        if (n >= SCHEDULE_LINE_MAX_BYTES)
            return fail(p, p->line + 1, "longer than %d bytes; expected CONNECTION OFFSET_SECONDS BYTES",
                        SCHEDULE_LINE_MAX_BYTES);
        if (c == '\0')
            return fail(p, p->line + 1, "contains a NUL byte; expected text");
        buf[n++] = (char)c;
    }
    if (ferror(in))
        return -2;
    if (!any)
        return 0;
    buf[n] = '\0';
    *len = n;
    p->line++;
    return 1;
}

/* Splits on blanks after removing CR, a comment and (line 1) a UTF-8 byte-order mark; the number
 * of fields found (up to 4: a fourth is already one too many). */
static int split_fields(struct parser *p, char *buf, size_t len, char *fields[4])
{
    if (len > 0 && buf[len - 1] == '\r')
        buf[--len] = '\0';
    char *comment = strchr(buf, '#');
    if (comment)
        *comment = '\0';
    char *cursor = buf;
    if (p->line == 1 && strncmp(cursor, "\xEF\xBB\xBF", 3) == 0)
        cursor += 3;
    int count = 0;
    for (char *token = strtok_r(cursor, " \t", &cursor); token && count < 4; token = strtok_r(NULL, " \t", &cursor))
        fields[count++] = token;
    return count;
}

static int all_digits(const char *text)
{
    if (*text == '\0')
        return 0;
    for (; *text; text++)
        if (*text < '0' || *text > '9')
            return 0;
    return 1;
}

static int parse_connection(struct parser *p, const char *text, int *conn)
{
    if (!all_digits(text))
        return fail(p, p->line, "connection '%s' is not a whole number; expected 0..%d", text, SCHEDULE_MAX_CONNS - 1);
    while (text[0] == '0' && text[1] != '\0') /* 0001 is connection 1 */
        text++;
    if (strlen(text) > 6 || atol(text) > SCHEDULE_MAX_CONNS - 1)
        return fail(p, p->line, "connection %s is above %d; expected 0..%d (at most %d connections)", text,
                    SCHEDULE_MAX_CONNS - 1, SCHEDULE_MAX_CONNS - 1, SCHEDULE_MAX_CONNS);
    *conn = atoi(text);
    return 0;
}

/* Decimal seconds: digits, an optional fraction and exponent (as printf and Python write them);
 * no sign but a leading '-' (named), no hex, inf or nan. */
static int parse_offset(struct parser *p, const char *text, double *offset)
{
    const char *body = text[0] == '-' ? text + 1 : text;
    int digits = 0, other = 0;
    for (const char *c = body; *c; c++) {
        if (*c >= '0' && *c <= '9')
            digits = 1;
        else if (!strchr(".eE+-", *c))
            other = 1;
    }
    char *end;
    errno = 0;
    double value = strtod(text, &end);
    int starts_well = body[0] == '.' || (body[0] >= '0' && body[0] <= '9');
    int underflow = errno == ERANGE && fabs(value) < 1; /* 1e-320: as good as 0, not a wrong number */
    if (!digits || other || !starts_well || *end != '\0' || (errno == ERANGE && !underflow) || !isfinite(value))
        return fail(p, p->line, "offset '%s' is not a number of seconds; expected decimal seconds 0..%.0f", text,
                    SCHEDULE_MAX_OFFSET_SECONDS);
    if (text[0] == '-') /* -0 too: no sign is part of the format */
        return fail(p, p->line, "offset %s is negative; expected seconds from the start, 0..%.0f", text,
                    SCHEDULE_MAX_OFFSET_SECONDS);
    if (value > SCHEDULE_MAX_OFFSET_SECONDS)
        return fail(p, p->line, "offset %s is beyond %.0f s; expected a schedule of at most 24 h", text,
                    SCHEDULE_MAX_OFFSET_SECONDS);
    *offset = value;
    return 0;
}

static int parse_bytes(struct parser *p, const char *text, uint64_t *bytes)
{
    if (text[0] == '-')
        return fail(p, p->line, "bytes %s is negative; expected a whole number of bytes >= 0", text);
    if (!all_digits(text))
        return fail(p, p->line, "bytes '%s' is not a whole number; expected a whole number of bytes >= 0", text);
    char *end;
    errno = 0;
    unsigned long long value = strtoull(text, &end, 10);
    if (errno == ERANGE || value > (1ULL << 62))
        return fail(p, p->line, "bytes %s is too large; expected at most 2^62", text);
    *bytes = value;
    return 0;
}

/* The rate of `bytes` generated from one moment over `seconds` (counted as at least 0.1 s), the group
 * of lines at that moment beginning at `line`. */
static int check_rate(struct parser *p, uint64_t bytes, unsigned long line, double seconds)
{
    if (seconds < SCHEDULE_MIN_SLOT_SECONDS)
        seconds = SCHEDULE_MIN_SLOT_SECONDS;
    double rate = (double)bytes / seconds;
    if (rate <= SCHEDULE_MAX_BYTES_PER_SECOND)
        return 0;
    return fail(p, line, "%llu bytes%s at this moment, generated over %.3f s, is %.3g bytes/s; expected at most "
                "1 TB/s (1e12 bytes/s) in a slot", (unsigned long long)bytes, p->scale != 1 ? " (after --scale)" : "",
                seconds, rate);
}

static int append_slot(struct parser *p, struct schedule_stream *stream, double offset, uint64_t cumulative)
{
    if (p->s->timeline_count >= SCHEDULE_MAX_SLOTS)
        return fail(p, p->line, "more than %u slots with bytes; expected a coarser schedule", SCHEDULE_MAX_SLOTS);
    if (stream->count == stream->capacity) {
        size_t capacity = stream->capacity ? stream->capacity * 2 : 64;
        struct schedule_slot *grown = realloc(stream->slots, capacity * sizeof *grown);
        if (grown == NULL)
            return fail(p, p->line, "out of memory for the schedule's slots");
        stream->slots = grown;
        stream->capacity = capacity;
    }
    stream->slots[stream->count++] = (struct schedule_slot){offset, INFINITY, cumulative}; /* width: finish() */
    p->s->timeline_count++; /* counted here, built by build_timeline() */
    return 0;
}

static int add_slot(struct parser *p, int conn, double offset, uint64_t bytes)
{
    struct connection_state *c = &p->conn[conn];
    if (c->seen && offset < c->last_offset)
        return fail(p, p->line, "offset %.15g for connection %d is before its previous slot at %.15g s (line %lu); "
                    "expected offsets that do not decrease per connection", offset, conn, c->last_offset, c->last_line);
    int same = c->seen && offset == c->last_offset; /* lines at one moment: one group for the rate limit */
    if (c->seen && !same && check_rate(p, c->group_bytes, c->group_line, offset - c->last_offset) < 0)
        return -1;
    struct schedule_stream *stream = &p->s->streams[conn];
    if (c->seen) {
        double gap = offset - c->last_offset;
        if (gap > 0 && (c->min_gap == 0 || gap < c->min_gap))
            c->min_gap = gap;
        if (c->last_stored) /* its generation ends by this offset at the latest */
            stream->slots[stream->count - 1].width_seconds = gap;
    }
    if (bytes > (1ULL << 62) - c->original_total)
        return fail(p, p->line, "connection %d's total passes 2^62 bytes; expected a smaller schedule", conn);
    c->original_total += bytes;
    long double scaled = (long double)c->original_total * (long double)p->scale;
    if (scaled > (long double)(1ULL << 62))
        return fail(p, p->line, "connection %d's total passes 2^62 bytes after --scale; expected a smaller scale",
                    conn);
    uint64_t scaled_total = (uint64_t)llroundl(scaled);
    c->last_bytes = scaled_total - c->scaled_total;
    if (c->last_bytes > (1ULL << 62) - p->total) /* the connections' sum: a wrapped total would read as drained */
        return fail(p, p->line, "the schedule's total passes 2^62 bytes%s; expected a smaller schedule",
                    p->scale != 1 ? " after --scale" : "");
    p->total += c->last_bytes;
    c->scaled_total = scaled_total;
    c->group_bytes = same ? c->group_bytes + c->last_bytes : c->last_bytes;
    if (!same)
        c->group_line = p->line;
    else if (check_rate(p, c->group_bytes, c->group_line, 0) < 0) /* all but its last line generated at once */
        return -1;
    if (c->group_bytes > c->max_group_bytes) {
        c->max_group_bytes = c->group_bytes;
        c->max_group_line = c->group_line;
    }
    if (c->last_bytes != 0)
        c->data_line = p->line;
    c->seen = 1;
    c->last_offset = offset;
    c->last_line = p->line;
    if (conn > p->highest)
        p->highest = conn;
    p->s->slots++;
    if (offset > p->s->last_offset_seconds)
        p->s->last_offset_seconds = offset;
    c->last_stored = c->last_bytes != 0;
    if (c->last_bytes == 0)
        return 0; /* generates nothing: not stored, but it bounds the previous slot */
    if (offset > p->s->last_data_offset_seconds)
        p->s->last_data_offset_seconds = offset;
    return append_slot(p, stream, offset, scaled_total);
}

static int parse_line(struct parser *p, char *buf, size_t len)
{
    char *fields[4];
    int count = split_fields(p, buf, len, fields);
    if (count == 0)
        return 0;
    if (count != 3)
        return fail(p, p->line, "%s fields; expected CONNECTION OFFSET_SECONDS BYTES (3 fields)",
                    count > 3 ? "more than 3" : (count == 1 ? "1" : "2"));
    int conn = 0;
    double offset = 0;
    uint64_t bytes = 0;
    if (parse_connection(p, fields[0], &conn) < 0 || parse_offset(p, fields[1], &offset) < 0 ||
        parse_bytes(p, fields[2], &bytes) < 0)
        return -1;
    return add_slot(p, conn, offset, bytes);
}

/* Where a connection is in the merge of every connection's curve changes (in time order: a slot's end is
 * at or before its connection's next slot): at slot `slot`, its start (end 0) or its end (end 1). */
struct cursor {
    size_t slot;
    int end;
};

/* The moment of a connection's next change; INFINITY when it has none. */
static double cursor_time(const struct schedule_stream *st, const struct cursor *c)
{
    if (c->slot >= st->count)
        return INFINITY;
    const struct schedule_slot *slot = &st->slots[c->slot];
    if (!c->end)
        return slot->offset_seconds;
    double end = slot->offset_seconds + slot->width_seconds;
    /* w = next - offset rounds up past next when offset < next / 2: the end is the next slot's start */
    return c->slot + 1 < st->count && end > st->slots[c->slot + 1].offset_seconds ? st->slots[c->slot + 1].offset_seconds
                                                                                 : end;
}

/* Apply a connection's next change to the curve's rate, step and active slots; move past it. A slot
 * starts (rate up) and ends (rate down), or one of zero width is generated at once (a step). */
static void cursor_take(const struct schedule_stream *st, struct cursor *c, double *rate, double *step, int *active)
{
    const struct schedule_slot *slot = &st->slots[c->slot];
    uint64_t before = c->slot ? st->slots[c->slot - 1].cumulative_bytes : 0;
    double bytes = (double)(slot->cumulative_bytes - before), w = slot->width_seconds;
    if (w <= 0) {
        *step += bytes;
        c->slot++;
    } else if (!c->end) {
        *rate += bytes / w;
        *active += 1;
        c->end = 1;
    } else {
        *rate -= bytes / w;
        *active -= 1;
        c->end = 0;
        c->slot++;
    }
}

/* A min-heap of connections by the moment of their next change. */
static void heap_down(int *heap, int n, const double *at, int k)
{
    for (;;) {
        int least = k, l = 2 * k + 1, r = l + 1;
        if (l < n && at[heap[l]] < at[heap[least]])
            least = l;
        if (r < n && at[heap[r]] < at[heap[least]])
            least = r;
        if (least == k)
            return;
        int t = heap[k];
        heap[k] = heap[least];
        heap[least] = t;
        k = least;
    }
}

/* Every connection's changes merged in time order (no copy of them: a heap of one cursor per
 * connection), summed into the piecewise linear curve; into `timeline` when given, else only counted.
 * The number of points (one per moment: slots on one grid share theirs), or -1 without memory. */
static long merge_curve(const struct schedule *s, struct schedule_point *timeline)
{
    int n = 0, *heap = malloc((size_t)s->conns * sizeof *heap);
    double *at = malloc((size_t)s->conns * sizeof *at);
    struct cursor *cursors = calloc((size_t)s->conns, sizeof *cursors);
    long points = -1;
    if (heap == NULL || at == NULL || cursors == NULL)
        goto done;
    for (int i = 0; i < s->conns; i++) {
        at[i] = cursor_time(&s->streams[i], &cursors[i]);
        if (at[i] < INFINITY)
            heap[n++] = i;
    }
    for (int k = n / 2 - 1; k >= 0; k--)
        heap_down(heap, n, at, k);
    double value = 0, rate = 0, last = 0;
    int active = 0;
    points = 0;
    while (n > 0) {
        double moment = at[heap[0]], step = 0;
        value += rate * (moment - last);
        double before = value;
        while (n > 0 && at[heap[0]] == moment) {
            int i = heap[0];
            cursor_take(&s->streams[i], &cursors[i], &rate, &step, &active);
            at[i] = cursor_time(&s->streams[i], &cursors[i]);
            if (at[i] == INFINITY)
                heap[0] = heap[--n];
            heap_down(heap, n, at, 0);
        }
        value += step;
        if (active == 0)
            rate = 0; /* no slot generating: no rounding residue either */
        if (timeline != NULL)
            timeline[points] = (struct schedule_point){moment, before, value, rate};
        points++;
        last = moment;
    }
done:
    free(heap);
    free(at);
    free(cursors);
    return points;
}

/* Each slot's w (schedule.h), then every connection's generation summed into one piecewise linear
 * curve: the summed backlog. Held for the whole replay: the slots and the curve, nothing else. */
static int build_timeline(struct schedule *s, const struct parser *p)
{
    uint64_t total = 0;
    for (int i = 0; i < s->conns; i++) {
        struct schedule_stream *st = &s->streams[i];
        st->slot_width_seconds = p->conn[i].min_gap > 0 ? p->conn[i].min_gap : SCHEDULE_MIN_SLOT_SECONDS;
        for (size_t k = 0; k < st->count; k++) {
            struct schedule_slot *slot = &st->slots[k];
            /* a gap over the slot width by a billionth is the decimal offsets' rounding (0.1 is not a
             * binary fraction): the slot lasts until the next, and the two share a timeline point */
            if (!(slot->width_seconds <= st->slot_width_seconds * (1 + 1e-9)))
                slot->width_seconds = st->slot_width_seconds;
            if (slot->offset_seconds + slot->width_seconds > s->last_generated_seconds)
                s->last_generated_seconds = slot->offset_seconds + slot->width_seconds;
        }
        total += st->count ? st->slots[st->count - 1].cumulative_bytes : 0;
        /* no room left over from the doubling */
        struct schedule_slot *fitted = st->count ? realloc(st->slots, st->count * sizeof *fitted) : NULL;
        if (fitted != NULL) {
            st->slots = fitted;
            st->capacity = st->count;
        }
    }
    long points = merge_curve(s, NULL);
    s->timeline = points < 0 ? NULL : malloc((size_t)(points ? points : 1) * sizeof *s->timeline);
    if (s->timeline == NULL || merge_curve(s, s->timeline) != points)
        return -1;
    s->timeline_count = (size_t)points;
    s->total_bytes = total;
    return 0;
}

/* Each slot is generated over at most its connection's slot width (the smallest gap): the largest
 * group of lines at one moment over that width, and the last group (no next line) over it too. The
 * earliest line at fault is named. */
static int check_final_rates(struct parser *p)
{
    unsigned long worst = 0;
    for (int i = 0; i <= p->highest; i++) {
        const struct connection_state *c = &p->conn[i];
        double width = c->min_gap > SCHEDULE_MIN_SLOT_SECONDS ? c->min_gap : SCHEDULE_MIN_SLOT_SECONDS;
        const unsigned long lines[2] = {c->group_line, c->max_group_line};
        const uint64_t bytes[2] = {c->group_bytes, c->max_group_bytes};
        for (int k = 0; k < 2 && c->seen; k++)
            if ((double)bytes[k] / width > SCHEDULE_MAX_BYTES_PER_SECOND && (worst == 0 || lines[k] < worst))
                worst = lines[k];
    }
    for (int i = 0; worst && i <= p->highest; i++) {
        const struct connection_state *c = &p->conn[i];
        double width = c->min_gap > SCHEDULE_MIN_SLOT_SECONDS ? c->min_gap : SCHEDULE_MIN_SLOT_SECONDS;
        if (c->seen && c->group_line == worst)
            return check_rate(p, c->group_bytes, worst, width);
        if (c->seen && c->max_group_line == worst)
            return check_rate(p, c->max_group_bytes, worst, width);
    }
    return 0;
}

/* Every byte generated within 24 h: a last slot lasts its connection's slot width past its offset. */
static int check_length(struct parser *p)
{
    const struct schedule *s = p->s;
    for (int i = 0; i < s->conns; i++) {
        const struct schedule_stream *st = &s->streams[i];
        if (st->count == 0)
            continue;
        const struct schedule_slot *last = &st->slots[st->count - 1];
        double until = last->offset_seconds + last->width_seconds;
        if (until > SCHEDULE_MAX_OFFSET_SECONDS + 1e-9)
            return fail(p, p->conn[i].data_line, "the slot at %.6g s is generated until %.6g s (over %.6g s, the "
                        "connection's slot width); expected every byte generated within 24 h (86400 s): end it "
                        "with a zero-byte line by 86400 s", last->offset_seconds, until, last->width_seconds);
    }
    return 0;
}

static int finish(struct parser *p)
{
    if (check_final_rates(p) < 0)
        return -1;
    if (p->s->slots == 0)
        return fail(p, p->line, "no slots in the file (%lu lines); expected lines of CONNECTION OFFSET_SECONDS "
                    "BYTES", p->line);
    p->s->conns = p->highest + 1;
    if (build_timeline(p->s, p) < 0)
        return fail(p, p->line, "out of memory for the schedule's timeline");
    return check_length(p);
}

int schedule_read(FILE *in, const char *name, double scale, struct schedule *s, char *problem, size_t size)
{
    memset(s, 0, sizeof *s);
    s->scale = scale;
    s->speedup = 1;
    struct parser *p = calloc(1, sizeof *p);
    s->streams = calloc(SCHEDULE_MAX_CONNS, sizeof *s->streams);
    char *buf = malloc(SCHEDULE_LINE_MAX_BYTES + 1);
    int status = -1;
    if (p == NULL || s->streams == NULL || buf == NULL) {
        snprintf(problem, size, "schedule %s: out of memory", name);
        goto done;
    }
    *p = (struct parser){.name = name, .scale = scale, .s = s, .problem = problem, .size = size, .highest = -1};
    size_t len = 0;
    int got;
    while ((got = read_line(p, in, buf, &len)) == 1) {
        if (parse_line(p, buf, len) < 0)
            goto done;
        if ((p->line & 4095) == 0 && atomic_load(&probe_stop_requested)) { /* a TERM while reading millions */
            snprintf(problem, size, "schedule %s: stopped (TERM or Ctrl-C) while reading it, at line %lu", name,
                     p->line);
            goto done;
        }
    }
    if (got == -2) {
        snprintf(problem, size, "cannot read the schedule %s: %s", name, strerror(errno));
        goto done;
    }
    if (got == 0)
        status = finish(p);
done:
    free(p);
    free(buf);
    if (status < 0)
        schedule_free(s);
    return status;
}

int schedule_load(const char *path, double scale, struct schedule *s, char *problem, size_t size)
{
    int from_stdin = strcmp(path, "-") == 0;
    FILE *in = from_stdin ? stdin : fopen(path, "r");
    if (in == NULL) {
        memset(s, 0, sizeof *s);
        snprintf(problem, size, "cannot read the schedule %s: %s", path, strerror(errno));
        return -1;
    }
    int status = schedule_read(in, path, scale, s, problem, size);
    if (!from_stdin)
        fclose(in);
    return status;
}

void schedule_free(struct schedule *s)
{
    for (int i = 0; s->streams && i < SCHEDULE_MAX_CONNS; i++)
        free(s->streams[i].slots);
    free(s->streams);
    free(s->timeline);
    s->streams = NULL;
    s->timeline = NULL;
    s->conns = 0;
}

double schedule_length_seconds(const struct schedule *s)
{
    return s->last_offset_seconds > s->last_generated_seconds ? s->last_offset_seconds : s->last_generated_seconds;
}

double schedule_release_seconds(const struct schedule *s, const struct schedule_slot *slot)
{
    return slot->offset_seconds / s->speedup;
}

/* The summed curve at `seconds` (replay clock), rounded down and never above the total. */
static uint64_t timeline_generated(const struct schedule *s, double seconds, int inclusive)
{
    size_t low = 0, high = s->timeline_count; /* the first point after `seconds` */
    while (low < high) {
        size_t middle = low + (high - low) / 2;
        double at = s->timeline[middle].seconds / s->speedup;
        if (at < seconds || (inclusive && at == seconds))
            low = middle + 1;
        else
            high = middle;
    }
    if (low == 0)
        return 0;
    const struct schedule_point *point = &s->timeline[low - 1];
    double at = point->seconds / s->speedup;
    double value = seconds == at ? (inclusive ? point->after : point->before)
                                 : point->after + point->bytes_per_second * s->speedup * (seconds - at);
    if (value <= 0)
        return 0;
    return value >= (double)s->total_bytes ? s->total_bytes : (uint64_t)value;
}

uint64_t schedule_generated(const struct schedule *s, const struct schedule_stream *stream, double seconds,
                            int inclusive)
{
    if (stream == NULL)
        return timeline_generated(s, seconds, inclusive);
    size_t low = 0, high = stream->count; /* the first slot not yet started */
    while (low < high) {
        size_t middle = low + (high - low) / 2;
        double start = schedule_release_seconds(s, &stream->slots[middle]);
        if (start < seconds || (inclusive && start == seconds))
            low = middle + 1;
        else
            high = middle;
    }
    if (low == 0)
        return 0;
    const struct schedule_slot *slot = &stream->slots[low - 1];
    uint64_t before = low >= 2 ? stream->slots[low - 2].cumulative_bytes : 0;
    double width = slot->width_seconds / s->speedup, into = seconds - schedule_release_seconds(s, slot);
    if (width <= 0 || into >= width)
        return slot->cumulative_bytes;
    uint64_t part = (uint64_t)((double)(slot->cumulative_bytes - before) * (into / width));
    return before + part < slot->cumulative_bytes ? before + part : slot->cumulative_bytes;
}

/* The first slot whose cumulative count reaches `byte`; stream->count if none. */
static size_t slot_of_byte(const struct schedule_stream *stream, uint64_t byte)
{
    size_t low = 0, high = stream->count;
    while (low < high) {
        size_t middle = low + (high - low) / 2;
        if (stream->slots[middle].cumulative_bytes < byte)
            low = middle + 1;
        else
            high = middle;
    }
    return low;
}

double schedule_generation_of_byte(const struct schedule *s, const struct schedule_stream *stream, uint64_t byte)
{
    size_t k = slot_of_byte(stream, byte);
    if (k >= stream->count)
        return -1;
    const struct schedule_slot *slot = &stream->slots[k];
    uint64_t before = k > 0 ? stream->slots[k - 1].cumulative_bytes : 0;
    double share = byte > before ? (double)(byte - before) / (double)(slot->cumulative_bytes - before) : 0;
    return schedule_release_seconds(s, slot) + slot->width_seconds / s->speedup * share;
}

uint64_t schedule_slot_end_of_byte(const struct schedule_stream *stream, uint64_t byte)
{
    size_t k = slot_of_byte(stream, byte);
    if (stream->count == 0)
        return 0;
    return stream->slots[k < stream->count ? k : stream->count - 1].cumulative_bytes;
}
