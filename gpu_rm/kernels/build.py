"""What a kernel is compiled as: one specialisation, for `gpu_rm.kernels.targets`."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Build:
    """One specialisation of a kernel: argument name -> Triton type, and constexprs."""

    kernel: str
    fn: Any
    signature: dict[str, str]
    constexprs: dict[str, Any] = field(default_factory=dict)

    def label(self) -> str:
        """A short name for reports: kernel and its pointer types."""
        pointers = sorted({t for t in self.signature.values() if t.startswith("*")})
        return f"{self.kernel}[{','.join(pointers)}]"
