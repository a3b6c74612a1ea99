"""The ``choice`` verifier: extract a multiple-choice answer and compare it with the gold option.

Where the answer is looked for, in priority order:

1. the last ``\\boxed{...}`` (or ``\\fbox{...}``): the model's declared final answer, final
   even when it names no option;
2. the last "answer is ..." / "answer: ..." (or "the correct option is", "my choice:") /
   "Final Answer" segment (the rest of that line, or the next non-empty line when the
   rest is blank) that names an option; earlier segments are tried when a later one
   names none ("let me check the answer: yes");
3. the whole response: when it is nothing but an answer ("c", "C.", "(C)", "A or C"), that
   answer; else only explicit forms count, ``(C)`` anywhere or a line starting ``C)`` /
   ``C.``, on the last line holding one; that line must name one option only.

Options the answer rules out ("not A", "isn't (B)", "neither A nor B", "except C", "D is
wrong") are never read as chosen: "not A, not B, not D, so C" answers C.
Inside a boxed or answer segment, letters are case-insensitive and explicit mentions
(``(C)``, ``option C``) win over bare letters, so the article in "Answer: A good choice is
(B)" is not read as option A. A bare ``A``/``a`` or ``I`` followed by an ordinary word is
taken for the English article or pronoun, not an option. Letters joined by "or", "and",
",", "/" or "&" form one answer; when it names several distinct options it is ambiguous and
scores 0. Whole-response fallbacks require upper case, because lowercase ``(a)`` / ``(i)`` in
free text is usually an enumeration.

All input is untrusted; every pattern here runs in linear time on the response.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Literal

from pydantic import ValidationInfo, field_validator

from referee.verifiers import budget
from referee.verifiers.base import ItemInvalid, ItemVerifier, Outcome, Params
from referee.verifiers.rules.normalization import Normalization
from referee.verifiers.types import Item

DEFAULT_LETTERS = "ABCDEFGHIJ"
ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"

Source = Literal["boxed", "answer", "response"]


class ChoiceParams(Params):
    options: list[str] | dict[str, str] | None = None
    """Option texts: a list (option i has letter ``A`` + i) or a mapping letter -> text.
    Needed to give the reference as an option's text, and to accept answers given as text."""
    letters: str | None = None
    """The allowed option letters, e.g. ``"ABCD"``; default: the options' letters, else
    ``"ABCDEFGHIJ"``. A letter outside this set is never read as an answer."""
    allow_text_match: bool = True
    """Accept a final answer segment equal to one option's text (normalised, case-insensitive)."""

    @field_validator("options")
    @classmethod
    def _check_options(
        cls, value: list[str] | dict[str, str] | None
    ) -> list[str] | dict[str, str] | None:
        if value is None:
            return None
        if not value or len(value) > len(ALPHABET):
            raise ValueError(f"expected 1 to {len(ALPHABET)} options")
        texts = list(value.values()) if isinstance(value, dict) else value
        if any(not text.strip() for text in texts):
            raise ValueError("option texts must not be empty")
        if isinstance(value, list):
            return value
        keys = [key.strip().upper() for key in value]
        if any(len(key) != 1 or key not in ALPHABET for key in keys) or len(set(keys)) < len(keys):
            raise ValueError("keys must be distinct single letters A-Z")
        return dict(zip(keys, value.values(), strict=True))

    @field_validator("letters")
    @classmethod
    def _check_letters(cls, value: str | None, info: ValidationInfo) -> str | None:
        if value is None:
            return None
        letters = value.upper()
        if (
            not letters
            or any(c not in ALPHABET for c in letters)
            or len(set(letters)) < len(letters)
        ):
            raise ValueError("expected distinct letters A-Z, e.g. 'ABCD'")
        # `options` is declared first, so it is already validated here when it was valid.
        options = info.data.get("options")
        stray = sorted(set(_option_map(options)) - set(letters)) if options else []
        if stray:
            raise ValueError(f"does not contain the letters of params.options: {''.join(stray)}")
        return letters

    def option_map(self) -> dict[str, str]:
        """Letter -> option text; empty when no options were given."""
        return _option_map(self.options)

    def allowed_letters(self) -> str:
        """The letters an answer may name, in alphabetical order."""
        if self.letters:
            return "".join(sorted(self.letters))
        if self.options is not None:
            return "".join(sorted(self.option_map()))
        return DEFAULT_LETTERS


