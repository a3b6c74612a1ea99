"""The packed layout: no padding, positions per sequence, shared prefixes placed once."""

from __future__ import annotations

import pytest

from referee.gpu_rm.packing import TokenSequence, common_prefix_length, pack


def test_unshared_sequences_concatenate_with_restarting_positions() -> None:
    layout = pack([TokenSequence([5, 6, 7]), TokenSequence([8, 9])])
    assert layout.input_ids == [5, 6, 7, 8, 9]
    assert layout.position_ids == [0, 1, 2, 0, 1]
    assert layout.ends == [3, 5]
    assert layout.computed_tokens == layout.logical_tokens == 5


def test_group_shares_its_common_prefix_once_and_positions_continue() -> None:
    prompt = [1, 2, 3, 4]
    seqs = [TokenSequence([*prompt, 10, 11], "p"), TokenSequence([*prompt, 20], "p"),
            TokenSequence([30, 31], None), TokenSequence([*prompt, 40, 41, 42], "p")]  # fmt: skip
    layout = pack(seqs)
    assert layout.input_ids == [1, 2, 3, 4, 10, 11, 20, 40, 41, 42, 30, 31]
    assert layout.position_ids == [0, 1, 2, 3, 4, 5, 4, 4, 5, 6, 0, 1]
    assert layout.ends == [6, 7, 12, 10]
    assert layout.computed_tokens == 4 + 2 + 1 + 3 + 2  # P + sum(R): the prompt once
    assert layout.logical_tokens == 6 + 5 + 2 + 7
    assert layout.units[0].prefix == (0, 4)
    assert layout.units[0].suffixes == [(4, 6), (6, 7), (7, 10)]


def test_identical_sequences_keep_their_last_token_each() -> None:
    layout = pack([TokenSequence([1, 2, 3], "k"), TokenSequence([1, 2, 3], "k")])
    assert layout.units[0].prefix == (0, 2)
    assert layout.input_ids == [1, 2, 3, 3]
    assert layout.ends == [3, 4]


def test_common_prefix_length_stops_at_first_difference() -> None:
    assert common_prefix_length([[1, 2, 3, 9], [1, 2, 4, 9]]) == 2
    assert common_prefix_length([[1], [1, 2]]) == 0
    assert common_prefix_length([]) == 0


def test_empty_sequence_is_rejected() -> None:
    with pytest.raises(ValueError, match="empty"):
        pack([TokenSequence([1]), TokenSequence([])])
