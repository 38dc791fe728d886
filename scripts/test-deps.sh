#!/usr/bin/env bash
# The Debian packages the test suite needs, and their installation: `npm test`
# runs this first (package.json `pretest`), and so does CI (.ci/run runs the
# README's `npm ci && npm test`). As root with apt-get, what is missing is
# installed; otherwise one line names every missing package, and the suite does
# not start: a test that cannot run fails, it never skips.
#
# Each row: the package, then how to tell it is there (a command on PATH, or
# an absolute path that must exist), then what needs it.
set -euo pipefail
export PATH="$PATH:/usr/sbin:/sbin"

ROWS=(
  # The SSH labs: OpenSSH's sshd and ssh in network namespaces (iproute2).
  'openssh-server   sshd                 SSH tunnel, connect and fleet tests'
  'openssh-client   ssh                  SSH tunnel, connect and fleet tests'
  'iproute2         ip                   network namespaces of the SSH labs'
  # The gemini-cli sign-in test makes a throwaway CA and host certificates.
  'openssl          openssl              gemini-cli sign-in test'
  # The fleet tests: Debian's ansible-core (2.14), the real node_exporter, the collection's own checks
  # (ansible-test sanity offline with Debian's linters, ansible-lint), promtool and prometheus, systemd-analyze.
  'ansible-core     ansible-playbook     fleet tests'
  'prometheus-node-exporter prometheus-node-exporter node_exporter test'
  'ansible-lint     ansible-lint         fleet-sanity test'
  'prometheus       promtool             alert rule tests'
  'systemd          systemd-analyze      unit file scores'
  'yamllint         yamllint             fleet-sanity test'
  'pylint           /usr/lib/python3/dist-packages/pylint fleet-sanity test'
  'python3-pycodestyle /usr/lib/python3/dist-packages/pycodestyle.py fleet-sanity test'
  'python3-voluptuous /usr/lib/python3/dist-packages/voluptuous fleet-sanity test'
  'python3-venv     /usr/lib/python3.11/ensurepip fleet-sanity test'
  # The backup archive test stores a snapshot stream in a local restic repository; rclone serves a remote one.
  'restic           restic               backup archive test'
  'rclone           rclone               backup to a remote test'
  # The connect relay test follows Google's redirect with Debian's headless Chromium.
  'chromium         chromium             connect relay test'
  # The --qr test decodes the drawn QR code with a real decoder.
  'zbar-tools       zbarimg              login --qr test'
  # The role's install test boots a debootstrap tree of Debian 12 with systemd-nspawn; dpkg-deb builds release files.
  'debootstrap      debootstrap          Debian 12 trees'
  'systemd-container systemd-nspawn      fleet install test'
  'dpkg             dpkg-deb             release tests'
  # The completion test loads the generated scripts in the real zsh and fish.
  'zsh              zsh                  completion test'
  'fish             fish                 completion test'
  # The interactive tests drive agyctl in a terminal of a given size.
  'tmux             tmux                 terminal tests'
  # The release tests: better-sqlite3 compiled for the shipped Node (make, g++, python3 for node-gyp; also
  # what `npm ci` needs where no prebuilt binding can be fetched), the stripped Node (binutils), lintian.
  'make             make                 release build'
  'g++              g++                  release build'
  'python3          python3              release build (node-gyp)'
  'binutils         strip                release build'
  'lintian          lintian              .deb checks'
  # The man page test renders each page with man-db (groff) as lintian does.
  'man-db           man                  man page test'
  # The release build derives the .deb's Depends with dpkg-shlibdeps; the signature test signs with ssh-keygen.
  'dpkg-dev         dpkg-shlibdeps       release build (.deb Depends)'
  'openssh-client   ssh-keygen           release signature test'
  # The arm64 build: a cross compiler, and qemu through binfmt to run what it makes; diffoscope compares builds.
  'g++-aarch64-linux-gnu aarch64-linux-gnu-g++ arm64 release build'
  'qemu-user-static qemu-aarch64-static  arm64 release tests'
  'binfmt-support   update-binfmts       arm64 release tests'
  'diffoscope-minimal diffoscope         reproducible build test'
  # The package test lists the collection's files the way the release does (git ls-files).
  'git              git                  fleet-package test'
  # Resource pressure for the load tests.
  'stress-ng        stress-ng            tests under load'
)

present() {
  case "$1" in
    /*) [ -e "$1" ] ;;
    *) command -v "$1" >/dev/null 2>&1 ;;
  esac
}

missing() {
  local row pkg probe
  for row in "${ROWS[@]}"; do
    read -r pkg probe _ <<<"$row"
    present "$probe" || printf '%s\n' "$pkg"
  done
}

if [ "${1:-}" = --list ]; then
  for row in "${ROWS[@]}"; do read -r pkg _ <<<"$row" && printf '%s\n' "$pkg"; done
  exit 0
fi

mapfile -t need < <(missing)
[ "${#need[@]}" -eq 0 ] && exit 0

if [ "$EUID" -ne 0 ] || ! command -v apt-get >/dev/null 2>&1; then
  echo "test-deps: the suite needs these Debian packages, missing here: ${need[*]}; as root: apt-get install -y ${need[*]} (the suite also runs as root: network namespaces, users)" >&2
  exit 1
fi

echo "test-deps: installing ${need[*]}" >&2
apt-get update -qq >/dev/null
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends -o DPkg::Lock::Timeout=900 "${need[@]}" >/dev/null
mapfile -t still < <(missing)
if [ "${#still[@]}" -gt 0 ]; then
  echo "test-deps: still missing after apt-get install: ${still[*]}" >&2
  exit 1
fi