def _option_map(options: list[str] | dict[str, str] | None) -> dict[str, str]:
    if options is None:
        return {}
    if isinstance(options, dict):
        return dict(options)
    return {ALPHABET[i]: text for i, text in enumerate(options)}


class ChoiceVerifier(ItemVerifier[ChoiceParams]):
    """Reward 1.0 when the extracted option is the gold option, else 0.0.

    ``reference`` is the gold option: a letter (case-insensitive; ``"C"``, ``"(C)"``,
    ``"c."`` and ``"option C"`` all work) or, when ``params.options`` is given, an option's
    text. An answer naming several distinct options is wrong (``reason: "ambiguous"``).
    ``details``: ``extracted`` (letter or null), ``gold``, ``reason`` (``match``,
    ``mismatch``, ``ambiguous`` or ``no_answer``), ``source`` (where the answer was found)
    and, when ambiguous, ``candidates``.
    """

    name = "choice"
    Params = ChoiceParams
    description = (
        "Multiple-choice answer extraction (letters, boxed, 'answer is') vs the gold option."
    )

    def __init__(self, budget_s: float = budget.DEFAULT_BUDGET_S) -> None:
        self.budget_s = budget_s
        """CPU seconds reading one response may take, under a pool: extraction is linear,
        but a megabyte of one-letter lines is 300,000 candidate mentions (6 s)."""

    def check(self, item: Item, params: ChoiceParams) -> Outcome:
        letters = params.allowed_letters()
        options = params.option_map() if params.allow_text_match else {}
        gold = _gold(item.reference, letters, params.option_map())
        if not budget.begin(self.budget_s):
            spent = {"extracted": None, "gold": gold}
            return Outcome(reward=0.0, details=budget.over_budget(self.budget_s, spent))
        named, source = _extract(item.response_text(), _grammar(letters), options)
        details: dict[str, object] = {"extracted": None, "gold": gold, "source": source}
        if len(named) > 1:
            details.update(reason="ambiguous", candidates=list(named))
            return Outcome(reward=0.0, details=details)
        if not named:
            return Outcome(reward=0.0, details={**details, "reason": "no_answer"})
        reason = "match" if named[0] == gold else "mismatch"
        details.update(extracted=named[0], reason=reason)
        return Outcome(reward=float(reason == "match"), details=details)


_GOLD_LETTER = re.compile(r"(?:option\s+)?\(?\s*([A-Za-z])\s*\)?\.?", re.IGNORECASE)


def _gold(reference: object, letters: str, options: dict[str, str]) -> str:
    """The gold letter named by ``reference``; `ItemInvalid` naming ``reference`` otherwise."""
    if not isinstance(reference, str) or not reference.strip():
        raise ItemInvalid("invalid_reference", "reference: expected an option letter or text")
    found = _GOLD_LETTER.fullmatch(reference.strip())
    if found:
        letter = found.group(1).upper()
        if letter not in letters:
            msg = f"reference: {letter!r} is not one of the allowed letters {letters!r}"
            raise ItemInvalid("invalid_reference", msg)
        return letter
    if not options:
        msg = "reference: not an option letter; to give option text, also pass params.options"
        raise ItemInvalid("invalid_reference", msg)
    matches = _text_matches(reference, options)
    if len(matches) != 1:
        what = "no option" if not matches else f"several options ({', '.join(matches)})"
        raise ItemInvalid("invalid_reference", f"reference: the text matches {what}")
    return matches[0]


_TEXT_NORM = Normalization(casefold=True, collapse_whitespace=True)
# Trailing full stops, quotes and markdown around a final answer are decoration, not content.
_TEXT_EDGES = " .:\"'`*$"


