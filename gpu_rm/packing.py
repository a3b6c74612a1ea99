"""Lay token sequences out in one packed row, with no padding and shared prompts once.

A batch is a list of `TokenSequence`s (token ids, a sharing key such as the prompt, and
the positions to score: the last token unless the sequence names others). Sequences
with the same key form a `Unit`: their longest common token prefix is placed once, then
each sequence's remaining tokens (its *suffix*) follow. Position ids restart at 0 for every
unit and continue after the prefix in every suffix, so each sequence sees exactly the
positions it would see alone. `gpu_rm.attention` confines attention to the layout: a prefix
attends to itself causally; a suffix attends to its unit's prefix and causally to itself.

Pure Python on purpose: the layout is computed on the host and tested without a model.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import dataclass, field

Span = tuple[int, int]
"""A half-open ``[start, end)`` range of positions in the packed row."""


@dataclass(frozen=True)
class TokenSequence:
    """One item to pack: its token ids, the key it may share a prefix under (None: never),
    the offsets (into ``ids``) of the tokens it is scored at (empty: its last token), and
    what a language-model head reads there: the distribution over a few ``candidates``
    (vocabulary ids, the same at every scored offset), or whole-vocabulary statistics of
    one target token per scored offset (``targets``) with the ``top_k`` alternatives."""

    ids: Sequence[int]
    share_key: Hashable | None = None
    scored: tuple[int, ...] = ()
    candidates: tuple[int, ...] = ()
    targets: tuple[int, ...] = ()
    top_k: int = 0


@dataclass
class Unit:
    """A shared prefix (possibly empty) and the suffixes that attend to it."""

    prefix: Span
    suffixes: list[Span] = field(default_factory=list)


@dataclass
class PackedLayout:
    """The packed row: ``input_ids`` and ``position_ids`` have the same length, no padding.

    ``ends[i]`` is the exclusive end, in the row, of input sequence ``i`` (input order);
    its last token is at ``ends[i] - 1``. ``rows[i]`` are the row positions sequence ``i``
    is scored at (a scored token inside a shared prefix is read there: causal attention
    gives it the same state in every sequence of the unit), and ``candidates[i]`` its
    `TokenSequence.candidates`. ``computed_tokens`` is the row length, and
    ``logical_tokens`` what the sequences would cost unpacked and unshared.
    """

    input_ids: list[int]
    position_ids: list[int]
    units: list[Unit]
    ends: list[int]
    logical_tokens: int
    rows: list[list[int]] = field(default_factory=list)
    offsets: list[tuple[int, ...]] = field(default_factory=list)
    """Per sequence, the offsets in it that ``rows`` are (its last token when it named none)."""
    candidates: list[tuple[int, ...]] = field(default_factory=list)
    targets: list[tuple[int, ...]] = field(default_factory=list)
    top_k: list[int] = field(default_factory=list)

    def scored_rows(self) -> list[int]:
        """Every scored position, sequence by sequence in input order (the order a scorer
        returns its rows in)."""
        return [row for rows in self.rows for row in rows]

    @property
    def computed_tokens(self) -> int:
        """Tokens the forward pass computes: every token of the row is real."""
        return len(self.input_ids)


def common_prefix_length(sequences: Sequence[Sequence[int]]) -> int:
    """Length of the longest token prefix shared by all ``sequences``, leaving every
    sequence at least one token of its own (its last token is where it is scored)."""
    if not sequences:
        return 0
    first = sequences[0]
    limit = min(len(s) for s in sequences) - 1
    length = 0
    while length < limit and all(s[length] == first[length] for s in sequences[1:]):
        length += 1
    return max(length, 0)


def pack(sequences: Sequence[TokenSequence], min_shared: int = 1) -> PackedLayout:
    """Pack ``sequences`` into one row; sequences sharing a key share their common prefix
    when it is at least ``min_shared`` tokens. Empty sequences, and scored offsets
    outside their sequence, are rejected (ValueError): the caller filters them, since an
    empty sequence has no last token to score."""
    if any(len(s.ids) == 0 for s in sequences):
        raise ValueError("cannot pack an empty sequence")
    if any(not 0 <= offset < len(s.ids) for s in sequences for offset in s.scored):
        raise ValueError("a scored offset lies outside its sequence")
    if any(s.targets and len(s.targets) != len(s.scored) for s in sequences):
        raise ValueError("targets need one scored offset each")
    clusters: dict[Hashable, list[int]] = {}
    order: list[list[int]] = []
    for index, seq in enumerate(sequences):
        if seq.share_key is None:
            order.append([index])
            continue
        if seq.share_key not in clusters:
            clusters[seq.share_key] = []
            order.append(clusters[seq.share_key])
        clusters[seq.share_key].append(index)
    layout = PackedLayout([], [], [], [0] * len(sequences), 0, [[] for _ in sequences])
    for members in order:
        _place_unit(layout, [sequences[i] for i in members], members, min_shared)
    layout.candidates = [s.candidates for s in sequences]
    layout.targets = [s.targets for s in sequences]
    layout.top_k = [s.top_k for s in sequences]
    layout.offsets = [s.scored or (len(s.ids) - 1,) for s in sequences]
    return layout


def _place_unit(
    layout: PackedLayout, seqs: list[TokenSequence], members: list[int], min_shared: int
) -> None:
    ids = [s.ids for s in seqs]
    shared = common_prefix_length(ids) if len(ids) > 1 else 0
    if shared < min_shared:
        shared = 0
    start = len(layout.input_ids)
    layout.input_ids.extend(ids[0][:shared])
    layout.position_ids.extend(range(shared))
    unit = Unit(prefix=(start, start + shared))
    for index, seq in zip(members, seqs, strict=True):
        begin = len(layout.input_ids)
        layout.input_ids.extend(seq.ids[shared:])
        layout.position_ids.extend(range(shared, len(seq.ids)))
        unit.suffixes.append((begin, len(layout.input_ids)))
        layout.ends[index] = len(layout.input_ids)
        layout.logical_tokens += len(seq.ids)
        offsets = seq.scored or (len(seq.ids) - 1,)
        layout.rows[index] = [
            start + offset if offset < shared else begin + offset - shared for offset in offsets
        ]
    layout.units.append(unit)
