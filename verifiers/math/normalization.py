"""Clean an extracted answer into a canonical LaTeX-ish string, and record what was dropped.

In order:

1. math delimiters (``$``, ``\\(``, ``\\[``), ``\\displaystyle``, sizing (``\\left``,
   ``\\right``, ``\\big``...), spacing (``\\!``, ``\\,``, ``\\;``, ``~``), ``\\dfrac`` and
   ``\\tfrac`` (become ``\\frac``), unicode (pi, root, comparison, infinity, times, minus signs);
2. text wrappers (``\\text{}``, ``\\textbf{}``, ``\\mathrm{}``, ``\\mbox{}``) are unwrapped;
3. trailing punctuation, a leading "x =" is kept (equations are compared as such);
4. markers, each recorded as a flag so the comparison can apply its policy:
   degrees (``^\\circ``, ``°``, "degrees"), percent (``\\%``, "percent"), money (``\\$``,
   ``€``, ``£``, "dollars", "USD");
5. units: a number followed by a unit word (``12 cm``, ``5 \\text{ meters}``, ``3 m^2``)
   keeps the number; only known unit words are dropped, never arbitrary words;
6. thousands separators (``1,234,567``, ``1{,}000``, ``1\\,000``) when the whole answer is
   one such number; a decimal comma when unambiguous: ``0,5`` or ``3{,}14`` (a bare
   ``1,5`` stays a list of two numbers);
7. number words, when the whole answer is one (``five``, ``twenty-one``);
8. repeating decimals (``0.1\\overline{6}``, ``0.\\dot{3}``) become the exact fraction.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from fractions import Fraction

MAX_UNWRAP = 8


@dataclass(frozen=True)
class Normalized:
    text: str
    percent: bool = False
    degree: bool = False
    money: bool = False
    unit: str | None = None


_UNICODE = {
    "π": r"\pi ",
    "√": r"\sqrt",
    "≤": r"\le ",
    "≥": r"\ge ",
    "≠": r"\ne ",
    "∞": r"\infty ",
    "\u00d7": r"\times ",
    "·": r"\cdot ",
    "⋅": r"\cdot ",
    "\u2212": "-",
    "\u2013": "-",
    "÷": r"\div ",
    "\u222a": r"\cup ",
    "∩": r"\cap ",
    "∈": r"\in ",
    "²": "^2",
    "³": "^3",
    "½": r"\frac{1}{2}",
    "¼": r"\frac{1}{4}",
    "¾": r"\frac{3}{4}",
    "\u00a0": " ",
    "\u2009": "",
    "\u202f": "",
}
_UNICODE_RE = re.compile("|".join(map(re.escape, _UNICODE)))

_DELIMS = re.compile(r"^\s*(?:\$\$|\$|\\\(|\\\[)(.*?)(?:\$\$|\$|\\\)|\\\])\s*$", re.S)
_REMOVE = re.compile(
    r"\\(?:displaystyle|textstyle|scriptstyle|left|right|middle|big|Big|bigg|Bigg)(?![a-zA-Z])"
    r"|\\[!;:>]|\\quad|\\qquad|\\limits"
)
_THIN_SPACE = re.compile(r"\\,")
_FRAC_VARIANTS = re.compile(r"\\[dt]frac(?![a-zA-Z])")
_TEXT_WRAP = re.compile(
    r"\\(?:text|textbf|textit|textrm|textsf|texttt|textnormal|mathrm|mathbf|mathit|mathsf"
    r"|mathnormal|boldsymbol|bm|mbox|hbox|operatorname)\s*\{([^{}]*)\}"
)
_DEGREE = re.compile(
    r"\^\s*\{\s*\\circ\s*\}|\^\s*\\circ|\\circ|°|\\degree(?![a-zA-Z])|\s*\b(?:degrees?|deg)\b\.?",
    re.IGNORECASE,
)
_PERCENT = re.compile(r"\\%|%|\s*\bpercent\b", re.IGNORECASE)
_MONEY = re.compile(
    r"\\\$|\$|€|£|¥|\\euro(?![a-zA-Z])|\\pounds(?![a-zA-Z])"
    r"|\s*\b(?:dollars?|usd|cents?|euros?)\b\.?",
    re.IGNORECASE,
)
_LONG_UNITS = (
    "mm|cm|km|dm|inch|inches|ft|feet|foot|yd|yards?|miles?|meters?|metres?"
    "|centimeters?|millimeters?|kilometers?|mg|kg|grams?|kilograms?|lbs?|pounds?|oz|ounces?"
    "|ml|mL|liters?|litres?|gallons?|sec|secs|seconds?|mins?|minutes?|hrs?"
    "|hours?|days?|weeks?|months?|years?|mph|kmh|km/h|m/s|units?|sq|square|cubic"
    "|people|persons?|students?|apples?|items?|pieces?|times|ways|points?"
)
_SHORT_UNITS = "m|s|h|g|l|L|in|mi"
_UNIT_WORD = (
    rf"(?:(?:sq|square|cubic)\s+)?(?:{_LONG_UNITS}|{_SHORT_UNITS})(?:\s*\^\s*\{{?[23]\}}?)?"
)
# A unit after a number: separated by a space or \text{...}; a long unit may touch it.
_UNIT_TAIL = re.compile(
    rf"^(.*?[\d}}.])(?:\s*\\text\s*\{{\s*({_UNIT_WORD})\s*\}}|\s+({_UNIT_WORD})"
    rf"|((?:{_LONG_UNITS})(?:\s*\^\s*\{{?[23]\}}?)?))\.?$"
)
_COMMAND = re.compile(r"\\[a-zA-Z]+")
_THOUSANDS = re.compile(r"^[-+]?(?!0)\d{1,3}(?:,\d{3})+(?:\.\d+)?$")
_BRACE_COMMA = re.compile(r"(?<=\d)\{,\}(\d+)")
_SPACE_THOUSANDS = re.compile(r"^[-+]?(?!0)\d{1,3}(?:\s\d{3})+(?:\.\d+)?$")
_MIXED = re.compile(r"^([-+]?\d+)\s+(\d+)\s*/\s*(\d+)$")
# \log without a base is the natural log (as in \ln), the convention of competition
# answers; \varnothing is \emptyset.
_ALIASES = re.compile(r"\\log(?![a-zA-Z_])|\\varnothing(?![a-zA-Z])")
_DECIMAL_COMMA = re.compile(r"^([-+]?0),(\d+)$")
_TRAILING = re.compile(r"[\s.;:?]+$")
_SPACES = re.compile(r"\s+")

_SMALL = [
    "zero",
    "one",
    "two",
    "three",
    "four",
    "five",
    "six",
    "seven",
    "eight",
    "nine",
    "ten",
    "eleven",
    "twelve",
    "thirteen",
    "fourteen",
    "fifteen",
    "sixteen",
    "seventeen",
    "eighteen",
    "nineteen",
]
_TENS = ["_", "_", "twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety"]
_WORDS: dict[str, int] = {w: i for i, w in enumerate(_SMALL)}
for _t, _w in enumerate(_TENS):
    if _w != "_":
        _WORDS[_w] = 10 * _t
        for _u in range(1, 10):
            _WORDS[f"{_w}-{_SMALL[_u]}"] = 10 * _t + _u
            _WORDS[f"{_w} {_SMALL[_u]}"] = 10 * _t + _u
_WORDS["hundred"] = 100
_WORDS["a hundred"] = 100
_WORDS["one hundred"] = 100
_WORDS["thousand"] = 1000
_WORDS["one thousand"] = 1000


def normalize(answer: str, *, units: bool = True, words: bool = True) -> Normalized:
    """The canonical form of ``answer`` and the markers it carried."""
    text = answer.strip()
    if "\\" in text or "$" in text:
        for _ in range(3):
            found = _DELIMS.match(text)
            if not found:
                break
            text = found.group(1).strip()
    text = _UNICODE_RE.sub(lambda m: _UNICODE[m.group()], text)
    text = _REMOVE.sub("", text)
    text = _FRAC_VARIANTS.sub(r"\\frac", text)
    text = _ALIASES.sub(lambda m: "\\ln" if m.group() == "\\log" else "\\emptyset", text)
    text = text.replace("~", " ")
    text = unwrap_text(text)
    text = _BRACE_COMMA.sub(_brace_comma, text)
    if "\\overline" in text or "\\dot" in text:
        text = _REPEATING.sub(_repeating, text)
    text = _TRAILING.sub("", text.strip())

    degree = percent = money = False
    if "circ" in text or "°" in text or "deg" in text.lower():
        stripped = _DEGREE.sub("", text)
        degree = stripped != text
        text = stripped
    if "%" in text or "percent" in text.lower():
        stripped = _PERCENT.sub("", text)
        percent = stripped != text
        text = stripped
    text = text.strip()
    if "$" in text or "€" in text or "£" in text or "¥" in text or _has_money_word(text):
        stripped = _MONEY.sub("", text).strip()
        money = stripped != text
        text = stripped
    text = _thin_spaces(text)
    unit = None
    if units and text and (text[-1].isalpha() or text[-1] in "}2"):
        text, unit = _without_unit(text)
    text = _SPACES.sub(" ", text).strip()
    text = _TRAILING.sub("", text)
    if _THOUSANDS.match(text) or _SPACE_THOUSANDS.match(text):
        text = text.replace(",", "").replace(" ", "")
    else:
        comma = _DECIMAL_COMMA.match(text)
        if comma:
            text = f"{comma.group(1)}.{comma.group(2)}"
        mixed = _MIXED.match(text)
        if mixed and int(mixed.group(2)) < int(mixed.group(3)):
            text = f"{mixed.group(1)}\\frac{{{mixed.group(2)}}}{{{mixed.group(3)}}}"
    if words and text and text[0].isalpha():
        value = _WORDS.get(text.lower())
        if value is not None:
            text = str(value)
    return Normalized(text=text, percent=percent, degree=degree, money=money, unit=unit)


def _without_unit(text: str) -> tuple[str, str | None]:
    """``text`` without the unit or the counted noun after its number (``18 cm``,
    ``18 cookies``, ``18 boxes of cookies``), and that unit; else ``text`` and None."""
    found = _UNIT_TAIL.match(text)
    if found and found.group(1).strip():
        unit = found.group(2) or found.group(3) or found.group(4)
    else:
        found = _NOUN_TAIL.match(text)
        if found is None or not _is_noun(found.group(2)):
            return text, None
        unit = found.group(2)
    number = found.group(1).strip()
    if not number or any(c.isalpha() for c in _COMMAND.sub("", number)):
        return text, None
    return number, unit


_NOUN_TAIL = re.compile(r"^(.*?[\d}.])\s+([A-Za-z]{3,}(?:\s+[A-Za-z]{2,}){0,2})$")
"""A number and up to three words after it, the first of three letters or more."""
_NOT_NOUNS = frozenset(
    {
        "and", "or", "nor", "not", "but", "than", "then", "more", "less", "least", "most",
        "only", "exactly", "about", "approximately", "roughly", "nearly", "over", "under",
        "for", "with", "when", "where", "each", "per", "the", "are", "was", "were", "is",
        "sin", "cos", "tan", "sec", "csc", "cot", "sinh", "cosh", "tanh", "arcsin", "arccos",
        "arctan", "log", "ln", "exp", "sqrt", "max", "min", "gcd", "lcm", "mod", "det", "inf",
        "infty", "infinity", "undefined", "none",
    }
)  # fmt: skip
"""Words that after a number say something of it, or are mathematics (``2 pi``)."""


def _is_noun(words: str) -> bool:
    return not any(w.lower() in _NOT_NOUNS for w in words.split())


_REPEATING = re.compile(
    r"(?<![\d.])(\d{0,30})\.(\d{0,30})\\(?:overline|dot)\s*(?:\{(\d{1,30})\}|(\d))"
)


def _repeating(match: re.Match[str]) -> str:
    """``I.A\\overline{R}`` as the fraction it equals: I + (A(10^m - 1) + R) / 10^k(10^m - 1)
    for k digits in A and m in R."""
    whole, head, cycle = match.group(1), match.group(2), match.group(3) or match.group(4)
    period = 10 ** len(cycle) - 1
    value = int(whole or 0) + Fraction(
        int(head or 0) * period + int(cycle), 10 ** len(head) * period
    )
    if value.denominator == 1:
        return str(value.numerator)
    return f"\\frac{{{value.numerator}}}{{{value.denominator}}}"


def _brace_comma(match: re.Match[str]) -> str:
    digits = match.group(1)
    sep = "" if len(digits) == 3 else "."
    return f"{sep}{digits}"


def _thin_spaces(text: str) -> str:
    """``\\,`` is a thousands separator between digit groups, else plain spacing."""
    if "\\," not in text:
        return text
    return _THIN_SPACE.sub(" ", re.sub(r"(?<=\d)\\,(?=\d{3}(?!\d))", "", text))


def _has_money_word(text: str) -> bool:
    lower = text.lower()
    return any(w in lower for w in ("dollar", "usd", "cent", "euro"))


def unwrap_text(text: str) -> str:
    """``text`` with its LaTeX text wrappers (``\\text{}``, ``\\textbf{}``, ``\\mathrm{}``...)
    replaced by their contents, innermost first, at most `MAX_UNWRAP` layers deep."""
    for _ in range(MAX_UNWRAP):
        unwrapped = _TEXT_WRAP.sub(r"\1", text)
        if unwrapped == text:
            break
        text = unwrapped
    return text
