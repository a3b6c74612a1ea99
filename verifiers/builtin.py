"""The verifiers that ship with referee.

The imports are at module level on purpose: the embedded executor preloads this module in
its fork server, so every worker process (and every replacement of a killed one) starts
with the verifier modules and their heavy dependencies (nltk via rouge-score) already
imported.
"""

from __future__ import annotations

from verifiers.base import Verifier
from verifiers.code import CodeVerifier, VerilogVerifier
from verifiers.code.raw_run import RawRunVerifier
from verifiers.judge import JudgeVerifier
from verifiers.math import MathVerifier
from verifiers.python_grader import PythonGraderVerifier
from verifiers.reward_model import RewardModelVerifier
from verifiers.rules.calibration import CalibrationVerifier
from verifiers.rules.choice import ChoiceVerifier
from verifiers.rules.composite import CompositeVerifier
from verifiers.rules.format_check import FormatVerifier
from verifiers.rules.length import LengthVerifier
from verifiers.rules.similarity import SimilarityVerifier
from verifiers.rules.string_match import StringVerifier
from verifiers.sql import SqlVerifier


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