def _text_key(text: str) -> str:
    return _TEXT_NORM.apply(text).strip(_TEXT_EDGES)


def _text_matches(text: str, options: dict[str, str]) -> tuple[str, ...]:
    """Letters whose option text equals ``text`` after normalisation."""
    key = _text_key(text)
    return tuple(letter for letter, option in options.items() if key and _text_key(option) == key)


@dataclass(frozen=True)
class _Grammar:
    """Compiled patterns for one set of allowed letters."""

    letters: str
    explicit: re.Pattern[str]  # "(C)" or "option C", case-insensitive
    explicit_upper: re.Pattern[str]  # the same, upper-case letters only
    bare: re.Pattern[str]  # a letter standing alone, case-insensitive
    line_start: re.Pattern[str]  # "C)" / "C." / "C:" opening a line, upper case only


@lru_cache(maxsize=64)
def _grammar(letters: str) -> _Grammar:
    cls = f"[{letters}]"
    # A "(c)" right after a word or a backslash is a call like f(c) or LaTeX, not an option.
    explicit = rf"(?<![\w\\])\(\s*({cls})\s*\)|\b(?i:option|choice)\s+({cls})(?!\w)(?!'\w)"
    return _Grammar(
        letters=letters,
        explicit=re.compile(explicit, re.IGNORECASE),
        explicit_upper=re.compile(explicit),
        bare=re.compile(rf"(?<![\w\\])(?<!\w')({cls})(?!\w)(?!'\w)", re.IGNORECASE),
        line_start=re.compile(rf"^[^\S\n]*(?:[-*#>]+[^\S\n]*)?\**({cls})\**[).:](?!\w)", re.M),
    )


def _extract(
    text: str, grammar: _Grammar, options: dict[str, str]
) -> tuple[tuple[str, ...], Source]:
    """The distinct letters the final answer names (empty: none), and where it was found."""
    boxed = _last_boxed(text)
    if boxed is not None:
        return _read_segment(boxed, grammar, options), "boxed"
    for segment in reversed(_answer_segments(text)):
        named = _read_segment(segment, grammar, options)
        if named:
            return named, "answer"
    return _read_response(text, grammar, options), "response"


_BOXED = re.compile(r"\\(?:boxed|fbox)\s*\{")


def _last_boxed(text: str) -> str | None:
    """The content of the last brace-balanced ``\\boxed{...}``; None when there is none.

    Linear time: when a box never closes, no earlier box can close after its start, so
    earlier boxes are scanned only up to it.
    """
    limit = len(text)
    for found in reversed(list(_BOXED.finditer(text))):
        content = _balanced(text, found.end(), limit)
        if content is not None:
            return content
        limit = found.start()
    return None


_BRACE = re.compile(r"[{}]")


def _balanced(text: str, start: int, limit: int) -> str | None:
    depth = 1
    for brace in _BRACE.finditer(text, start, limit):
        depth += 1 if brace.group() == "{" else -1
        if depth == 0:
            return text[start : brace.start()]
    return None


# "answer is", "answer:", "**Answer:**", "**Answer**:" and a "Final Answer" heading, and the
# same of the one option or choice picked ("the correct option is **C**"; "another option
# is A" is not an answer); "the answer is not (A)" and "the answer isn't A" are negations.
_ANSWER = re.compile(
    r"(?:\banswer|\b(?:correct|right|best|final|my)[^\S\n]+(?:option|choice))\b"
    r"[^\S\n]*\**[^\S\n]*(?:is(?![\w'])(?![^\S\n]+not\b)|:)"
    r"|\bfinal[^\S\n]+answer\b",
    re.IGNORECASE,
)


def _answer_segments(text: str) -> list[str]:
    """The text after each answer marker, up to the end of its line or the next marker.

    A marker ending its line ("The answer is:" then the letter below) takes the next
    non-empty line instead. Segments never overlap, so reading all of them is linear.
    """
    markers = list(_ANSWER.finditer(text))
    segments = []
    for i, marker in enumerate(markers):
        line_end = text.find("\n", marker.end())
        end = len(text) if line_end < 0 else line_end
        if i + 1 < len(markers):
            end = min(end, markers[i + 1].start())
        segment = text[marker.end() : end]
        if not segment.strip(" \t*:") and end == line_end:
            segment = _next_line(text, line_end)
        segments.append(segment)
    return segments


