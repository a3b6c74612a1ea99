"""The verifiers that ship with referee.

The imports are at module level on purpose: the embedded executor preloads this module in
its fork server, so every worker process (and every replacement of a killed one) starts
with the verifier modules and their heavy dependencies (nltk via rouge-score) already
imported.
"""

from __future__ import annotations

from referee.verifiers.base import Verifier
from referee.verifiers.code import CodeVerifier, VerilogVerifier
from referee.verifiers.code.raw_run import RawRunVerifier
from referee.verifiers.judge import JudgeVerifier
from referee.verifiers.math import MathVerifier
from referee.verifiers.python_grader import PythonGraderVerifier
from referee.verifiers.registry import Registry
from referee.verifiers.reward_model import RewardModelVerifier
from referee.verifiers.rules.calibration import CalibrationVerifier
from referee.verifiers.rules.choice import ChoiceVerifier
from referee.verifiers.rules.composite import CompositeVerifier
from referee.verifiers.rules.format_check import FormatVerifier
from referee.verifiers.rules.length import LengthVerifier
from referee.verifiers.rules.similarity import SimilarityVerifier
from referee.verifiers.rules.string_match import StringVerifier
from referee.verifiers.sql import SqlVerifier


def builtin_verifiers() -> list[Verifier]:
    """Fresh instances of every built-in verifier."""
    return [
        RewardModelVerifier(),
        StringVerifier(),
        ChoiceVerifier(),
        FormatVerifier(),
        LengthVerifier(),
        SimilarityVerifier(),
        CompositeVerifier(),
        CalibrationVerifier(),
        MathVerifier(),
        PythonGraderVerifier(),
        SqlVerifier(),
        JudgeVerifier(),
        CodeVerifier(),
        VerilogVerifier(),
        RawRunVerifier(),
    ]


def default_registry() -> Registry:
    """A fresh registry with the built-in verifiers and every installed plugin."""
    registry = Registry()
    for verifier in builtin_verifiers():
        registry.register(verifier)
    registry.load_entry_points()
    return registry
