/*
 * pam_keyhaven: the login keychain gets the login password, as pam_gnome_keyring does for
 * gnome-keyring's login keyring and as macOS does for the login keychain.
 *
 *   auth     optional pam_keyhaven.so   keeps the password the stack authenticated with (never
 *                                       decides authentication itself)
 *   session  optional pam_keyhaven.so   runs `keyhaven login-keychain unlock` as the user: creates
 *                                       the login keychain with that password, gives an existing one
 *                                       without a password that password, or unlocks it
 *   password optional pam_keyhaven.so   runs `keyhaven login-keychain change` as the user when the
 *                                       login password changes (needs the old one: a password
 *                                       reset by root leaves the keychain's password as it was)
 *
 *   auth     optional pam_keyhaven.so unlock   in a screen locker's service: runs `keyhaven
 *                                       login-keychain screen-unlock` at once (a screen locker opens
 *                                       no session), so the screen's unlock unlocks the login
 *                                       keychain; it only unlocks one that has a password
 *
 * Arguments: keyhaven=PATH (default KEYHAVEN_PROGRAM: /usr/local/bin/keyhaven, or /usr/bin/keyhaven
 * as Debian's package builds it), unlock. The passwords reach the
 * command on a pipe (never its command line or environment); the module's copy is wiped once used.
 *
 * The command's environment comes from PAM's environment (pam_getenv: what pam_env or
 * pam_systemd set), and from this process's only when this process already runs as the target
 * user (a screen locker): under su, this process's is the invoking user's, who would otherwise
 * choose the keychain that receives the target user's password. The keychain home must
 * be the target user's (the home, or the nearest folder above it that exists, owned by them), and
 * the command inherits no descriptor but its standard three.
 * Build and install: contrib/pam/README.md.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <syslog.h>
#include <unistd.h>

#define PAM_SM_AUTH
#define PAM_SM_SESSION
#define PAM_SM_PASSWORD
#include <security/pam_ext.h>
#include <security/pam_modules.h>
#include <security/pam_modutil.h>

static const char *const authtok_key = "pam_keyhaven_authtok";

static void wipe_and_free(pam_handle_t *pamh, void *data, int status) {
    (void)pamh;
    (void)status;
    if (data != NULL) {
        explicit_bzero(data, strlen(data));
        free(data);
    }
}

#ifndef KEYHAVEN_PROGRAM
#define KEYHAVEN_PROGRAM "/usr/local/bin/keyhaven"
#endif

static const char *keyhaven_path(int argc, const char **argv) {
    for (int i = 0; i < argc; i++) {
        if (strncmp(argv[i], "keyhaven=", 9) == 0) return argv[i] + 9;
    }
    return KEYHAVEN_PROGRAM;
}

static int has_argument(int argc, const char **argv, const char *name) {
    for (int i = 0; i < argc; i++) {
        if (strcmp(argv[i], name) == 0) return 1;
    }
    return 0;
}

/* A variable of the user's session: PAM's environment's, else, when this process runs as the
   user already (a screen locker, not su), this process's. */
static const char *session_variable(pam_handle_t *pamh, const struct passwd *pw, const char *name) {
    const char *value = pam_getenv(pamh, name);
    if (value != NULL) return value;
    if (getuid() == pw->pw_uid && geteuid() == pw->pw_uid) return getenv(name);
    return NULL;
}

/* NAME=value for the child's environment (session_variable); NULL if unset. */
static char *passed_variable(pam_handle_t *pamh, const struct passwd *pw, const char *name) {
    const char *value = session_variable(pamh, pw, name);
    if (value == NULL) return NULL;
    char *entry = NULL;
    return asprintf(&entry, "%s=%s", name, value) < 0 ? NULL : entry;
}

/* Whether the keychain home the command will use (KEYHAVEN_HOME, else XDG_DATA_HOME/keyhaven,
   else ~/.local/share/keyhaven, as the command finds it) is the user's: an absolute path whose
   nearest existing folder (itself, once made) is a folder, not a link, owned by the user. */
