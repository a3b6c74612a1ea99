"""Score a JSONL file of items in batches, writing results in input order."""

from __future__ import annotations

from collections.abc import Callable
from itertools import islice
from pathlib import Path
from typing import IO

from referee.service.jobs.jsonl import batches, items_of, merged, read_items, write_result
from referee.service.jobs.summary import JobSummary
from referee.verifiers.types import Item, Result

Scorer = Callable[[list[Item]], list[Result]]


def score_file(
    source: Path,
    sink: IO[bytes],
    scorer: Scorer,
    batch_size: int = 512,
    on_progress: Callable[[int], None] | None = None,
    skip: int = 0,
    summary: JobSummary | None = None,
) -> JobSummary:
    """Score every line of ``source`` with ``scorer``; one result line per input line.

    Lines that are not valid items become ``invalid`` results in their place. ``skip``:
    the first entries already have results (a resumed run); ``summary`` holds them. The
    summary (the one job pages show) is folded as results are written: the files are
    never read again for it.
    """
    summary = summary or JobSummary()
    for batch in batches(islice(read_items(source), skip, None), batch_size):
        items = items_of(batch)
        for entry, result in zip(batch, merged(batch, scorer(items) if items else []), strict=True):
            data = write_result(sink, result)
            summary.add(data, entry.group if isinstance(entry, Item) else None)
        if on_progress is not None:
            on_progress(len(batch))
    return summary
