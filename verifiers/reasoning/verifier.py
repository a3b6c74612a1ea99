"""The ``reasoning_gym`` verifier: reasoning-gym's procedural tasks (arithmetic games,
logic puzzles, algorithmic tasks, ...), each scored by the dataset's own scorer, with
three exceptions that keep rewards earned and the host safe:

- datasets whose scorer *evaluates the answer as Python* (sympy ``parse_expr``,
  ``eval``: the answer would run in the scoring process and could rewrite its own score)
  are scored by our own parsers (`verifiers.reasoning.replacements`; all of them in the
  pinned version), and would be refused (``invalid``, naming the dataset) if one had
  none; the list is pinned to the installed version and a test re-derives it by
  watching every dataset's scorer;
- scorers that can be fooled are replaced too (``game_of_life_halting`` took any
  non-empty answer for ``True``; ``puzzle24`` any numbers making 24);
- by default only a fully right answer earns a reward (``credit: binary``): reasoning-gym
  gives 0.01 or 0.05 to wrong answers that are merely well formed, which a policy would
  learn to farm. ``credit: dataset`` passes the dataset's own scores through.

``reference``: ``{"dataset": name, "entry": {"question", "answer", "metadata"}}``, an
entry as reasoning-gym generates it (JSON round trip allowed). The answer is the last
``<answer>...</answer>`` of the response (``extract: answer_tag``, the reasoning-gym
convention) or the whole response (``extract: none``).
"""

from __future__ import annotations

import functools
import importlib.metadata
from collections.abc import Callable
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from referee.verifiers import budget
from referee.verifiers.base import (
    ItemError,
    ItemInvalid,
    ItemVerifier,
    NotConfigured,
    Outcome,
    Params,
    describe_validation_error,
    object_reference,
)
from referee.verifiers.reasoning.replacements import OURS, WRAPPED
from referee.verifiers.types import Item

EVALUATES_ANSWERS = frozenset(
    {
        "binary_matrix",
        "bitwise_arithmetic",
        "countdown",
        "intermediate_integration",
        "n_queens",
        "number_sorting",
        "polynomial_multiplication",
        "puzzle24",
        "simple_integration",
        "spiral_matrix",
        "string_insertion",
    }
)
"""reasoning-gym 0.1.25 datasets whose scorer may evaluate the answer (or the gold) as
code: found by reading their modules, confirmed by a test that watches every scorer.
Those in `REPLACED` are scored by us; the rest are refused."""

Scorer = Callable[[str | None, dict[str, Any]], float]
NOT_INSTALLED = "reasoning-gym is not installed (pip install 'referee[reasoning]')"


class ReasoningParams(Params):
    credit: Literal["binary", "dataset"] = "binary"
    """``binary``: 1 for a right answer, else 0; ``dataset``: the dataset's own score
    (including its small rewards for wrong but well-formed answers)."""
    extract: Literal["answer_tag", "final_line", "none"] = "answer_tag"
    """``answer_tag``: the last ``<answer>...</answer>`` (none: no answer); ``final_line``:
    the last non-empty line; ``none``: the whole response."""


class Entry(BaseModel):
    model_config = ConfigDict(extra="allow")

    question: str = ""
    answer: Any = None
    metadata: dict[str, Any] = Field(default_factory=dict)


class ReasoningReference(BaseModel):
    model_config = ConfigDict(extra="forbid")

    dataset: str = Field(min_length=1, max_length=128)
    entry: Entry


class ReasoningGymVerifier(ItemVerifier[ReasoningParams]):
    """Rewards for reasoning-gym tasks; see the module docstring."""

    name = "reasoning_gym"
    Params = ReasoningParams
    description = (
        "reasoning-gym's procedural tasks (100+ datasets) with their own scorers, "
        "answer-evaluating scorers replaced or refused, binary credit by default."
    )

    @property
    def ref(self) -> str:
        """``reasoning_gym@1+reasoning-gym.0.1.25``: the datasets' package version is part
        of what scored an item (a scorer may change between releases), as build metadata
        after ``+``; ``reasoning_gym@1`` still names this verifier in requests."""
        installed = _version()
        suffix = f"+reasoning-gym.{installed}" if installed != NOT_FOUND else ""
        return f"{self.name}@{self.version}{suffix}"

    def configuration_problem(self) -> str | None:
        """reasoning-gym not installed: every item would be ``not_configured``."""
        try:
            _datasets()
        except ImportError:
            return NOT_INSTALLED
        return None

    def __init__(self, budget_s: float = budget.DEFAULT_BUDGET_S) -> None:
        self.budget_s = budget_s
        """CPU seconds a scorer may spend on one answer, under a pool (see `check`)."""

    def check(self, item: Item, params: ReasoningParams) -> Outcome:
        """Score with the dataset's scorer. A scorer may run sympy on the answer
        (``simple_integration`` simplifies its derivative), which an answer can keep busy
        for minutes: that work runs under `budget_s` (`referee.verifiers.budget`), past
        which the answer scores 0, flagged ``over_budget``."""
        reference = _reference(item.reference)
        answer = _answer(item.response_text(), params.extract)
        entry = _restored(reference.dataset, reference.entry.model_dump())
        scorer = _scorer(reference.dataset)
        details: dict[str, Any] = {
            "dataset": reference.dataset,
            "answer": (answer or "")[:200],
            "reasoning_gym": _version(),
        }
        if not budget.begin(self.budget_s):
            return Outcome(
                0.0, details=budget.over_budget(self.budget_s, {**details, "score": 0.0})
            )
        score, failure = _scored(scorer, answer, entry)
        reward = score if params.credit == "dataset" else float(score >= 1.0)
        if failure is not None:
            details.update(scorer_error=failure, flags=["scorer_failed"])
        return Outcome(reward, details={**details, "score": score})


