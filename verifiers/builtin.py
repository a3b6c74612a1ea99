"""The verifiers that ship with referee.

The imports are at module level on purpose: the embedded executor preloads this module in
its fork server, so every worker process (and every replacement of a killed one) starts
with the verifier modules and their heavy dependencies already imported. The libraries a
verifier imports on first use (`referee.verifiers.preload.PRELOADED`: NLTK costs 1-2 s,
and the gateway and the CLI, which score no text themselves, start without it) are
preloaded there too.
"""

from __future__ import annotations

from referee.gpu_rm.registry import ModelRegistry
from referee.verifiers.base import Verifier
from referee.verifiers.code import CodeVerifier, VerilogVerifier
from referee.verifiers.code.raw_run import RawRunVerifier
from referee.verifiers.code.runtime import SandboxHandle
from referee.verifiers.engines import EngineSettings
from referee.verifiers.generative_rm import GenerativeRMVerifier
from referee.verifiers.instructions import InstructionsVerifier
from referee.verifiers.judge import JudgeVerifier
from referee.verifiers.logprobs import LogprobsVerifier
from referee.verifiers.math import MathVerifier
from referee.verifiers.process_rm import ProcessRMVerifier
from referee.verifiers.python_grader import PythonGraderVerifier
from referee.verifiers.reasoning import ReasoningGymVerifier
from referee.verifiers.refprob import RefProbVerifier
from referee.verifiers.registry import Registry
from referee.verifiers.reward_model import RewardModelVerifier
from referee.verifiers.rules.calibration import CalibrationVerifier
from referee.verifiers.rules.choice import ChoiceVerifier
from referee.verifiers.rules.composite import CompositeVerifier
from referee.verifiers.rules.format_check import FormatVerifier
from referee.verifiers.rules.length import LengthVerifier
from referee.verifiers.rules.qa import QAVerifier
from referee.verifiers.rules.similarity import SimilarityVerifier
from referee.verifiers.rules.string_match import StringVerifier
from referee.verifiers.sql import SqlVerifier
from referee.verifiers.state import StateVerifier
from referee.verifiers.tools import ToolCallVerifier


def builtin_verifiers(engines: EngineSettings | None = None) -> list[Verifier]:
    """Fresh instances of every built-in verifier, configured by ``engines`` (None: read
    from the environment now). The sandbox verifiers share one lazily made sandbox."""
    engines = engines or EngineSettings.from_env()
    sandbox = SandboxHandle(engines.sandbox)
    models = ModelRegistry(engines.rm)  # one batcher per model, whichever verifier asks
    return [
        RewardModelVerifier(models),
        GenerativeRMVerifier(models),
        ProcessRMVerifier(models),
        RefProbVerifier(models),
        LogprobsVerifier(models),
        StringVerifier(),
        QAVerifier(),
        ChoiceVerifier(budget_s=engines.cpu_budget_s),
        FormatVerifier(),
        LengthVerifier(),
        SimilarityVerifier(budget_s=engines.cpu_budget_s),
        ToolCallVerifier(budget_s=engines.cpu_budget_s),
        InstructionsVerifier(budget_s=engines.cpu_budget_s),
        ReasoningGymVerifier(budget_s=engines.cpu_budget_s),
        CompositeVerifier(),
        CalibrationVerifier(),
        MathVerifier(budget_s=engines.cpu_budget_s),
        PythonGraderVerifier(sandbox),
        SqlVerifier(sandbox, engines.sql_fixtures),
        StateVerifier(sandbox),
        JudgeVerifier(settings=engines.judge, settings_error=engines.judge_error),
        CodeVerifier(sandbox),
        VerilogVerifier(sandbox),
        RawRunVerifier(sandbox),
    ]


def default_registry(engines: EngineSettings | None = None) -> Registry:
    """A fresh registry with the built-in verifiers (configured by ``engines``) and every
    installed plugin."""
    registry = Registry()
    for verifier in builtin_verifiers(engines):
        registry.register(verifier)
    registry.load_entry_points()
    return registry
