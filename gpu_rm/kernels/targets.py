"""Compile every Triton kernel of the package for real GPU targets, without a GPU.

Triton's interpreter (``TRITON_INTERPRET=1``, used by the numerics tests on CPU) accepts
kernels that its compiler rejects, so numerics on CPU prove nothing about a GPU build.
`compile_all` runs Triton's real compiler (``triton.compile`` on an ``ASTSource``) for a
``GPUTarget`` down to PTX and a cubin (Triton ships its own ``ptxas``), with the argument
types each launcher really passes. It must run in a process where ``TRITON_INTERPRET``
is unset when Triton is first imported (the decorator then builds compilable kernels):
``python -m referee.gpu_rm.kernels.targets`` does that and exits non-zero on any failure.
"""

from __future__ import annotations

import os
import sys
from typing import Any

import triton  # type: ignore[import-untyped]
from triton.backends.compiler import GPUTarget  # type: ignore[import-untyped]
from triton.compiler import ASTSource  # type: ignore[import-untyped]

from referee.gpu_rm.kernels import triton_logprobs, triton_score, triton_tokens
from referee.gpu_rm.kernels.build import Build

ARCHITECTURES: tuple[int, ...] = (80, 90)
"""sm_80 (A100) and sm_90 (H100/H200)."""

_FLOAT_TYPES = ("fp32", "bf16", "fp16")


def builds() -> list[Build]:
    """Every kernel in every dtype its launcher passes."""
    return [
        b
        for dtype in _FLOAT_TYPES
        for module in (triton_score, triton_tokens, triton_logprobs)
        for b in module.builds(dtype)
    ]


def compile_build(build: Build, arch: int) -> dict[str, Any]:
    """Compile ``build`` for ``sm_<arch>``; returns Triton's assembly by stage (ptx, cubin).
    Raises whatever Triton raises when the kernel does not compile."""
    signature = dict(build.signature)
    for name in build.constexprs:
        signature[name] = "constexpr"
    source = ASTSource(fn=build.fn, signature=signature, constexprs=dict(build.constexprs))
    compiled = triton.compile(source, target=GPUTarget("cuda", arch, 32))
    return dict(compiled.asm)


def compile_all(architectures: tuple[int, ...] = ARCHITECTURES) -> list[str]:
    """Compile every build for every architecture; the failures as readable lines."""
    if os.environ.get("TRITON_INTERPRET", "0") not in ("", "0"):
        return ["TRITON_INTERPRET is set: the interpreter would be checked, not the compiler"]
    failures: list[str] = []
    for build in builds():
        for arch in architectures:
            try:
                asm = compile_build(build, arch)
            except Exception as exc:  # noqa: BLE001 - report every kernel, not the first
                first = str(exc).strip().splitlines()[-1:] or [type(exc).__name__]
                failures.append(f"{build.label()} sm_{arch}: {type(exc).__name__}: {first[0]}")
                continue
            if "ptx" not in asm or "cubin" not in asm:
                failures.append(f"{build.label()} sm_{arch}: no ptx/cubin in {sorted(asm)}")
    return failures


def main() -> int:
    """Entry point of ``python -m referee.gpu_rm.kernels.targets``: 0 when every kernel compiles."""
    failures = compile_all()
    for line in failures:
        print(line, file=sys.stderr)
    if not failures:
        print(f"compiled {len(builds())} kernel builds for sm_{ARCHITECTURES}")
    return 1 if failures else 0


if __name__ == "__main__":
    raise SystemExit(main())
