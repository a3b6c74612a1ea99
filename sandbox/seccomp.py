"""A seccomp filter that keeps a program from starting other processes (threads stay).

A program whose tests run in its own process (C, C++, Go, Java, Rust assert tests) could
otherwise fork, try a guess in the child and watch whether the test's assertion killed it:
the test becomes an oracle and any answer with few possible values is found, without the
problem solved. With this filter ``fork``, ``vfork`` and ``clone`` without
``CLONE_THREAD`` fail with ``EPERM``; ``clone3`` fails with ``ENOSYS``, which makes the C
library fall back to ``clone`` for threads (its flags cannot be inspected by seccomp: they
sit behind a pointer). System calls of another architecture's ABI (x32, i386) fail with
``EPERM`` too, so the same calls cannot come in under other numbers.

Nor can the program install a filter of its own (``seccomp``, ``prctl(PR_SET_SECCOMP)``:
``EPERM``): one that traps ``exit_group`` would let it see the raw system call with which
a failed assertion ends the process (`verifiers.code.native`) and carry on.

The filter is classic BPF over ``struct seccomp_data`` (``nr`` at offset 0, ``arch`` at 4,
the first argument's low 32 bits at 16 on little-endian hosts), built here rather than
through libseccomp, which would be one more native dependency for fifteen instructions.
"""

from __future__ import annotations

import platform
import struct
from dataclasses import dataclass

_LD_W_ABS = 0x20  # BPF_LD | BPF_W | BPF_ABS
_JEQ_K = 0x15  # BPF_JMP | BPF_JEQ | BPF_K
_JGE_K = 0x35  # BPF_JMP | BPF_JGE | BPF_K
_JSET_K = 0x45  # BPF_JMP | BPF_JSET | BPF_K
_RET_K = 0x06  # BPF_RET | BPF_K

_ALLOW = 0x7FFF0000
_ERRNO = 0x00050000
_EPERM = 1
_ENOSYS = 38
_CLONE_THREAD = 0x00010000
_PR_SET_SECCOMP = 22
_X32_BIT = 0x40000000


@dataclass(frozen=True)
class _Abi:
    audit_arch: int
    clone: int
    clone3: int
    seccomp: int
    prctl: int
    forks: tuple[int, ...]
    """``fork`` and ``vfork`` where the ABI has them."""
    x32: bool


_ABIS = {
    "x86_64": _Abi(
        0xC000003E, clone=56, clone3=435, seccomp=317, prctl=157, forks=(57, 58), x32=True
    ),
    "aarch64": _Abi(0xC00000B7, clone=220, clone3=435, seccomp=277, prctl=167, forks=(), x32=False),
}


def supported() -> bool:
    """Whether this host's architecture has a filter."""
    return platform.machine() in _ABIS


def no_spawn_filter() -> bytes:
    """The filter for this host, as ``struct sock_filter[]`` bytes for bwrap ``--seccomp``.
    Raises `RuntimeError` on an architecture without one (see `supported`)."""
    abi = _ABIS.get(platform.machine())
    if abi is None:
        raise RuntimeError(f"no seccomp filter for {platform.machine()}")
    return b"".join(struct.pack("<HBBI", *op) for op in _program(abi))


_Op = tuple[int, int, str | None, str | None]
"""(code, k, label jumped to when true, when false); None: the next instruction."""


def _program(abi: _Abi) -> list[tuple[int, int, int, int]]:
    """The filter as (code, jump if true, jump if false, k) instructions."""
    ops: list[_Op | str] = [
        (_LD_W_ABS, 4, None, None),  # arch
        (_JEQ_K, abi.audit_arch, None, "deny"),
        (_LD_W_ABS, 0, None, None),  # nr
    ]
    if abi.x32:
        ops.append((_JGE_K, _X32_BIT, "deny", None))
    ops += [(_JEQ_K, nr, "deny", None) for nr in abi.forks]
    ops += [
        (_JEQ_K, abi.seccomp, "deny", None),
        (_JEQ_K, abi.prctl, None, "not_prctl"),
        (_LD_W_ABS, 16, None, None),  # prctl's option
        (_JEQ_K, _PR_SET_SECCOMP, "deny", "allow"),
        "not_prctl",
    ]
    ops += [
        (_JEQ_K, abi.clone3, "nosys", None),
        (_JEQ_K, abi.clone, None, "allow"),
        (_LD_W_ABS, 16, None, None),  # clone's flags (low half)
        (_JSET_K, _CLONE_THREAD, "allow", "deny"),
        "allow",
        (_RET_K, _ALLOW, None, None),
        "deny",
        (_RET_K, _ERRNO | _EPERM, None, None),
        "nosys",
        (_RET_K, _ERRNO | _ENOSYS, None, None),
    ]
    return _assembled(ops)


def _assembled(ops: list[_Op | str]) -> list[tuple[int, int, int, int]]:
    """Labels resolved to the relative jumps BPF wants (counted from the next instruction)."""
    labels: dict[str, int] = {}
    for op in ops:
        if isinstance(op, str):
            labels[op] = sum(1 for o in ops[: ops.index(op)] if not isinstance(o, str))
    code = [op for op in ops if not isinstance(op, str)]

    def offset(label: str | None, at: int) -> int:
        return 0 if label is None else labels[label] - at - 1

    return [(c, offset(t, at), offset(f, at), k) for at, (c, k, t, f) in enumerate(code)]
