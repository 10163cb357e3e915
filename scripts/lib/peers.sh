# Shared by scripts/test and bench/*: install what the tests and the
# benchmarks need, from Debian's packages, when it is missing.
#
# What is there is decided by the package, never by a file glob: a glob
# for libclang once matched libclang-cpp14, which clang-sys ignores, and
# the MPI build failed on every new machine.

# The packages the test suite needs, each with what needs it.
IOMARK_TEST_PACKAGES=(
  fio            # the peer of `iomark disk`, `iomark fio`, the importer
  fio-examples   # fio's job files, which the job-file tests run
  python3-six    # fio_jsonplus_clat2csv (in fio) needs it
  iperf3         # the peer of `iomark net`
  likwid         # likwid-bench, the peer of `iomark mem stream`
  strace         # widens race windows in the safety tests (fault injection)
  btrfs-progs    # btrfs with compress=zstd: a rig the artefacts probe must flag
  e2fsprogs      # mkfs.ext4 for the file-system rigs
  iproute2       # ip and tc: the network-namespace and shaped-link rigs
  man-db         # the man pages rendered by man (tests/shell_man.rs)
  zsh            # the completion scripts are syntax-checked by each shell
  fish
  python3-fusepy # the verify tests' fake flash drive, a FUSE file system
  fuse3          #   in Python (crates/testrig/rigs/fake_disk.py)
  openmpi-bin    # mpirun for the MPI tests (feature mpi)
  libopenmpi-dev # mpi-sys builds against it
  libclang-dev   #   with bindgen, which needs libclang
  chromium       # the report's and iomark serve's browser tests
  python3-websocket # drives Chromium over its DevTools protocol (serve's live page)
  python3-prometheus-client # the OpenMetrics reference parser, for /metrics
  fonts-dejavu-core # the fonts the PNG charts are drawn with
  postgresql     # the store's PostgreSQL tests (scripts/lib/postgres.sh)
  openssl        # the test server's TLS certificates
)

# Those of IOMARK_TEST_PACKAGES that a new machine of the project's kind
# (rust, Debian 12) already has: scripts/fresh-machine-check leaves them,
# and removes the rest, which scripts/test must install itself.
IOMARK_IMAGE_PACKAGES=(python3-six strace e2fsprogs iproute2 man-db fonts-dejavu-core postgresql openssl)

# packages_a_new_machine_lacks: IOMARK_TEST_PACKAGES less
# IOMARK_IMAGE_PACKAGES, one a line.
packages_a_new_machine_lacks() {
  local p k keep
  for p in "${IOMARK_TEST_PACKAGES[@]}"; do
    keep=
    for k in "${IOMARK_IMAGE_PACKAGES[@]}"; do
      [ "$p" = "$k" ] && keep=1
    done
    [ -n "$keep" ] || echo "$p"
  done
}

# is_installed PKG: whether dpkg has PKG installed (not merely known).
is_installed() {
  [ "$(dpkg-query -W -f='${db:Status-Status}' "$1" 2>/dev/null)" = installed ]
}

# missing_packages PKG...: prints those of PKG... that are not installed.
missing_packages() {
  local p
  for p in "$@"; do
    is_installed "$p" || echo "$p"
  done
}

# apt_install PKG...: installs PKG... as root, saying first what it installs.
apt_install() {
  [ $# -gt 0 ] || return 0
  if [ "$(id -u)" -ne 0 ]; then
    echo "note: not root, cannot install $*; tests that need them will skip" >&2
    return 0
  fi
  echo "installing: $*" >&2
  if [ -z "${IOMARK_APT_UPDATED:-}" ]; then
    apt-get update -qq >/dev/null
    export IOMARK_APT_UPDATED=1
  fi
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$@" >/dev/null
}

# ensure_packages PKG...: installs those of PKG... that are missing.
ensure_packages() {
  local need
  mapfile -t need < <(missing_packages "$@")
  apt_install "${need[@]}"
}

# ensure_test_packages: everything the test suite needs.
ensure_test_packages() {
  ensure_packages "${IOMARK_TEST_PACKAGES[@]}"
}

# ensure_peers: the peers the benchmarks measure against.
ensure_peers() {
  ensure_packages fio fio-examples python3-six iperf3 likwid
}

# ensure_iperf3_21: iperf 3.21 built from its release tarball (the peer the
# net tests and bench/vs-iperf3 compare against besides Debian's 3.12), in
# $IOMARK_PEERS_DIR (default /tmp/iomark-bench-peers, shared with the
# benchmark); exports IOMARK_IPERF3_21 with the binary's path. The tarball
# is looked for in $IOMARK_PEER_TARBALLS (default /work/shared/peers); it is
# only unpacked and built there, never copied into the repository. Without
# it the 3.21 tests say so (they skip, or fail under IOMARK_REQUIRE_RIGS=1).
ensure_iperf3_21() {
  local dir=${IOMARK_PEERS_DIR:-/tmp/iomark-bench-peers}
  local bin=$dir/iperf/src/iperf3 tarball
  if [ ! -x "$bin" ]; then
    tarball=$(ls "${IOMARK_PEER_TARBALLS:-/work/shared/peers}"/iperf-3.21-*.tar.gz 2>/dev/null | head -1 || true)
    if [ -z "$tarball" ]; then
      echo "note: no iperf-3.21-*.tar.gz in ${IOMARK_PEER_TARBALLS:-/work/shared/peers}: the iperf 3.21 tests cannot run" >&2
      return 0
    fi
    echo "building iperf 3.21 from $tarball in $dir" >&2
    mkdir -p "$dir" && tar xzf "$tarball" -C "$dir" &&
      (cd "$dir/iperf" && ./configure --disable-shared >/dev/null && make -j2 >/dev/null) ||
      { echo "note: building iperf 3.21 failed: the iperf 3.21 tests cannot run" >&2; return 0; }
  fi
  export IOMARK_IPERF3_21=$bin
}
