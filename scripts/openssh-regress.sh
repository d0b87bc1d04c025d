#!/usr/bin/env bash
# Runs OpenSSH's own agent tests (regress/agent*.sh from openssh-portable) against
# keyhaven-ssh-agent, with this machine's OpenSSH programs (ssh, sshd, ssh-add, ssh-keygen) and
# the tests of the same release, each in a fresh keychain home and runtime folder.
#
#   scripts/openssh-regress.sh                   # agent agent-timeout agent-subprocess agent-ptrace agent-restrict
#   scripts/openssh-regress.sh agent             # named tests
#   OPENSSH_SOURCE=DIR scripts/openssh-regress.sh  # a checkout of openssh-portable at the release
#   KEYHAVEN_BINARIES=DIR ...                    # keyhaven-ssh-agent built there (else swift build)
#
# Without OPENSSH_SOURCE the release's tag is cloned (git, network) into ~/.cache/keyhaven.
# ssh -Q key-plain is filtered of ssh-dss: keyhaven-ssh-agent holds no DSA keys, which OpenSSH
# itself removed in its release 10.0; the tests then use every other key type.
set -euo pipefail
cd "$(dirname "$0")/.."
tests=("$@")
[ ${#tests[@]} -gt 0 ] || tests=(agent agent-timeout agent-subprocess agent-ptrace agent-restrict)
for program in /usr/bin/ssh /usr/sbin/sshd /usr/bin/ssh-add /usr/bin/ssh-keygen; do
    [ -x "$program" ] || { echo "openssh-regress: $program is missing (scripts/bootstrap installs it)" >&2; exit 1; }
done
version="$(/usr/bin/ssh -V 2>&1 | sed -n 's/^OpenSSH_\([0-9]*\)\.\([0-9]*\)p\([0-9]*\).*/V_\1_\2_P\3/p')"
[ -n "$version" ] || { echo "openssh-regress: cannot read the release from ssh -V" >&2; exit 1; }
source="${OPENSSH_SOURCE:-$HOME/.cache/keyhaven/openssh-portable-$version}"
if [ ! -f "$source/regress/test-exec.sh" ]; then
    [ -z "${OPENSSH_SOURCE:-}" ] || { echo "openssh-regress: $source has no regress/test-exec.sh" >&2; exit 1; }
    mkdir -p "$(dirname "$source")"
    git clone -q --depth 1 --branch "$version" https://github.com/openssh/openssh-portable "$source"
fi
binaries="${KEYHAVEN_BINARIES:-}"
if [ -z "$binaries" ]; then
    swift build --product keyhaven-ssh-agent >/dev/null
    swift build --product keyhavend >/dev/null
    swift build --product keyhaven >/dev/null
    binaries="$(swift build --show-bin-path)"
fi
# sshd refuses to start without its privilege separation folder.
[ -d /run/sshd ] || { [ "$(id -u)" = 0 ] && install -d -m 0755 /run/sshd; } || true
work="$(mktemp -d /tmp/keyhaven-openssh-regress.XXXXXX)"
trap 'rm -rf "$work"' EXIT
cat > "$work/ssh" <<'WRAP'
#!/bin/sh
for argument in "$@"; do
    if [ "$argument" = "-Q" ]; then /usr/bin/ssh "$@" | grep -v '^ssh-dss'; exit 0; fi
done
exec /usr/bin/ssh "$@"
WRAP
chmod 0755 "$work/ssh"
failed=()
for test in "${tests[@]}"; do
    obj="$work/$test"
    mkdir -m 0700 "$obj" "$obj.home" "$obj.runtime"
    status=0
    (cd "$obj" && env KEYHAVEN_HOME="$obj.home" XDG_RUNTIME_DIR="$obj.runtime" TEST_SHELL=/bin/sh OBJ="$obj" \
        TEST_SSH_SSH="$work/ssh" TEST_SSH_SSHD=/usr/sbin/sshd TEST_SSH_SSHAGENT="$binaries/keyhaven-ssh-agent" \
        TEST_SSH_SSHADD=/usr/bin/ssh-add TEST_SSH_SSHKEYGEN=/usr/bin/ssh-keygen TEST_SSH_SSHKEYSCAN=/usr/bin/ssh-keyscan \
        TEST_SSH_SCP=/usr/bin/scp TEST_SSH_SFTP=/usr/bin/sftp TEST_SSH_SFTPSERVER=/usr/lib/openssh/sftp-server \
        TEST_SSH_UNSAFE_PERMISSIONS=1 \
        timeout 600 sh "$source/regress/test-exec.sh" "$obj" "$source/regress/$test.sh") || status=$?
    env KEYHAVEN_HOME="$obj.home" XDG_RUNTIME_DIR="$obj.runtime" "$binaries/keyhaven" agent stop >/dev/null 2>&1 || true
    if [ "$status" != 0 ]; then
        failed+=("$test")
        [ -f "$obj/failed-regress.log" ] && sed 's/^/    /' "$obj/failed-regress.log" >&2
    fi
done
if [ ${#failed[@]} -gt 0 ]; then
    echo "openssh-regress: failed: ${failed[*]}" >&2
    exit 1
fi
echo "openssh-regress: passed: ${tests[*]}"