static int home_is_users(pam_handle_t *pamh, const struct passwd *pw) {
    const char *explicit_home = session_variable(pamh, pw, "KEYHAVEN_HOME");
    const char *data = session_variable(pamh, pw, "XDG_DATA_HOME");
    char *home = NULL;
    int made;
    if (explicit_home != NULL && explicit_home[0] != '\0') made = asprintf(&home, "%s", explicit_home);
    else if (data != NULL && data[0] != '\0') made = asprintf(&home, "%s/keyhaven", data);
    else made = asprintf(&home, "%s/.local/share/keyhaven", pw->pw_dir);
    if (made < 0 || home == NULL) return 0;
    int users = 0;
    if (home[0] == '/') {
        struct stat info;
        for (;;) {
            if (lstat(home, &info) == 0) {
                users = S_ISDIR(info.st_mode) && info.st_uid == pw->pw_uid;
                break;
            }
            char *slash = strrchr(home, '/');
            if (errno != ENOENT || slash == NULL || slash == home) break;
            *slash = '\0';
        }
    }
    if (!users) pam_syslog(pamh, LOG_WARNING, "the keychain home %s is not %s's own: not used", home, pw->pw_name);
    free(home);
    return users;
}

/* Closes every descriptor from 3 on (close_range, Linux 5.9; else one by one). */
static void close_inherited(void) {
#ifdef SYS_close_range
    if (syscall(SYS_close_range, 3U, ~0U, 0U) == 0) return;
#endif
    long last = sysconf(_SC_OPEN_MAX);
    for (int fd = 3; fd < (last > 0 && last < 65536 ? last : 65536); fd++) close(fd);
}

static int write_all(int fd, const char *bytes, size_t count) {
    while (count > 0) {
        ssize_t n = write(fd, bytes, count);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return -1;
        bytes += n;
        count -= (size_t)n;
    }
    return 0;
}

/* Runs `keyhaven login-keychain ACTION` as the PAM user, with each line on its standard input.
   Returns its exit status, or -1 if it could not run. */
static int run_as_user(pam_handle_t *pamh, int argc, const char **argv, const char *action,
                       const char *first, const char *second) {
    const char *user = NULL;
    if (pam_get_user(pamh, &user, NULL) != PAM_SUCCESS || user == NULL) return -1;
    struct passwd *pw = pam_modutil_getpwnam(pamh, user);
    if (pw == NULL || !home_is_users(pamh, pw)) return -1;
    const char *keyhaven = keyhaven_path(argc, argv);

    char *env[10] = {0};
    int n = 0;
    if (asprintf(&env[n], "HOME=%s", pw->pw_dir) >= 0) n++;
    if (asprintf(&env[n], "USER=%s", pw->pw_name) >= 0) n++;
    if (asprintf(&env[n], "LOGNAME=%s", pw->pw_name) >= 0) n++;
    env[n++] = strdup("PATH=/usr/local/bin:/usr/bin:/bin");
    const char *passed[] = {"XDG_RUNTIME_DIR", "XDG_DATA_HOME", "KEYHAVEN_HOME", "KEYHAVEN_AGENT_SOCKET"};
    for (size_t i = 0; i < sizeof passed / sizeof passed[0]; i++) {
        char *entry = passed_variable(pamh, pw, passed[i]);
        if (entry != NULL) env[n++] = entry;
    }

    int input[2];
    if (pipe2(input, O_CLOEXEC) != 0) return -1;
    /* The caller's SIGCHLD handler must not reap our child before waitpid does. */
    struct sigaction ours = {0}, theirs;
    ours.sa_handler = SIG_DFL;
    sigaction(SIGCHLD, &ours, &theirs);
    pid_t pid = fork();
    if (pid == 0) {
        int null = open("/dev/null", O_RDWR | O_CLOEXEC);
        if (dup2(input[0], 0) < 0 || null < 0 || dup2(null, 1) < 0 || dup2(null, 2) < 0) _exit(127);
        close_inherited();
        if (getuid() != pw->pw_uid || geteuid() != pw->pw_uid) {
            if (initgroups(pw->pw_name, pw->pw_gid) != 0 || setgid(pw->pw_gid) != 0 || setuid(pw->pw_uid) != 0) _exit(127);
        }
        if (getuid() != pw->pw_uid || geteuid() != pw->pw_uid) _exit(127);
        char *const args[] = {(char *)"keyhaven", (char *)"login-keychain", (char *)action, NULL};
        execve(keyhaven, args, env);
        _exit(127);
    }
    close(input[0]);
    int status = -1;
    if (pid > 0) {
        int failed = write_all(input[1], first, strlen(first)) || write_all(input[1], "\n", 1);
        if (!failed && second != NULL) failed = write_all(input[1], second, strlen(second)) || write_all(input[1], "\n", 1);
        close(input[1]);
        int wstatus = 0;
        while (waitpid(pid, &wstatus, 0) < 0 && errno == EINTR) {}
        status = WIFEXITED(wstatus) && !failed ? WEXITSTATUS(wstatus) : -1;
    } else {
        close(input[1]);
    }
    sigaction(SIGCHLD, &theirs, NULL);
    for (int i = 0; i < n; i++) free(env[i]);
    return status;
}

