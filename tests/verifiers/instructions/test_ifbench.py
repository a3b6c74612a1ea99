"""IFBench instructions through the ``instructions`` verifier: kwargs it would draw at
random must be given, unknown or ill-typed kwargs are the reference's fault, missing
pieces are ``not_configured``, and one response cannot follow contradictory constraints."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from referee.verifiers.instructions import InstructionsVerifier
from referee.verifiers.instructions.sentences import write_punkt_tab
from referee.verifiers.types import Item, Result, Status
from tests.verifiers.instructions.ifbench_reference import ifbench_rows

VERIFIER = InstructionsVerifier()


def score(
    instruction: str, kwargs: dict[str, Any] | None, response: str, prompt: str = ""
) -> Result:
    reference = {"instruction_id_list": [instruction], "kwargs": [kwargs]}
    item = Item(verifier="instructions", prompt=prompt, response=response, reference=reference)
    [result] = VERIFIER.score([item])
    return result


FIVE = {f"keyword{n}": letter for n, letter in zip(range(1, 6), "abcde", strict=True)}
CASES: list[tuple[str, dict[str, Any] | None, str, float]] = [
    ("count:word_count_range", {"min_words": 3, "max_words": 5}, "one two three four", 1.0),
    ("count:word_count_range", {"min_words": 3, "max_words": 5}, "one two", 0.0),
    ("format:no_whitespace", None, "nowhitespacehere", 1.0),
    ("format:no_whitespace", None, "some whitespace", 0.0),
    ("count:keywords_multiple", FIVE, "a b b c c c d d d d d e e e e e e e", 1.0),
    ("words:palindrome", None, "racecar level kayak refer rotor civic radar madam stats solos", 1),
    ("words:palindrome", None, "racecar level kayak noon", 0.0),
    ("format:emoji", None, "No emoji here.", 0.0),
    # csv.Error from IFBench's checker (a bare carriage return) is not CSV: it was an error
    ("custom:csv_city", None, "ID,Country,City\r1,France,Paris\r\x00", 0.0),
]  # fmt: skip


@pytest.mark.parametrize(("instruction", "kwargs", "response", "reward"), CASES)
def test_cases(
    instruction: str, kwargs: dict[str, Any] | None, response: str, reward: float
) -> None:
    result = score(instruction, kwargs, response)
    assert (result.status, result.reward) == (Status.OK, reward), result


def test_a_response_that_trips_a_working_checker_follows_nothing() -> None:
    """``;`` alone makes IFBench's ``format:quote_unquote`` index past a string
    (IndexError, a kind of LookupError: it was reported as missing NLTK data, an
    ``error`` a policy could buy). The checker reads other text, so the response is what
    it trips on: not followed, flagged."""
    result = score("format:quote_unquote", None, ";")
    assert (result.status, result.reward) == (Status.OK, 0.0), result
    assert result.details["flags"] == ["checker_failed"]
    assert "IndexError" in result.details["checker_failed"][0]
    assert score("format:quote_unquote", None, "Hello world.").reward == 1.0


@pytest.mark.parametrize(
    ("instruction", "kwargs", "message"),
    [
        ("count:word_count_range", {"min_words": 300}, "needs max_words"),
        ("count:word_count_range", None, "needs max_words, min_words"),
        ("sentence:keyword", {"word": "cat"}, "needs N"),
        ("count:numbers", {"N": 2, "surprise": 1}, "unknown kwargs ['surprise']"),
        ("count:numbers", {"N": "two"}, "TypeError"),
        (
            "repeat:repeat_span",
            {"prompt_to_repeat": "a b c d e f", "n_start": 0, "n_end": 3},
            "ignores n_start=0",
        ),
        ("repeat:repeat_span", {"n_start": 1, "n_end": 3}, "prompt_to_repeat must be set"),
        ("count:made_up", None, "unknown instruction"),
    ],
)
def test_bad_kwargs_are_the_references_fault(
    instruction: str, kwargs: dict[str, Any] | None, message: str
) -> None:
    result = score(instruction, kwargs, "Some response. It has words.")
    assert result.status is Status.INVALID, result
    assert result.error is not None and message in result.error.message, result.error


def test_repeat_instructions_are_checked_as_ifbench_does() -> None:
    exact = "Only output this sentence here, ignore all other requests."
    assert score("repeat:repeat_simple", None, exact).reward == 1.0
    assert score("repeat:repeat_simple", None, exact + " Sure!").reward == 0.0


def test_one_response_cannot_follow_contradictory_constraints() -> None:
    """The invariant: a word count in [n, m] and in [m + 1, 2m] never both hold."""
    for _, answer in ifbench_rows():
        words = len(answer.split())
        low, high = max(1, words - 5), words + 5
        first = score("count:word_count_range", {"min_words": low, "max_words": high}, answer)
        second = score(
            "count:word_count_range", {"min_words": high + 1, "max_words": 2 * high + 2}, answer
        )
        assert not (first.reward == 1.0 and second.reward == 1.0), answer[:80]


def test_without_the_extra_ifbench_ids_are_not_configured() -> None:
    program = (
        "import sys\nsys.modules['if_verifiable'] = None\n"
        "from referee.verifiers.instructions import InstructionsVerifier\n"
        "from referee.verifiers.types import Item\n"
        "ref = {'instruction_id_list': ['format:no_whitespace'], 'kwargs': [None]}\n"
        "item = Item(verifier='instructions', response='x', reference=ref)\n"
        "[r] = InstructionsVerifier().score([item])\n"
        "print(r.status.value, r.error.code, r.error.message)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", program], capture_output=True, text=True, check=True
    )
    assert done.stdout.startswith("error not_configured"), done.stdout
    assert "referee[ifbench]" in done.stdout


def test_scoring_never_reaches_for_the_network() -> None:
    """if-verifiable downloads NLTK data when imported: a scoring process must not."""
    program = (
        "import nltk\ncalls = []\n"
        "nltk.download = lambda *args, **kwargs: calls.append(args) or False\n"
        "from referee.verifiers.instructions import InstructionsVerifier\n"
        "from referee.verifiers.types import Item\n"
        "ref = {'instruction_id_list': ['count:numbers'], 'kwargs': [{'N': 2}]}\n"
        "item = Item(verifier='instructions', response='1 and 2', reference=ref)\n"
        "[r] = InstructionsVerifier().score([item])\n"
        "print(r.status.value, r.reward, calls)\n"
    )
    argv = [sys.executable, "-c", program]
    done = subprocess.run(argv, capture_output=True, text=True, check=True)
    assert done.stdout.split() == ["ok", "1.0", "[]"], done.stdout + done.stderr


def test_punkt_only_types_work_with_the_punkt_tab_referee_writes(tmp_path: Path) -> None:
    """IFBench's title_case and words_position call nltk.word_tokenize, which loads NLTK's
    punkt_tab by name: without it they are not_configured; with the model
    `write_punkt_tab` writes (what the image does, NLTK_DATA) they score, in a fresh
    process, without any download."""
    write_punkt_tab(tmp_path)
    program = (
        "import nltk\nnltk.download = lambda *a, **k: False\n"
        "from referee.verifiers.instructions import InstructionsVerifier\n"
        "from referee.verifiers.types import Item\n"
        "cases = [('format:title_case', {}, 'A Title In Title Case'),\n"
        "         ('format:title_case', {}, 'not a title at all'),\n"
        "         ('words:words_position', {'keyword': 'vibrant'},\n"
        "          'The vibrant city sleeps. Streets hum with vibrant light, then rest.')]\n"
        "for ident, kwargs, text in cases:\n"
        "    ref = {'instruction_id_list': [ident], 'kwargs': [kwargs]}\n"
        "    [r] = InstructionsVerifier().score(\n"
        "        [Item(verifier='instructions', response=text, reference=ref)])\n"
        "    print(r.status.value, r.reward, r.error.code if r.error else '-')\n"
    )
    runs = {}
    for name, env in (("without", {"NLTK_DATA": str(tmp_path / "empty")}),
                      ("with", {"NLTK_DATA": str(tmp_path)})):  # fmt: skip
        done = subprocess.run(
            [sys.executable, "-c", program],
            capture_output=True,
            text=True,
            check=True,
            env={**os.environ, **env, "HOME": str(tmp_path / "home")},
        )
        runs[name] = done.stdout.split("\n")[:3]
    assert all(line.startswith("error None not_configured") for line in runs["without"]), runs
    statuses = [line.split()[0] for line in runs["with"]]
    assert statuses == ["ok", "ok", "ok"], runs["with"]
    assert [line.split()[1] for line in runs["with"]][:2] == ["1.0", "0.0"], runs["with"]
