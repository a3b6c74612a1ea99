"""A trainer's decoded text as the policy wrote it: the stop token dropped from its end,
the assistant turn found in a query sent without its prompt."""

from __future__ import annotations

import pytest

from referee.service.adapters.decoded import last_assistant_turn, without_stop_tokens

STOPS = [
    ("It is 42.<|im_end|>", "It is 42."),
    ("It is 42.<|im_end|>\n<|endoftext|>", "It is 42."),
    ("It is 42.<|eot_id|>", "It is 42."),
    ("It is 42.</s>", "It is 42."),
    ("It is 42.<end_of_turn>\n", "It is 42."),
    ("It is 42.<\uff5cend\u2581of\u2581sentence\uff5c>", "It is 42."),
    ("It is 42.\n", "It is 42.\n"),  # nothing to drop: the text as it is
    ("a <|im_end|> inside stays", "a <|im_end|> inside stays"),
    ("<|im_end|>", ""),
    (
        "Is there anything else I can help with?<|im_end|>",
        "Is there anything else I can help with?",
    ),
]


@pytest.mark.parametrize(("decoded", "written"), STOPS)
def test_the_stop_token_is_dropped(decoded: str, written: str) -> None:
    assert without_stop_tokens(decoded) == written


TURNS = [
    ("<|im_start|>user\n2+2? \\boxed{4}<|im_end|>\n<|im_start|>assistant\nfive", "five"),
    (
        "<|start_header_id|>user<|end_header_id|>\n\nhi<|eot_id|>"
        "<|start_header_id|>assistant<|end_header_id|>\n\nhello",
        "hello",
    ),
    ("<start_of_turn>user\nhi<end_of_turn>\n<start_of_turn>model\nhello", "hello"),
    ("<s>[INST] hi [/INST] hello", " hello"),
    ("Q: 2+2? A: \\boxed{4}\nQ: 3+3? A: seven", None),  # no template: not found
]


@pytest.mark.parametrize(("query", "response"), TURNS)
def test_the_last_assistant_turn_is_found(query: str, response: str | None) -> None:
    assert last_assistant_turn(query) == response
