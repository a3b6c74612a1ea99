"""The ``similarity`` verifier: graded text overlap (fuzzy ratio, BLEU, GLEU, METEOR,
ROUGE-1..5 and ROUGE-L): every metric of OpenAI's ``text_similarity`` grader except
``cosine``, which needs an embedding model (the judge's ``embedding`` mode).

NLTK (GLEU, METEOR, and rouge-score's stemmer) is imported on first use, as in
`referee.verifiers.instructions.sentences`, which says why."""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING, Literal

import regex
from pydantic import Field
from rapidfuzz import fuzz
from rapidfuzz.distance import LCSseq
from sacrebleu.metrics.bleu import BLEU

if TYPE_CHECKING:
    from rouge_score.rouge_scorer import RougeScorer

from referee.verifiers import budget
from referee.verifiers.base import ItemVerifier, Outcome, Params
from referee.verifiers.rules.normalization import Normalization
from referee.verifiers.rules.references import text_references
from referee.verifiers.types import Item

Metric = Literal[
    "fuzzy",
    "bleu",
    "gleu",
    "meteor",
    "rouge_1",
    "rouge_2",
    "rouge_3",
    "rouge_4",
    "rouge_5",
    "rouge_l",
]
_ROUGE = {"rouge_1": "rouge1", "rouge_2": "rouge2", "rouge_3": "rouge3", "rouge_4": "rouge4"}
_ROUGE |= {"rouge_5": "rouge5", "rouge_l": "rougeL"}

# Letters and digits of any script; underscores and punctuation separate words.
_WORD = regex.compile(r"[^\W_]+")


class SimilarityParams(Params):
    metric: Metric = "fuzzy"
    """``fuzzy``: normalised Levenshtein similarity (rapidfuzz ``fuzz.ratio``) on characters;
    ``bleu``: sentence BLEU (sacrebleu, 13a tokens, effective order); ``gleu``: sentence
    Google-BLEU, 1- to 4-grams (nltk); ``meteor``: METEOR with exact and Porter-stem
    matching (nltk; no WordNet synonyms: the WordNet data is not installed);
    ``rouge_1``..``rouge_5``, ``rouge_l``: ROUGE-N / ROUGE-L F-measure (rouge-score).
    GLEU, METEOR and ROUGE work on lower-cased words of any script."""
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


_WORDS = _WordTokenizer()


@functools.cache
def _rouge_n(kind: str) -> RougeScorer:
    """rouge-score's scorer for one ROUGE-N ``kind``, built once (no per-call state). One
    kind per scorer: a scorer computes every kind it was built with on every call."""
    from rouge_score.rouge_scorer import RougeScorer  # noqa: PLC0415 - on first use (above)

    return RougeScorer([kind], tokenizer=_WORDS)


def rouge_l(reference: str, response: str) -> float:
    """ROUGE-L F-measure, as rouge-score defines it (LCS over `_WORDS` tokens; precision
    over the response's, recall over the reference's), with rapidfuzz's bit-parallel LCS
    in place of rouge-score's pure-Python table, which took 3 s for a 5,000-word
    response against a 1,000-word reference (and 9 s at 25,000: a long response became
    a ``timeout``). Equal to rouge-score's value (tests/verifiers/test_similarity.py)."""
    target, prediction = _WORDS.tokenize(reference), _WORDS.tokenize(response)
    if not target or not prediction:
        return 0.0
    common = LCSseq.similarity(target, prediction)
    precision, recall = common / len(prediction), common / len(target)
    if precision + recall == 0:
        return 0.0
    return 2 * precision * recall / (precision + recall)


class SimilarityVerifier(ItemVerifier[SimilarityParams]):
    """Reward in [0, 1]: how close the response is to the reference, by ``metric``.

    ``reference`` is a string or a non-empty list of strings. With several references,
    ``fuzzy`` and ``rouge_l`` take the best score and ``bleu`` uses sacrebleu's native
    multi-reference statistics. Both sides are normalised the same way first; texts that
    are equal after normalisation score 1.0 under every metric (so two empty strings
    match), and an empty response against a non-empty reference scores 0. ``details``
    carry the raw ``score`` and the ``metric``, whether or not a ``threshold`` applies.

    Cost: every metric is linear-ish in the texts' lengths but ``rouge_l`` (a longest
    common subsequence, O(words(response) * words(reference)) in bit-parallel C++:
    milliseconds for 25,000 words against 1,000) and ``meteor`` (nltk aligns every pair
    of words: 0.5 s for 25,000 words against 1,000). A response that keeps a metric busy
    past the CPU budget scores 0, flagged ``over_budget``.
    The scorers are built once per verifier and hold no per-call state.
    """

    name = "similarity"
    Params = SimilarityParams
    description = "Graded similarity to the reference: fuzzy ratio, sentence BLEU or ROUGE-L."

    def __init__(self, budget_s: float = budget.DEFAULT_BUDGET_S) -> None:
        self._bleu = BLEU(effective_order=True)
        self.budget_s = budget_s
        """CPU seconds one item's metric may take, under a pool (`referee.verifiers.budget`):
        past it the response scores 0, flagged ``over_budget``."""

    def check(self, item: Item, params: SimilarityParams) -> Outcome:
        norm = params.normalize
        references = [norm.apply(ref) for ref in text_references(item.reference)]
        response = norm.apply(item.response_text())
        if not budget.begin(self.budget_s):  # METEOR aligns every word pair (see `Cost`)
            details = {"metric": params.metric, "score": 0.0}
            return Outcome(reward=0.0, details=budget.over_budget(self.budget_s, details))
        score = self._score(params.metric, response, references)
        reward = score if params.threshold is None else float(score >= params.threshold)
        return Outcome(reward=reward, details={"metric": params.metric, "score": score})

    def _score(self, metric: Metric, response: str, references: list[str]) -> float:
        if response in references:
            return 1.0  # identical texts, including empty ones, which the metrics score 0
        if metric == "bleu":
            raw = self._bleu.sentence_score(response, references).score / 100.0
        elif metric == "rouge_l":
            raw = max(rouge_l(ref, response) for ref in references)
        elif metric in _ROUGE:
            kind = _ROUGE[metric]
            raw = max(_rouge_n(kind).score(ref, response)[kind].fmeasure for ref in references)
        elif metric in ("gleu", "meteor"):
            raw = self._word_metric(metric, response, references)
        else:
            raw = max(fuzz.ratio(response, ref) for ref in references) / 100.0
        # sacrebleu gives 100.00000000000004 for some perfect matches: keep to [0, 1].
        return min(max(float(raw), 0.0), 1.0)

    def _word_metric(self, metric: Metric, response: str, references: list[str]) -> float:
        from nltk.translate.gleu_score import sentence_gleu  # noqa: PLC0415 - on first use
        from nltk.translate.meteor_score import meteor_score  # noqa: PLC0415 - on first use

        hypothesis = _WORDS.tokenize(response)
        refs = [_WORDS.tokenize(ref) for ref in references]
        if metric == "gleu":
            return float(max(sentence_gleu([ref], hypothesis) for ref in refs))
        return float(meteor_score(refs, hypothesis, wordnet=_NO_SYNONYMS))


class _NoSynonyms:
    """What nltk's METEOR asks WordNet for, answering no synonyms (stem matching stays)."""

    def synsets(self, word: str, *args: object, **kwargs: object) -> list[object]:
        return []


_NO_SYNONYMS = _NoSynonyms()
