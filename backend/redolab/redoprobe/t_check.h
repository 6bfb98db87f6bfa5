/* A minimal assertion helper for the t_*.c unit tests (make check). */
#ifndef REDOPROBE_T_CHECK_H
#define REDOPROBE_T_CHECK_H
#include <stdio.h>

static int t_failures = 0, t_checks = 0;
#define CHECK(cond)                                                                   \
    do {                                                                              \
        t_checks++;                                                                   \
        if (!(cond)) {                                                                \
            t_failures++;                                                             \
            fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
        }                                                                             \
    } while (0)
#define T_DONE(name)                                                                  \
    (printf("%s: %d passed, %d failed\n", name, t_checks - t_failures, t_failures), \
     t_failures ? 1 : 0)
#endif
