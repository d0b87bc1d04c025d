#ifndef KEYHAVEN_HARDENING_H
#define KEYHAVEN_HARDENING_H

/// Makes this process undumpable (no core file, no ptrace or /proc/PID/mem by the same user's
/// other processes) and sets its core-file limit to zero. Returns 0, or -1 with errno set.
int kh_make_undumpable(void);

/// Makes this process dumpable again (prctl PR_SET_DUMPABLE 1), for one that will hold nothing
/// secret. Returns 0, or -1 with errno set.
int kh_make_dumpable(void);

/// Whether this process is dumpable (prctl PR_GET_DUMPABLE): 1, 0, or -1 on error.
int kh_is_dumpable(void);

/// Has glibc's allocator overwrite every freed block with `byte` (M_PERTURB), so what a freed
/// buffer held (a request frame, a decoded password) does not stay in the heap. Returns 1 when
/// set. Blocks that glibc keeps in its per-thread cache skip this: the agent also starts with
/// that cache switched off (GLIBC_TUNABLES glibc.malloc.tcache_count=0).
int kh_wipe_freed_memory(int byte);

/// Has glibc's allocator map every block of `threshold` bytes or more on its own and unmap it when
/// freed (a fixed M_MMAP_THRESHOLD), so what large buffers took goes back to the system once
/// they are freed. glibc's moving threshold would put such blocks in the heap, where freed memory
/// stays. Returns 1 when set.
int kh_map_large_buffers(unsigned long threshold);

/// pidfd_open(2): a descriptor that refers to process `pid` (and only it, even after its pid is
/// reused). -1 with errno set (ENOSYS before Linux 5.3).
int kh_pidfd_open(int pid);

/// Whether the process of a pidfd still runs: 0 while it does, -1 (ESRCH) once it has exited
/// (a zombie counts as exited), -1 (EBADF) for a descriptor that is not open. The pidfd is polled
/// (readable once the process exits, Linux 5.3, as pidfd_open): the same answer as
/// pidfd_send_signal(2) with signal 0 for a running process, and available wherever pidfds are
/// (valgrind, for one, does not implement pidfd_send_signal, which made every client look gone).
int kh_pidfd_alive(int pidfd);

/// The pidfd of a connected Unix socket's peer (SO_PEERPIDFD, Linux 6.5), or -1.
int kh_peer_pidfd(int socket);

/// accept4(2) with SOCK_CLOEXEC: the next connection on `listener`, closed in the programs this
/// process runs (pinentry). -1 with errno set.
int kh_accept_cloexec(int listener);

/// The inode of the socket at the other end of a connected Unix socket (the kernel's sock_diag
/// netlink interface, UNIX_DIAG_PEER), or -1: which descriptor of the peer process is this
/// connection, so the agent can tell who holds it.
long long kh_unix_peer_inode(int connection);

/// Whether the file at `path` is on a FUSE file system (statfs: FUSE_SUPER_MAGIC): 1, 0, or -1
/// when it cannot be asked. A FUSE server, which any user may run, says who owns its files.
int kh_is_fuse(const char *path);

/// The descriptors of process `pid` that are the socket with inode `inode`: how many, with the
/// first `capacity` of them in `fds`; -1 when its descriptors cannot be read.
int kh_descriptors_naming(int pid, unsigned long long inode, int *fds, int capacity);

/// The processes of user `uid`, other than `skip_pid`, that hold a descriptor of the socket with
/// inode `inode` (a scan of /proc/PID/fd, as lsof makes): how many, with the first `capacity`
/// of their pids in `pids`; -1 when /proc cannot be read.
int kh_socket_holders(unsigned long long inode, int skip_pid, unsigned int uid, int *pids, int capacity);

/// Sends one byte on a connected Unix socket with descriptor `fd` attached (SCM_RIGHTS), or the
/// byte alone when `fd` is -1. Returns 0, or -1 with errno set.
int kh_send_descriptor(int socket, unsigned char byte, int fd);

/// Receives one byte from a connected Unix socket, and the descriptor sent with it (made
/// close-on-exec) in `*fd`, or -1 there when none came. Any descriptor beyond the first is
/// closed. Returns 1, 0 at end of file, or -1 with errno set.
int kh_receive_descriptor(int socket, unsigned char *byte, int *fd);

#endif
