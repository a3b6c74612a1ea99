"""The ``reasoning_gym`` verifier on every reasoning-gym dataset: its own answers score,
answers to other entries do not, scorers that evaluate answers never run, and the hacks
its scorers allow do not pay."""

from __future__ import annotations

import builtins
import contextlib
import json
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
import reasoning_gym  # the `reasoning` extra: scripts/test.sh installs it; missing is a failure
from reasoning_gym.factory import DATASETS

from referee.verifiers import Status
from referee.verifiers.reasoning import ReasoningGymVerifier
from referee.verifiers.reasoning import verifier as verifier_module
from referee.verifiers.reasoning.verifier import EVALUATES_ANSWERS, REPLACED
from referee.verifiers.types import Item

UNGENERATED = {"composite"}  # needs a config of other datasets
VERIFIER = ReasoningGymVerifier()


def entries(dataset: str, size: int = 4) -> list[dict[str, Any]]:
    """Entries as a client would send them (a JSON round trip: tuples become lists)."""
    generated = reasoning_gym.create_dataset(dataset, size=size, seed=11)
    return [json.loads(json.dumps(e, default=str)) for e in generated]


def score(dataset: str, entry: dict[str, Any], answer: str | None, **params: Any) -> Any:
    response = "I think." if answer is None else f"Reasoning...\n<answer>{answer}</answer>"
    item = Item(
        verifier="reasoning_gym",
        response=response,
        reference={"dataset": dataset, "entry": entry},
        params=params,
    )
    [result] = VERIFIER.score([item])
    return result


SCORED = sorted(set(DATASETS) - UNGENERATED - (EVALUATES_ANSWERS - REPLACED))
REFUSED = sorted(EVALUATES_ANSWERS - REPLACED)


@pytest.mark.parametrize("dataset", SCORED)
def test_the_datasets_own_answer_scores_and_another_entrys_does_not(dataset: str) -> None:
    """The two-golds invariant, per dataset: the gold of entry A is right for A, and
    wrong for an entry B whose gold differs."""
    found = [e for e in entries(dataset) if isinstance(e.get("answer"), str) and e["answer"]]
    if not found:  # the scorer checks the answer against the puzzle (a valid colouring...)
        for entry in entries(dataset):
            assert score(dataset, entry, "no idea").reward == 0.0
        return
    first = found[0]
    result = score(dataset, first, first["answer"])
    assert result.status == Status.OK, result.error
    assert result.reward == 1.0, result.details
    others = [e for e in found[1:] if e["answer"].strip() != first["answer"].strip()]
    for other in others:
        crossed = score(dataset, other, first["answer"])
        assert crossed.reward == 0.0, (other["answer"], crossed.details)


HEDGES = ("{a} {b}", "{a}, {b}", "{a}\n{b}", "{a} or {b}", "{a}{b}", "{b} {a}", "[{a}, {b}]")
UNANSWERED = {"boxnet", "graph_color", "propositional_logic", "rubiks_cube", "rush_hour"}
"""Datasets whose entries carry no gold: their scorers check an answer against the puzzle."""


@pytest.mark.parametrize("dataset", SCORED)
def test_one_answer_holding_two_golds_is_right_for_neither_both(dataset: str) -> None:
    """The invariant against hedging: an answer made of two entries' golds (joined as a
    policy would: by a space, a comma, a line, "or", nothing, a list) is not right for
    both entries. reasoning-gym's default scorer gives a gold found inside the answer a
    share of the reward (binary credit makes that 0)."""
    found = entries(dataset, size=6)
    golds = [str(e["answer"]) for e in found]
    if dataset in UNANSWERED:
        assert all(e["answer"] is None for e in found), golds  # else it belongs below
        return
    pair = next(
        ((i, j) for i in range(6) for j in range(i + 1, 6) if golds[i].strip() != golds[j].strip()),
        None,
    )
    assert pair is not None, golds  # six entries with one gold: the dataset is not random
    i, j = pair
    for hedge in HEDGES:
        answer = hedge.format(a=golds[i], b=golds[j])
        rewards = [score(dataset, found[k], answer).reward for k in (i, j)]
        assert rewards != [1.0, 1.0], (answer, dataset)


