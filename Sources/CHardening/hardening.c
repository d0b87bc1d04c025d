#define _GNU_SOURCE
#include "hardening.h"
#include <errno.h>
#include <fcntl.h>
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

int kh_make_dumpable(void) {
    return prctl(PR_SET_DUMPABLE, 1, 0, 0, 0);
}

int kh_is_dumpable(void) {
    return prctl(PR_GET_DUMPABLE, 0, 0, 0, 0);
}

int kh_wipe_freed_memory(int byte) {
    return mallopt(M_PERTURB, byte & 0xff);
}

int kh_map_large_buffers(unsigned long threshold) {
    return mallopt(M_MMAP_THRESHOLD, (int)threshold);
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

#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <linux/sock_diag.h>
#include <linux/unix_diag.h>
#include <string.h>
#include <sys/stat.h>

long long kh_unix_peer_inode(int connection) {
    struct stat info;
    if (fstat(connection, &info) != 0) return -1;
    int diag = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_SOCK_DIAG);
    if (diag < 0) return -1;
    struct {
        struct nlmsghdr header;
        struct unix_diag_req request;
    } message;
    memset(&message, 0, sizeof(message));
    message.header.nlmsg_len = sizeof(message);
    message.header.nlmsg_type = SOCK_DIAG_BY_FAMILY;
    message.header.nlmsg_flags = NLM_F_REQUEST;
    message.request.sdiag_family = AF_UNIX;
    message.request.udiag_states = ~0U;
    message.request.udiag_ino = (unsigned int)info.st_ino;
    message.request.udiag_show = UDIAG_SHOW_PEER;
    message.request.udiag_cookie[0] = ~0U;   /* INET_DIAG_NOCOOKIE: any socket of that inode */
    message.request.udiag_cookie[1] = ~0U;
    struct sockaddr_nl kernel = { .nl_family = AF_NETLINK };
    long long peer = -1;
    if (sendto(diag, &message, sizeof(message), 0, (struct sockaddr *)&kernel, sizeof(kernel)) == (ssize_t)sizeof(message)) {
        long buffer[1024];
        ssize_t length;
        do { length = recv(diag, buffer, sizeof(buffer), 0); } while (length < 0 && errno == EINTR);
        struct nlmsghdr *header = (struct nlmsghdr *)buffer;
        if (length > 0 && NLMSG_OK(header, (size_t)length) && header->nlmsg_type == SOCK_DIAG_BY_FAMILY) {
            struct unix_diag_msg *reply = NLMSG_DATA(header);
            if (reply->udiag_ino == (unsigned int)info.st_ino) {
                int left = (int)(header->nlmsg_len - NLMSG_LENGTH(sizeof(*reply)));
                for (struct rtattr *attribute = (struct rtattr *)(reply + 1); RTA_OK(attribute, left); attribute = RTA_NEXT(attribute, left)) {
                    if (attribute->rta_type == UNIX_DIAG_PEER && RTA_PAYLOAD(attribute) >= sizeof(unsigned int)) {
                        peer = *(unsigned int *)RTA_DATA(attribute);
                    }
                }
            }
        }
    }
    close(diag);
    return peer;
}

#include <sys/vfs.h>

int kh_is_fuse(const char *path) {
    struct statfs info;
    if (statfs(path, &info) != 0) return -1;
    return info.f_type == 0x65735546 /* FUSE_SUPER_MAGIC */ ? 1 : 0;
}

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>

/* The descriptors in `folder` (a process's fd folder, which this closes) that name `target`: how
   many, with the first `capacity` in `fds` (none kept when `fds` is NULL). */
static int descriptors_naming(int folder, const char *target, int target_length, int *fds, int capacity) {
    DIR *descriptors = fdopendir(folder);
    if (descriptors == NULL) { close(folder); return 0; }
    int found = 0;
    char link[64];
    struct dirent *descriptor;
    while ((descriptor = readdir(descriptors)) != NULL) {
        if (descriptor->d_name[0] < '0' || descriptor->d_name[0] > '9') continue;
        ssize_t length = readlinkat(folder, descriptor->d_name, link, sizeof(link));
        if (length == target_length && memcmp(link, target, (size_t)length) == 0) {
            if (fds != NULL && found < capacity) fds[found] = atoi(descriptor->d_name);
            found++;
        }
    }
    closedir(descriptors);
    return found;
}

