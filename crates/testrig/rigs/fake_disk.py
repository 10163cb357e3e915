#!/usr/bin/python3
"""A FUSE file system serving one file, disk.img, that behaves like a fake
or failing flash drive, for iomark's verify tests (crates/testrig,
FakeDisk):

  --mode wrap       the file claims --size bytes but holds only --real:
                    offsets beyond it map back to the start (offset modulo
                    --real), as a fake-capacity USB stick does;
  --mode lost:A-B   writes to bytes A..B are acknowledged and dropped; reads
                    there return what was there before (zeros);
  --mode eio:A      reads and writes that reach byte A or beyond fail with
                    EIO, as a drive failing in mid-run.

The data lives in memory. Mounted with direct_io, so every read and write
reaches this process and no page cache hides what it does.
"""

import argparse
import errno
import stat
import sys
import time

try:
    from fusepy import FUSE, FuseOSError, Operations  # Debian's python3-fusepy
except ImportError:
    from fuse import FUSE, FuseOSError, Operations  # fusepy from PyPI

NAME = "/disk.img"


class FakeDisk(Operations):
    def __init__(self, size, real, lost, fails_from=None):
        self.size = size
        self.real = real
        self.lost = lost
        self.fails_from = fails_from
        self.data = bytearray(real)
        self.now = time.time()

    def getattr(self, path, fh=None):
        if path == "/":
            return dict(st_mode=stat.S_IFDIR | 0o755, st_nlink=2,
                        st_ctime=self.now, st_mtime=self.now, st_atime=self.now)
        if path == NAME:
            return dict(st_mode=stat.S_IFREG | 0o600, st_nlink=1, st_size=self.size,
                        st_ctime=self.now, st_mtime=self.now, st_atime=self.now)
        raise FuseOSError(errno.ENOENT)

    def readdir(self, path, fh):
        return [".", "..", NAME[1:]]

    def open(self, path, flags):
        if path != NAME:
            raise FuseOSError(errno.ENOENT)
        return 0

    def truncate(self, path, length, fh=None):
        if length != self.size:
            raise FuseOSError(errno.EPERM)

    def _pieces(self, offset, length):
        """(offset in the file, offset in memory, length) of each piece that
        does not cross the wrap point."""
        end = min(offset + length, self.size)
        while offset < end:
            at = offset % self.real
            n = min(end - offset, self.real - at)
            yield offset, at, n
            offset += n

    def _check(self, offset, length):
        if self.fails_from is not None and offset + length > self.fails_from:
            raise FuseOSError(errno.EIO)

    def read(self, path, length, offset, fh):
        self._check(offset, length)
        out = bytearray()
        for _, at, n in self._pieces(offset, length):
            out += self.data[at:at + n]
        return bytes(out)

    def write(self, path, buf, offset, fh):
        self._check(offset, len(buf))
        for file_at, at, n in self._pieces(offset, len(buf)):
            start = file_at - offset
            piece = buf[start:start + n]
            if self.lost:
                a, b = self.lost
                # Keep only the bytes outside the lost range.
                for lo, hi in ((file_at, min(file_at + n, a)), (max(file_at, b), file_at + n)):
                    if lo < hi:
                        self.data[at + lo - file_at:at + hi - file_at] = piece[lo - file_at:hi - file_at]
            else:
                self.data[at:at + n] = piece
        return len(buf)

    def flush(self, path, fh):
        return 0

    def fsync(self, path, datasync, fh):
        return 0


def main():
    p = argparse.ArgumentParser()
    p.add_argument("mountpoint")
    p.add_argument("--size", type=int, required=True)
    p.add_argument("--real", type=int)
    p.add_argument("--mode", default="wrap")
    a = p.parse_args()
    lost = None
    fails_from = None
    real = a.real or a.size
    if a.mode.startswith("lost:"):
        lo, hi = a.mode[5:].split("-")
        lost = (int(lo), int(hi))
        real = a.size
    elif a.mode.startswith("eio:"):
        fails_from = int(a.mode[4:])
        real = a.size
    elif a.mode != "wrap":
        sys.exit(f"unknown mode {a.mode}")
    FUSE(FakeDisk(a.size, real, lost, fails_from), a.mountpoint, foreground=True,
         direct_io=True, nothreads=True, big_writes=True, max_write=1048576)


if __name__ == "__main__":
    main()
