# Shared by scripts/test and bench/*: install the peer tools iomark is
# measured against, from Debian's packages, when they are missing.

apt_install() {
  if [ "$(id -u)" -ne 0 ]; then
    echo "note: not root, cannot install $*; tests that need them will skip" >&2
    return 0
  fi
  if [ -z "${IOMARK_APT_UPDATED:-}" ]; then
    apt-get update -qq >/dev/null
    export IOMARK_APT_UPDATED=1
  fi
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$@" >/dev/null
}

# ensure_peers: fio (with Debian's fio-examples job files, which the job-file
# tests run), iperf3 and likwid-bench, and strace, btrfs-progs, man-db, zsh,
# fish, python3-fusepy and fuse3 for the tests, and Open MPI (openmpi-bin,
# libopenmpi-dev, libclang-dev) for the MPI build and its tests.
ensure_peers() {
  local need=()
  command -v fio >/dev/null 2>&1 || need+=(fio)
  [ -e /usr/share/doc/fio/examples/fio-seq-read.fio ] || need+=(fio-examples)
  # fio_jsonplus_clat2csv (in fio) needs python3-six.
  python3 -c 'import six' >/dev/null 2>&1 || need+=(python3-six)
  command -v iperf3 >/dev/null 2>&1 || need+=(iperf3)
  command -v likwid-bench >/dev/null 2>&1 || need+=(likwid)
  # strace widens race windows in the safety tests (fault injection).
  command -v strace >/dev/null 2>&1 || need+=(strace)
  # btrfs with compress=zstd is a rig the artefacts probe must flag.
  command -v mkfs.btrfs >/dev/null 2>&1 || need+=(btrfs-progs)
  # The completion scripts are syntax-checked by each shell, and the man
  # pages rendered by man (crates/cli/tests/shell_man.rs).
  command -v man >/dev/null 2>&1 || need+=(man-db)
  command -v zsh >/dev/null 2>&1 || need+=(zsh)
  command -v fish >/dev/null 2>&1 || need+=(fish)
  # The verify tests' fake flash drive is a FUSE file system in Python
  # (crates/testrig/rigs/fake_disk.py), run by Debian's python3; fuse3
  # brings fusermount3 for unprivileged mounts.
  /usr/bin/python3 -c 'import fusepy' >/dev/null 2>&1 || need+=(python3-fusepy)
  command -v fusermount3 >/dev/null 2>&1 || need+=(fuse3)
  # The MPI tests (crates/cli/tests/mpi_rig.rs, feature mpi) run under Open
  # MPI's mpirun; mpi-sys builds against libopenmpi-dev with bindgen, which
  # needs libclang.
  command -v mpirun >/dev/null 2>&1 || need+=(openmpi-bin)
  [ -e /usr/lib/x86_64-linux-gnu/openmpi/include/mpi.h ] || [ -n "$(find /usr/lib -name mpi.h -path '*openmpi*' -print -quit 2>/dev/null)" ] || need+=(libopenmpi-dev)
  [ -n "$(find /usr/lib -name 'libclang*.so*' -print -quit 2>/dev/null)" ] || need+=(libclang-dev)
  if [ ${#need[@]} -gt 0 ]; then
    echo "installing test peers: ${need[*]}" >&2
    apt_install "${need[@]}"
  fi
}

# ensure_report_tools: headless Chromium for the report's browser test and
# the DejaVu fonts the PNG charts are drawn with.
ensure_report_tools() {
  local need=()
  command -v chromium >/dev/null 2>&1 || need+=(chromium)
  [ -e /usr/share/fonts/truetype/dejavu/DejaVuSans.ttf ] || need+=(fonts-dejavu-core)
  if [ ${#need[@]} -gt 0 ]; then
    echo "installing report test tools: ${need[*]}" >&2
    apt_install "${need[@]}"
  fi
}
