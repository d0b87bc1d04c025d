#define _GNU_SOURCE
#include "hardening.h"
#include <malloc.h>
#include <sys/prctl.h>
#include <sys/resource.h>

int kh_make_undumpable(void) {
    struct rlimit none = { 0, 0 };
    if (setrlimit(RLIMIT_CORE, &none) != 0) return -1;
    return prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
}

int kh_is_dumpable(void) {
    return prctl(PR_GET_DUMPABLE, 0, 0, 0, 0);
}

int kh_wipe_freed_memory(int byte) {
    return mallopt(M_PERTURB, byte & 0xff);
}
