"""Sandbox settings (pydantic-settings, prefix ``REFEREE_SANDBOX_``), read when constructed.

Example: ``REFEREE_SANDBOX_BACKEND=process`` or ``REFEREE_SANDBOX_LIMITS__WALL_S=2``.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Literal

from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict

from referee.sandbox.types import Limits


def _default_parallelism() -> int:
    return max(1, os.cpu_count() or 1)


class SandboxSettings(BaseSettings):
    """``backend``: bwrap (default), docker, or process (NOT isolating: trusted code only).
    ``python_fast_path``: serve python3 cases from a pre-started interpreter (bwrap only).
    ``parallelism``: cases of one run executed at once. ``work_root``: host directory for
    per-run program directories (None: the system temp dir)."""

    # An empty variable is an unset one (`REFEREE_SANDBOX_RUNTIME_DIR=` from a compose
    # file's `${RUNTIME:-}`), never the path "." or an empty command.
    model_config = SettingsConfigDict(
        env_prefix="REFEREE_SANDBOX_", env_nested_delimiter="__", env_ignore_empty=True
    )

    backend: Literal["bwrap", "docker", "process"] = "bwrap"
    python_fast_path: bool = True
    parallelism: int = Field(default_factory=_default_parallelism, ge=1, le=256)
    limits: Limits = Field(default_factory=Limits)
    work_root: Path | None = None
    bwrap_path: str = "/usr/bin/bwrap"
    sandbox_uid: int = 65534
    """The uid inside the sandbox (and its gid)."""
    host_uid_base: int = Field(default=1_000_000_000, ge=1000, le=4_000_000_000)
    host_uid_span: int = Field(default=1 << 24, ge=16, le=1 << 28)
    """Started as root, each run's bwrap starts as an unprivileged host uid drawn from
    ``[host_uid_base, host_uid_base + host_uid_span)`` (`sandbox.identity`)."""
    runtime_dir: Path | None = None
    """A read-only directory of extra packages (numpy, lodash, jars...) built by
    ``scripts/build-runtime.sh``, shown to every sandboxed program at ``/opt/runtime``
    (`languages.RUNTIME_MOUNT`). None: programs see the host's system packages only."""
    build_cache_entries: int = Field(default=256, ge=0, le=65536)
    build_cache_mb: int = Field(default=1024, ge=0, le=1 << 20)
    """Compiled programs kept for the next run of the same source (`sandbox.builds`);
    0 in either turns the cache off."""
    docker_image: str = "referee-sandbox:latest"
    docker_timeout_s: float = 30.0
