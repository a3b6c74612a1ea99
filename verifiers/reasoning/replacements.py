"""Our scorers for the reasoning-gym datasets whose own scorer evaluates the answer as
code (sympy ``parse_expr``, ``eval``) or can be fooled. Each gives 1.0 exactly when the
dataset's scorer gives 1.0 for an honest answer, and parses without running anything:

- ``countdown``, ``puzzle24``: `verifiers.reasoning.arithmetic` (the given numbers, each
  once; upstream, puzzle24 took any numbers that make 24);
- ``polynomial_multiplication`` (the same sympy expression as the gold, as upstream),
  ``simple_integration`` and ``intermediate_integration`` (the answer's derivative equals
  the integrand): `verifiers.reasoning.symbolic` instead of ``parse_expr``;
- ``binary_matrix``, ``spiral_matrix``, ``string_insertion``, ``n_queens``: the exact
  answer, upstream's 1.0 path; their small credit for Python-literal answers (reached by
  ``eval``) is not given;
- ``number_sorting``: upstream's scorer, but with a gold that is JSON (upstream ``eval``s
  a gold that is not: client data run as code);
- ``game_of_life_halting``: ``True`` or ``False``, equal to the gold (upstream took any
  non-empty answer for ``True``);
- ``bitwise_arithmetic``: `verifiers.reasoning.bitwise` (upstream ``eval``s the problem,
  which comes with the reference).

Every scorer raises `ItemInvalid` naming the field for a reference it cannot use.
"""

from __future__ import annotations

import ast
import json
from collections.abc import Callable
from typing import Any

import sympy

from referee.verifiers import syntax_tree
from referee.verifiers.base import ItemInvalid
from referee.verifiers.reasoning.arithmetic import numbers_of, solves
from referee.verifiers.reasoning.bitwise import score as bitwise_score
from referee.verifiers.reasoning.symbolic import SymbolicError, parse_math

Scorer = Callable[[str | None, dict[str, Any]], float]


def _puzzle24(answer: str | None, entry: dict[str, Any]) -> float:
    return float(answer is not None and solves(answer, numbers_of(entry), 24))


def _countdown(answer: str | None, entry: dict[str, Any]) -> float:
    target = entry.get("metadata", {}).get("target")
    if not isinstance(target, int | float):
        raise ItemInvalid("invalid_reference", "reference.entry.metadata.target: expected a number")
    return float(answer is not None and solves(answer, numbers_of(entry), target))


def _halting(answer: str | None, entry: dict[str, Any]) -> float:
    truth = str(entry.get("answer")).strip().lower()
    if truth not in ("true", "false"):
        raise ItemInvalid("invalid_reference", "reference.entry.answer: expected True or False")
    return float(answer is not None and answer.strip().lower() == truth)


def _gold_expr(text: object, where: str, symbols: dict[str, sympy.Symbol]) -> sympy.Expr:
    if not isinstance(text, str):
        raise ItemInvalid("invalid_reference", f"{where}: expected an expression")
    try:
        return parse_math(text, symbols)
    except SymbolicError as exc:
        raise ItemInvalid("invalid_reference", f"{where}: {exc}") from None


def _answer_expr(answer: str | None, symbols: dict[str, sympy.Symbol]) -> sympy.Expr | None:
    if answer is None:
        return None
    try:
        return parse_math(answer, symbols)
    except SymbolicError:
        return None


def _polynomial(answer: str | None, entry: dict[str, Any]) -> float:
    names = entry.get("metadata", {}).get("variables") or ["x"]
    symbols = {str(name): sympy.Symbol(str(name)) for name in names}
    gold = _gold_expr(entry.get("answer"), "reference.entry.answer", symbols)
    predicted = _answer_expr(answer, symbols)
    return float(predicted is not None and predicted == gold)


def _integral(answer: str | None, entry: dict[str, Any]) -> float:
    metadata = entry.get("metadata", {})
    name = str(metadata.get("variable") or "x")
    x = sympy.Symbol(name)
    integrand = _gold_expr(
        metadata.get("integrand"), "reference.entry.metadata.integrand", {name: x}
    )
    predicted = _answer_expr(answer, {name: x, "C": sympy.Symbol("C")})
    if predicted is None:
        return 0.0
    return float(sympy.simplify(sympy.diff(predicted, x) - integrand) == 0)


def _exact(answer: str | None, entry: dict[str, Any]) -> float:
    return float(answer is not None and answer == entry.get("answer"))


def _spiral(answer: str | None, entry: dict[str, Any]) -> float:
    gold = str(entry.get("answer", "")).strip()
    return float(answer is not None and answer.strip() != "" and answer.strip() == gold)


def _queens(answer: str | None, entry: dict[str, Any]) -> float:
    valid = entry.get("metadata", {}).get("valid_answers")
    if not isinstance(valid, list):
        raise ItemInvalid(
            "invalid_reference", "reference.entry.metadata.valid_answers: expected a list"
        )
    return float(isinstance(answer, str) and answer in valid)


def sorting(upstream: Scorer) -> Scorer:
    """number_sorting's scorer with the gold made JSON first (never ``eval``ed)."""

    def score(answer: str | None, entry: dict[str, Any]) -> float:
        gold = entry.get("answer")
        try:
            json.loads(str(gold))
        except ValueError:
            try:
                gold = json.dumps(ast.literal_eval(syntax_tree.parse(str(gold), mode="eval")))
            except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
                raise ItemInvalid(
                    "invalid_reference", "reference.entry.answer: not a list"
                ) from None
        return upstream(answer, {**entry, "answer": gold})

    return score


OURS: dict[str, Scorer] = {
    "puzzle24": _puzzle24,
    "countdown": _countdown,
    "game_of_life_halting": _halting,
    "polynomial_multiplication": _polynomial,
    "simple_integration": _integral,
    "intermediate_integration": _integral,
    "binary_matrix": _exact,
    "string_insertion": _exact,
    "spiral_matrix": _spiral,
    "n_queens": _queens,
    "bitwise_arithmetic": bitwise_score,
}
WRAPPED = {"number_sorting": sorting}
"""Upstream scorers we call with their reference made safe first."""
