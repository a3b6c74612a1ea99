"""Capped capture of a child's stdout and stderr.

Output is read *while the program runs* (never after exit, so a chatty program cannot
fill a pipe and stall into a false timeout) and kept up to one shared byte budget. The
first byte over the budget marks the capture as exceeded; the caller then has the run
killed and reports ``output_limit``. The kept prefix is returned either way.
"""

from __future__ import annotations


class CappedOutput:
    """Two byte streams sharing one budget of ``cap`` bytes. Not thread-safe."""

    def __init__(self, cap: int) -> None:
        self.cap = cap
        self.kept = 0
        self.exceeded = False
        self._parts: dict[str, list[bytes]] = {"stdout": [], "stderr": []}

    def feed(self, stream: str, data: bytes) -> bool:
        """Add ``data`` read from ``stream``; return True once the budget is exceeded."""
        room = self.cap - self.kept
        if len(data) > room:
            self.exceeded = True
            data = data[: max(room, 0)]
        if data:
            self._parts[stream].append(data)
            self.kept += len(data)
        return self.exceeded

    def bytes(self, stream: str) -> bytes:
        """Everything kept from ``stream``."""
        return b"".join(self._parts[stream])

    def text(self, stream: str) -> str:
        """Kept bytes of ``stream`` decoded as UTF-8; invalid bytes (including a multibyte
        character cut by the cap) are replaced, never raised on."""
        return self.bytes(stream).decode("utf-8", errors="replace")
