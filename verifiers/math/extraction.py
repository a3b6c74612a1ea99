"""Find the final answer in a model response.

Strategies, tried in the order the request lists them (default: boxed, answer, gsm8k,
math_span, bare, last_number); the first that finds something wins:

- ``boxed``: the last brace-balanced, non-empty ``\\boxed{...}`` / ``\\fbox{...}`` (also
  ``\\boxed 5``). Policies: several boxes with different contents answer with the last one
  and are flagged ``conflicting_answers`` (``strict``: no answer); a box that never closes
  (a truncated response: it holds everything after it) is no answer at all, flagged
  ``unclosed_box``, in every mode: neither its text nor another box nor a number in it
  is read.
- ``answer``: the last "the (final) answer is ..." / ``Answer: ...`` / ``**Final Answer**``
  segment: the rest of its line (or the next non-empty line when the marker ends its line),
  reduced to its last math span when it has one.
- ``gsm8k``: the last ``#### ...`` line.
- ``math_span``: the last ``\\(...\\)``, ``\\[...\\]``, ``$$...$$`` or ``$...$`` expression when
  no standalone number follows it (``$ 5 and $``, spaces inside the dollars, is prose
  with currency, not math).
- ``bare``: the whole response when it is one short line of math, not prose (``x = 3``,
  ``\\frac{1}{2}``, ``-3 or 2``).
- ``last_number``: the last *standalone* number: never a piece of a word (``AZYUK2A``),
  of a LaTeX construct (``\\frac{1+\\sqrt{5}}{2}``, ``\\sum_{k=0}^n``: inside braces, after
  ``_``/``^`` or a command) or of a decimal (``0,111``); two numbers side by side
  (``11 7/6``) are a mixed number when the fraction is proper, else no answer.
- ``whole``: the whole response is the answer (not a default).

``strict`` refuses answers the response never commits to: ``last_number``, ``bare`` and
``whole`` are not used, and conflicting boxes are no answer.

Every pattern here runs in linear time in the response length.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

Strategy = Literal["boxed", "answer", "gsm8k", "math_span", "bare", "last_number", "whole"]
DEFAULT_STRATEGIES: tuple[Strategy, ...] = (
    "boxed",
    "answer",
    "gsm8k",
    "math_span",
    "bare",
    "last_number",
)
_UNCOMMITTED: frozenset[Strategy] = frozenset({"last_number", "bare", "whole"})


@dataclass(frozen=True)
class Extraction:
    """What was found: ``answer`` is None when nothing was (``reason`` says why);
    ``flags`` name suspicious shapes (see `verifiers.math.verifier`)."""

    answer: str | None
    source: str
    reason: str = ""
    flags: tuple[str, ...] = field(default=())


_BOX_OPEN = re.compile(r"\\(?:boxed|fbox)\s*(\{|\s+(?=[^\s{]))")
_BRACE = re.compile(r"[{}]")
_BOX_TOKEN = re.compile(r"[^\s$]+")


def boxed_contents(text: str) -> tuple[list[str], bool]:
    """The contents of every closed box, in order, and whether a box never closes (it
    then holds everything after it, the final answer included).

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
_MATH_SPAN = re.compile(
    r"\$\$(.+?)\$\$|\\\((.+?)\\\)|\\\[(.+?)\\\]|(?<![\\$])\$(?=\S)([^$]*?\S)\$(?!\d)", re.S
)
_NUMBER = re.compile(
    r"(?<![\w.,\\^_])-?(?:\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?|\.\d+)(?:/\d+)?"
    r"(?![\w\\^_]|[.,]\d)"
)
_MIXED = re.compile(r"(?<![\w.,/\\^_-])(-?\d+)[^\S\n]+(\d+)/(\d+)$")
_TAIL_WINDOW = 4096
_BARE_MAX = 120
_PROSE = re.compile(r"[A-Za-z]{2,}")
_COMMANDS = re.compile(r"\\(?:begin|end)\s*\{[^{}]*\}|\\[A-Za-z]+")
_MATH_WORDS = frozenset({"or", "and", "pi", "in", "infty", "mod", "sqrt", "frac", "text"})


def extract(text: str, strategies: Sequence[Strategy], strict: bool) -> Extraction:
    """The final answer of ``text`` by the first strategy that finds one."""
    for strategy in strategies:
        if strict and strategy in _UNCOMMITTED:
            continue
        found = _STRATEGIES[strategy](text, strict)
        if found is not None:
            return found
    return Extraction(None, "none", "no final answer found")


