"""A run's program files in a fresh host directory, written only when first needed.

Compiled languages and the per-case backends bind the directory into their sandboxes; a
Python run served entirely by the fast path never asks for it, so it pays no mkdtemp,
writes or rmtree.
"""

from __future__ import annotations

import shutil
import tempfile
import threading
from pathlib import Path


class ProgramDir:
    """Thread-safe: the first `path` call creates the directory, `remove` deletes it."""

    def __init__(self, root: Path | None, files: dict[str, str]) -> None:
        self._root = root
        self._files = files
        self._path: Path | None = None
        self._lock = threading.Lock()

    def path(self) -> Path:
        """The directory (mode 755) holding every program file."""
        with self._lock:
            if self._path is None:
                path = Path(tempfile.mkdtemp(prefix="referee-box-", dir=self._root))
                self._path = path
                path.chmod(0o755)
                for name, text in self._files.items():
                    (path / name).write_text(text, encoding="utf-8")
            return self._path

    def drop(self, names: list[str]) -> None:
        """Delete these files (the sources, once compiled: a program must not read its
        own source, or a test compiled into it, while it runs)."""
        with self._lock:
            if self._path is not None:
                for name in names:
                    (self._path / name).unlink(missing_ok=True)

    def remove(self) -> None:
        """Delete the directory, if it was ever created."""
        with self._lock:
            if self._path is not None:
                shutil.rmtree(self._path, ignore_errors=True)
                self._path = None
