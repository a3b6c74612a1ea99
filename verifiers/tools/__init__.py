"""Function-call correctness: parse a model's tool calls and check them against gold calls
with the BFCL AST checker's semantics (`verifiers.tools.verifier`)."""

from referee.verifiers.tools.verifier import ToolCallVerifier

__all__ = ["ToolCallVerifier"]
