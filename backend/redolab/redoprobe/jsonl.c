#include "jsonl.h"

#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static pthread_mutex_t output_lock = PTHREAD_MUTEX_INITIALIZER;

static void append(struct json *j, const char *text, size_t n)
{
    if (j->failed)
        return;
    if (j->len + n + 1 > j->cap) {
        size_t cap = j->cap ? j->cap * 2 : 1024;
        while (cap < j->len + n + 1)
            cap *= 2;
        char *grown = realloc(j->buf, cap);
        if (grown == NULL) {
            j->failed = 1;
            return;
        }
        j->buf = grown;
        j->cap = cap;
    }
    memcpy(j->buf + j->len, text, n);
    j->len += n;
    j->buf[j->len] = '\0';
}

static void appendf(struct json *j, const char *format, ...)
{
    char text[64];
    va_list args;
    va_start(args, format);
    int n = vsnprintf(text, sizeof text, format, args);
    va_end(args);
    if (n > 0)
        append(j, text, (size_t)n < sizeof text ? (size_t)n : sizeof text - 1);
}

void json_string(struct json *j, const char *value)
{
    append(j, "\"", 1);
    for (const unsigned char *p = (const unsigned char *)(value ? value : ""); *p; p++) {
        switch (*p) {
        case '"': append(j, "\\\"", 2); break;
        case '\\': append(j, "\\\\", 2); break;
        case '\n': append(j, "\\n", 2); break;
        case '\r': append(j, "\\r", 2); break;
        case '\t': append(j, "\\t", 2); break;
        default:
            if (*p < 0x20)
                appendf(j, "\\u%04x", *p);
            else
                append(j, (const char *)p, 1);
        }
    }
    append(j, "\"", 1);
}

static void separator(struct json *j)
{
    if (j->need_comma[j->depth])
        append(j, ",", 1);
    j->need_comma[j->depth] = 1;
}

static void key(struct json *j, const char *name)
{
    separator(j);
    if (name != NULL) {
        json_string(j, name);
        append(j, ":", 1);
    }
}

static void open_scope(struct json *j, const char *name, const char *bracket)
{
    key(j, name);
    append(j, bracket, 1);
    if (j->depth + 1 < JSON_MAX_DEPTH) {
        j->depth++;
        j->need_comma[j->depth] = 0;
    } else {
        j->failed = 1;
    }
}

static void close_scope(struct json *j, const char *bracket)
{
    append(j, bracket, 1);
    if (j->depth > 0)
        j->depth--;
}

void json_event_begin(struct json *j, const char *event)
{
    memset(j, 0, sizeof *j);
    append(j, "{", 1);
    j->depth = 0;
    json_key_str(j, "event", event);
    json_object_begin(j, "data");
}

void json_event_emit(struct json *j)
{
    json_object_end(j);
    append(j, "}\n", 2);
    if (!j->failed) {
        pthread_mutex_lock(&output_lock);
        fwrite(j->buf, 1, j->len, stdout);
        fflush(stdout);
        pthread_mutex_unlock(&output_lock);
    }
    json_free(j);
}

void json_free(struct json *j)
{
    free(j->buf);
    j->buf = NULL;
    j->len = j->cap = 0;
}

void json_key_str(struct json *j, const char *name, const char *value)
{
    key(j, name);
    json_string(j, value);
}

void json_key_u64(struct json *j, const char *name, uint64_t value)
{
    key(j, name);
    appendf(j, "%llu", (unsigned long long)value);
}


void json_key_double(struct json *j, const char *name, double value)
{
    key(j, name);
    if (isfinite(value))
        appendf(j, "%.6f", value);
    else
        append(j, "null", 4);
}

void json_key_bool(struct json *j, const char *name, int value)
{
    key(j, name);
    append(j, value ? "true" : "false", value ? 4 : 5);
}

void json_key_null(struct json *j, const char *name)
{
    key(j, name);
    append(j, "null", 4);
}

void json_object_begin(struct json *j, const char *name) { open_scope(j, name, "{"); }
void json_object_end(struct json *j) { close_scope(j, "}"); }
void json_array_begin(struct json *j, const char *name) { open_scope(j, name, "["); }
void json_array_end(struct json *j) { close_scope(j, "]"); }

void json_u64(struct json *j, uint64_t value)
{
    separator(j);
    appendf(j, "%llu", (unsigned long long)value);
}

void emit_error(int json, const char *role, enum probe_error code, const char *format, ...)
{
    char message[600];
    va_list args;
    va_start(args, format);
    vsnprintf(message, sizeof message, format, args);
    va_end(args);
    if (!json) {
        fprintf(stderr, "redoprobe %s: %s\n", role, message);
        return;
    }
    struct json j;
    json_event_begin(&j, "error");
    json_key_str(&j, "role", role);
    json_key_str(&j, "message", message);
    json_key_str(&j, "code", probe_error_name(code));
    json_event_emit(&j);
}
