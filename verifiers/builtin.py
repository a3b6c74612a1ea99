"""The verifiers that ship with referee."""

from __future__ import annotations

from verifiers.base import Verifier


def builtin_verifiers() -> list[Verifier]:
    """Fresh instances of every built-in verifier."""
    from verifiers.rules.string_match import StringVerifier

    return [StringVerifier()]
