"""Text measures the constraints share: words and language (sentences: `sentences`)."""

from __future__ import annotations

import re

from langdetect.lang_detect_exception import LangDetectException

from referee.verifiers.instructions.language import detect

_WORD = re.compile(r"\w+")


def count_words(text: str) -> int:
    """Runs of word characters (IFEval's count)."""
    return len(_WORD.findall(text))


def language_of(text: str) -> str | None:
    """The ISO 639-1 code langdetect gives ``text`` (seeded, `language.detect`), or None
    when it cannot tell (no letters): a text in no detectable language follows no language
    constraint."""
    try:
        return detect(text)
    except LangDetectException:
        return None
