"""A run's program files in a fresh host directory, written only when first needed.

Compiled languages and the per-case backends bind the directory into their sandboxes; a
Python run served entirely by the fast path never asks for it, so it pays no mkdtemp,
writes or rmtree.
"""

from __future__ import annotations

import os
import shutil
import stat
import tempfile
import threading
from pathlib import Path

from referee.sandbox import leftovers
from referee.sandbox.identity import HostIdentity
from referee.sandbox.types import SandboxFailure


class ProgramDir:
    """Thread-safe: the first `path` call creates the directory, `remove` deletes it.

    The directory is private: mode 700, owned by the run's sandbox user (``owner``, see
    `sandbox.identity`; None: this process's user), under a random name, so no other
    local user can read the program, plant a file in it or run what a compile left there.
    """

    def __init__(
        self,
        root: Path | None,
        files: dict[str, str],
        owner: HostIdentity | None = None,
        seed: Path | None = None,
    ) -> None:
        """``seed``: a directory whose tree is copied in first (a cached build)."""
        self._root = root
        self._files = files
        self._owner = owner
        self._seed = seed
        self._path: Path | None = None
        self._lock = threading.Lock()

    @property
    def owner(self) -> HostIdentity | None:
        """The host user the run's sandboxes start as (None: this process's user)."""
        return self._owner

    def path(self) -> Path:
        """The directory holding every program file."""
        with self._lock:
            if self._path is None:
                if self._owner is not None:
                    _require_traversable(Path(self._root or tempfile.gettempdir()))
                path = Path(tempfile.mkdtemp(prefix=leftovers.box_prefix(), dir=self._root))
                self._path = path
                if self._seed is not None:
                    self._copy_seed(path, self._seed)
                for name, text in self._files.items():
                    (path / name).write_text(text, encoding="utf-8")
                    self._own(path / name)
                self._own(path)
            return self._path

    def _copy_seed(self, path: Path, seed: Path) -> None:
        """The seed's tree, owned like the rest; executables stay executable."""
        shutil.copytree(seed, path, symlinks=True, dirs_exist_ok=True)
        for folder, dirs, names in os.walk(path):
            for name in [*dirs, *names]:
                entry = Path(folder, name)
                if entry.is_symlink():
                    continue
                self._own(entry, executable=bool(entry.stat().st_mode & stat.S_IXUSR))

    def _own(self, path: Path, executable: bool = False) -> None:
        path.chmod(0o700 if path.is_dir() or executable else 0o600)
        if self._owner is not None:
            os.chown(path, self._owner.uid, self._owner.gid)

    def size(self) -> int:
        """Bytes held by the directory's files (0 before it exists)."""
        with self._lock:
            if self._path is None:
                return 0
            return sum(
                Path(folder, name).lstat().st_size
                for folder, _, names in os.walk(self._path)
                for name in names
            )

    def sanitize(self) -> None:
        """After a compile: no file in the directory keeps a setuid or setgid bit (a
        compile must not leave an executable that runs as someone else)."""
        with self._lock:
            if self._path is None:
                return
            for folder, dirs, names in os.walk(self._path):
                for name in [*dirs, *names]:
                    entry = Path(folder, name)
                    mode = entry.lstat().st_mode
                    if mode & (stat.S_ISUID | stat.S_ISGID) and not stat.S_ISLNK(mode):
                        entry.chmod(stat.S_IMODE(mode) & ~(stat.S_ISUID | stat.S_ISGID))

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


def _require_traversable(root: Path) -> None:
    """Raise `SandboxFailure` when another user cannot reach into ``root`` (a sandbox
    started as a different user must open its program directory there)."""
    for folder in [root.resolve(), *root.resolve().parents]:
        if not folder.stat().st_mode & stat.S_IXOTH:
            raise SandboxFailure(
                f"the sandbox work root {root} is not reachable by other users ({folder} "
                "lacks o+x); sandboxes start as unprivileged users when the server is root"
            )
