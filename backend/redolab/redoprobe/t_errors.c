/* Every member of enum probe_error has a code (snake_case, as error events carry it) and a text
 * (probe_strerror), each non-empty and distinct from every other member's (make check). */
#include <string.h>

#include "probe.h"
#include "t_check.h"

static int snake_case(const char *name)
{
    if (name[0] < 'a' || name[0] > 'z')
        return 0;
    for (const char *p = name; *p; p++)
        if (!((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || *p == '_'))
            return 0;
    return name[strlen(name) - 1] != '_';
}

int main(void)
{
    CHECK(PE_COUNT > PE_OK + 1);
    for (int e = PE_OK; e < PE_COUNT; e++) {
        const char *name = probe_error_name((enum probe_error)e);
        const char *text = probe_strerror((enum probe_error)e);
        CHECK(name != NULL && name[0] != '\0' && strcmp(name, "unknown") != 0);
        CHECK(name != NULL && snake_case(name));
        CHECK(text != NULL && text[0] != '\0' && strcmp(text, "unknown error") != 0);
        for (int other = PE_OK; other < e; other++) {
            CHECK(strcmp(name, probe_error_name((enum probe_error)other)) != 0);
            CHECK(strcmp(text, probe_strerror((enum probe_error)other)) != 0);
        }
    }
    /* names are what error events carry: fixed once chosen */
    CHECK(strcmp(probe_error_name(PE_RESOLVE), "resolve") == 0);
    CHECK(strcmp(probe_error_name(PE_HANDSHAKE_TIMEOUT), "handshake_timeout") == 0);
    CHECK(strcmp(probe_error_name(PE_FILE_WRITE), "file_write") == 0);
    /* probe_strerror's words lead some messages: these stay as they were */
    CHECK(strcmp(probe_strerror(PE_TIMEOUT), "timed out") == 0);
    CHECK(strcmp(probe_strerror(PE_CONNECT), "cannot connect") == 0);
    CHECK(strcmp(probe_strerror(PE_COUNT), "unknown error") == 0); /* out of range: not a code */
    CHECK(strcmp(probe_error_name(PE_COUNT), "unknown") == 0);
    return T_DONE("t_errors");
}
