#ifndef STOREFRONT_CLINUX_SHIM_H
#define STOREFRONT_CLINUX_SHIM_H
// Linux-only headers Swift's Glibc module leaves out: epoll, eventfd, naming threads, CPU
// affinity, and malloc's tuning. No feature macros (_GNU_SOURCE): they would change glibc's
// types here and clash with the same types in Swift's Glibc module.
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <errno.h>
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
/// Bytes malloc holds free in its arenas (mallinfo2's fordblks): memory the process has freed
/// but glibc keeps, since free() gives back only the top of a heap.
static inline size_t storefront_malloc_free_bytes(void) {
    struct mallinfo2 info = mallinfo2();
    return info.fordblks;
}

/// Gives the free pages of every arena back to the kernel (malloc_trim(0)); returns whether any were.
static inline int storefront_malloc_trim(void) {
    return malloc_trim(0);
}

/// The most CPUs the affinity helpers know of.
#define STOREFRONT_MAX_CPUS 1024

/// The CPUs the calling thread may run on (its affinity mask, which `taskset` and container
/// cpusets narrow), in increasing order, into `cpus` (room for `max`); returns how many, or -1.
/// The raw system call, since glibc's wrapper and CPU_SET need _GNU_SOURCE (see above).
static inline int storefront_allowed_cpus(int *cpus, int max) {
    unsigned long mask[STOREFRONT_MAX_CPUS / (8 * sizeof(unsigned long))] = {0};
    long bytes = syscall(SYS_sched_getaffinity, 0, sizeof(mask), mask);
    if (bytes < 0) return -1;
    const int bits = 8 * (int)sizeof(unsigned long);
    int count = 0;
    for (int cpu = 0; cpu < (int)bytes * 8 && count < max; cpu++) {
        if (mask[cpu / bits] & (1UL << (cpu % bits))) cpus[count++] = cpu;
    }
    return count;
}

/// Lets the calling thread run on the `count` CPUs in `cpus` only; returns 0, or -1 (errno
/// set by the kernel; EINVAL for a CPU out of range).
static inline int storefront_set_current_thread_cpus(const int *cpus, int count) {
    unsigned long mask[STOREFRONT_MAX_CPUS / (8 * sizeof(unsigned long))] = {0};
    const int bits = 8 * (int)sizeof(unsigned long);
    for (int index = 0; index < count; index++) {
        const int cpu = cpus[index];
        if (cpu < 0 || cpu >= STOREFRONT_MAX_CPUS) { errno = EINVAL; return -1; }
        mask[cpu / bits] |= 1UL << (cpu % bits);
    }
    return (int)syscall(SYS_sched_setaffinity, 0, sizeof(mask), mask);
}
#endif
