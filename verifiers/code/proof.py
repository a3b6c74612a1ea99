"""What proves that a test run in the program's own process ran to its end
(`verifiers.code.inprocess`): a random exit status and a line holding a random 64-bit
nonce, last on standard output, both shown by a ``main`` of ours after the test's returned.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass

FAILURE_STATUSES = frozenset({101})
"""Exit statuses a language gives a failing test on its own: Rust's panic (a failed
``assert!``) exits 101. (Go's panic exits 2; C and C++ traps and aborts are signals.)"""
PROOF_STATUSES = tuple(s for s in range(3, 120) if s not in FAILURE_STATUSES)
"""A proof is never a failure's status: with 101 among them, a Rust program whose
assertion failed passed once in 117 runs (a wrong answer scored 1.0 in the hack corpus)."""


MARK = "referee-proof-"
"""Starts the line that proves completion; the 16 hex digits of the nonce follow."""


@dataclass(frozen=True)
class Proof:
    """What proves an in-process test ran to its end: the process exits with ``status``
    and its standard output ends with ``marker``. ``label`` names the renamed test
    ``main`` and is drawn apart, so reading a name reveals nothing of the proof.

    The status alone is ~7 bits: a wrong program exiting with a guessed status passed
    once in 116 runs. The nonce makes a guess hopeless (2**-64)."""

    status: int
    nonce: int
    label: int

    @classmethod
    def drawn(cls) -> Proof:
        """A fresh random proof (per scored item)."""
        status = PROOF_STATUSES[secrets.randbelow(len(PROOF_STATUSES))]
        return cls(status, secrets.randbits(64), secrets.randbits(48))

    @property
    def marker(self) -> str:
        return f"\n{MARK}{self.nonce:016x}\n"

    @property
    def key(self) -> str:
        """What the verdict of a test run in a sandbox of its own carries
        (`boundary.assembly.read_verdict`): given to the tests' harness only."""
        return f"{self.nonce:016x}"

    @property
    def name(self) -> str:
        """The random suffix of the renamed test's identifiers."""
        return f"{self.label:012x}"

    def shown(self, exit_code: int | None, stdout: str) -> bool:
        """Whether a run ended as only a completed test ends."""
        return exit_code == self.status and stdout.endswith(self.marker)