static int socket_target(char *target, size_t size, unsigned long long inode) {
    return snprintf(target, size, "socket:[%llu]", inode);
}

int kh_descriptors_naming(int pid, unsigned long long inode, int *fds, int capacity) {
    char target[64], path[64];
    int target_length = socket_target(target, sizeof(target), inode);
    snprintf(path, sizeof(path), "/proc/%d/fd", pid);
    int folder = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    return folder < 0 ? -1 : descriptors_naming(folder, target, target_length, fds, capacity);
}

int kh_socket_holders(unsigned long long inode, int skip_pid, unsigned int uid, int *pids, int capacity) {
    char target[64];
    int target_length = socket_target(target, sizeof(target), inode);
    DIR *proc = opendir("/proc");
    if (proc == NULL) return -1;
    int found = 0;
    struct dirent *entry;
    while ((entry = readdir(proc)) != NULL) {
        char *end = NULL;
        long pid = strtol(entry->d_name, &end, 10);
        if (end == entry->d_name || *end != '\0' || pid == skip_pid) continue;
        struct stat info;
        if (fstatat(dirfd(proc), entry->d_name, &info, 0) != 0 || info.st_uid != uid) continue;
        char path[64];
        snprintf(path, sizeof(path), "%s/fd", entry->d_name);
        int folder = openat(dirfd(proc), path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (folder < 0 || descriptors_naming(folder, target, target_length, NULL, 0) == 0) continue;
        if (found < capacity) pids[found] = (int)pid;
        found++;
    }
    closedir(proc);
    return found;
}

int kh_send_descriptor(int socket, unsigned char byte, int fd) {
    struct iovec part = { .iov_base = &byte, .iov_len = 1 };
    union { char buffer[CMSG_SPACE(sizeof(int))]; struct cmsghdr align; } control;
    struct msghdr message = { .msg_iov = &part, .msg_iovlen = 1 };
    memset(&control, 0, sizeof control);
    if (fd >= 0) {
        message.msg_control = control.buffer;
        message.msg_controllen = sizeof control.buffer;
        struct cmsghdr *header = CMSG_FIRSTHDR(&message);
        header->cmsg_level = SOL_SOCKET;
        header->cmsg_type = SCM_RIGHTS;
        header->cmsg_len = CMSG_LEN(sizeof(int));
        memcpy(CMSG_DATA(header), &fd, sizeof(int));
    }
    ssize_t sent;
    do { sent = sendmsg(socket, &message, MSG_NOSIGNAL); } while (sent < 0 && errno == EINTR);
    return sent == 1 ? 0 : -1;
}

int kh_receive_descriptor(int socket, unsigned char *byte, int *fd) {
    struct iovec part = { .iov_base = byte, .iov_len = 1 };
    union { char buffer[CMSG_SPACE(4 * sizeof(int))]; struct cmsghdr align; } control;
    struct msghdr message = { .msg_iov = &part, .msg_iovlen = 1, .msg_control = control.buffer,
                              .msg_controllen = sizeof control.buffer };
    *fd = -1;
    ssize_t received;
    do { received = recvmsg(socket, &message, MSG_CMSG_CLOEXEC); } while (received < 0 && errno == EINTR);
    for (struct cmsghdr *header = CMSG_FIRSTHDR(&message); received >= 0 && header != NULL; header = CMSG_NXTHDR(&message, header)) {
        if (header->cmsg_level != SOL_SOCKET || header->cmsg_type != SCM_RIGHTS) continue;
        size_t count = (header->cmsg_len - CMSG_LEN(0)) / sizeof(int);
        for (size_t i = 0; i < count; i++) {
            int passed;
            memcpy(&passed, CMSG_DATA(header) + i * sizeof(int), sizeof(int));
            if (*fd < 0) *fd = passed; else close(passed);
        }
    }
    if (received < 0) return -1;
    if (received == 0) {
        if (*fd >= 0) { close(*fd); *fd = -1; }
        return 0;
    }
    return 1;
}
