/* A stop request wakes every wait at once: SIGTERM landing in another thread ends a 600 s
 * probe_sleep_until and a probe_wait_readable on a silent descriptor within a second, as the
 * client's interval loop and the server's waits use them (make check). */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

#include "probe.h"
#include "t_check.h"

/* The only thread that takes SIGTERM (main blocks it): the handler runs here, not in the sleeper. */
static void *terminate_soon(void *arg)
{
    (void)arg;
    sigset_t term;
    sigemptyset(&term);
    sigaddset(&term, SIGTERM);
    pthread_sigmask(SIG_UNBLOCK, &term, NULL);
    struct timespec pause = {.tv_sec = 0, .tv_nsec = 200 * 1000 * 1000};
    nanosleep(&pause, NULL);
    kill(getpid(), SIGTERM);
    return NULL;
}

int main(void)
{
    probe_install_signal_handlers();
    CHECK(probe_stop_fd() >= 0);
    atomic_int stop;
    atomic_init(&stop, 0);

    /* a wait or a deadline as a timespec: never before it, a nanosecond at most after */
    struct timespec t = seconds_timespec(-1);
    CHECK(t.tv_sec == 0 && t.tv_nsec == 0);
    t = seconds_timespec(0.0 / 0.0);
    CHECK(t.tv_sec == 0 && t.tv_nsec == 0);
    t = seconds_timespec(1.5);
    CHECK(t.tv_sec == 1 && t.tv_nsec == 500000001);
    t = seconds_timespec(0.9999999999);
    CHECK(t.tv_sec == 1 && t.tv_nsec == 0);
    for (double d = 0.001; d < 1e6; d *= 1.37) {
        t = seconds_timespec(d);
        CHECK(t.tv_nsec >= 0 && t.tv_nsec < 1000000000L && (double)t.tv_sec + (double)t.tv_nsec / 1e9 >= d);
    }

    double start = now_seconds(); /* no stop: it sleeps to its deadline */
    CHECK(probe_sleep_until(start + 0.1, &stop) == 0);
    CHECK(now_seconds() - start >= 0.1);
    int silent[2];
    CHECK(pipe(silent) == 0);
    start = now_seconds();
    CHECK(probe_wait_readable(silent[0], 0.1) == 0);
    CHECK(now_seconds() - start >= 0.1);

    sigset_t term;
    sigemptyset(&term);
    sigaddset(&term, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &term, NULL);
    pthread_t thread;
    CHECK(pthread_create(&thread, NULL, terminate_soon, NULL) == 0);
    start = now_seconds();
    CHECK(probe_sleep_until(start + 600, NULL) == 1);
    double woke = now_seconds() - start;
    pthread_join(thread, NULL);
    CHECK(atomic_load(&probe_stop_requested) == 1);
    CHECK(woke >= 0.15 && woke < 1.0);

    start = now_seconds(); /* once stopped, every later wait returns at once */
    CHECK(probe_wait_readable(silent[0], 600) == 0);
    CHECK(probe_sleep_until(now_seconds() + 600, &stop) == 1);
    CHECK(now_seconds() - start < 0.5);
    printf("t_stop: woke %.3f s after the sleep began (SIGTERM sent at 0.2 s)\n", woke);
    return T_DONE("t_stop");
}
