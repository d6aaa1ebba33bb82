#ifndef STOREFRONT_CLIBPQ_SHIM_H
#define STOREFRONT_CLIBPQ_SHIM_H
#include <libpq-fe.h>
#endif
