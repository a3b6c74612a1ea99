"""Verifiable instruction following: IFEval's constraint set (`verifiers.instructions`)."""

from referee.verifiers.instructions.verifier import InstructionsVerifier

__all__ = ["InstructionsVerifier"]
