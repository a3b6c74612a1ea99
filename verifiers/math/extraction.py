"""Find the final answer in a model response.

Strategies, tried in the order the request lists them (default: boxed, answer, gsm8k,
last_number); the first that finds something wins:

- ``boxed``: the last brace-balanced ``\\boxed{...}`` / ``\\fbox{...}`` (also ``\\boxed 5``).
  A box that never closes (a truncated response) is skipped, never read to the end.
- ``answer``: the last "the (final) answer is ..." / ``Answer: ...`` / ``**Final Answer**``
  segment: the rest of its line (or the next non-empty line when the marker ends its line),
  reduced to its last ``$...$`` math span when it has one.
- ``gsm8k``: the last ``#### ...`` line.
- ``last_number``: the last number (integer, decimal or ``a/b``) in the response.
- ``whole``: the whole response is the answer.

``strict`` refuses answers the response never commits to: ``last_number`` and ``whole`` are
not used, a truncated final box is no answer (earlier boxes are not a fallback), and
several boxes with different contents are ambiguous (no answer). Boxing every option of a
multiple-choice question is caught where the answer is compared (several letters).

Every pattern here runs in linear time in the response length.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

Strategy = Literal["boxed", "answer", "gsm8k", "last_number", "whole"]
DEFAULT_STRATEGIES: tuple[Strategy, ...] = ("boxed", "answer", "gsm8k", "last_number")


@dataclass(frozen=True)
class Extraction:
    """What was found: ``answer`` is None when nothing was (``reason`` says why)."""

    answer: str | None
    source: str
    reason: str = ""


_BOX_OPEN = re.compile(r"\\(?:boxed|fbox)\s*(\{|\s+(?=[^\s{]))")
_BRACE = re.compile(r"[{}]")
_BOX_TOKEN = re.compile(r"[^\s$]+")


def boxed_contents(text: str) -> tuple[list[str], bool]:
    """The contents of every closed box, in order, and whether the last box is unclosed.

    Linear: a box that never closes swallows everything after it, so boxes before it are
    scanned only up to its start.
    """
    opens = list(_BOX_OPEN.finditer(text))
    found: list[str] = []
    truncated = False
    limit = len(text)
    for index in range(len(opens) - 1, -1, -1):
        match = opens[index]
        if match.group(1) != "{":  # "\boxed 5": one token
            token = _BOX_TOKEN.match(text, match.end(), limit)
            if token:
                found.append(token.group())
            continue
        content = _balanced(text, match.end(), limit)
        if content is None:
            if index == len(opens) - 1:
                truncated = True
            limit = match.start()
            continue
        found.append(content)
    found.reverse()
    return found, truncated


def _balanced(text: str, start: int, limit: int) -> str | None:
    depth = 1
    for brace in _BRACE.finditer(text, start, limit):
        if brace.start() > 0 and text[brace.start() - 1] == "\\":
            continue  # \{ and \} are set braces, not grouping
        depth += 1 if brace.group() == "{" else -1
        if depth == 0:
            return text[start : brace.start()]
    return None


# "the answer is", "final answer is", "answer:", "**Answer:**", "**Final Answer**".
_ANSWER = re.compile(
    r"(?:\bfinal\s+answer\b|\banswer\b)[^\S\n]*\**[^\S\n]*"
    r"(?:is\b(?![^\S\n]+not\b)|:|\*\*(?=[^\S\n]*\n))[^\S\n]*\**[^\S\n]*:?",
    re.IGNORECASE,
)
_GSM8K = re.compile(r"####[^\S\n]*([^\n]+)")
_MATH_SPAN = re.compile(r"\$\$(.+?)\$\$|\$(.+?)\$|\\\((.+?)\\\)|\\\[(.+?)\\\]", re.S)
_NUMBER = re.compile(r"-?(?:\d[\d,]*(?:\.\d+)?|\.\d+)(?:\s*/\s*\d+)?")
_TAIL_WINDOW = 4096


def extract(text: str, strategies: Sequence[Strategy], strict: bool) -> Extraction:
    """The final answer of ``text`` by the first strategy that finds one."""
    for strategy in strategies:
        if strict and strategy in ("last_number", "whole"):
            continue
        if strategy == "boxed":
            boxes, truncated = boxed_contents(text)
            if strict and truncated:
                return Extraction(None, "boxed", "the final \\boxed{ never closes (truncated)")
            if boxes:
                if strict and len({_squash(b) for b in boxes}) > 1:
                    return Extraction(None, "boxed", "several different boxed answers")
                return Extraction(boxes[-1], "boxed")
        elif strategy == "answer":
            segment = _last_answer_segment(text)
            if segment is not None:
                return Extraction(segment, "answer")
        elif strategy == "gsm8k":
            hits = list(_GSM8K.finditer(text))
            if hits:
                return Extraction(hits[-1].group(1).strip(), "gsm8k")
        elif strategy == "last_number":
            number = _last_number(text)
            if number is not None:
                return Extraction(number, "last_number")
        elif strategy == "whole" and text.strip():
            return Extraction(text.strip(), "whole")
    return Extraction(None, "none", "no final answer found")


def _squash(text: str) -> str:
    return "".join(text.split())


def _last_answer_segment(text: str) -> str | None:
    for marker in reversed(list(_ANSWER.finditer(text))):
        line_end = text.find("\n", marker.end())
        end = len(text) if line_end < 0 else line_end
        segment = text[marker.end() : end]
        if not segment.strip(" \t*:") and line_end >= 0:
            rest = text[line_end:].lstrip()
            next_end = rest.find("\n")
            segment = rest if next_end < 0 else rest[:next_end]
        answer = _answer_from_segment(segment)
        if answer:
            return answer
    return None


def _answer_from_segment(segment: str) -> str:
    spans = [m for m in _MATH_SPAN.finditer(segment)]
    if spans:
        last = spans[-1]
        return next(g for g in last.groups() if g is not None).strip()
    answer = segment.strip().strip("*").strip()
    # A sentence ending: "The answer is 42. We are done." -> "42"
    cut = re.search(r"\.(?:\s|$)", answer)
    if cut:
        answer = answer[: cut.start()]
    return answer.strip().rstrip(".").strip()


def _last_number(text: str) -> str | None:
    window = text[-_TAIL_WINDOW:]
    while True:
        hits = list(_NUMBER.finditer(window))
        if hits and (hits[-1].start() > 0 or len(window) == len(text)):
            return hits[-1].group().rstrip(",")
        if len(window) == len(text):
            return None
        window = text[-4 * len(window) :]
