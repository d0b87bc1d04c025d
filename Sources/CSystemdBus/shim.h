#ifndef KEYHAVEN_CSYSTEMDBUS_SHIM_H
#define KEYHAVEN_CSYSTEMDBUS_SHIM_H
#include <systemd/sd-bus.h>
#include <sys/eventfd.h>

// sd-bus's credential masks are an enum of 64-bit values, which Swift imports awkwardly.
static inline uint64_t kh_bus_creds_pid(void) { return SD_BUS_CREDS_PID | SD_BUS_CREDS_AUGMENT; }
static inline uint64_t kh_bus_creds_unique_name(void) { return SD_BUS_CREDS_UNIQUE_NAME; }
// The bus daemon's process and user, from the socket (SO_PEERCRED at connect), never from /proc.
static inline uint64_t kh_bus_creds_peer(void) { return SD_BUS_CREDS_PID | SD_BUS_CREDS_EUID; }
// The bus thread's wake-up descriptor.
static inline int kh_bus_eventfd(void) { return eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK); }
#endif
