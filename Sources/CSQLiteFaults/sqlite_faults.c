#include "sqlite_faults.h"

#include <pthread.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>

// The fault being armed: guarded by `lock`; `armed` lets the disarmed path skip the lock.
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static volatile int armed = 0;
static int fault_operations = 0;
static char *fault_folder = NULL;
static size_t fault_folder_length = 0;
static long fault_skip = 0;
static long fault_times = 0;
static int fault_code = SQLITE_IOERR;
static long fault_triggered = 0;

static sqlite3_vfs *real_vfs = NULL;
static sqlite3_vfs fault_vfs;

// A file: the wrapper's header, then the real VFS's file (szOsFile bytes) right after it.
typedef struct FaultFile {
    sqlite3_file base;
    const char *name;  // valid until xClose (SQLite's guarantee for xOpen's zName)
    sqlite3_file *real;
} FaultFile;

// The result code for this call, or SQLITE_OK to forward it.
static int decide(FaultFile *file, int operation) {
    if (!__atomic_load_n(&armed, __ATOMIC_ACQUIRE) || file->name == NULL) return SQLITE_OK;
    int rc = SQLITE_OK;
    pthread_mutex_lock(&lock);
    if (armed && (fault_operations & operation) && fault_folder != NULL
        && strncmp(file->name, fault_folder, fault_folder_length) == 0) {
        if (fault_skip > 0) {
            fault_skip--;
        } else if (fault_times != 0) {
            if (fault_times > 0) fault_times--;
            fault_triggered++;
            rc = fault_code;
        }
    }
    pthread_mutex_unlock(&lock);
    return rc;
}

static int fault_close(sqlite3_file *f) {
    FaultFile *file = (FaultFile *)f;
    int rc = file->real->pMethods ? file->real->pMethods->xClose(file->real) : SQLITE_OK;
    file->base.pMethods = NULL;
    return rc;
}

static int fault_read(sqlite3_file *f, void *buffer, int amount, sqlite3_int64 offset) {
    FaultFile *file = (FaultFile *)f;
    int rc = decide(file, KEYHAVEN_FAULT_READ);
    if (rc != SQLITE_OK) return rc;
    return file->real->pMethods->xRead(file->real, buffer, amount, offset);
}

static int fault_write(sqlite3_file *f, const void *buffer, int amount, sqlite3_int64 offset) {
    FaultFile *file = (FaultFile *)f;
    int rc = decide(file, KEYHAVEN_FAULT_WRITE);
    if (rc != SQLITE_OK) return rc;
    return file->real->pMethods->xWrite(file->real, buffer, amount, offset);
}

static int fault_truncate(sqlite3_file *f, sqlite3_int64 size) {
    FaultFile *file = (FaultFile *)f;
    int rc = decide(file, KEYHAVEN_FAULT_TRUNCATE);
    if (rc != SQLITE_OK) return rc;
    return file->real->pMethods->xTruncate(file->real, size);
}

static int fault_sync(sqlite3_file *f, int flags) {
    FaultFile *file = (FaultFile *)f;
    int rc = decide(file, KEYHAVEN_FAULT_SYNC);
    if (rc != SQLITE_OK) return rc;
    return file->real->pMethods->xSync(file->real, flags);
}

// The rest forward unchanged.
#define REAL(f) (((FaultFile *)(f))->real)
static int fault_file_size(sqlite3_file *f, sqlite3_int64 *size) { return REAL(f)->pMethods->xFileSize(REAL(f), size); }
static int fault_lock(sqlite3_file *f, int level) { return REAL(f)->pMethods->xLock(REAL(f), level); }
static int fault_unlock(sqlite3_file *f, int level) { return REAL(f)->pMethods->xUnlock(REAL(f), level); }
static int fault_check_reserved(sqlite3_file *f, int *out) { return REAL(f)->pMethods->xCheckReservedLock(REAL(f), out); }
static int fault_file_control(sqlite3_file *f, int op, void *arg) { return REAL(f)->pMethods->xFileControl(REAL(f), op, arg); }
static int fault_sector_size(sqlite3_file *f) { return REAL(f)->pMethods->xSectorSize(REAL(f)); }
static int fault_device_characteristics(sqlite3_file *f) { return REAL(f)->pMethods->xDeviceCharacteristics(REAL(f)); }
static int fault_shm_map(sqlite3_file *f, int page, int size, int extend, void volatile **out) {
    return REAL(f)->pMethods->xShmMap(REAL(f), page, size, extend, out);
}
static int fault_shm_lock(sqlite3_file *f, int offset, int n, int flags) { return REAL(f)->pMethods->xShmLock(REAL(f), offset, n, flags); }
static void fault_shm_barrier(sqlite3_file *f) { REAL(f)->pMethods->xShmBarrier(REAL(f)); }
static int fault_shm_unmap(sqlite3_file *f, int delete_flag) { return REAL(f)->pMethods->xShmUnmap(REAL(f), delete_flag); }
// Memory-mapped reads exist from version 3 of the methods; without them, SQLite reads instead.
static int fault_fetch(sqlite3_file *f, sqlite3_int64 offset, int amount, void **out) {
    if (REAL(f)->pMethods->iVersion < 3) { *out = NULL; return SQLITE_OK; }
    return REAL(f)->pMethods->xFetch(REAL(f), offset, amount, out);
}
static int fault_unfetch(sqlite3_file *f, sqlite3_int64 offset, void *page) {
    if (REAL(f)->pMethods->iVersion < 3) return SQLITE_OK;
    return REAL(f)->pMethods->xUnfetch(REAL(f), offset, page);
}

