"""Compare a program's output with the expected output; every rule is explicit.

Comparators (``params.compare``; the default is ``lines``):

- ``exact``: byte-for-byte equal text.
- ``lines``: equal after splitting into lines (a final newline ends the last line, it is
  not a line of its own), stripping each line's surrounding whitespace and collapsing runs
  of inner whitespace. Every line counts: a missing or extra line is a mismatch, a blank
  one between others included (unlike graders that ``zip`` the lines and forgive a short
  output). Blank lines at the end are trailing whitespace, not lines: a right program
  that printed one more newline scored 0, where every judge's default comparison
  (Codeforces', APPS', LiveCodeBench's) ignores it.
- ``numeric``: whitespace-separated tokens, same count; two tokens that both parse as
  finite floats match when ``|a - b| <= max(abs_tol, rel_tol * |b|)`` (b: expected), other
  tokens must be equal strings.
- ``casefold``: ``lines`` after Unicode case folding.
- ``unordered_lines``: ``lines`` as a multiset (order ignored, multiplicity kept).

Values returned by function-call tests are compared as JSON (`compare_values`).
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass
from typing import Literal

Comparator = Literal["exact", "lines", "numeric", "casefold", "unordered_lines"]

DIFF_CHARS = 160
"""How much of a differing line the details show (each side)."""


@dataclass(frozen=True)
class Tolerance:
    """Float tolerance for ``numeric`` tokens and JSON numbers (absolute, relative)."""

    abs_tol: float = 1e-6
    rel_tol: float = 1e-6


@dataclass(frozen=True)
class Match:
    """``diff`` is a short description of the first difference (None when equal)."""

    passed: bool
    diff: str | None = None


def compare(actual: str, expected: str, how: Comparator, tol: Tolerance) -> Match:
    """Compare ``actual`` (untrusted program output) with ``expected`` using ``how``."""
    if how == "exact":
        return Match(True) if actual == expected else _first_diff(actual, expected)
    if how == "numeric":
        return _compare_tokens(actual.split(), expected.split(), tol)
    got, want = normalise_lines(actual), normalise_lines(expected)
    if how == "casefold":
        got, want = [g.casefold() for g in got], [w.casefold() for w in want]
    if how == "unordered_lines":
        missing, extra = Counter(want) - Counter(got), Counter(got) - Counter(want)
        if not (missing or extra):
            return Match(True)
        line = next(iter(missing or extra))
        return Match(False, f"{'missing' if missing else 'unexpected'} line {_clip(line)}")
    return _compare_lines(got, want)


def normalise_lines(text: str) -> list[str]:
    """Lines with surrounding whitespace stripped and inner runs collapsed to one space,
    without the blank lines that end the text."""
    lines = [" ".join(line.split()) for line in text.splitlines()]
    while lines and not lines[-1]:
        lines.pop()
    return lines


def numbers_close(a: float, b: float, tol: Tolerance) -> bool:
    """True when ``a`` is within tolerance of the expected ``b`` (finite values only)."""
    if not (math.isfinite(a) and math.isfinite(b)):
        return a == b
    return abs(a - b) <= max(tol.abs_tol, tol.rel_tol * abs(b))


def compare_values(actual: object, expected: object, tol: Tolerance) -> bool:
    """Deep JSON equality with float tolerance; tuples were already lists on the wire.
    ``bool`` is never equal to a number (JSON ``true`` is not ``1``)."""
    if isinstance(expected, bool) or isinstance(actual, bool):
        return actual is expected
    if isinstance(expected, int | float) and isinstance(actual, int | float):
        return numbers_close(float(actual), float(expected), tol)
    if isinstance(expected, list) and isinstance(actual, list):
        return len(actual) == len(expected) and all(
            compare_values(a, e, tol) for a, e in zip(actual, expected, strict=True)
        )
    if isinstance(expected, dict) and isinstance(actual, dict):
        return actual.keys() == expected.keys() and all(
            compare_values(actual[k], expected[k], tol) for k in expected
        )
    return actual == expected


def _compare_lines(got: list[str], want: list[str]) -> Match:
    for index, (g, w) in enumerate(zip(got, want, strict=False), start=1):
        if g != w:
            return Match(False, f"line {index}: expected {_clip(w)}, got {_clip(g)}")
    if len(got) != len(want):
        index = min(len(got), len(want)) + 1
        if len(got) < len(want):
            return Match(False, f"line {index}: expected {_clip(want[index - 1])}, got EOF")
        return Match(False, f"line {index}: expected EOF, got {_clip(got[index - 1])}")
    return Match(True)


def _compare_tokens(got: list[str], want: list[str], tol: Tolerance) -> Match:
    for index, (g, w) in enumerate(zip(got, want, strict=False), start=1):
        if not _tokens_match(g, w, tol):
            return Match(False, f"token {index}: expected {_clip(w)}, got {_clip(g)}")
    if len(got) != len(want):
        return Match(False, f"expected {len(want)} tokens, got {len(got)}")
    return Match(True)


def _tokens_match(got: str, want: str, tol: Tolerance) -> bool:
    if got == want:
        return True
    try:
        a, b = float(got), float(want)
    except ValueError:
        return False
    return numbers_close(a, b, tol)


def _first_diff(actual: str, expected: str) -> Match:
    got, want = actual.split("\n"), expected.split("\n")
    verdict = _compare_lines(got, want)
    if verdict.passed:  # same lines, so the difference is in line endings (\r)
        return Match(False, "outputs differ in line endings or invisible characters")
    return verdict


def _clip(text: str) -> str:
    if len(text) > DIFF_CHARS:
        text = text[:DIFF_CHARS] + "..."
    return repr(text)
