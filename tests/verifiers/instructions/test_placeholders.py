"""IFEval's placeholder count, read as its regex reads it, in linear time."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from referee.verifiers import Status
from referee.verifiers.instructions.constraints import count_placeholders

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