static const sqlite3_io_methods fault_methods = {
    3,
    fault_close, fault_read, fault_write, fault_truncate, fault_sync, fault_file_size,
    fault_lock, fault_unlock, fault_check_reserved, fault_file_control, fault_sector_size,
    fault_device_characteristics, fault_shm_map, fault_shm_lock, fault_shm_barrier, fault_shm_unmap,
    fault_fetch, fault_unfetch,
};

static int fault_open(sqlite3_vfs *vfs, const char *name, sqlite3_file *f, int flags, int *out_flags) {
    (void)vfs;
    FaultFile *file = (FaultFile *)f;
    file->name = name;
    file->real = (sqlite3_file *)&file[1];
    int rc = real_vfs->xOpen(real_vfs, name, file->real, flags, out_flags);
    // The unix VFS's methods are version 3; only wrap a file that opened.
    file->base.pMethods = file->real->pMethods ? &fault_methods : NULL;
    return rc;
}

static int fault_delete(sqlite3_vfs *vfs, const char *name, int sync_dir) {
    (void)vfs;
    return real_vfs->xDelete(real_vfs, name, sync_dir);
}
static int fault_access(sqlite3_vfs *vfs, const char *name, int flags, int *out) {
    (void)vfs;
    return real_vfs->xAccess(real_vfs, name, flags, out);
}
static int fault_full_pathname(sqlite3_vfs *vfs, const char *name, int size, char *out) {
    (void)vfs;
    return real_vfs->xFullPathname(real_vfs, name, size, out);
}
static void *fault_dl_open(sqlite3_vfs *vfs, const char *name) { (void)vfs; return real_vfs->xDlOpen(real_vfs, name); }
static void fault_dl_error(sqlite3_vfs *vfs, int size, char *out) { (void)vfs; real_vfs->xDlError(real_vfs, size, out); }
static void (*fault_dl_sym(sqlite3_vfs *vfs, void *handle, const char *symbol))(void) {
    (void)vfs;
    return real_vfs->xDlSym(real_vfs, handle, symbol);
}
static void fault_dl_close(sqlite3_vfs *vfs, void *handle) { (void)vfs; real_vfs->xDlClose(real_vfs, handle); }
static int fault_randomness(sqlite3_vfs *vfs, int size, char *out) { (void)vfs; return real_vfs->xRandomness(real_vfs, size, out); }
static int fault_sleep(sqlite3_vfs *vfs, int micros) { (void)vfs; return real_vfs->xSleep(real_vfs, micros); }
static int fault_current_time(sqlite3_vfs *vfs, double *out) { (void)vfs; return real_vfs->xCurrentTime(real_vfs, out); }
static int fault_get_last_error(sqlite3_vfs *vfs, int size, char *out) {
    (void)vfs;
    return real_vfs->xGetLastError ? real_vfs->xGetLastError(real_vfs, size, out) : 0;
}
static int fault_current_time_int64(sqlite3_vfs *vfs, sqlite3_int64 *out) {
    (void)vfs;
    return real_vfs->xCurrentTimeInt64(real_vfs, out);
}

int keyhaven_faults_install(void) {
    pthread_mutex_lock(&lock);
    int rc = SQLITE_OK;
    if (real_vfs == NULL) {
        sqlite3_vfs *found = sqlite3_vfs_find(NULL);
        if (found == NULL || found->iVersion < 2) {
            rc = SQLITE_ERROR;
        } else {
            real_vfs = found;
            memset(&fault_vfs, 0, sizeof fault_vfs);
            fault_vfs.iVersion = 2;
            fault_vfs.szOsFile = (int)sizeof(FaultFile) + found->szOsFile;
            fault_vfs.mxPathname = found->mxPathname;
            fault_vfs.zName = "keyhaven-faults";
            fault_vfs.xOpen = fault_open;
            fault_vfs.xDelete = fault_delete;
            fault_vfs.xAccess = fault_access;
            fault_vfs.xFullPathname = fault_full_pathname;
            fault_vfs.xDlOpen = fault_dl_open;
            fault_vfs.xDlError = fault_dl_error;
            fault_vfs.xDlSym = fault_dl_sym;
            fault_vfs.xDlClose = fault_dl_close;
            fault_vfs.xRandomness = fault_randomness;
            fault_vfs.xSleep = fault_sleep;
            fault_vfs.xCurrentTime = fault_current_time;
            fault_vfs.xGetLastError = fault_get_last_error;
            fault_vfs.xCurrentTimeInt64 = fault_current_time_int64;
            rc = sqlite3_vfs_register(&fault_vfs, 1);
            if (rc != SQLITE_OK) real_vfs = NULL;
        }
    }
    pthread_mutex_unlock(&lock);
    return rc;
}

void keyhaven_faults_arm(int operations, const char *folder, long skip, long times, int code) {
    pthread_mutex_lock(&lock);
    free(fault_folder);
    fault_folder = strdup(folder);
    fault_folder_length = fault_folder ? strlen(fault_folder) : 0;
    fault_operations = operations;
    fault_skip = skip;
    fault_times = times;
    fault_code = code;
    fault_triggered = 0;
    __atomic_store_n(&armed, fault_folder != NULL, __ATOMIC_RELEASE);
    pthread_mutex_unlock(&lock);
}

void keyhaven_faults_disarm(void) {
    pthread_mutex_lock(&lock);
    __atomic_store_n(&armed, 0, __ATOMIC_RELEASE);
    pthread_mutex_unlock(&lock);
}

long keyhaven_faults_triggered(void) {
    pthread_mutex_lock(&lock);
    long count = fault_triggered;
    pthread_mutex_unlock(&lock);
    return count;
}
