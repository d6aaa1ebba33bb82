#ifndef STOREFRONT_CLINUX_SHIM_H
#define STOREFRONT_CLINUX_SHIM_H
// Linux-only headers Swift's Glibc module leaves out: epoll, eventfd, and naming threads.
#ifndef _GNU_SOURCE
#define _GNU_SOURCE  // pthread_setname_np
#endif
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <pthread.h>

/// Names the calling thread for debuggers and `top -H` (at most 15 bytes are kept).
static inline int storefront_name_current_thread(const char *name) {
    char shortened[16];
    int index = 0;
    for (; index < 15 && name[index] != 0; index++) shortened[index] = name[index];
    shortened[index] = 0;
    return pthread_setname_np(pthread_self(), shortened);
}
#endif
