"""The ``similarity`` verifier: graded text overlap (fuzzy ratio, BLEU, ROUGE-L)."""

from __future__ import annotations

from typing import Literal

import regex
from pydantic import Field
from rapidfuzz import fuzz
from rouge_score import rouge_scorer
from sacrebleu.metrics.bleu import BLEU

from referee.verifiers.base import ItemVerifier, Outcome, Params
from referee.verifiers.rules.normalization import Normalization
from referee.verifiers.rules.references import text_references
from referee.verifiers.types import Item

Metric = Literal["fuzzy", "bleu", "rouge_l"]

# Letters and digits of any script; underscores and punctuation separate words.
_WORD = regex.compile(r"[^\W_]+")


class SimilarityParams(Params):
    metric: Metric = "fuzzy"
    """``fuzzy``: normalised Levenshtein similarity (rapidfuzz ``fuzz.ratio``) on characters;
    ``bleu``: sentence BLEU (sacrebleu, 13a tokens, effective order); ``rouge_l``: ROUGE-L
    F-measure on lower-cased words (rouge-score)."""
    normalize: Normalization = Field(default_factory=Normalization)
    threshold: float | None = Field(default=None, ge=0, le=1)
    """If set, the reward is 1.0 when the score reaches it, else 0.0."""


class _WordTokenizer:
    """ROUGE tokens: lower-cased runs of letters and digits in any script.

    rouge-score's own tokenizer keeps only ``[a-z0-9]``, so accented and non-Latin words
    vanish and e.g. Cyrillic text always scores 0. On ASCII text the two agree.
    """

    def tokenize(self, text: str) -> list[str]:
        return [str(word) for word in _WORD.findall(text.lower())]


class SimilarityVerifier(ItemVerifier[SimilarityParams]):
    """Reward in [0, 1]: how close the response is to the reference, by ``metric``.

    ``reference`` is a string or a non-empty list of strings. With several references,
    ``fuzzy`` and ``rouge_l`` take the best score and ``bleu`` uses sacrebleu's native
    multi-reference statistics. Both sides are normalised the same way first; texts that
    are equal after normalisation score 1.0 under every metric (so two empty strings
    match), and an empty response against a non-empty reference scores 0. ``details``
    carry the raw ``score`` and the ``metric``, whether or not a ``threshold`` applies.

    Cost: ``fuzzy`` and ``bleu`` are linear-ish and fast; ``rouge_l`` is a pure-Python
    longest common subsequence, O(words(response) * words(reference)).
    The scorers are built once per verifier and hold no per-call state.
    """

    name = "similarity"
    Params = SimilarityParams
    description = "Graded similarity to the reference: fuzzy ratio, sentence BLEU or ROUGE-L."

    def __init__(self) -> None:
        self._bleu = BLEU(effective_order=True)
        self._rouge = rouge_scorer.RougeScorer(["rougeL"], tokenizer=_WordTokenizer())

    def check(self, item: Item, params: SimilarityParams) -> Outcome:
        norm = params.normalize
        references = [norm.apply(ref) for ref in text_references(item.reference)]
        response = norm.apply(item.response_text())
        score = self._score(params.metric, response, references)
        reward = score if params.threshold is None else float(score >= params.threshold)
        return Outcome(reward=reward, details={"metric": params.metric, "score": score})

    def _score(self, metric: Metric, response: str, references: list[str]) -> float:
        if response in references:
            return 1.0  # identical texts, including empty ones, which the metrics score 0
        if metric == "bleu":
            raw = self._bleu.sentence_score(response, references).score / 100.0
        elif metric == "rouge_l":
            raw = max(self._rouge.score(ref, response)["rougeL"].fmeasure for ref in references)
        else:
            raw = max(fuzz.ratio(response, ref) for ref in references) / 100.0
        # sacrebleu gives 100.00000000000004 for some perfect matches: keep to [0, 1].
        return min(max(float(raw), 0.0), 1.0)
