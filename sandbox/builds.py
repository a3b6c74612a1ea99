"""Compiled programs kept for the next run of the same source.

A reference's special judge is compiled for every item of a group (sixteen rollouts share
one checker) and again for its soundness runs; identical rollouts compile the same
program. `BuildCache` keeps what a successful compile left in the program directory (the
sources dropped), keyed by everything that decides the build: the language's compile
command, the file names and contents, the build flags. A later run with the same key
gets a copy of those files in its own program directory, owned by its own sandbox user,
and skips the compile.

Sharing is safe because the key holds the whole source: a request can only get the build
of a program it sent itself. The cache's files belong to this process's user, in a
private directory under the work root named like a program directory, so a killed
worker's cache is swept with its other leftovers (`sandbox.leftovers`). Bounded by
entries and bytes, least recently used first out.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
import threading
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path

from referee.sandbox import leftovers


@dataclass(frozen=True)
class Build:
    """A cached build: the directory holding its files, the compiler's output, bytes."""

    directory: Path
    output: str
    size: int


class BuildCache:
    """Thread-safe. `close` removes everything it holds."""

    def __init__(self, root: Path | None, max_entries: int, max_bytes: int) -> None:
        """Keeps at most ``max_entries`` builds of ``max_bytes`` in all (0: none), under
        ``root`` (None: the system temp dir)."""
        self._root = root
        self._max_entries = max_entries
        self._max_bytes = max_bytes
        self._entries: OrderedDict[str, Build] = OrderedDict()
        self._bytes = 0
        self._home: Path | None = None
        self._closed = False
        self._lock = threading.Lock()

    @staticmethod
    def key(steps: list[list[str]], files: dict[str, str], flags: list[str]) -> str:
        """What decides a build (the argv of each of its steps, its files, its flags), hashed."""
        blob = json.dumps([steps, sorted(files.items()), flags], ensure_ascii=False)
        return hashlib.sha256(blob.encode("utf-8", "surrogatepass")).hexdigest()

    def get(self, key: str) -> Build | None:
        with self._lock:
            build = self._entries.get(key)
            if build is not None:
                self._entries.move_to_end(key)
            return build

    def put(self, key: str, box: Path, output: str) -> None:
        """Keep a copy of what ``box`` holds now (a compile's files, sources dropped)."""
        if not self._max_entries:
            return
        size = _size(box)
        if size > self._max_bytes // 4:  # one build never pushes out most of the others
            return
        with self._lock:
            if key in self._entries or self._closed:
                return
            home = self._ensure_home()
        directory = Path(tempfile.mkdtemp(dir=home))
        try:
            shutil.copytree(box, directory, symlinks=True, dirs_exist_ok=True)
        except OSError:
            shutil.rmtree(directory, ignore_errors=True)
            return
        with self._lock:
            if key in self._entries or self._closed:
                shutil.rmtree(directory, ignore_errors=True)
                return
            self._entries[key] = Build(directory, output, size)
            self._bytes += size
            self._evict()

    def close(self) -> None:
        with self._lock:
            home, self._home = self._home, None
            self._closed = True
            self._entries.clear()
            self._bytes = 0
        if home is not None:
            shutil.rmtree(home, ignore_errors=True)

    def _ensure_home(self) -> Path:
        if self._home is None:
            self._home = Path(tempfile.mkdtemp(prefix=f"{leftovers.box_prefix()}builds-",
                                               dir=self._root))  # fmt: skip
            os.chmod(self._home, 0o700)
        return self._home

    def _evict(self) -> None:
        while self._entries and (
            len(self._entries) > self._max_entries or self._bytes > self._max_bytes
        ):
            _, build = self._entries.popitem(last=False)
            self._bytes -= build.size
            shutil.rmtree(build.directory, ignore_errors=True)


def _size(box: Path) -> int:
    """Bytes of the regular files under ``box`` (symlinks not followed)."""
    return sum(
        Path(folder, name).lstat().st_size
        for folder, _, names in os.walk(box)
        for name in names
        if not Path(folder, name).is_symlink()
    )
