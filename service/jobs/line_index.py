"""Finding the n-th line of a job's file without reading the file up to it every time.

A `LineIndex` remembers the byte offset of every `STRIDE`-th non-blank line of one file,
as far as it has read (and never past the limit it is given: a results file is indexed
only up to its committed end, which never changes once written). A lookup seeks to the
nearest remembered line and reads at most `STRIDE` lines from there; the first lookup
far into a file reads up to it once. `LineIndexes` keeps one per file, for a bounded
number of files, keyed by the file's identity (device, inode), so a replaced file gets a
fresh index.
"""

from __future__ import annotations

import os
import threading
from collections import OrderedDict
from pathlib import Path
from typing import BinaryIO

STRIDE = 1024
KEPT_FILES = 64


class LineIndex:
    """Offsets of every `STRIDE`-th non-blank line of one file, read so far."""

    def __init__(self) -> None:
        self._starts = [0]  # [k]: where non-blank line k * STRIDE starts (0: the file's start)
        self._lines = 0  # non-blank lines in the first self._end bytes
        self._end = 0  # bytes indexed so far (whole lines only)
        self._lock = threading.Lock()

    def line(self, path: Path, index: int, limit: int | None) -> bytes | None:
        """The ``index``-th non-blank line of ``path`` (without its newline) within its
        first ``limit`` bytes (all of it: None), or None when there is none."""
        if index < 0:
            return None
        with self._lock, path.open("rb") as source:
            self._extend(source, index, limit)
            stride = min(index // STRIDE, len(self._starts) - 1)
            source.seek(self._starts[stride])
            seen = stride * STRIDE
            while line := source.readline():
                if limit is not None and source.tell() > limit:
                    return None
                if not line.strip():
                    continue
                if seen == index:
                    return line.rstrip(b"\n")
                seen += 1
        return None

    def _extend(self, source: BinaryIO, index: int, limit: int | None) -> None:
        """Read on from where the index stopped until it covers ``index`` (or the file,
        or its first ``limit`` bytes, end), remembering every `STRIDE`-th line's start.
        A last line without its newline (still being written) is left for later."""
        if index < len(self._starts) * STRIDE:
            return
        source.seek(self._end)
        for line in source:  # iterating a file reads ahead in C: the fast way through it
            start = self._end
            if not line.endswith(b"\n") or (limit is not None and start + len(line) > limit):
                return
            self._end = start + len(line)
            if line.strip():
                if self._lines and self._lines % STRIDE == 0:
                    self._starts.append(start)
                self._lines += 1
                if index < len(self._starts) * STRIDE:
                    return


class LineIndexes:
    """One `LineIndex` per file, at most `KEPT_FILES` of them (the least recently used
    one out first)."""

    def __init__(self) -> None:
        self._kept: OrderedDict[tuple[int, int], LineIndex] = OrderedDict()
        self._lock = threading.Lock()

    def line(self, path: Path, index: int, limit: int | None = None) -> bytes | None:
        """`LineIndex.line` on ``path``'s index; None for a missing file."""
        try:
            stat = os.stat(path)
        except FileNotFoundError:
            return None
        key = (stat.st_dev, stat.st_ino)
        with self._lock:
            index_of = self._kept.pop(key, None) or LineIndex()
            self._kept[key] = index_of
            while len(self._kept) > KEPT_FILES:
                self._kept.popitem(last=False)
        try:
            return index_of.line(path, index, limit)
        except FileNotFoundError:
            return None
