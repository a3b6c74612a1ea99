"""Procedural reasoning tasks: reasoning-gym's datasets scored with their own scorers,
except where a scorer evaluates the answer as code or can be fooled
(`verifiers.reasoning.verifier`)."""

from referee.verifiers.reasoning.verifier import ReasoningGymVerifier

__all__ = ["ReasoningGymVerifier"]