def test_every_answer_evaluating_dataset_has_a_safe_scorer() -> None:
    assert REFUSED == []


def test_an_answer_evaluating_dataset_without_one_is_refused_by_name(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The path a version bump would take for a newly found evaluating scorer."""
    monkeypatch.setattr(verifier_module, "EVALUATES_ANSWERS", frozenset({"letter_counting"}))
    [entry] = entries("letter_counting", size=1)
    result = score("letter_counting", entry, "1")
    assert result.status == Status.INVALID
    assert result.error is not None and "letter_counting" in result.error.message


HACKS: list[tuple[str, str]] = [
    ("game_of_life_halting", "yes"),  # any non-empty string was True
    ("game_of_life_halting", "not sure"),
    ("puzzle24", "24"),
    ("puzzle24", "6*4"),  # 24, but not from the puzzle's numbers
    ("puzzle24", "__import__('os').system('touch /tmp/referee-pwned') or 24"),
    ("countdown", "__import__('os').system('touch /tmp/referee-pwned')"),
    ("countdown", "1e3"),
    ("polynomial_multiplication", "__import__('os').system('touch /tmp/referee-pwned')"),
    ("simple_integration", "__import__('os').system('touch /tmp/referee-pwned')"),
    ("simple_integration", "x**10**10"),
    ("simple_integration", "((x + 1)**100)**100"),  # folded by sympy into one huge power
    ("polynomial_multiplication", "(x + 1)**90 * (x + 1)**90"),
    ("intermediate_integration", "C"),
    ("binary_matrix", "[[1, 0], [0, 1]]"),
    ("n_queens", "__import__('os').system('touch /tmp/referee-pwned')"),
    ("bitwise_arithmetic", "__import__('os').system('touch /tmp/referee-pwned')"),
    ("bitwise_arithmetic", "0x0"),
    ("bitwise_arithmetic", "((0x1 + 0x2))"),  # an expression is not the value
]


@pytest.mark.parametrize(("dataset", "answer"), HACKS)
def test_hacks_do_not_score_and_nothing_runs(dataset: str, answer: str) -> None:
    pwned = Path("/tmp/referee-pwned")
    pwned.unlink(missing_ok=True)
    for entry in entries(dataset):
        if str(entry["answer"]).strip() == answer:
            continue
        result = score(dataset, entry, answer)
        assert result.status == Status.OK, result.error
        assert result.reward == 0.0, result.details
    assert not pwned.exists()


@pytest.mark.parametrize("dataset", ["simple_integration", "intermediate_integration"])
@pytest.mark.parametrize(
    "template", ["Integral({f}, x) + C", "Integral({f}, x)", "integrate({f}, x) + C"]
)
def test_the_integral_left_unevaluated_is_no_antiderivative(dataset: str, template: str) -> None:
    """Upstream checks an answer by differentiating it, so the integral itself, written
    out unevaluated, passed for every entry (some golds of the pinned version are such
    integrals: that is the generator's fallback when sympy did not integrate)."""
    for entry in entries(dataset, size=8):
        integrand = entry["metadata"]["integrand"]
        answer = template.format(f=integrand)
        assert score(dataset, entry, answer).reward == 0.0, answer


def test_our_arithmetic_scorers_take_right_answers_in_any_form() -> None:
    [entry] = entries("puzzle24", size=1)
    a, b, c, d = entry["metadata"]["numbers"]
    gold = entry["answer"]
    assert score("puzzle24", entry, gold).reward == 1.0
    assert score("puzzle24", entry, f"({gold})").reward == 1.0
    assert score("puzzle24", entry, f"{gold} = 24").reward == 1.0
    assert score("puzzle24", entry, f"{a} + {b} + {c} + {d}").reward == float(a + b + c + d == 24)


def test_credit_binary_by_default_dataset_on_request() -> None:
    [entry] = entries("countdown", size=1)
    assert score("countdown", entry, "1 + 2").reward == 0.0
    assert score("countdown", entry, None).reward == 0.0
    # the dataset's own scorer for a non-evaluating dataset, its small format credit kept
    [word] = entries("letter_counting", size=1)
    own = score("letter_counting", word, "-1", credit="dataset")
    assert own.status == Status.OK and own.reward == own.details["score"] < 1.0


@pytest.mark.parametrize(
    ("reference", "field"),
    [
        ({"dataset": "no_such_dataset", "entry": {}}, "reference.dataset"),
        ({"entry": {}}, "reference.dataset"),
        ({"dataset": "puzzle24", "entry": {"metadata": {"numbers": "1,2"}}}, "metadata.numbers"),
        ({"dataset": "countdown", "entry": {"metadata": {"numbers": [1]}}}, "metadata.target"),
        (
            {"dataset": "game_of_life_halting", "entry": {"answer": "maybe"}},
            "reference.entry.answer",
        ),
    ],
)
def test_bad_references_are_invalid(reference: dict[str, Any], field: str) -> None:
    [result] = VERIFIER.score(
        [Item(verifier="reasoning_gym", response="<answer>1</answer>", reference=reference)]
    )
    assert result.status == Status.INVALID
    assert result.error is not None and field in result.error.message


@contextmanager
def watching_evaluation() -> Iterator[list[str]]:
    """Record the string of every eval/exec/parse_expr/sympify while scorers run."""
    import sympy
    from sympy.parsing import sympy_parser

    seen: list[str] = []
    originals = {
        id(f): f for f in (builtins.eval, builtins.exec, sympy_parser.parse_expr, sympy.sympify)
    }

    def watched(original: Any) -> Any:
        def call(*args: Any, **kwargs: Any) -> Any:
            if args and isinstance(args[0], str):
                seen.append(args[0])
            return original(*args, **kwargs)

        return call

    patched: list[tuple[Any, str, Any]] = []
    for module in [
        builtins,
        sympy,
        sympy_parser,
        *(m for n, m in sys.modules.items() if n.startswith("reasoning_gym")),
    ]:
        for name, value in list(vars(module).items()):
            if id(value) in originals:
                patched.append((module, name, value))
                setattr(module, name, watched(value))
    try:
        yield seen
    finally:
        for module, name, value in patched:
            setattr(module, name, value)


@pytest.mark.parametrize("dataset", sorted(set(SCORED) - EVALUATES_ANSWERS))
def test_no_dataset_we_run_evaluates_the_answer(dataset: str) -> None:
    """Re-derives `EVALUATES_ANSWERS`: the scorers we call never evaluate a string, given
    the right answer or a list-looking one (the branches that did)."""
    generated = reasoning_gym.create_dataset(dataset, size=2, seed=11)
    evaluated = []
    for entry in generated:
        for answer in (str(entry["answer"]), "[1, 2]", "['a', 'b']"):
            with watching_evaluation() as seen, contextlib.suppress(Exception):
                generated.score_answer(answer, entry)
            evaluated += [text for text in seen if answer.strip() and answer.strip() in text]
    assert evaluated == [], f"{dataset}'s scorer evaluates answers: add it to EVALUATES_ANSWERS"


@pytest.mark.parametrize(
    ("response", "extract", "reward"),
    [
        ("work\n<answer>True</answer>", "answer_tag", 1.0),
        ("work\nTrue", "answer_tag", 0.0),
        ("work\n<answer>True", "answer_tag", 0.0),  # cut off: declared nothing
        ("<answer>False</answer> then <answer>True</answer>", "answer_tag", 1.0),
        ("work\nTrue\n\n", "final_line", 1.0),
        ("True", "none", 1.0),
        ("I think True", "none", 0.0),
    ],
)
def test_answer_extraction(response: str, extract: str, reward: float) -> None:
    entry = {"answer": "True", "metadata": {}}
    item = Item(
        verifier="reasoning_gym",
        response=response,
        reference={"dataset": "game_of_life_halting", "entry": entry},
        params={"extract": extract},
    )
    [result] = VERIFIER.score([item])
    assert result.reward == reward
    assert result.details["reasoning_gym"] == "0.1.25"


@pytest.mark.parametrize(
    "problem",
    [
        "__import__('os').system('touch /tmp/referee-pwned')",
        "(0x1).__class__",
        "1 << 10**12",
        "(1 << 60000) * (1 << 60000)",
        "1 << -1",
        "0x10 / 0x2",
        "True + 1",
        "(" * 500 + "1" + ")" * 500,
        "+".join(["1"] * 1500),  # a chain deeper than the walk may go
        "-" * 2000 + "1",
        "0x1 + " * 1000 + "0x1",  # longer than a problem may be
    ],
)
def test_a_bitwise_problem_is_never_run_and_bad_ones_are_invalid(problem: str) -> None:
    pwned = Path("/tmp/referee-pwned")
    pwned.unlink(missing_ok=True)
    [entry] = entries("bitwise_arithmetic", size=1)
    entry = {**entry, "metadata": {**entry["metadata"], "problem": problem}}
    result = score("bitwise_arithmetic", entry, "0x1")
    assert result.status == Status.INVALID, result
    assert result.error is not None and "metadata.problem" in result.error.message
    assert not pwned.exists()


def test_bitwise_answers_are_read_as_upstream_reads_them() -> None:
    [entry] = entries("bitwise_arithmetic", size=1)
    value = int(entry["answer"], 16)
    for form in (
        entry["answer"],
        str(value),
        f"  {entry['answer']}\n",
        hex(value).upper().replace("X", "x"),
    ):
        assert score("bitwise_arithmetic", entry, form).reward == 1.0, form
    assert score("bitwise_arithmetic", entry, str(value + 1)).reward == 0.0
    assert score("bitwise_arithmetic", entry, None).reward == 0.0


def test_a_reference_given_as_json_text_scores_as_the_object() -> None:
    [entry] = entries("letter_counting", size=1)
    reference = json.dumps({"dataset": "letter_counting", "entry": entry})
    for answer, reward in ((entry["answer"], 1.0), ("-1", 0.0)):
        item = Item(
            verifier="reasoning_gym",
            response=f"<answer>{answer}</answer>",
            reference=reference,
        )
        [result] = VERIFIER.score([item])
        assert result.status == Status.OK and result.reward == reward


SCORERS_THAT_RAISE = [
    # reasoning-gym scorers that let a parse error through on a malformed answer
    ("prime_factorization", "(((("),
    ("prime_factorization", "2 \u00d7 two"),
    ("coin_flip", "\U0001d7dc" * 3000),  # float() reads math digits: an overflow
]


@pytest.mark.parametrize(
    ("dataset", "answer"), SCORERS_THAT_RAISE, ids=["parens", "word", "digits"]
)
def test_a_malformed_answer_a_scorer_raises_on_is_wrong_and_flagged(
    dataset: str, answer: str
) -> None:
    """It was ``error: verifier_failed``: an item a policy could break at will."""
    [entry] = entries(dataset, size=1)
    result = score(dataset, entry, answer)
    assert (result.status, result.reward) == (Status.OK, 0.0), result.error
    assert result.details["flags"] == ["scorer_failed"]
    assert "Error" in result.details["scorer_error"]
    assert score(dataset, entry, entry["answer"]).reward == 1.0


def test_a_scorer_that_fails_on_the_entrys_own_answer_too_is_still_an_error() -> None:
    [entry] = entries("prime_factorization", size=1)
    broken = {**entry, "answer": "two \u00d7 three"}
    result = score("prime_factorization", broken, "((((")
    assert result.status == Status.ERROR and result.error is not None
    assert result.error.code == "verifier_failed"
