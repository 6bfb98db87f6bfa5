/* JSON lines: one event object per line, built in memory, written and flushed at once. */
#ifndef REDOPROBE_JSONL_H
#define REDOPROBE_JSONL_H

#include <stddef.h>
#include <stdint.h>

#include "probe.h"

#define JSON_MAX_DEPTH 16

struct json {
    char *buf;
    size_t len, cap;
    int depth;
    int need_comma[JSON_MAX_DEPTH];
    int failed;
};

/* Starts {"event":"NAME","data":{ ... */
void json_event_begin(struct json *j, const char *event);
/* ...closes the data object and the event, writes the line to stdout, flushes, frees. */
void json_event_emit(struct json *j);

void json_key_str(struct json *j, const char *key, const char *value);
void json_key_u64(struct json *j, const char *key, uint64_t value);
void json_key_double(struct json *j, const char *key, double value);
void json_key_bool(struct json *j, const char *key, int value);
void json_key_null(struct json *j, const char *key);
void json_object_begin(struct json *j, const char *key); /* key NULL inside an array */
void json_object_end(struct json *j);
void json_array_begin(struct json *j, const char *key);
void json_array_end(struct json *j);
void json_u64(struct json *j, uint64_t value);           /* array element */

/* The one way a failure is reported: an error event with --json ({"role", "message", "code"},
 * code: probe_error_name()), a line on stderr without. */
void emit_error(int json, const char *role, enum probe_error code, const char *format, ...)
    __attribute__((format(printf, 4, 5)));

/* Appends a JSON string literal (quoted, escaped). Exposed for t_jsonl.c. */
void json_string(struct json *j, const char *value);
void json_free(struct json *j);

#endif
