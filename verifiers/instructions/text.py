"""Text measures the constraints share: words, sentences, paragraphs, language."""

from __future__ import annotations

import re

from langdetect.lang_detect_exception import LangDetectException

from referee.verifiers.instructions.language import detect

_WORD = re.compile(r"\w+")
_TOKEN = re.compile(r"\w+(?:'\w+)?|[^\w\s]")
_ABBREVIATIONS = re.compile(
    r"\b(?:Mr|Mrs|Ms|Dr|Prof|St|Jr|Sr|Inc|Ltd|Co|vs|etc|e\.g|i\.e|U\.S|a\.m|p\.m)\.$", re.I
)
_SENTENCE_END = re.compile(r"[.!?]+(?:[\"')\]]+)?(?=\s|$)")


def count_words(text: str) -> int:
    """Runs of word characters (IFEval's count)."""
    return len(_WORD.findall(text))


def tokens(text: str) -> list[str]:
    """Words (contractions kept whole) and single punctuation marks."""
    return _TOKEN.findall(text)


def count_sentences(text: str) -> int:
    """Sentences: text up to ``.``, ``!`` or ``?`` (with closing quotes or brackets) before
    a space or the end, not after a known abbreviation or a single initial; a last
    sentence without a stop counts too. (IFEval uses NLTK's Punkt model, whose data is not
    installable from the package registries this service may use.)"""
    count, start = 0, 0
    for match in _SENTENCE_END.finditer(text):
        piece = text[start : match.end()].strip()
        if _ABBREVIATIONS.search(piece) or re.search(r"(?:^|\s)[A-Z]\.$", piece):
            continue
        if re.search(r"\w", piece):
            count += 1
        start = match.end()
    return count + (1 if re.search(r"\w", text[start:]) else 0)


def language_of(text: str) -> str | None:
    """The ISO 639-1 code langdetect gives ``text`` (seeded, `language.detect`), or None
    when it cannot tell (no letters): a text in no detectable language follows no language
    constraint."""
    try:
        return detect(text)
    except LangDetectException:
        return None
