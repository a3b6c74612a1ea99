"""The ``math`` verifier: does the response's final answer equal the reference answer?

Pipeline per item: extract the final answer (`extraction`), normalise both sides
(`normalization`), read numbers exactly without a LaTeX parser (`fastpath`), parse the
rest with latex2sympy2_extended (`parsing`, cached), compare by the gold answer's kind
(`equivalence`).

Reward 1.0 when equal, 0.0 when not (including "no answer found" and an unreadable or
unsafe prediction). An unparsable gold is ``invalid`` (code ``invalid_reference``), never 0
or 1. ``details`` carries the extracted answer, both normalised forms, the gold's kind
and the rule that decided.

The gold is parsed once per distinct (gold, parse params) (an LRU on the instance, which
lives for the worker process), and repeated (gold, answer, params) pairs hit a second LRU,
so a GRPO group of 16 samples parses its gold once and each distinct answer once.
"""

from __future__ import annotations

import re
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any, Generic, Literal, TypeVar

import sympy
from pydantic import Field

from referee.verifiers import budget
from referee.verifiers.base import ItemInvalid, ItemVerifier, Outcome, Params
from referee.verifiers.math.clock import Clock, clock_gold, read_clock, same_time
from referee.verifiers.math.equivalence import Policy, Side, compare, not_finite
from referee.verifiers.math.extraction import DEFAULT_STRATEGIES, Strategy, extract
from referee.verifiers.math.normalization import Normalized, normalize
from referee.verifiers.math.operations import undone
from referee.verifiers.math.parsing import (
    MAX_ANSWER_CHARS,
    FalseChain,
    Scalar,
    Unparsable,
    Unsafe,
    parse_answer,
    warm_up,
)
from referee.verifiers.types import Item

MAX_REFERENCES = 16
_UNDEFINED = (sympy.zoo, sympy.nan)


class MathParams(Params):
    strategies: list[Strategy] = Field(default_factory=lambda: list(DEFAULT_STRATEGIES))
    """Where to look for the final answer, in order: ``boxed``, ``answer`` ("the answer
    is", ``Answer:``), ``gsm8k`` (``#### n``), ``last_number``, ``whole`` (the response
    is the answer)."""
    strict: bool = False
    """Refuse answers the response never commits to: no ``last_number``/``whole``, a
    truncated final box or several different boxed answers give no answer (reward 0)."""
    tolerance: Literal["digits", "exact", "relative"] = "digits"
    """How inexact numbers compare: ``digits`` ties the tolerance to the digits written
    (see `verifiers.math.equivalence`); ``exact``; ``relative`` uses ``rel_tol``."""
    rel_tol: float = Field(default=1e-6, gt=0, le=0.5)
    rounded_predictions: bool = False
    """Accept a decimal prediction that rounds or truncates an exact gold whose decimal
    expansion does not end (``1.5708`` for ``\\frac{\\pi}{2}``, ``0.333`` for 1/3). Off by
    default: a policy learns to answer with decimals, which then stand for many golds."""
    min_sig_digits: int = Field(default=3, ge=1, le=30)
    """Significant digits a decimal prediction needs (with ``rounded_predictions``)."""
    percent: Literal["either", "strip", "ratio", "exact"] = "either"
    """``p%``: ``either`` p or p/100; ``strip`` p; ``ratio`` p/100; ``exact``: p, and both
    sides must agree on carrying a percent sign."""
    degrees: Literal["either", "strip"] = "either"
    """``d°``: ``either`` d or the radians d*pi/180; ``strip``: d."""
    money: Literal["strip", "exact"] = "strip"
    """Currency signs and words: ``strip`` drops them; ``exact`` needs both sides to agree
    on carrying one."""
    units: bool = True
    """Drop a known unit word after a number (``12 cm`` -> 12)."""
    number_words: bool = True
    """Read a whole answer that is a number word (``five``)."""
    complex_i: bool = True
    """Read ``i`` as the imaginary unit when it is an expression's only symbol."""


@dataclass(frozen=True)
class _Gold:
    kind: str  # "math", "text", "choice", "time"
    norm: Normalized
    side: Side | None = None
    letters: str = ""
    text_key: str = ""
    clock: Clock | None = None


K = TypeVar("K")
V = TypeVar("V")


