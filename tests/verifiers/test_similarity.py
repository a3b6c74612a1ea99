from __future__ import annotations

import math
import random
import secrets
from typing import Any

import pytest

from referee.verifiers import Status

E = math.exp(-1)  # BLEU brevity penalty of a 3-word hypothesis against 6 reference words
CAT = "the cat sat on the mat"

CASES: list[tuple[str, Any, dict[str, Any], float]] = [
    # (response, reference, params, expected reward)
    # fuzzy: rapidfuzz ratio = 1 - indel distance / total length
    ("Paris", "Paris", {}, 1.0),
    ("kitten", "sitting", {}, 8 / 13),
    ("kitten", ["sitting", "kitten!"], {}, 12 / 13),  # best of several references
    ("abc", "xyz", {}, 0.0),
    ("", "abc", {}, 0.0),
    ("", "", {}, 1.0),
    ("  Paris\n", "Paris", {}, 1.0),
    ("  Paris\n", "Paris", {"normalize": {"strip": False}}, 10 / 13),
    ("PARIS", "paris", {}, 0.0),
    ("PARIS", "paris", {"normalize": {"casefold": True}}, 1.0),
    ("\uff21\uff22\uff23", "ABC", {}, 1.0),  # full-width folds under NFKC
    ("a  b", "a b", {}, 6 / 7),
    ("a  b", "a b", {"normalize": {"collapse_whitespace": True}}, 1.0),
    ("kitten", "sitting", {"threshold": 0.6}, 1.0),
    ("kitten", "sitting", {"threshold": 0.7}, 0.0),
    ("abc", "xyz", {"threshold": 0.0}, 1.0),
    ("Paris", "Paris", {"threshold": 1.0}, 1.0),
    ("Pariss", "Paris", {"threshold": 1.0}, 0.0),
    # bleu: sacrebleu sentence BLEU / 100, effective order
    (CAT, CAT, {"metric": "bleu"}, 1.0),
    ("Paris", "Paris", {"metric": "bleu"}, 1.0),
    ("the cat sat", CAT, {"metric": "bleu"}, E),
    ("", CAT, {"metric": "bleu"}, 0.0),
    ("dog", "the cat sat", {"metric": "bleu"}, 0.0),
    (CAT, "a cat sat on a mat", {"metric": "bleu"}, 0.32466791547509904),
    (CAT, CAT + " today", {"metric": "bleu"}, 0.8464817248906144),
    # native multi-reference: n-grams from one, brevity from the closest length
    (CAT, ["a cat sat on a mat", CAT + " today"], {"metric": "bleu"}, 1.0),
    ("The cat sat on the mat.", CAT, {"metric": "bleu"}, 0.6147881529512643),
    (
        "The cat sat on the mat.",
        CAT,
        {"metric": "bleu", "normalize": {"casefold": True}},
        0.8091067115702206,
    ),
    ("the cat sat", CAT, {"metric": "bleu", "threshold": 0.3}, 1.0),
    ("the cat sat", CAT, {"metric": "bleu", "threshold": 0.4}, 0.0),
    # rouge_l: LCS F-measure over lower-cased words
    ("the cat sat", CAT, {"metric": "rouge_l"}, 2 / 3),
    ("The CAT sat!", "the cat sat", {"metric": "rouge_l"}, 1.0),
    ("mat the on sat cat the", CAT, {"metric": "rouge_l"}, 0.5),
    ("the cat", ["a dog", "the cat sat"], {"metric": "rouge_l"}, 0.8),
    ("Привет, мир", "привет мир", {"metric": "rouge_l"}, 1.0),  # non-Latin words count
    ("café au lait", "cafe au lait", {"metric": "rouge_l"}, 2 / 3),
    ("", CAT, {"metric": "rouge_l"}, 0.0),
    ("!!!", "???", {"metric": "rouge_l"}, 0.0),
    ("!!!", "!!!", {"metric": "rouge_l"}, 1.0),  # equal texts score 1 under every metric
    ("the cat sat", CAT, {"metric": "rouge_l", "threshold": 0.5}, 1.0),
    # rouge_n: n-gram F-measure; 3 of 3 unigrams found, 3 of the reference's 6 (P 1, R .5)
    ("the cat sat", CAT, {"metric": "rouge_1"}, 2 / 3),
    ("the cat sat", CAT, {"metric": "rouge_2"}, 2 * 0.4 / 1.4),  # P 2/2, R 2/5
    ("the cat sat", CAT, {"metric": "rouge_3"}, 2 * 0.25 / 1.25),  # P 1/1, R 1/4
    ("the cat sat", CAT, {"metric": "rouge_4"}, 0.0),  # no 4-gram in the response
    ("the cat sat on the", CAT, {"metric": "rouge_5"}, 2 * 0.5 / 1.5),  # P 1/1, R 1/2
    # gleu: min(precision, recall) over 1..4-grams: 6 matched of 6 (hyp), of 18 (ref)
    ("the cat sat", CAT, {"metric": "gleu"}, 1 / 3),
    ("a dog", CAT, {"metric": "gleu"}, 0.0),
    # meteor: all 3 words matched in one chunk: 1 - 0.5 * (1/3)^3
    ("The cat sat.", "the cat sat", {"metric": "meteor"}, 1 - 0.5 / 27),
    ("the cats sat", "the cat sat", {"metric": "meteor"}, 1 - 0.5 / 27),  # Porter stems
    ("a dog", "the cat sat", {"metric": "meteor"}, 0.0),
]


