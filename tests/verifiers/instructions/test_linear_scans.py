"""IFEval's placeholder count and title detection, read as their regexes read them, in
linear time."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from referee.verifiers import Status
from referee.verifiers.instructions.constraints import count_placeholders, titles

TEXTS = st.lists(
    st.sampled_from(["[", "]", "x", "\n", "\r", " ", "[x]", "\u2028", "[[", "]]"]), max_size=16
).map("".join)


@settings(max_examples=3000, derandomize=True, deadline=None)
@given(TEXTS)
def test_the_count_is_what_ifevals_regex_counts(text: str) -> None:
    assert count_placeholders(text) == len(re.findall(r"\[.*?\]", text))


def test_a_line_of_open_brackets_is_an_ordinary_item(score) -> None:  # type: ignore[no-untyped-def]
    """The regex took 1.4 s on 20,000 ``[`` and grows with the square of the line; the
    count is linear, so a degenerate response is scored, not timed out."""
    reference = {
        "instruction_id_list": ["detectable_content:number_placeholders"],
        "kwargs": [{"num_placeholders": 2}],
    }
    result = score("instructions", "[" * 500_000 + " [name] [place]", reference)
    assert result.status is Status.OK, result.error
    assert result.reward == 1.0


TITLE_TEXTS = st.lists(
    st.sampled_from(["<<", ">>", "<", ">", "x", " ", "\n", "<<<", ">>>", "\r"]), max_size=16
).map("".join)


@settings(max_examples=3000, derandomize=True, deadline=None)
@given(TITLE_TEXTS)
def test_titles_are_what_ifevals_regex_finds(text: str) -> None:
    assert titles(text) == re.findall(r"<<[^\n]+>>", text)


def test_a_line_of_open_title_marks_is_an_ordinary_item(score) -> None:  # type: ignore[no-untyped-def]
    """The regex took 0.9 s on 20,000 ``<<`` (quadratic); the scan is linear."""
    reference = {"instruction_id_list": ["detectable_format:title"], "kwargs": [{}]}
    result = score("instructions", "<<" * 500_000 + "\n<<A Title>>", reference)
    assert result.status is Status.OK, result.error
    assert result.reward == 1.0