class _LRU(Generic[K, V]):
    def __init__(self, size: int) -> None:
        self.size = size
        self.data: OrderedDict[K, V] = OrderedDict()

    def get(self, key: K) -> V | None:
        value = self.data.get(key)
        if value is not None:
            self.data.move_to_end(key)
        return value

    def put(self, key: K, value: V) -> None:
        self.data[key] = value
        self.data.move_to_end(key)
        if len(self.data) > self.size:
            self.data.popitem(last=False)


_CHOICE_GOLD = re.compile(r"^\(?\s*([A-J])\s*\)?$")
_CHOICE_PRED = re.compile(r"(?<![A-Za-z\\])\(?([A-J])\)?(?![A-Za-z])")
_TEXT_GOLD = re.compile(r"^[A-Za-z][A-Za-z '\-]*[A-Za-z]$")
_MATH_WORDS = frozenset(
    [
        "pi",
        "infty",
        "inf",
        "sin",
        "cos",
        "tan",
        "cot",
        "sec",
        "csc",
        "log",
        "ln",
        "exp",
        "sqrt",
        "frac",
        "arcsin",
        "arccos",
        "arctan",
        "sinh",
        "cosh",
        "tanh",
        "det",
        "max",
        "min",
        "gcd",
        "lcm",
        "mod",
    ]
)
_WORD = re.compile(r"[A-Za-z]+")
_SHORT_WORDS = frozenset(["no"])
"""Answers under three letters that are words, not products of symbols: gold ``no`` was
``n*o``, and ``on`` was right for it."""


def _text_key(text: str) -> str:
    return " ".join(re.sub(r"[^0-9a-z]+", " ", text.casefold()).split())


class MathVerifier(ItemVerifier[MathParams]):
    """Reward 1.0 when the response's final answer equals the reference, else 0.0.

    ``reference``: the gold answer as LaTeX or plain text (a string or a number), or a
    non-empty list of alternatives (any may match).

    ``details.flags`` names what looks like gaming, without changing the reward:
    ``over_budget`` (reading and comparing the answer took more than the CPU budget, see
    `referee.verifiers.budget`: scored 0, rule ``over_budget``; a library call has no
    budget), ``conflicting_answers`` (several different boxed answers; the last one counts),
    ``unclosed_box`` (the final box never closes: no answer), ``undefined_answer`` (an
    undefined or infinite prediction, e.g. ``1/0``, for a finite gold), ``unit_drift`` (a
    unit the gold does not carry) and ``format_drift`` (a percent, degree or currency
    marker the gold does not carry).

    One flag decides: ``unevaluated_answer``, an integral, sum, product, limit or
    derivative the gold does not keep (the question restated, `verifiers.math.operations`),
    scores 0 (rule ``unevaluated``). So does a chain ``x = 2+2 = 5`` whose constant sides
    differ (rule ``false_chain``; ``2+2 = 5`` alone was never an answer either).
    """

    name = "math"
    Params = MathParams
    description = (
        "Final-answer equivalence for math: exact rationals, symbolic forms, sets, tuples, "
        "intervals, inequalities, equations, matrices, complex numbers, text and choices."
    )

    def __init__(
        self,
        gold_cache: int = 4096,
        pair_cache: int = 65536,
        budget_s: float = budget.DEFAULT_BUDGET_S,
    ) -> None:
        self.budget_s = budget_s
        """CPU seconds an item's answer may take to read and compare, under a pool."""
        self._golds: _LRU[tuple[str, tuple[Any, ...]], _Gold | ItemInvalid] = _LRU(gold_cache)
        self._pairs: _LRU[tuple[str, str, tuple[Any, ...]], tuple[float, dict[str, Any]]] = _LRU(
            pair_cache
        )

    def check(self, item: Item, params: MathParams) -> Outcome:
        references = _references(item.reference)
        golds = [self.gold(ref, params) for ref in references]
        found = extract(item.response_text(), params.strategies, params.strict)
        details: dict[str, Any] = {"extracted": found.answer, "source": found.source}
        flags = list(found.flags)
        if found.answer is None:
            details.update(rule="no_answer", reason=found.reason)
            return Outcome(reward=0.0, details=_flagged(details, flags))
        key = _params_key(params)
        reward, verdict = 0.0, dict[str, Any]()
        for ref, gold in zip(references, golds, strict=True):
            cached = self._pairs.get((ref, found.answer, key))
            if cached is None:
                cached = _judge(gold, found.answer, params, self.budget_s)
                self._pairs.put((ref, found.answer, key), cached)
            reward, verdict = cached
            if reward == 1.0:
                break
        details.update(verdict)
        flags += details.pop("pair_flags", ())
        return Outcome(reward=reward, details=_flagged(details, flags))

    def gold(self, reference: str, params: MathParams) -> _Gold:
        """The parsed gold answer, from the cache when seen before; raises `ItemInvalid`."""
        key = (reference, (params.units, params.number_words))
        cached = self._golds.get(key)
        if cached is None:
            cached = _parse_gold(reference, params)
            self._golds.put(key, cached)
        if isinstance(cached, ItemInvalid):
            raise cached
        return cached


