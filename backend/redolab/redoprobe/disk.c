/* redoprobe disk: sequential writes like a redo log writer, with per-write latency. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "hist.h"
#include "jsonl.h"
#include "probe.h"

#define DISK_WRAP_BYTES (1024ULL * 1024 * 1024) /* writes wrap at 1 GiB, like a redo log */

static const char *sync_name(enum disk_sync sync)
{
    return sync == DISK_DSYNC ? "dsync" : sync == DISK_FDATASYNC ? "fdatasync" : "none";
}

static void disk_error(const struct disk_options *o, enum probe_error code, const char *what, const char *path)
{
    emit_error(o->json, "disk", code, "%s %s: %s", what, path, strerror(errno));
}

/* PATH is a directory (a file is created in it) or a file that must not exist yet. */
static int open_target(const struct disk_options *o, char *file, size_t size)
{
    int flags = O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC;
    if (o->sync == DISK_DSYNC)
        flags |= O_DSYNC;
    struct stat st;
    if (stat(o->path, &st) == 0 && S_ISDIR(st.st_mode))
        snprintf(file, size, "%s/redoprobe-disk-%d.tmp", o->path, (int)getpid());
    else
        snprintf(file, size, "%s", o->path);
    int fd = open(file, flags, 0600);
    if (fd < 0 && errno == EEXIST)
        errno = EEXIST; /* never overwrite: the message says the file exists */
    return fd;
}

static void emit_start(const struct disk_options *o, const char *file)
{
    if (!o->json) {
        printf("redoprobe %s disk: %s, %llu-byte writes, sync %s\n", PROBE_VERSION, file,
               (unsigned long long)o->write_bytes, sync_name(o->sync));
        return;
    }
    struct json j;
    json_event_begin(&j, "start");
    json_key_str(&j, "version", PROBE_VERSION);
    json_key_str(&j, "role", "disk");
    json_key_str(&j, "path", file);
    json_key_u64(&j, "write_bytes", o->write_bytes);
    json_key_str(&j, "sync", sync_name(o->sync));
    if (o->writes)
        json_key_u64(&j, "writes_requested", o->writes);
    else
        json_key_null(&j, "writes_requested");
    json_key_double(&j, "duration_seconds", o->duration_seconds);
    json_event_emit(&j);
}

static void emit_end(const struct disk_options *o, const struct histogram *h, double seconds, int interrupted)
{
    uint64_t bytes = h->count * o->write_bytes;
    double rate = seconds > 0 ? (double)bytes / seconds : 0;
    uint64_t avg = h->count ? h->sum_us / h->count : 0;
    if (!o->json) {
        printf("%llu writes, %llu bytes in %.3f s: %.2f MiB/s; latency min %llu us, avg %llu us, max %llu us\n",
               (unsigned long long)h->count, (unsigned long long)bytes, seconds, rate / 1048576.0,
               (unsigned long long)(h->count ? h->min_us : 0), (unsigned long long)avg, (unsigned long long)h->max_us);
        return;
    }
    struct json j;
    json_event_begin(&j, "end");
    json_key_u64(&j, "writes", h->count);
    json_key_u64(&j, "bytes", bytes);
    json_key_double(&j, "seconds", seconds);
    json_key_double(&j, "bytes_per_second", rate);
    json_object_begin(&j, "write_latency_us");
    json_key_u64(&j, "min", h->count ? h->min_us : 0);
    json_key_u64(&j, "avg", avg);
    json_key_u64(&j, "max", h->max_us);
    hist_json(&j, "histogram", h);
    json_object_end(&j);
    json_key_bool(&j, "interrupted", interrupted);
    json_event_emit(&j);
}

/* One write of o->write_bytes at offset, made durable as --sync says; 0, or -1 with errno. */
static int write_once(int fd, const void *buf, const struct disk_options *o, uint64_t offset)
{
    size_t done = 0;
    while (done < o->write_bytes) {
        ssize_t k = pwrite(fd, (const char *)buf + done, o->write_bytes - done, (off_t)(offset + done));
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            return -1;
        done += (size_t)k;
    }
    return o->sync == DISK_FDATASYNC ? fdatasync(fd) : 0;
}

int run_disk(const struct disk_options *o)
{
    char file[4200];
    int fd = open_target(o, file, sizeof file);
    if (fd < 0) {
        if (errno == EEXIST)
            disk_error(o, PE_FILE_EXISTS, "will not overwrite the existing file", file);
        else
            disk_error(o, PE_FILE_CREATE, "cannot create", file);
        return 1;
    }
    void *buf = NULL;
    if (posix_memalign(&buf, 4096, o->write_bytes) != 0) {
        errno = ENOMEM;
        disk_error(o, PE_OUT_OF_MEMORY, "out of memory for writes to", file);
        close(fd);
        unlink(file);
        return 1;
    }
    random_bytes(buf, o->write_bytes < 65536 ? o->write_bytes : 65536);
    emit_start(o, file);
    struct histogram h;
    hist_init(&h);
    uint64_t offset = 0;
    int status = 0;
    double start = now_seconds(), end_at = start + o->duration_seconds;
    while (!atomic_load(&probe_stop_requested)) {
        if (o->writes ? h.count >= o->writes : now_seconds() >= end_at)
            break;
        if (offset + o->write_bytes > DISK_WRAP_BYTES)
            offset = 0;
        double before = now_seconds();
        if (write_once(fd, buf, o, offset) < 0) {
            disk_error(o, PE_FILE_WRITE, "write failed on", file);
            status = 1;
            break;
        }
        hist_add(&h, (uint64_t)((now_seconds() - before) * 1e6));
        offset += o->write_bytes;
    }
    double seconds = now_seconds() - start;
    close(fd);
    unlink(file);
    free(buf);
    if (status == 0)
        emit_end(o, &h, seconds, atomic_load(&probe_stop_requested));
    return status;
}
