"""Rubric LLM judges over any OpenAI-compatible chat-completions endpoint (pool ``io``).

See `verifiers.judge.verifier` for the item contract and `verifiers.judge.profiles` for
configuration.
"""

from referee.verifiers.judge.profiles import JudgeProfile, JudgeSettings
from referee.verifiers.judge.rubric import Criterion, Rubric
from referee.verifiers.judge.usage import UsageCollector
from referee.verifiers.judge.verifier import JudgeVerifier

__all__ = [
    "Criterion",
    "JudgeProfile",
    "JudgeSettings",
    "JudgeVerifier",
    "Rubric",
    "UsageCollector",
]
