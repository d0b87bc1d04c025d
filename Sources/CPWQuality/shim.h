#ifndef KEYHAVEN_CPWQUALITY_SHIM_H
#define KEYHAVEN_CPWQUALITY_SHIM_H
#include <pwquality.h>
#endif