PAM_EXTERN int pam_sm_authenticate(pam_handle_t *pamh, int flags, int argc, const char **argv) {
    (void)flags;
    const void *token = NULL;
    if (pam_get_item(pamh, PAM_AUTHTOK, &token) != PAM_SUCCESS || token == NULL) return PAM_IGNORE;
    if (has_argument(argc, argv, "unlock")) {
        /* A screen locker: no session follows, so the keychain is unlocked now. Whether the
           password was right is not known yet: screen-unlock only unlocks a keychain that has a
           password (a wrong one fails), never makes one or gives it this password. */
        int status = run_as_user(pamh, argc, argv, "screen-unlock", token, NULL);
        if (status != 0) pam_syslog(pamh, LOG_WARNING, "could not unlock the login keychain (keyhaven exit status %d)", status);
    }
    char *copy = strdup(token);
    if (copy == NULL || pam_set_data(pamh, authtok_key, copy, wipe_and_free) != PAM_SUCCESS) {
        wipe_and_free(pamh, copy, 0);
    }
    return PAM_IGNORE;
}

PAM_EXTERN int pam_sm_setcred(pam_handle_t *pamh, int flags, int argc, const char **argv) {
    (void)pamh;
    (void)flags;
    (void)argc;
    (void)argv;
    return PAM_IGNORE;
}

PAM_EXTERN int pam_sm_open_session(pam_handle_t *pamh, int flags, int argc, const char **argv) {
    (void)flags;
    const void *token = NULL;
    if (pam_get_data(pamh, authtok_key, &token) != PAM_SUCCESS || token == NULL) return PAM_IGNORE;
    int status = run_as_user(pamh, argc, argv, "unlock", token, NULL);
    /* Once used, the copy goes (wiped by its cleanup). */
    pam_set_data(pamh, authtok_key, NULL, NULL);
    if (status != 0) {
        pam_syslog(pamh, LOG_WARNING, "could not unlock the login keychain (keyhaven exit status %d)", status);
        return PAM_IGNORE;
    }
    return PAM_SUCCESS;
}

PAM_EXTERN int pam_sm_close_session(pam_handle_t *pamh, int flags, int argc, const char **argv) {
    (void)pamh;
    (void)flags;
    (void)argc;
    (void)argv;
    return PAM_IGNORE;
}

PAM_EXTERN int pam_sm_chauthtok(pam_handle_t *pamh, int flags, int argc, const char **argv) {
    const char *old = NULL, *new = NULL;
    if (flags & PAM_PRELIM_CHECK) {
        /* Ask for the current password now if no module before us did. */
        return pam_get_authtok(pamh, PAM_OLDAUTHTOK, &old, NULL) == PAM_SUCCESS && old != NULL ? PAM_SUCCESS : PAM_IGNORE;
    }
    if (!(flags & PAM_UPDATE_AUTHTOK)) return PAM_IGNORE;
    const void *item = NULL;
    if (pam_get_item(pamh, PAM_OLDAUTHTOK, &item) != PAM_SUCCESS || item == NULL) {
        pam_syslog(pamh, LOG_NOTICE, "no old password: the login keychain keeps its password");
        return PAM_IGNORE;
    }
    old = item;
    if (pam_get_authtok(pamh, PAM_AUTHTOK, &new, NULL) != PAM_SUCCESS || new == NULL) return PAM_IGNORE;
    int status = run_as_user(pamh, argc, argv, "change", old, new);
    if (status != 0) {
        pam_syslog(pamh, LOG_WARNING, "could not change the login keychain's password (keyhaven exit status %d)", status);
        return PAM_IGNORE;
    }
    return PAM_SUCCESS;
}
