"""The data directory (`Settings.data_dir`): whether it can hold what must outlive the
server, for ``referee doctor``."""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

from referee.sandbox.doctor import Check


def check_data_dir(path: Path) -> Check:
    """Create ``path`` if needed, write a file in it, and report its free space. A data
    directory that cannot be written is ``required``: embedded jobs could not be kept."""
    try:
        path.mkdir(mode=0o700, parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=path, prefix=".doctor-"):
            pass
        free = shutil.disk_usage(path).free
    except OSError as exc:
        reason = exc.strerror or str(exc)
        return Check("data directory", False, f"{path}: not writable: {reason}", required=True)
    return Check("data directory", True, f"{path}: writable, {free / 1e9:.1f} GB free")