_NEXT_LINE = re.compile(r"\s*([^\n]*)")


def _next_line(text: str, newline: int) -> str:
    found = _NEXT_LINE.match(text, newline)
    return found.group(1) if found else ""


_LATEX_WRAPPER = re.compile(
    r"\\(?:text|textbf|textit|textrm|texttt|mathrm|mathbf|mathit|mbox|operatorname)\s*\{([^{}]*)\}"
)
_LATEX_DELIMITERS = re.compile(r"\\[()\[\]]|[*`$]")
# Unwrapping peels one layer of \text{...} per pass; real answers nest two or three deep.
_MAX_UNWRAP = 8


def _clean(segment: str) -> str:
    """Drop LaTeX text wrappers, math delimiters and markdown emphasis around an answer."""
    for _ in range(_MAX_UNWRAP):
        unwrapped = _LATEX_WRAPPER.sub(r"\1", segment)
        if unwrapped == segment:
            break
        segment = unwrapped
    return _LATEX_DELIMITERS.sub(" ", segment)


@dataclass(frozen=True)
class _Mention:
    start: int
    end: int
    letter: str
    explicit: bool


def _mentions(text: str, grammar: _Grammar) -> list[_Mention]:
    """Explicit and bare option letters in an answer segment, in text order (any case)."""
    found = [
        _Mention(m.start(), m.end(), (m.group(1) or m.group(2)).upper(), explicit=True)
        for m in grammar.explicit.finditer(text)
    ]
    # Where explicit mentions put their letter, so "(C)" is not also read as a bare "C".
    taken = {max(m.start(1), m.start(2)) for m in grammar.explicit.finditer(text)}
    for m in grammar.bare.finditer(text):
        if m.start() not in taken and _bare_ok(text, m.end(), m.group(1).upper()):
            found.append(_Mention(m.start(), m.end(), m.group(1).upper(), explicit=False))
    kept = [m for m in found if not _negated(text, m)]
    return sorted(kept, key=lambda m: m.start)


# "not A", "isn't (B)", "neither A nor B", "except C", "rule out D"; "A is wrong".
_NEGATION_BEFORE = re.compile(
    r"(?:\b(?:not|neither|nor|except|excluding|exclude|eliminate|eliminating|no)"
    r"|n't|\brul(?:e|ing)\s+out)[^\S\n]+(?:(?:option|choice)[^\S\n]+)?\(?[^\S\n]*$",
    re.IGNORECASE,
)
_NEGATION_AFTER = re.compile(
    r"[^\S\n]*\)?[^\S\n]+(?:is|are|was|seems)[^\S\n]+(?:not\b|wrong|incorrect|false|"
    r"eliminated|ruled[^\S\n]+out|impossible|invalid)",
    re.IGNORECASE,
)
_NEGATION_WINDOW = 24


def _negated(text: str, mention: _Mention) -> bool:
    """Whether the answer rules this option out rather than choosing it."""
    before = text[max(0, mention.start - _NEGATION_WINDOW) : mention.start]
    if _NEGATION_BEFORE.search(before):
        return True
    return _NEGATION_AFTER.match(text, mention.end, mention.end + _NEGATION_WINDOW) is not None


# Words that may follow an option letter, e.g. "A is correct", "A or C".
_CONNECTORS = frozenset({"is", "was", "would", "seems", "because", "since", "as", "or", "and"})
_CLOSERS = frozenset(").],;:!?}\"'")
_DASHES = frozenset("-\u2013\u2014(")
# Separators that may touch the letter they follow: "A/C", "A&C" and "A+C" join two options.
_JOINERS = frozenset("/&+")
_WORD = re.compile(r"[A-Za-z]+")