def _scored(scorer: Scorer, answer: str | None, entry: dict[str, Any]) -> tuple[float, str | None]:
    """The scorer's score and None; or 0 and what it raised, when it raises on this answer
    yet scores the entry's own answer. Some of reasoning-gym's scorers let a parse error
    through (``prime_factorization``'s ``int()`` on anything but numbers, ``coin_flip``'s
    ``float()`` on a huge number): a malformed answer became an ``error`` that a policy
    could write at will, and that stops a trainer. A scorer that fails on the entry's
    own answer too has a problem this cannot place: it raises as before (``error``)."""
    try:
        return scorer(answer, entry), None
    except (ItemInvalid, ItemError):
        raise
    except Exception as exc:  # noqa: BLE001 - a third-party scorer; placed below
        failure = f"{type(exc).__name__}: {exc}"[:300]
        gold = entry.get("answer")
        try:
            scorer(None if gold is None else str(gold), entry)
        except Exception:  # noqa: BLE001 - cannot tell the answer from the scorer
            raise exc from None
    return 0.0, failure


def _reference(raw: object) -> ReasoningReference:
    try:
        return ReasoningReference.model_validate(object_reference(raw))
    except ValidationError as exc:
        message = describe_validation_error(exc, "reference")
        raise ItemInvalid("invalid_reference", message) from None


# Metadata a scorer compares as tuples, which a JSON round trip turned into lists.
_TUPLES = {"arc_agi": ("output",), "rearc": ("output",)}


def _restored(dataset: str, entry: dict[str, Any]) -> dict[str, Any]:
    metadata = entry.get("metadata", {})
    for key in _TUPLES.get(dataset, ()):
        if key in metadata:
            metadata[key] = _tupled(metadata[key])
    return entry


def _tupled(value: Any) -> Any:
    return tuple(_tupled(v) for v in value) if isinstance(value, list) else value


def _answer(text: str, extract: str) -> str | None:
    if extract == "answer_tag":
        return _extracted(text)
    if extract == "final_line":
        lines = [line.strip() for line in text.splitlines() if line.strip()]
        return lines[-1] if lines else None
    return text


NOT_FOUND = "not installed"


@functools.cache
def _version() -> str:
    try:
        return importlib.metadata.version("reasoning-gym")
    except importlib.metadata.PackageNotFoundError:
        return NOT_FOUND


def _extracted(text: str) -> str | None:
    """The last complete ``<answer>...</answer>`` (as reasoning-gym extracts it); an
    unclosed tag is no answer (a cut-off response declared nothing)."""
    end = text.rfind("</answer>")
    start = text.rfind("<answer>", 0, end) if end >= 0 else -1
    return text[start + len("<answer>") : end].strip() if start >= 0 else None


@functools.cache
def _datasets() -> frozenset[str]:
    from reasoning_gym.factory import DATASETS  # noqa: PLC0415 - optional extra

    return frozenset(DATASETS)


def _scorer(dataset: str) -> Scorer:
    """The scorer of ``dataset``; `ItemInvalid` for an unknown or refused dataset,
    `NotConfigured` without reasoning-gym."""
    if dataset in OURS:
        return OURS[dataset]
    try:
        known = _datasets()
    except ImportError:
        raise NotConfigured(NOT_INSTALLED) from None
    if dataset not in known:
        raise ItemInvalid("invalid_reference", f"reference.dataset: unknown dataset {dataset!r}")
    if dataset in WRAPPED:
        return WRAPPED[dataset](_dataset_scorer(dataset))
    if dataset in EVALUATES_ANSWERS:
        raise ItemInvalid(
            "unsupported_dataset",
            f"reference.dataset: {dataset!r} is scored by evaluating the answer as code; "
            "referee does not run it (no safe scorer for it yet)",
        )
    return _dataset_scorer(dataset)


@functools.cache
def _dataset_scorer(dataset: str) -> Scorer:
    from reasoning_gym import get_score_answer_fn  # noqa: PLC0415 - optional extra

    score: Scorer = get_score_answer_fn(dataset)
    return score


REPLACED = frozenset(OURS) | frozenset(WRAPPED)
"""Datasets scored by our own scorers, or theirs with a safe reference."""
