#ifndef KEYHAVEN_SQLITE_FAULTS_H
#define KEYHAVEN_SQLITE_FAULTS_H

// A SQLite VFS that forwards every call to the default VFS and, when armed, makes chosen I/O
// calls on files under one folder fail with a chosen result code: the fault-injection layer of
// the reliability suite (docs/reliability.md). Installed only by debug builds' tests
// (KeychainStore's SQLiteFaults); a release build never registers it.

// Which calls an armed fault applies to.
enum {
    KEYHAVEN_FAULT_READ = 1,
    KEYHAVEN_FAULT_WRITE = 2,
    KEYHAVEN_FAULT_SYNC = 4,
    KEYHAVEN_FAULT_TRUNCATE = 8,
};

// Registers the VFS as SQLite's default (once; later calls do nothing). Connections opened
// afterwards go through it. Returns a SQLite result code.
int keyhaven_faults_install(void);

// Arms a fault: of the calls in `operations` on files whose path starts with `folder`, the first
// `skip` succeed, then each fails with `code` (`times` calls, or every call while armed if
// `times` is negative). Replaces any fault armed before.
void keyhaven_faults_arm(int operations, const char *folder, long skip, long times, int code);

// Disarms; every call forwards again.
void keyhaven_faults_disarm(void);

// How many calls the armed fault has failed.
long keyhaven_faults_triggered(void);

#endif
