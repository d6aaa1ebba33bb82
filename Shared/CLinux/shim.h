#ifndef STOREFRONT_CLINUX_SHIM_H
#define STOREFRONT_CLINUX_SHIM_H
// Linux-only headers Swift's Glibc module leaves out: epoll and eventfd.
#include <sys/epoll.h>
#include <sys/eventfd.h>
#endif
