"""Read items from and write results to JSONL files, one line at a time (never whole)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from itertools import islice
from pathlib import Path
from typing import IO, Any

import orjson
from pydantic import ValidationError

from referee.verifiers.base import describe_validation_error
from referee.verifiers.types import Item, Result, Status


def read_items(path: Path) -> Iterator[Item | Result]:
    """Each non-blank line as an `Item`, or an ``invalid`` `Result` naming the line's problem.

    A bad line never stops the file: it becomes one invalid result in its place, so the
    output stays aligned with the input line for line.
    """
    with path.open("rb") as handle:
        for number, raw in enumerate(handle, start=1):
            if raw.strip():
                yield parse_line(raw, number)


def read_items_from(
    path: Path, offset: int = 0, line: int = 0
) -> Iterator[tuple[Item | Result, int, int]]:
    """`read_items` from byte ``offset``, where line ``line`` ended: each entry with the
    byte offset and line number just past it (where to resume after it)."""
    with path.open("rb") as handle:
        handle.seek(offset)
        for raw in handle:
            offset += len(raw)
            line += 1
            if raw.strip():
                yield parse_line(raw, line), offset, line


def parse_line(raw: bytes, number: int) -> Item | Result:
    """One JSONL line to an item, or an ``invalid`` result that says what is wrong."""
    try:
        return Item.model_validate(orjson.loads(raw))
    except orjson.JSONDecodeError as exc:
        return Result.failed(Status.INVALID, "malformed_line", f"line {number}: not JSON: {exc}")
    except ValidationError as exc:
        message = f"line {number}: {describe_validation_error(exc, 'item')}"
        return Result.failed(Status.INVALID, "malformed_line", message)


Entry = Item | Result
"""A JSONL line read: the item, or the ``invalid`` result of a line that is not one."""


def items_of(entries: Sequence[Entry]) -> list[Item]:
    """The items among ``entries``, in order: what goes to the scorer."""
    return [entry for entry in entries if isinstance(entry, Item)]


def merged(entries: Sequence[Entry], scored: Sequence[Result]) -> list[Result]:
    """One result per entry, in order: ``scored`` (one per item, in order) in the items'
    places, each bad line's own ``invalid`` result in its place. The one way every path
    (files, embedded jobs, Redis jobs) keeps bad lines where they were."""
    wanted = sum(1 for entry in entries if isinstance(entry, Item))
    if len(scored) != wanted:
        raise ValueError(f"{len(scored)} results for {wanted} items")
    results = iter(scored)
    return [next(results) if isinstance(entry, Item) else entry for entry in entries]


def batches(entries: Iterator[Entry], size: int) -> Iterator[list[Entry]]:
    """``entries`` in lists of ``size`` (the last may be shorter)."""
    while batch := list(islice(entries, size)):
        yield batch


def count_lines(path: Path) -> int:
    """Non-blank lines in ``path``, for progress bars."""
    with path.open("rb") as handle:
        return sum(1 for line in handle if line.strip())


def read_results(path: Path) -> Iterator[Result]:
    """Results from a JSONL file written by `write_result` or a job download."""
    with path.open("rb") as handle:
        for raw in handle:
            if raw.strip():
                yield Result.model_validate(orjson.loads(raw))


def write_result(handle: IO[bytes], result: Result) -> dict[str, Any]:
    """Write ``result`` as one JSON line; the JSON-ready dict it wrote."""
    data = result.model_dump(mode="json")
    handle.write(orjson.dumps(data) + b"\n")
    return data