def _flagged(details: dict[str, Any], flags: list[str]) -> dict[str, Any]:
    """``details`` with ``flags`` (suspected gaming, see the class docstring) when any."""
    if flags:
        details["flags"] = sorted(set(flags))
    return details


def _drift(gold: Normalized, pred: Normalized) -> list[str]:
    """What the prediction carries that the gold does not: a unit (``unit_drift``), or a
    percent, degree or currency marker (``format_drift``). Visible, never scored."""
    flags = []
    if pred.unit is not None and pred.unit != gold.unit:
        flags.append("unit_drift")
    markers = ("percent", "degree", "money")
    if any(getattr(pred, m) and not getattr(gold, m) for m in markers):
        flags.append("format_drift")
    return flags


def _params_key(params: MathParams) -> tuple[Any, ...]:
    return (
        params.tolerance,
        params.rel_tol,
        params.min_sig_digits,
        params.rounded_predictions,
        params.percent,
        params.degrees,
        params.money,
        params.units,
        params.number_words,
        params.complex_i,
    )


def _references(reference: object) -> list[str]:
    if isinstance(reference, bool):
        raise ItemInvalid("invalid_reference", "reference: expected an answer, got a boolean")
    if isinstance(reference, int | float):
        return [str(reference)]
    if isinstance(reference, str) and reference.strip():
        return [reference]
    if (
        isinstance(reference, list)
        and 0 < len(reference) <= MAX_REFERENCES
        and all(isinstance(r, str | int | float) and not isinstance(r, bool) for r in reference)
    ):
        return [str(r) for r in reference]
    raise ItemInvalid(
        "invalid_reference",
        "reference: expected an answer (string or number) or a list of up to "
        f"{MAX_REFERENCES} alternatives",
    )


def _parse_gold(reference: str, params: MathParams) -> _Gold | ItemInvalid:
    if len(reference) > MAX_ANSWER_CHARS:
        return ItemInvalid(
            "invalid_reference", f"reference: longer than {MAX_ANSWER_CHARS} characters"
        )
    norm = normalize(reference, units=params.units, words=params.number_words)
    text = norm.text
    choice = _CHOICE_GOLD.match(text)
    if choice:
        return _Gold("choice", norm, letters=choice.group(1))
    clock = clock_gold(text)
    if clock is not None:
        return _Gold("time", norm, clock=clock)
    if _is_text_answer(text):
        return _Gold("text", norm, text_key=_text_key(text))
    try:
        node = parse_answer(text, chains=_exact_text(norm))
    except Unsafe as exc:
        return ItemInvalid("invalid_reference", f"reference: too large to evaluate ({exc})")
    except Unparsable as exc:
        return ItemInvalid("invalid_reference", f"reference: cannot be parsed ({exc})")
    except RecursionError:
        return ItemInvalid("invalid_reference", "reference: nests too deeply")
    if isinstance(node, Scalar) and node.expr is not None and _undefined(node.expr):
        return ItemInvalid("invalid_reference", "reference: undefined value (division by zero?)")
    return _Gold("math", norm, side=Side(node, norm))


def _exact_text(norm: Normalized) -> bool:
    """Whether the normalised text still says what was written: no percent sign, degree,
    currency or unit was taken out of it (``\\frac12 = 50\\%`` became ``\\frac12 = 50``,
    whose sides no longer agree: its chain is not checked)."""
    return not (norm.percent or norm.degree or norm.money or norm.unit)


