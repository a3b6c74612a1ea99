"""The ``instructions`` verifier: table of constraints, modes and rewards, bad input, the
hacks a policy would try, and the invariant that contradictory constraints never both
hold."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from referee.verifiers import Status
from referee.verifiers.instructions import InstructionsVerifier
from referee.verifiers.types import Item

VERIFIER = InstructionsVerifier()


def score(
    response: str,
    ids: list[str],
    kwargs: list[dict[str, Any]] | None = None,
    prompt: str | None = None,
    **params: Any,
) -> Any:
    reference: dict[str, Any] = {"instruction_id_list": ids}
    if kwargs is not None:
        reference["kwargs"] = kwargs
    [result] = VERIFIER.score(
        [
            Item(
                verifier="instructions",
                prompt=prompt,
                response=response,
                reference=reference,
                params=params,
            )
        ]
    )
    return result


CASES: list[tuple[str, str, list[str], list[dict[str, Any]], dict[str, Any], float]] = [
    ("all caps", "HELLO THERE, FRIEND", ["change_case:english_capital"], [{}], {}, 1.0),
    ("no comma, fails", "a, b", ["punctuation:no_comma"], [{}], {}, 0.0),
    (
        "two of two",
        "Fine words\n\n<<T>>",
        ["punctuation:no_comma", "detectable_format:title"],
        [{}, {}],
        {},
        1.0,
    ),
    (
        "one of two, all",
        "a, <<T>>",
        ["punctuation:no_comma", "detectable_format:title"],
        [{}, {}],
        {},
        0.0,
    ),
    (
        "one of two, fraction",
        "a, <<T>>",
        ["punctuation:no_comma", "detectable_format:title"],
        [{}, {}],
        {"reward": "fraction"},
        0.5,
    ),
    (
        "loose drops a chatty first line",
        'Sure:\n"quoted"',
        ["startend:quotation"],
        [{}],
        {"mode": "loose"},
        1.0,
    ),
    ("strict keeps it", 'Sure:\n"quoted"', ["startend:quotation"], [{}], {}, 0.0),
    (
        "words at least",
        "one two three",
        ["length_constraints:number_words"],
        [{"num_words": 3, "relation": "at least"}],
        {},
        1.0,
    ),
    (
        "None kwargs dropped (datasets store them)",
        "x",
        ["punctuation:no_comma"],
        [{"num_words": None}],
        {},
        1.0,
    ),
    (
        "repeat prompt from the item",
        "Write a poem. Here it is.",
        ["combination:repeat_prompt"],
        [{}],
        {"prompt": "Write a poem."},
        1.0,
    ),
    (
        "sentences",
        "One. Two! Three? Mr. Smith stays.",
        ["length_constraints:number_sentences"],
        [{"num_sentences": 4, "relation": "at least"}],
        {},
        1.0,
    ),
    (
        "sentences below",
        "One. Two.",
        ["length_constraints:number_sentences"],
        [{"num_sentences": 3, "relation": "less than"}],
        {},
        1.0,
    ),
    (
        "capital words",
        "The NASA and ESA teams met. OK?",
        ["change_case:capital_word_frequency"],
        [{"capital_frequency": 3, "capital_relation": "at least"}],
        {},
        1.0,
    ),
]


@pytest.mark.parametrize(
    ("name", "response", "ids", "kwargs", "params", "reward"), CASES, ids=[c[0] for c in CASES]
)
def test_cases(
    name: str,
    response: str,
    ids: list[str],
    kwargs: list[dict[str, Any]],
    params: dict[str, Any],
    reward: float,
) -> None:
    prompt = params.pop("prompt", None)
    result = score(response, ids, kwargs, prompt, **params)
    assert result.status == Status.OK, result.error
    assert result.reward == pytest.approx(reward), result.components


def test_components_name_each_constraint() -> None:
    result = score("a", ["punctuation:no_comma", "punctuation:no_comma"], [{}, {}])
    assert result.components == {"punctuation:no_comma": 1.0, "punctuation:no_comma#2": 1.0}


# Hacks: what would score without following the instruction.
HACKS: list[tuple[str, str, list[str], list[dict[str, Any]]]] = [
    (
        "empty response avoids every forbidden word",
        "",
        ["keywords:forbidden_words"],
        [{"forbidden_words": ["cat"]}],
    ),
    ("blank response has no comma", "   \n ", ["punctuation:no_comma"], [{}]),
    (
        "no letters passes any language (IFEval)",
        "12345 !!!",
        ["language:response_language"],
        [{"language": "fr"}],
    ),
    ("no letters is not English capitals", "123 !!!", ["change_case:english_capital"], [{}]),
    (
        "keyword in a different case is found",
        "no felines here",
        ["keywords:existence"],
        [{"keywords": ["CAT"]}],
    ),
]


@pytest.mark.parametrize(("name", "response", "ids", "kwargs"), HACKS, ids=[h[0] for h in HACKS])
def test_hacks_do_not_score(
    name: str, response: str, ids: list[str], kwargs: list[dict[str, Any]]
) -> None:
    result = score(response, ids, kwargs, mode="loose")
    assert result.status == Status.OK, result.error
    assert result.reward == 0.0


@pytest.mark.parametrize(
    ("ids", "kwargs", "field"),
    [
        (["keywords:existence"], [{}], "reference.kwargs.0.keywords"),  # IFEval: random keywords
        (["length_constraints:number_words"], [{"num_words": 5}], "reference.kwargs.0.relation"),
        (
            ["length_constraints:number_words"],
            [{"num_words": 5, "relation": "about"}],
            "reference.kwargs.0.relation",
        ),
        (
            ["keywords:letter_frequency"],
            [{"letter": "ab", "let_frequency": 1, "let_relation": "at least"}],
            "reference.kwargs.0.letter",
        ),
        (["no_such:instruction"], [{}], "reference.instruction_id_list.0"),
        (
            ["punctuation:no_comma", "detectable_format:title"],
            [{}],
            "reference.kwargs: 1 entries for 2",
        ),
        (["punctuation:no_comma"], [{"stray": 1}], "reference.kwargs.0.stray"),
        (["keywords:existence"], [{"keywords": ["(unclosed"]}], "a pattern that cannot be used"),
    ],
)
def test_bad_references_are_invalid(
    ids: list[str], kwargs: list[dict[str, Any]], field: str
) -> None:
    result = score("text", ids, kwargs)
    assert result.status == Status.INVALID
    assert result.error is not None and field in result.error.message


def test_a_reference_pattern_that_backtracks_is_the_references_fault() -> None:
    # IFEval reads keywords as regular expressions; a nested quantifier is a ReDoS.
    result = score("a" * 60 + "!", ["keywords:existence"], [{"keywords": ["(a|aa)+$"]}])
    assert result.status == Status.INVALID
    assert result.error is not None and "a pattern that cannot be used" in result.error.message


def test_a_response_too_long_for_punkt_follows_nothing_flagged_not_invalid(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """NLTK's Punkt gives up after 5 s (its own regex time limit, `nltk.redos`, raising
    TimeoutError; 0.2 s here, through NLTK's own setting): that is the response's cost,
    not a bad reference. It once made the item ``invalid: invalid_reference``. (In a pool
    the CPU budget stops it sooner.)"""
    redos = pytest.importorskip("nltk.redos")
    monkeypatch.setattr(redos, "DEFAULT_TIMEOUT", 0.2)
    ids = ["length_constraints:number_sentences", "punctuation:no_comma"]
    kwargs = [{"num_sentences": 2, "relation": "at least"}, {}]
    result = score("It is. " * 150_000, ids, kwargs, reward="fraction")
    assert result.status == Status.OK, result.error
    assert result.components == {ids[0]: 0.0, ids[1]: 1.0}
    assert result.details["flags"] == ["over_budget"]


RELATIONS: list[tuple[str, Callable[[int, str], dict[str, Any]]]] = [
    ("length_constraints:number_words", lambda n, rel: {"num_words": n, "relation": rel}),
    (
        "keywords:letter_frequency",
        lambda n, rel: {"letter": "e", "let_frequency": n, "let_relation": rel},
    ),
    ("keywords:frequency", lambda n, rel: {"keyword": "the", "frequency": n, "relation": rel}),
    ("length_constraints:number_sentences", lambda n, rel: {"num_sentences": n, "relation": rel}),
    (
        "change_case:capital_word_frequency",
        lambda n, rel: {"capital_frequency": n, "capital_relation": rel},
    ),
]


@settings(max_examples=60, deadline=None)
@given(st.text(min_size=1, max_size=200), st.integers(min_value=0, max_value=30))
def test_contradictory_constraints_never_both_hold(text: str, threshold: int) -> None:
    """The invariant: 'less than N' and 'at least N' of the same count, and all capitals
    and all lowercase, are never both followed by one response."""
    for instruction, make in RELATIONS:
        below = score(text, [instruction], [make(threshold, "less than")]).reward
        above = score(text, [instruction], [make(threshold, "at least")]).reward
        assert below + above <= 1.0, instruction
        if text.strip():
            assert below + above == 1.0, instruction
    cases = score(text, ["change_case:english_capital", "change_case:english_lowercase"], [{}, {}])
    assert cases.reward == 0.0


@pytest.mark.parametrize(
    "reference",
    [
        {"instruction_id_list": ["punctuation:no_comma"], "kwargs": [{}]},
        '{"instruction_id_list": ["punctuation:no_comma"], "kwargs": [{}]}',
        {"instruction_id": ["punctuation:no_comma"], "kwargs": [{}]},
        '{"instruction_id": ["punctuation:no_comma"], "kwargs": [{"N": null}]}',
    ],
    ids=["object", "JSON text", "instruction_id", "instruction_id as JSON text"],
)
def test_the_reference_shapes_datasets_store(reference: Any) -> None:
    for response, reward in (("No commas here", 1.0), ("One, two", 0.0)):
        [result] = VERIFIER.score(
            [Item(verifier="instructions", response=response, reference=reference)]
        )
        assert result.status == Status.OK, result.error
        assert result.reward == reward


@pytest.mark.parametrize(
    ("reference", "field"),
    [
        ("not json", "reference"),
        ('{"instruction_id_list": [', "reference"),
        ('["punctuation:no_comma"]', "reference"),
        ('{"kwargs": [{}]}', "reference.instruction_id_list"),
    ],
)
def test_a_reference_string_that_is_no_reference_is_invalid(reference: str, field: str) -> None:
    [result] = VERIFIER.score([Item(verifier="instructions", response="x", reference=reference)])
    assert result.status == Status.INVALID
    assert result.error is not None and field in result.error.message
