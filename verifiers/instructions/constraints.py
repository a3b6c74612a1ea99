"""IFEval's 25 constraint types: each a kwargs model (every kwarg required: IFEval's own
code draws a *random* value for a missing one) and a check on the response text.

The checks follow lm-eval's IFEval task (`lm_eval/tasks/ifeval`), whose semantics are
the benchmark's (sentences and words by NLTK's Punkt and word tokenizers, as IFEval,
through `sentences`); one deliberate difference, where IFEval's check rewards an answer
that did not follow the instruction: in the language checks
(``language:response_language``, ``change_case:english_capital``,
``change_case:english_lowercase``) a text whose language cannot be detected (no letters)
fails; IFEval passes it. (A kwarg of 0 is taken as given: lm-eval's pipeline drops
falsy kwargs and draws a random value in its place.)

Keywords, forbidden words, section splitters and postscript markers are regular
expressions in IFEval; they are here too, run with a time budget.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable
from typing import Any, Literal, TypeVar

import regex
from pydantic import BaseModel, ConfigDict, Field

from referee.verifiers.instructions.sentences import count_sentences, words
from referee.verifiers.instructions.text import count_words, language_of

Relation = Literal["less than", "at least"]
PATTERN_TIMEOUT_S = 0.5
T = TypeVar("T")


class PatternTimeout(Exception):
    """A pattern the reference gave (a keyword, a section splitter, a postscript marker:
    IFEval reads them as regular expressions) ran past `PATTERN_TIMEOUT_S`: backtracking
    that no response can cause in a sound pattern, so the reference's fault."""


def _client_pattern(match: Callable[[], T]) -> T:
    """``match()``, a search with a pattern from the reference; its timeout is the
    pattern's (`PatternTimeout`), unlike the time limits of NLTK's own tokenizers."""
    try:
        return match()
    except TimeoutError as exc:
        raise PatternTimeout(str(exc)) from None


