from __future__ import annotations

from typing import Any

import pytest

from referee.verifiers import Status

POLICIES: list[tuple[str, str, dict[str, Any], float]] = [
    # (gold, answer, params, expected)
    ("10\\%", "0.1", {"percent": "strip"}, 0.0),
    ("10\\%", "10", {"percent": "strip"}, 1.0),
    ("10\\%", "10", {"percent": "ratio"}, 0.0),
    ("10\\%", "0.1", {"percent": "ratio"}, 1.0),
    ("10\\%", "10", {"percent": "exact"}, 0.0),
    ("10\\%", "10\\%", {"percent": "exact"}, 1.0),
    ("\\frac{\\pi}{6}", "30^\\circ", {"degrees": "strip"}, 0.0),
    ("30", "30^\\circ", {"degrees": "strip"}, 1.0),
    ("5", "\\$5", {"money": "exact"}, 0.0),
    ("\\$5", "\\$5", {"money": "exact"}, 1.0),
    ("12", "12 cm", {"units": False}, 0.0),
    ("5", "five", {"number_words": False}, 0.0),
    ("\\frac{1}{3}", "0.333", {"tolerance": "exact"}, 0.0),
    ("\\pi", "3.14", {"tolerance": "exact"}, 0.0),
    ("100", "100.5", {"tolerance": "relative", "rel_tol": 0.01}, 1.0),
    ("100", "102", {"tolerance": "relative", "rel_tol": 0.01}, 0.0),
    # rounded decimal predictions for golds whose expansion does not end: opt-in
    ("\\frac{1}{3}", "0.333", {}, 0.0),
    ("\\frac{\\pi}{2}", "1.5708", {}, 0.0),
    ("\\frac{1}{3}", "0.333", {"rounded_predictions": True}, 1.0),
    ("\\frac{1}{3}", "0.3333333", {"rounded_predictions": True}, 1.0),
    ("\\frac{2}{3}", "0.667", {"rounded_predictions": True}, 1.0),
    ("\\frac{2}{3}", "0.666", {"rounded_predictions": True}, 1.0),
    ("\\frac{2}{3}", "0.665", {"rounded_predictions": True}, 0.0),
    ("2\\sqrt{3}", "3.464", {"rounded_predictions": True}, 1.0),
    ("\\pi", "3.1416", {"rounded_predictions": True}, 1.0),
    ("\\pi", "3.1417", {"rounded_predictions": True}, 0.0),
    ("\\frac{\\pi}{2}", "1.5708", {"rounded_predictions": True}, 1.0),
    ("\\frac{1}{3}", "0.33", {"rounded_predictions": True, "min_sig_digits": 2}, 1.0),
    ("\\frac{1}{3}", "0.33", {"rounded_predictions": True, "min_sig_digits": 3}, 0.0),
    # a decimal gold was written rounded: an exact prediction that rounds to it is right
    ("0.33", "\\frac{1}{3}", {}, 1.0),
    ("0.33", "\\frac{1}{3}", {"tolerance": "exact"}, 0.0),
    ("3+4i", "3+4i", {"complex_i": False}, 1.0),
    ("i", "\\sqrt{-1}", {"complex_i": False}, 0.0),
]


@pytest.mark.parametrize(("gold", "answer", "params", "expected"), POLICIES)
def test_policies(score, gold, answer, params, expected) -> None:  # type: ignore[no-untyped-def]
    result = score("math", f"\\boxed{{{answer}}}", gold, **params)
    assert result.status == Status.OK, result.error
    assert result.reward == expected, result.details


def test_gold_is_parsed_once_and_pairs_are_cached(registry) -> None:  # type: ignore[no-untyped-def]
    from referee.verifiers import Item
    from referee.verifiers.math import MathVerifier

    verifier = MathVerifier()
    items = [
        Item(verifier="math", response=f"\\boxed{{{a}}}", reference="\\frac{\\sqrt{2}}{2}")
        for a in ["\\frac{1}{\\sqrt2}", "0.5", "\\frac{1}{\\sqrt2}", "0.707"]
    ]
    results = verifier.score(items)
    assert [r.reward for r in results] == [1.0, 0.0, 1.0, 0.0]  # 0.707: rounded, opt-in
    assert len(verifier._golds.data) == 1
    assert len(verifier._pairs.data) == 3
