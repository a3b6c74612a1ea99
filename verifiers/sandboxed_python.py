"""Run a small Python harness in the sandbox for verifiers that need one (python graders,
SQL), in the given sandbox, with the sandbox layer's failures mapped to
``error`` so a broken sandbox is never mistaken for a wrong answer."""

from __future__ import annotations

from referee.sandbox import Case, CaseOutcome, Limits, Program, Sandbox
from referee.verifiers.code.runtime import require_ok


def run_python(
    sandbox: Sandbox,
    source: str,
    stdin: str,
    timeout_s: float,
    memory_mb: int,
    files: dict[str, str] | None = None,
) -> CaseOutcome:
    """Run ``source`` as python3 with ``stdin``; the case's outcome (timeouts included).

    Raises `ItemError` when the sandbox itself failed.
    """
    program = Program(language="python3", source=source, files=files or {})
    limits = Limits(wall_s=timeout_s, cpu_s=timeout_s, memory_mb=memory_mb)
    return require_ok(sandbox.run(program, [Case(stdin=stdin)], limits)).cases[0]
