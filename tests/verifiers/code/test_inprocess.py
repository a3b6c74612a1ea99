"""The completion proof of in-process assert tests (`verifiers.code.inprocess`): the exit
status that says the test ran to its end is never one a failing test exits with."""

from __future__ import annotations

import pytest

from referee.sandbox import Case, Program, Sandbox, SandboxSettings
from referee.verifiers.code.inprocess import FAILURE_STATUSES, PROOF_STATUSES, program, proof


def test_no_proof_is_a_failures_status() -> None:
    """With Rust's panic status (101) among the proofs, a Rust program whose assertion
    failed passed once in 117 runs: the hack corpus's plain wrong answer scored 1.0."""
    proofs = {proof(secret) for secret in range(10 * len(PROOF_STATUSES))}
    assert proofs == set(PROOF_STATUSES)
    assert not proofs & FAILURE_STATUSES


@pytest.mark.slow
def test_a_failed_rust_assertion_exits_with_a_failure_status() -> None:
    """The statuses left out are what the toolchains here really exit with: a failed
    ``assert_eq!`` in the program built for the test, whatever proof it carries."""
    test = "fn main() {\n    assert_eq!(add(2, 3), 5);\n}\n"
    built, status = program("rust", "", "fn add(a: i32, b: i32) -> i32 { a - b }", test, 7)
    right = Program(language="rust", source=built.source.replace("a - b", "a + b"))
    with Sandbox(SandboxSettings()) as sandbox:
        [case] = sandbox.run(built, [Case()]).cases
        [passed] = sandbox.run(right, [Case()]).cases
    assert case.exit_code in FAILURE_STATUSES and case.exit_code != status, case
    assert passed.exit_code == status, passed
