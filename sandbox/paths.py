"""Names a sandboxed program's files may have: relative paths that stay in its work dir."""

from __future__ import annotations


def plain_name(name: str) -> bool:
    """True for a file name that stays inside the work dir (no path, not . or .., no NUL,
    at most 255 bytes: the longest name a Linux file system takes)."""
    return (
        bool(name)
        and "/" not in name
        and "\0" not in name
        and name not in {".", ".."}
        and len(name.encode("utf-8", "surrogatepass")) <= 255
    )


MAX_PATH_DEPTH = 8
MAX_FILES = 512
"""Files one case or session may be given: each is placed from a file descriptor of its
own, all open at once (a container's default limit is 1,024 per process)."""


def relative_path(name: str) -> bool:
    """True for a path that stays inside the work dir: plain names joined by ``/`` (no
    leading ``/``, no empty, ``.`` or ``..`` part), at most `MAX_PATH_DEPTH` deep."""
    parts = name.split("/")
    return len(parts) <= MAX_PATH_DEPTH and all(plain_name(part) for part in parts)