def _undefined(expr: Any) -> bool:
    """Undefined (``1/0``, ``\\log 0``); an infinite gold (``\\infty``) is allowed."""
    if expr in (sympy.oo, -sympy.oo):
        return False
    return expr.has(*_UNDEFINED) or (not_finite(expr) and not expr.has(sympy.oo, -sympy.oo))


def _is_text_answer(text: str) -> bool:
    if text.casefold() in _SHORT_WORDS:
        return True
    if not _TEXT_GOLD.match(text):
        return False
    words = _WORD.findall(text)
    return any(len(w) >= 3 and w.lower() not in _MATH_WORDS for w in words)


def _judge(
    gold: _Gold, answer: str, params: MathParams, budget_s: float
) -> tuple[float, dict[str, Any]]:
    norm = normalize(answer, units=params.units, words=params.number_words)
    details: dict[str, Any] = {
        "gold_kind": gold.kind,
        "gold_normalized": gold.norm.text,
        "pred_normalized": norm.text,
    }
    drift = _drift(gold.norm, norm)
    if drift:
        details["pair_flags"] = drift
    if gold.kind == "choice":
        letters = {m.upper() for m in _CHOICE_PRED.findall(norm.text)}
        if not letters and re.fullmatch(r"\(?\s*[a-j]\s*\)?", norm.text):
            letters = {norm.text.strip("() ").upper()}
        if len(letters) > 1:
            return 0.0, {**details, "rule": "several_options"}
        equal = letters == {gold.letters}
        return float(equal), {**details, "rule": "choice" if equal else "different_choice"}
    if gold.kind == "text":
        equal = _text_key(norm.text) == gold.text_key
        return float(equal), {**details, "rule": "text" if equal else "different_text"}
    if gold.clock is not None:
        answer_clock = read_clock(norm.text)
        equal = answer_clock is not None and same_time(gold.clock, answer_clock)
        return float(equal), {**details, "rule": "time" if equal else "different_time"}
    assert gold.side is not None
    if norm.text == gold.norm.text and (
        norm.percent,
        norm.degree,
        norm.money,
    ) == (gold.norm.percent, gold.norm.degree, gold.norm.money):
        return 1.0, {**details, "rule": "identical"}
    if not budget.begin(budget_s):
        details["pair_flags"] = [*details.get("pair_flags", ()), budget.OVER_BUDGET]
        return 0.0, {**details, "rule": budget.OVER_BUDGET, "reason": budget.exceeded(budget_s)}
    try:
        node = parse_answer(norm.text, chains=_exact_text(norm))
    except Unsafe as exc:
        return 0.0, {**details, "rule": "unsafe_answer", "reason": str(exc)}
    except FalseChain as exc:
        return 0.0, {**details, "rule": "false_chain", "reason": str(exc)}
    except Unparsable as exc:
        return 0.0, {**details, "rule": "unparsable_answer", "reason": str(exc)}
    except RecursionError:
        return 0.0, {**details, "rule": "unsafe_answer", "reason": "nests too deeply"}
    policy = Policy(
        tolerance=params.tolerance,
        rel_tol=params.rel_tol,
        min_sig_digits=params.min_sig_digits,
        rounded_predictions=params.rounded_predictions,
        percent=params.percent,
        degrees=params.degrees,
        money=params.money,
        complex_i=params.complex_i,
    )
    try:
        left = undone(node) - undone(gold.side.node)
        if left:
            flags = [*details.get("pair_flags", ()), "unevaluated_answer"]
            reason = f"the answer leaves {' and '.join(sorted(left))} to evaluate"
            return 0.0, {**details, "pair_flags": flags, "rule": "unevaluated", "reason": reason}
        rule = compare(gold.side, Side(node, norm), policy)
        undefined = isinstance(node, Scalar) and node.expr is not None and not_finite(node.expr)
    except RecursionError:
        return 0.0, {**details, "rule": "unsafe_answer", "reason": "nests too deeply"}
    if rule:
        return 1.0, {**details, "rule": rule}
    if undefined:
        details["pair_flags"] = [*details.get("pair_flags", ()), "undefined_answer"]
    return 0.0, {**details, "rule": "not_equal"}


warm_up()