@pytest.mark.parametrize(("response", "reference", "params", "expected"), CASES)
def test_similarity_cases(score, response, reference, params, expected) -> None:  # type: ignore[no-untyped-def]
    result = score("similarity", response, reference, **params)
    assert result.status == Status.OK, result.error
    assert result.reward == pytest.approx(expected)
    assert 0.0 <= result.reward <= 1.0
    assert result.verifier == "similarity@1"


@pytest.mark.parametrize("metric", ["fuzzy", "bleu", "gleu", "meteor", "rouge_2", "rouge_l"])
def test_details_carry_raw_score_and_metric(score, metric) -> None:  # type: ignore[no-untyped-def]
    result = score("similarity", "the cat sat", CAT, metric=metric, threshold=0.99)
    assert result.reward == 0.0
    assert result.details["metric"] == metric
    assert 0.0 < result.details["score"] < 0.99


def test_chat_response_uses_last_assistant_turn(score) -> None:  # type: ignore[no-untyped-def]
    convo = [{"role": "user", "content": "say it"}, {"role": "assistant", "content": CAT}]
    assert score("similarity", convo, CAT, metric="rouge_l").reward == 1.0


@pytest.mark.parametrize(
    ("reference", "params", "code", "field"),
    [
        (None, {}, "invalid_reference", "reference"),
        (5, {}, "invalid_reference", "reference"),
        ([], {}, "invalid_reference", "reference"),
        (["a", 1], {}, "invalid_reference", "reference"),
        ({"text": "a"}, {}, "invalid_reference", "reference"),
        ("x", {"metric": "cosine"}, "invalid_params", "params.metric"),
        ("x", {"threshold": 1.5}, "invalid_params", "params.threshold"),
        ("x", {"threshold": -0.1}, "invalid_params", "params.threshold"),
        ("x", {"threshold": "high"}, "invalid_params", "params.threshold"),
        ("x", {"normalize": {"lower": True}}, "invalid_params", "params.normalize.lower"),
        ("x", {"n": 4}, "invalid_params", "params.n"),
    ],
)
def test_similarity_invalid(score, reference, params, code, field) -> None:  # type: ignore[no-untyped-def]
    result = score("similarity", "x", reference, **params)
    assert result.status == Status.INVALID
    assert result.reward is None
    assert result.error.code == code
    assert field in result.error.message


def test_rouge_l_equals_rouge_scores_own_lcs_on_fresh_random_texts() -> None:
    """`rouge_l` replaces rouge-score's LCS table with rapidfuzz's: same value, always.
    Small vocabularies make long, ambiguous common subsequences; the seed is fresh."""
    from rouge_score.rouge_scorer import RougeScorer

    from referee.verifiers.rules.similarity import _WORDS, rouge_l

    theirs = RougeScorer(["rougeL"], tokenizer=_WORDS)
    rng = random.Random(secrets.randbits(64))
    for _ in range(300):
        vocabulary = [f"w{i}" for i in range(rng.randint(1, 12))] + ["Ünï", "мир", "3"]
        reference, response = (
            " ".join(rng.choice(vocabulary) for _ in range(rng.randint(0, 80))) for _ in "ab"
        )
        expected = theirs.score(reference, response)["rougeL"].fmeasure
        assert rouge_l(reference, response) == pytest.approx(expected, abs=1e-12), (
            reference,
            response,
        )
