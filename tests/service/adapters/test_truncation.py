"""Locating the response after a prompt OpenRLHF cut from the left."""

from __future__ import annotations

import pytest

from referee.service.adapters.truncation import response_of

FEW_SHOT = "Q: 2+2? A: \\boxed{4}\n" * 20 + "Q: what is 7*6? A:"

# (name, query, prompt, expected response or None)
CASES: list[tuple[str, str, str, str | None]] = [
    ("whole prompt", FEW_SHOT + " 42", FEW_SHOT, " 42"),
    ("cut from the left", FEW_SHOT[300:] + " I don't know", FEW_SHOT, " I don't know"),
    ("cut, leading space dropped by decoding", FEW_SHOT[299:].lstrip() + " x", FEW_SHOT, " x"),
    ("cut inside a character", "\ufffd" + FEW_SHOT[300:] + " x", FEW_SHOT, " x"),
    ("empty response", FEW_SHOT[300:], FEW_SHOT, ""),
    ("response repeats the prompt's end", FEW_SHOT[300:] + " A: 42", FEW_SHOT, " A: 42"),
    ("query starts with none of the prompt", "\\boxed{4} and more text here", FEW_SHOT, None),
    ("only a chance overlap", "A: \\boxed{4}", FEW_SHOT, None),
    ("short prompt, whole", "Hi! hello", "Hi!", " hello"),
    ("short prompt, missing", "hello", "Hi!", None),
    # Transformers' clean-up of tokenization spaces (WordPiece; BPE too before version 5),
    # decoding prompt and response together, drops the prompt's trailing space before
    # punctuation or "n't": that refused OpenRLHF's whole batch
    ("clean-up ate the prompt's last space", "Q: 7*6?\nAnswer:.5", "Q: 7*6?\nAnswer: ", ".5"),
    ("clean-up, contraction", "Q: do you?\nI don't", "Q: do you?\nI do ", "n't"),
    (
        "clean-up after a left cut",
        FEW_SHOT[300:] + "\nAnswer:, 42",
        FEW_SHOT + "\nAnswer: ",
        ", 42",
    ),
]


@pytest.mark.parametrize(("name", "query", "prompt", "expected"), CASES, ids=[c[0] for c in CASES])
def test_response_of(name: str, query: str, prompt: str, expected: str | None) -> None:
    assert response_of(query, prompt) == expected


def test_prompt_text_is_never_part_of_the_response() -> None:
    """Every left cut of a few-shot prompt full of right answers leaves only the reply."""
    for cut in range(0, len(FEW_SHOT) - 20, 7):
        response = response_of(FEW_SHOT[cut:] + " I don't know", FEW_SHOT)
        assert response == " I don't know", cut
