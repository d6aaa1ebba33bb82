#ifndef STOREFRONT_CSQLITE_SHIM_H
#define STOREFRONT_CSQLITE_SHIM_H
#include <sqlite3.h>
#endif
