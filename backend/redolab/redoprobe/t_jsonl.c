#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "jsonl.h"
#include "t_check.h"

/* An error event as emit_error() writes it to stdout: the message's keys, then the code. */
static void check_error_event(void)
{
    char line[256] = "";
    FILE *capture = tmpfile();
    fflush(stdout);
    int saved = dup(STDOUT_FILENO);
    if (capture == NULL || saved < 0 || dup2(fileno(capture), STDOUT_FILENO) < 0) {
        CHECK(!"cannot capture stdout");
        return;
    }
    emit_error(1, "client", PE_HANDSHAKE_TIMEOUT, "no \"answer\" in %d s", 5);
    fflush(stdout);
    dup2(saved, STDOUT_FILENO);
    close(saved);
    rewind(capture);
    CHECK(fgets(line, sizeof line, capture) != NULL);
    fclose(capture);
    CHECK(strcmp(line, "{\"event\":\"error\",\"data\":{\"role\":\"client\",\"message\":\"no \\\"answer\\\" in 5 s\","
                       "\"code\":\"handshake_timeout\"}}\n") == 0);
}

int main(void)
{
    struct json j;
    memset(&j, 0, sizeof j);
    json_string(&j, "a\"b\\c\nd\te\x01");
    CHECK(strcmp(j.buf, "\"a\\\"b\\\\c\\nd\\te\\u0001\"") == 0);
    json_free(&j);

    memset(&j, 0, sizeof j);
    json_string(&j, "d\xc3\xa9j\xc3\xa0"); /* UTF-8 passes through */
    CHECK(strcmp(j.buf, "\"d\xc3\xa9j\xc3\xa0\"") == 0);
    json_free(&j);

    json_event_begin(&j, "interval");
    json_key_u64(&j, "bytes", 42);
    json_array_begin(&j, "streams");
    json_object_begin(&j, NULL);
    json_key_u64(&j, "id", 0);
    json_key_null(&j, "rtt_us");
    json_object_end(&j);
    json_object_begin(&j, NULL);
    json_key_bool(&j, "x", 1);
    json_object_end(&j);
    json_array_end(&j);
    json_array_begin(&j, "tcp_rmem_bytes");
    json_u64(&j, 4096);
    json_u64(&j, 131072);
    json_array_end(&j);
    json_key_double(&j, "rate", 1.5);
    json_object_end(&j); /* what json_event_emit does, without printing */
    CHECK(strcmp(j.buf, "{\"event\":\"interval\",\"data\":{\"bytes\":42,\"streams\":[{\"id\":0,"
                        "\"rtt_us\":null},{\"x\":true}],\"tcp_rmem_bytes\":[4096,131072],"
                        "\"rate\":1.500000}") == 0);
    json_free(&j);
    check_error_event();
    return T_DONE("t_jsonl");
}
