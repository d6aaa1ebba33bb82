#ifndef STOREFRONT_CLINUX_SHIM_H
#define STOREFRONT_CLINUX_SHIM_H
// Linux-only headers Swift's Glibc module leaves out: epoll, eventfd, naming threads, and
// malloc's tuning. No feature macros (_GNU_SOURCE): they would change glibc's types here and
// clash with the same types in Swift's Glibc module.
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/prctl.h>
#include <malloc.h>

/// Names the calling thread for debuggers and `top -H` (the kernel keeps 15 bytes).
static inline int storefront_name_current_thread(const char *name) {
    return prctl(PR_SET_NAME, (unsigned long)name, 0, 0, 0);
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