def _boxed(text: str, strict: bool) -> Extraction | None:
    boxes, truncated = boxed_contents(text)
    if truncated:
        return Extraction(
            None, "boxed", "the final \\boxed{ never closes (truncated)", ("unclosed_box",)
        )
    boxes = [b for b in boxes if b.strip()]
    if not boxes:
        return None
    if len({_squash(b) for b in boxes}) > 1:
        if strict:
            return Extraction(
                None, "boxed", "several different boxed answers", ("conflicting_answers",)
            )
        return Extraction(boxes[-1], "boxed", flags=("conflicting_answers",))
    return Extraction(boxes[-1], "boxed")


def _answer(text: str, strict: bool) -> Extraction | None:
    segment = _last_answer_segment(text)
    return None if segment is None else Extraction(segment, "answer")


def _gsm8k(text: str, strict: bool) -> Extraction | None:
    hits = list(_GSM8K.finditer(text))
    return Extraction(hits[-1].group(1).strip(), "gsm8k") if hits else None


def _math_span(text: str, strict: bool) -> Extraction | None:
    tail = text[-_TAIL_WINDOW:]
    last = None
    for last in _MATH_SPAN.finditer(tail):  # noqa: B007 - the last match is wanted
        pass
    if last is None:
        return None
    if _standalone_numbers(tail, last.end()):
        return None
    content = next(g for g in last.groups() if g is not None).strip()
    return Extraction(content, "math_span") if content else None


def _bare(text: str, strict: bool) -> Extraction | None:
    line = text.strip()
    if not line or len(line) > _BARE_MAX or "\n" in line:
        return None
    words = _PROSE.findall(_COMMANDS.sub(" ", line))
    if any(w.lower() not in _MATH_WORDS for w in words if len(w) > 1):
        return None
    return Extraction(line, "bare")


def _last_number(text: str, strict: bool) -> Extraction | None:
    start = max(0, len(text) - _TAIL_WINDOW)
    depth = _brace_depths(text)
    for match in reversed(_standalone_numbers(text, start)):
        if depth[match.start()] > 0:
            continue  # inside a LaTeX group: a fragment of a construct
        return _number_answer(text, match)
    return None


def _number_answer(text: str, match: re.Match[str]) -> Extraction:
    number = match.group()
    line_start = text.rfind("\n", 0, match.start()) + 1
    mixed = _MIXED.search(text[line_start : match.end()])
    if mixed is None:
        prev = re.search(r"(\d)[^\S\n]+$", text[line_start : match.start()])
        if prev is not None:
            return Extraction(None, "last_number", "two numbers side by side")
        return Extraction(number, "last_number")
    whole, num, den = mixed.groups()
    if int(den) == 0 or int(num) >= int(den):
        return Extraction(None, "last_number", "two numbers side by side, not a mixed number")
    return Extraction(f"{whole}\\frac{{{num}}}{{{den}}}", "last_number")


def _standalone_numbers(text: str, start: int) -> list[re.Match[str]]:
    return list(_NUMBER.finditer(text, start))


def _brace_depths(text: str) -> list[int]:
    """The nesting depth before each character: ``{...}`` groups (escaped braces do not
    count) plus ``\\begin{..}...\\end{..}`` environments (a matrix's entries are no
    standalone numbers)."""
    depths = [0] * (len(text) + 1)
    depth = 0
    escaped = False
    for index, char in enumerate(text):
        depths[index] = depth
        if char == "{" and not escaped:
            depth += 1
        elif char == "}" and not escaped and depth > 0:
            depth -= 1
        elif escaped and char == "b" and text.startswith("begin{", index):
            depth += 1
        elif escaped and char == "e" and text.startswith("end{", index) and depth > 0:
            depth -= 1
        escaped = char == "\\" and not escaped
    depths[len(text)] = depth
    return depths


def _whole(text: str, strict: bool) -> Extraction | None:
    return Extraction(text.strip(), "whole") if text.strip() else None


_STRATEGIES = {
    "boxed": _boxed,
    "answer": _answer,
    "gsm8k": _gsm8k,
    "math_span": _math_span,
    "bare": _bare,
    "last_number": _last_number,
    "whole": _whole,
}


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
    spans = list(_MATH_SPAN.finditer(segment))
    if spans:
        last = spans[-1]
        return next(g for g in last.groups() if g is not None).strip()
    answer = segment.strip().strip("*").strip()
    # A sentence ending: "The answer is 42. We are done." -> "42"
    cut = re.search(r"\.(?:\s|$)", answer)
    if cut:
        answer = answer[: cut.start()]
    # markdown emphasis around the value: "the answer is **18**."
    return answer.strip().rstrip(".").strip().strip("*").strip()
