"""Every scoring engine's settings in one value: read once from the environment
(`EngineSettings.from_env`) by whoever starts the service, the CLI or a worker, then
handed to the verifiers that need them (`verifiers.builtin.builtin_verifiers`) and
across process boundaries (the embedded pool's workers get a copy). Nothing below this
reads the environment for settings."""

from __future__ import annotations

import os
from pathlib import Path

from pydantic import BaseModel, Field, ValidationError

from referee.gpu_rm.settings import RMSettings
from referee.sandbox.settings import SandboxSettings
from referee.verifiers.budget import DEFAULT_BUDGET_S
from referee.verifiers.judge.profiles import JudgeSettings


class EngineSettings(BaseModel):
    """``sandbox`` (``REFEREE_SANDBOX_*``), ``judge`` (``REFEREE_JUDGE_*``; None with
    ``judge_error`` when they do not parse: judge items then say so, nothing else
    breaks), ``rm`` (``REFEREE_RM_*``), ``sql_fixtures`` (``REFEREE_SQL_FIXTURES``),
    ``cpu_budget_s`` (``REFEREE_CPU_BUDGET_S``)."""

    sandbox: SandboxSettings = Field(default_factory=SandboxSettings)
    judge: JudgeSettings | None = Field(default_factory=JudgeSettings)
    judge_error: str | None = None
    rm: RMSettings = Field(default_factory=RMSettings)
    sql_fixtures: Path | None = None
    cpu_budget_s: float = Field(default=DEFAULT_BUDGET_S, gt=0, le=3600)
    """CPU seconds a verifier whose cost the response drives (``math``'s sympy,
    ``reasoning_gym``'s scorers, ``instructions``, ``similarity``, ``choice``,
    ``tool_call``) may spend on one item in a worker pool; past it the item scores 0,
    flagged ``over_budget`` (`referee.verifiers.budget`). Keep it under the item
    timeout, or items time out first."""

    @classmethod
    def from_env(cls) -> EngineSettings:
        """Read every engine's settings from the environment, once."""
        try:
            judge: JudgeSettings | None = JudgeSettings()
            error = None
        except ValidationError as exc:
            judge, error = None, f"judge settings: {exc}"
        fixtures = os.environ.get("REFEREE_SQL_FIXTURES") or None
        budget = os.environ.get("REFEREE_CPU_BUDGET_S") or DEFAULT_BUDGET_S
        return cls(
            sandbox=SandboxSettings(),
            judge=judge,
            judge_error=error,
            rm=RMSettings(),
            sql_fixtures=Path(fixtures) if fixtures else None,
            cpu_budget_s=budget,
        )
