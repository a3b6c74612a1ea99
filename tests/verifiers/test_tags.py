"""`blocks` reads what the lazy regex reads, in linear time."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from referee.verifiers import Status
from referee.verifiers.tags import blocks

TAGS = [("<answer>", "</answer>"), ("<tool_call>", "</tool_call>")]


def pieces(open_tag: str, close_tag: str) -> st.SearchStrategy[str]:
    """Texts of tags, their fragments, words and whitespace in any arrangement."""
    parts = [open_tag, close_tag, open_tag[:-1], close_tag[1:], "x", " y ", "\n", "\t", "\u00a0"]
    return st.lists(st.sampled_from(parts), max_size=14).map("".join)


@pytest.mark.parametrize(("open_tag", "close_tag"), TAGS)
@settings(max_examples=1500, derandomize=True, deadline=None)
@given(data=st.data())
def test_blocks_are_what_the_lazy_regex_finds(
    open_tag: str, close_tag: str, data: st.DataObject
) -> None:
    text = data.draw(pieces(open_tag, close_tag))
    pattern = re.escape(open_tag) + r"\s*(.*?)\s*" + re.escape(close_tag)
    assert blocks(text, open_tag, close_tag) == re.findall(pattern, text, re.DOTALL)


@pytest.mark.parametrize(
    "response",
    [
        "<tool_call>" * 200_000,
        "</tool_call><tool_call>" * 100_000 + "<tool_call>",
        '<tool_call>{"name": "f"' * 100_000,
    ],
    ids=["unclosed opens", "alternating", "opens with text"],
)
def test_a_response_of_many_tool_call_tags_is_scored_in_linear_time(score, response: str) -> None:  # type: ignore[no-untyped-def]
    """The lazy regex took 60 s on 20,000 unclosed ``<tool_call>`` tags (a policy stuck
    repeating one writes that); the scan makes a far larger response an ordinary item."""
    reference = {"calls": [{"name": "f", "arguments": {}}]}
    result = score("tool_call", response, reference)
    assert result.status is Status.OK, result.error
    assert result.reward == 0.0
