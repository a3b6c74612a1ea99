"""What the host offers the sandbox: the toolchains a language needs (`missing_tools`),
the Rust sysroot to bind, and whether a directory is readable by the sandboxes' users."""

from __future__ import annotations

import functools
import logging
import os
import shutil
import stat
import subprocess
from pathlib import Path

from referee.sandbox.languages import Language

log = logging.getLogger(__name__)


@functools.lru_cache(maxsize=4)
def rust_sysroot(shared: bool = False) -> Path | None:
    """The host's Rust toolchain directory (bound read-only at ``/opt/rust``), or None.

    rustup installs under ``~/.cargo/bin``, which is usually not on PATH for services;
    we look there too, then at Debian's ``/usr/bin/rustc``. With ``shared`` (sandboxes
    start as other users than ours: `sandbox.identity`), only a toolchain every user can
    read counts (a rustup under root's 0700 home does not). Each rustc is asked once
    (10 s timeout); the answers are cached."""
    search = os.pathsep.join(
        [os.environ.get("PATH", ""), str(Path.home() / ".cargo" / "bin"), "/root/.cargo/bin"]
    )
    for rustc in dict.fromkeys([shutil.which("rustc", path=search), "/usr/bin/rustc"]):
        root = _sysroot_of(rustc) if rustc else None
        if root is not None and (not shared or readable_by_all(root)):
            return root
    return None


def _sysroot_of(rustc: str) -> Path | None:
    try:
        done = subprocess.run(
            [rustc, "--print", "sysroot"],
            capture_output=True,
            text=True,
            timeout=10,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    root = Path(done.stdout.strip())
    return root if done.returncode == 0 and (root / "bin" / "rustc").exists() else None


@functools.cache
def java_library_types() -> dict[str, frozenset[str]]:
    """The JDK's top-level type names by package (``java.util`` -> ``{"Arrays", ...}``),
    read once from its module image with ``jimage``; empty when there is no JDK."""
    java = shutil.which("java")
    if java is None:
        return {}
    home = Path(java).resolve().parent.parent
    try:
        done = subprocess.run(
            [str(home / "bin" / "jimage"), "list", str(home / "lib" / "modules")],
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        log.warning(
            "the JDK's types could not be listed (%s): Java programs declaring a "
            "library type's name are not refused",
            exc,
        )
        return {}
    found: dict[str, set[str]] = {}
    for line in done.stdout.splitlines():
        path = line.strip()
        if path.endswith(".class") and "$" not in path and "/" in path:
            package, _, name = path[: -len(".class")].rpartition("/")
            found.setdefault(package.replace("/", "."), set()).add(name)
    return {package: frozenset(names) for package, names in found.items()}


def readable_by_all(root: Path) -> bool:
    """Whether any user can reach ``root`` (o+x on it and every parent) and read it:
    sandboxes started as a fresh unprivileged uid (`sandbox.identity`) must."""
    chain = [root, *root.parents]
    return all(p.stat().st_mode & stat.S_IXOTH for p in chain) and bool(
        root.stat().st_mode & stat.S_IROTH
    )


def missing_tools(lang: Language, shared: bool = False, runtime: Path | None = None) -> list[str]:
    """Host tools the language needs but that are absent (empty when it is usable);
    ``shared``: as for `rust_sysroot`; ``runtime``: the runtime directory, if any."""
    missing: list[str] = []
    for tool in lang.runtime_tools:
        if runtime is None or not (runtime / tool).exists():
            where = "no runtime configured" if runtime is None else f"not in {runtime}"
            missing.append(
                f"{tool} ({where}: build it with scripts/build-runtime.sh and set "
                "REFEREE_SANDBOX_RUNTIME_DIR)"
            )
    for tool in lang.tools:
        if tool == "rustc":
            if rust_sysroot(shared) is None:
                where = " readable by every user" if shared else ""
                missing.append(f"rustc (no Rust toolchain{where}: apt-get install rustc)")
        elif not Path(tool).exists():
            missing.append(f"{tool} (apt-get install {lang.package})" if lang.package else tool)
    return missing
