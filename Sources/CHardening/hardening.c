#define _GNU_SOURCE
#include "hardening.h"
#include <errno.h>
#include <malloc.h>
#include <poll.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef SO_PEERPIDFD
#define SO_PEERPIDFD 77
#endif

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

int kh_pidfd_open(int pid) {
    return (int)syscall(SYS_pidfd_open, pid, 0);
}

int kh_pidfd_alive(int pidfd) {
    struct pollfd entry = { .fd = pidfd, .events = POLLIN, .revents = 0 };
    int ready;
    do { ready = poll(&entry, 1, 0); } while (ready < 0 && errno == EINTR);
    if (ready == 0) return 0;
    if (ready > 0) errno = (entry.revents & POLLNVAL) ? EBADF : ESRCH;
    return -1;
}

int kh_peer_pidfd(int socket) {
    int pidfd = -1;
    socklen_t size = sizeof(pidfd);
    if (getsockopt(socket, SOL_SOCKET, SO_PEERPIDFD, &pidfd, &size) != 0) return -1;
    return pidfd;
}

int kh_accept_cloexec(int listener) {
    return accept4(listener, NULL, NULL, SOCK_CLOEXEC);
}
