"""The Docker backend (the Docker SDK, the ``docker`` extra): for hosts with an engine.

Each command is a fresh container from ``settings.docker_image`` (any image with the
toolchains; the host's toolchain paths are *not* used): ``network_mode=none``, read-only
root, ``cap_drop=ALL``, ``no-new-privileges``, uid 65534, ``pids_limit``, memory with
swap equal to memory (no swap), rlimits as ulimits, the program directory bound at /box
(read-only for cases) and a size-limited tmpfs at /work. Stdin, stdout and stderr go over
the attach socket, read while the container runs with the same capped reader as the other
backends. Every SDK call has a timeout; the container is force-removed in all cases.
"""

from __future__ import annotations

import contextlib
import io
import math
import os
import select
import socket
import struct
import tarfile
import time
from typing import Any

from referee.sandbox.backends.base import Command, Execution, base_env
from referee.sandbox.output import CappedOutput
from referee.sandbox.settings import SandboxSettings
from referee.sandbox.types import SandboxFailure

_STREAMS = {1: "stdout", 2: "stderr"}


class DockerBackend:
    """Containers per command. Thread-safe: the SDK client is shared, containers are not."""

    name = "docker"
    isolating = True
    links = False
    fetches = False
    confines_spawning = False  # its seccomp profile is the engine's; see docs/security.md

    def __init__(self, settings: SandboxSettings) -> None:
        self.settings = settings
        self._client: Any = None

    def _connect(self) -> Any:
        if self._client is None:
            try:
                import docker  # type: ignore[import-untyped]  # noqa: PLC0415 - docker extra
            except ImportError as exc:
                raise SandboxFailure(
                    "the docker SDK is not installed (pip install referee[docker])"
                ) from exc
            try:
                client = docker.from_env(timeout=int(self.settings.docker_timeout_s))
                client.ping()
            except Exception as exc:
                raise SandboxFailure(f"no Docker engine answers: {exc}") from exc
            self._client = client
        return self._client

    def problem(self) -> str | None:
        """None when an engine answers and the image exists; else why not."""
        try:
            client = self._connect()
            client.images.get(self.settings.docker_image)
        except SandboxFailure as exc:
            return str(exc)
        except Exception as exc:  # noqa: BLE001 - image missing or engine error
            return f"image {self.settings.docker_image}: {exc}"
        return None

    def execute(self, command: Command) -> Execution:
        """Run ``command`` in a fresh container; see the module docstring."""
        if command.channel is not None:
            for fd in command.channel.fds():
                with contextlib.suppress(OSError):
                    os.close(fd)
            raise SandboxFailure(
                "linked runs (Python assert tests, whose tests run in a second sandbox) "
                "need the bwrap or process backend; the docker backend cannot pass a channel"
            )
        client = self._connect()
        container = None
        try:
            container = client.containers.create(**self._spec(command))
            sock = container.attach_socket(
                params={"stdin": 1, "stdout": 1, "stderr": 1, "stream": 1}
            )
            raw: socket.socket = sock._sock if hasattr(sock, "_sock") else sock
            start = time.monotonic()
            container.start()
            # Known gap: case files land in the tmpfs just after start (a tmpfs exists only
            # in a running container), so a program that reads them at once may race.
            for name, data in command.files.items():
                container.put_archive("/work", _tar(name, data))
            output, timed_out = _pump(raw, command, start)
            if timed_out or output.exceeded:
                container.kill()
            state = container.wait(timeout=self.settings.docker_timeout_s)
            wall = time.monotonic() - start
            container.reload()
            info = container.attrs
            return Execution(
                returncode=int(state.get("StatusCode", -1)),
                stdout=output.bytes("stdout"),
                stderr=output.bytes("stderr"),
                wall_s=wall,
                cpu_s=0.0,
                memory_kb=0,
                timed_out=timed_out,
                output_exceeded=output.exceeded,
                oom_killed=bool(info.get("State", {}).get("OOMKilled", False)),
            )
        except SandboxFailure:
            raise
        except Exception as exc:
            raise SandboxFailure(f"docker: {exc}") from exc
        finally:
            if container is not None:
                with contextlib.suppress(Exception):
                    container.remove(force=True)

    def _spec(self, command: Command) -> dict[str, Any]:
        from docker.types import Ulimit  # type: ignore[import-untyped]  # noqa: PLC0415 - docker extra

        cpu = max(1, math.ceil(command.cpu_s))
        memory = f"{command.memory_mb}m"
        argv = [a.replace("{box}", "/box").replace("{work}", "/work") for a in command.argv]
        return {
            "image": self.settings.docker_image,
            "command": argv,
            "working_dir": "/box" if command.cwd_is_box else "/work",
            "environment": {**base_env("/work"), **command.env},
            "network_mode": "none",
            "read_only": True,
            "tmpfs": {"/work": f"size={command.disk_mb}m,mode=1777", "/tmp": "size=16m,mode=1777"},
            "volumes": {
                str(command.box): {"bind": "/box", "mode": "rw" if command.box_writable else "ro"}
            },
            "pids_limit": command.processes,
            "mem_limit": memory,
            "memswap_limit": memory,
            "cap_drop": ["ALL"],
            "security_opt": ["no-new-privileges"],
            "user": f"{self.settings.sandbox_uid}:{self.settings.sandbox_uid}",
            "ulimits": [
                Ulimit(name="cpu", soft=cpu, hard=cpu + 1),
                Ulimit(
                    name="fsize", soft=command.file_size_mb << 20, hard=command.file_size_mb << 20
                ),
                Ulimit(name="core", soft=0, hard=0),
            ],
            "stdin_open": True,
            "detach": True,
        }


def _tar(name: str, data: bytes) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        info = tarfile.TarInfo(name)
        info.size = len(data)
        info.mode = 0o644
        tar.addfile(info, io.BytesIO(data))
    return buf.getvalue()


def _pump(raw: socket.socket, command: Command, start: float) -> tuple[CappedOutput, bool]:
    """Send stdin, then read the multiplexed attach stream (8-byte frame headers) until
    EOF, the output cap, or the wall deadline. Returns (output, timed_out)."""
    output = CappedOutput(command.output_bytes)
    raw.sendall(command.stdin)
    with contextlib.suppress(OSError):
        raw.shutdown(socket.SHUT_WR)
    buffer = b""
    deadline = start + command.wall_s
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            return output, True
        ready, _, _ = select.select([raw], [], [], left)
        if not ready:
            continue
        chunk = raw.recv(1 << 16)
        if not chunk:
            return output, False
        buffer += chunk
        while len(buffer) >= 8:
            kind, size = buffer[0], struct.unpack(">I", buffer[4:8])[0]
            if len(buffer) < 8 + size:
                break
            if output.feed(_STREAMS.get(kind, "stderr"), buffer[8 : 8 + size]):
                return output, False
            buffer = buffer[8 + size :]