class Kwargs(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class NoKwargs(Kwargs):
    pass


class Language(Kwargs):
    language: str = Field(min_length=2, max_length=8)


class Sentences(Kwargs):
    num_sentences: int = Field(ge=0)
    relation: Relation


class Placeholders(Kwargs):
    num_placeholders: int = Field(ge=0)


class Bullets(Kwargs):
    num_bullets: int = Field(ge=0)


class Highlights(Kwargs):
    num_highlights: int = Field(ge=0)


class Sections(Kwargs):
    section_spliter: str = Field(min_length=1, max_length=100)
    num_sections: int = Field(ge=0)


class Paragraphs(Kwargs):
    num_paragraphs: int = Field(ge=0)


class Postscript(Kwargs):
    postscript_marker: str = Field(min_length=1, max_length=100)


class Keywords(Kwargs):
    keywords: list[str] = Field(min_length=1, max_length=100)


class KeywordFrequency(Kwargs):
    keyword: str = Field(min_length=1, max_length=200)
    frequency: int = Field(ge=0)
    relation: Relation


class Words(Kwargs):
    num_words: int = Field(ge=0)
    relation: Relation


class FirstWord(Kwargs):
    num_paragraphs: int = Field(ge=1)
    nth_paragraph: int = Field(ge=1)
    first_word: str = Field(min_length=1, max_length=100)


class Forbidden(Kwargs):
    forbidden_words: list[str] = Field(min_length=1, max_length=100)


class RepeatPrompt(Kwargs):
    prompt_to_repeat: str = Field(min_length=1)


class End(Kwargs):
    end_phrase: str = Field(min_length=1, max_length=1000)


class Letter(Kwargs):
    letter: str = Field(pattern=r"^\s*[A-Za-z]\s*$")
    let_frequency: int = Field(ge=0)
    let_relation: Relation


class CapitalWords(Kwargs):
    capital_frequency: int = Field(ge=0)
    capital_relation: Relation


def _compare(count: int, threshold: int, relation: Relation) -> bool:
    return count < threshold if relation == "less than" else count >= threshold


def _search(pattern: str, text: str) -> bool:
    found = _client_pattern(
        lambda: regex.search(pattern, text, flags=regex.IGNORECASE, timeout=PATTERN_TIMEOUT_S)
    )
    return found is not None


def _language(text: str, k: Language) -> bool:
    return language_of(text) == k.language


def _sentences(text: str, k: Sentences) -> bool:
    return _compare(count_sentences(text), k.num_sentences, k.relation)


def _placeholders(text: str, k: Placeholders) -> bool:
    return count_placeholders(text) >= k.num_placeholders


def count_placeholders(text: str) -> int:
    r"""What ``len(re.findall(r"\[.*?\]", text))`` counts (IFEval's reading: a ``[`` and
    the first ``]`` after it on its line), line by line in linear time: the regex rescans
    a line to its end from every ``[`` that no ``]`` follows (quadratic in the line)."""
    count = 0
    for line in text.split("\n"):
        at = 0
        while (start := line.find("[", at)) >= 0:
            end = line.find("]", start + 1)
            if end < 0:
                break
            count, at = count + 1, end + 1
    return count


def _bullets(text: str, k: Bullets) -> bool:
    stars = regex.findall(r"^\s*\*[^\*].*$", text, flags=regex.MULTILINE)
    dashes = regex.findall(r"^\s*-.*$", text, flags=regex.MULTILINE)
    return len(stars) + len(dashes) == k.num_bullets


ANSWER_OPTIONS = ("My answer is yes.", "My answer is no.", "My answer is maybe.")


def _constrained(text: str, _: NoKwargs) -> bool:
    stripped = text.strip()
    return any(option in stripped for option in ANSWER_OPTIONS)


def _highlights(text: str, k: Highlights) -> bool:
    single = [h for h in regex.findall(r"\*[^\n\*]*\*", text) if h.strip("*").strip()]
    double = [
        h
        for h in regex.findall(r"\*\*[^\n\*]*\*\*", text)
        if h.removeprefix("**").removesuffix("**").strip()
    ]
    return len(single) + len(double) >= k.num_highlights


def _sections(text: str, k: Sections) -> bool:
    splitter = r"\s?" + k.section_spliter.strip() + r"\s?\d+\s?"
    parts = _client_pattern(lambda: regex.split(splitter, text, timeout=PATTERN_TIMEOUT_S))
    return len(parts) - 1 >= k.num_sections


def _paragraphs(text: str, k: Paragraphs) -> bool:
    parts = regex.split(r"\s?\*\*\*\s?", text)
    count = len(parts)
    for index, part in enumerate(parts):
        if not part.strip():
            if index in (0, len(parts) - 1):
                count -= 1
            else:
                return False  # an empty paragraph between two separators
    return count == k.num_paragraphs


def _postscript(text: str, k: Postscript) -> bool:
    marker = k.postscript_marker.strip()
    if marker == "P.P.S":
        pattern = r"\s*p\.\s?p\.\s?s.*$"
    elif marker == "P.S.":
        pattern = r"\s*p\.\s?s\..*$"
    else:
        pattern = r"\s*" + marker.lower() + r".*$"
    lowered = text.lower()
    found = _client_pattern(
        lambda: regex.findall(pattern, lowered, flags=regex.MULTILINE, timeout=PATTERN_TIMEOUT_S)
    )
    return bool(found)


def _keywords(text: str, k: Keywords) -> bool:
    return all(_search(keyword, text) for keyword in k.keywords)


def _keyword_frequency(text: str, k: KeywordFrequency) -> bool:
    found = _client_pattern(
        lambda: regex.findall(
            k.keyword.strip(), text, flags=regex.IGNORECASE, timeout=PATTERN_TIMEOUT_S
        )
    )
    return _compare(len(found), k.frequency, k.relation)


def _words(text: str, k: Words) -> bool:
    return _compare(count_words(text), k.num_words, k.relation)


def _json(text: str, _: NoKwargs) -> bool:
    body = text.strip()
    for fence in ("```json", "```Json", "```JSON", "```"):
        body = body.removeprefix(fence)
    body = body.removesuffix("```").strip()
    try:
        json.loads(body)
    except (ValueError, RecursionError):  # what Python's reader cannot read is not JSON here
        return False
    return True


def _first_word(text: str, k: FirstWord) -> bool:
    parts = regex.split(r"\n\n", text)
    count = sum(1 for part in parts if part.strip())
    if k.nth_paragraph > count:
        return False
    paragraph = parts[k.nth_paragraph - 1].strip()  # counted among all parts, as IFEval
    if not paragraph:
        return False
    word = paragraph.split()[0].strip().lstrip("'").lstrip('"')
    first = ""
    for letter in word:
        if letter in ".,?!'\"":
            break
        first += letter.lower()
    return count == k.num_paragraphs and first == k.first_word.lower()


def _forbidden(text: str, k: Forbidden) -> bool:
    return not any(_search(r"\b" + word + r"\b", text) for word in set(k.forbidden_words))


def _two_responses(text: str, _: NoKwargs) -> bool:
    parts = text.split("******")
    kept = []
    for index, part in enumerate(parts):
        if part.strip():
            kept.append(part)
        elif index not in (0, len(parts) - 1):
            return False
    return len(kept) == 2 and kept[0].strip() != kept[1].strip()


def _repeat(text: str, k: RepeatPrompt) -> bool:
    return text.strip().lower().startswith(k.prompt_to_repeat.strip().lower())


def _end(text: str, k: End) -> bool:
    return text.strip().strip('"').lower().endswith(k.end_phrase.strip().lower())


def _title(text: str, _: NoKwargs) -> bool:
    return any(t.lstrip("<").rstrip(">").strip() for t in titles(text))


def titles(text: str) -> list[str]:
    """What ``re.findall(r"<<[^\n]+>>", text)`` finds (IFEval's titles), in linear time:
    at most one per line, from its first ``<<`` to its last ``>>`` when at least one
    character lies between (the greedy run backs off to the last ``>>``; an earlier
    ``<<`` always has more room than a later one). The regex retried every ``<<`` of a
    line without a ``>>`` to the line's end: quadratic."""
    found = []
    for line in text.split("\n"):
        start, end = line.find("<<"), line.rfind(">>")
        if start >= 0 and end >= start + 3:
            found.append(line[start : end + 2])
    return found


def _letters(text: str, k: Letter) -> bool:
    count = Counter(text.lower())[k.letter.strip().lower()]
    return _compare(count, k.let_frequency, k.let_relation)


def _capital(text: str, _: NoKwargs) -> bool:
    return text.isupper() and language_of(text) == "en"


def _lowercase(text: str, _: NoKwargs) -> bool:
    return text.islower() and language_of(text) == "en"


def _capital_words(text: str, k: CapitalWords) -> bool:
    count = sum(1 for word in words(text) if word.isupper())
    return _compare(count, k.capital_frequency, k.capital_relation)


def _no_comma(text: str, _: NoKwargs) -> bool:
    return "," not in text


def _quotation(text: str, _: NoKwargs) -> bool:
    stripped = text.strip()
    return len(stripped) > 1 and stripped[0] == '"' and stripped[-1] == '"'


Check = Callable[[str, Any], bool]
"""A check of a response; its second argument is the constraint's own kwargs model."""

CONSTRAINTS: dict[str, tuple[type[Kwargs], Check]] = {
    "keywords:existence": (Keywords, _keywords),
    "keywords:frequency": (KeywordFrequency, _keyword_frequency),
    "keywords:forbidden_words": (Forbidden, _forbidden),
    "keywords:letter_frequency": (Letter, _letters),
    "language:response_language": (Language, _language),
    "length_constraints:number_sentences": (Sentences, _sentences),
    "length_constraints:number_paragraphs": (Paragraphs, _paragraphs),
    "length_constraints:number_words": (Words, _words),
    "length_constraints:nth_paragraph_first_word": (FirstWord, _first_word),
    "detectable_content:number_placeholders": (Placeholders, _placeholders),
    "detectable_content:postscript": (Postscript, _postscript),
    "detectable_format:number_bullet_lists": (Bullets, _bullets),
    "detectable_format:constrained_response": (NoKwargs, _constrained),
    "detectable_format:number_highlighted_sections": (Highlights, _highlights),
    "detectable_format:multiple_sections": (Sections, _sections),
    "detectable_format:json_format": (NoKwargs, _json),
    "detectable_format:title": (NoKwargs, _title),
    "combination:two_responses": (NoKwargs, _two_responses),
    "combination:repeat_prompt": (RepeatPrompt, _repeat),
    "startend:end_checker": (End, _end),
    "startend:quotation": (NoKwargs, _quotation),
    "change_case:capital_word_frequency": (CapitalWords, _capital_words),
    "change_case:english_capital": (NoKwargs, _capital),
    "change_case:english_lowercase": (NoKwargs, _lowercase),
    "punctuation:no_comma": (NoKwargs, _no_comma),
}
"""Instruction id -> (kwargs model, check)."""
