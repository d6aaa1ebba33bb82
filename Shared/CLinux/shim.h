#ifndef STOREFRONT_CLINUX_SHIM_H
#define STOREFRONT_CLINUX_SHIM_H
// Linux-only headers Swift's Glibc module leaves out: epoll, eventfd, naming threads, and
// malloc's tuning.
#ifndef _GNU_SOURCE
#define _GNU_SOURCE  // pthread_setname_np
#endif
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <pthread.h>
#include <malloc.h>

/// Names the calling thread for debuggers and `top -H` (at most 15 bytes are kept).
static inline int storefront_name_current_thread(const char *name) {
    char shortened[16];
    int index = 0;
    for (; index < 15 && name[index] != 0; index++) shortened[index] = name[index];
    shortened[index] = 0;
    return pthread_setname_np(pthread_self(), shortened);
}

/// Keeps glibc's malloc from giving memory back to the kernel at every dip and asking for it
/// again at the next call: per-call allocations on the loop threads made their arenas shrink
/// and grow without end (brk/madvise on the hot path). Trims only above 16 MiB of free top,
/// and grows arenas 1 MiB at a time.
static inline void storefront_tune_malloc(void) {
    mallopt(M_TRIM_THRESHOLD, 16 * 1024 * 1024);
    mallopt(M_TOP_PAD, 1024 * 1024);
}
#endif