def _bare_ok(text: str, end: int, letter: str) -> bool:
    """Whether a lone letter ending at ``end`` reads as an option, judging by what follows.

    "C", "C.", "C) Paris", "C because" and "A is right" do; "A good choice", "I think" (the
    article and the pronoun) and "f(x)"-like uses do not.
    """
    follow = text[end : end + 32]
    rest = follow.lstrip(" \t")
    if not rest or rest[0] == "\n":
        return True
    if rest[0].isalpha():
        word = _WORD.match(rest)
        return letter not in "AI" or (word is not None and word.group().lower() in _CONNECTORS)
    if rest is follow:  # no space: only closing punctuation or a joiner ("A/C")
        return rest[0] in _CLOSERS or rest[0] in _JOINERS
    return rest[0] in _CLOSERS or rest[0] in _DASHES


# What may join the letters of one answer: "A or C", "A, C", "(A) and (C)", "A/C", "A & C".
_SEPARATOR = re.compile(r"[^\S\n]*(?:(?:,|/|&|\+|\bor\b|\band\b|\bnor\b)[^\S\n]*)+", re.IGNORECASE)


def _groups(text: str, mentions: list[_Mention]) -> list[list[_Mention]]:
    """Split ``mentions`` into runs joined only by separators; each run is one answer."""
    groups: list[list[_Mention]] = []
    for mention in mentions:
        if groups and _SEPARATOR.fullmatch(text, groups[-1][-1].end, mention.start):
            groups[-1].append(mention)
        else:
            groups.append([mention])
    return groups


def _distinct(group: list[_Mention]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(m.letter for m in group))


def _read_segment(segment: str, grammar: _Grammar, options: dict[str, str]) -> tuple[str, ...]:
    """The letters a boxed or answer segment names.

    The first answer with an explicit mention wins; then the segment's text equal to an
    option's text (so "Vitamin C" names the option "Vitamin C", not option C); then the
    first answer made of bare letters.
    """
    text = _clean(segment)
    groups = _groups(text, _mentions(text, grammar))
    explicit = next((g for g in groups if any(m.explicit for m in g)), None)
    if explicit is not None:
        return _distinct(explicit)
    by_text = _text_matches(text, options)
    if by_text:
        return by_text
    return _distinct(groups[0]) if groups else ()


def _read_response(text: str, grammar: _Grammar, options: dict[str, str]) -> tuple[str, ...]:
    """The letters a response with no boxed or answer segment names: explicit forms only,
    unless the response is nothing but an answer ("c", "C.", "A or C")."""
    whole = _whole_answer(_clean(text), grammar) if len(text) <= WHOLE_ANSWER_CHARS else ()
    if whole:
        return whole
    for line in reversed(text.splitlines()):
        clean = _clean(line)
        mentions = [
            _Mention(m.start(), m.end(), (m.group(1) or m.group(2)), explicit=True)
            for pattern in (grammar.explicit_upper, grammar.line_start)
            for m in pattern.finditer(clean)
        ]
        if mentions:
            # a line naming several options ("(A) (B) (C) (D)") commits to none of them
            return tuple(dict.fromkeys(m.letter for m in mentions if not _negated(clean, m)))
    return _text_matches(text, options)


WHOLE_ANSWER_CHARS = 256
"""Longest response read as nothing but an answer ("A or C", "(B)."): every one of 26
options joined by separators fits, and a long response is not read letter by letter
(300,000 lone letters cost seconds to find and then to find wanting)."""
# Decoration allowed around a response that is only an answer: "(C)", "C.", "'c'".
_DECORATION = " \t\n.:()\"'"


def _whole_answer(text: str, grammar: _Grammar) -> tuple[str, ...]:
    """The letters of ``text`` when it holds one answer and nothing else; else empty."""
    groups = _groups(text, _mentions(text, grammar))
    if len(groups) != 1:
        return ()
    before, after = text[: groups[0][0].start], text[groups[0][-1].end :]
    if before.strip(_DECORATION) or after.strip(_DECORATION):
        return ()
    return _distinct(groups[0])
