"""Where a stopped ``referee score -o OUT`` run can continue: the complete result lines
of OUT, checked against the input's order, so a resumed run appends exactly the rest."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import orjson
from pydantic import ValidationError

from referee.service.jobs.jsonl import read_items
from referee.service.summary import Summary
from referee.verifiers.types import Item, Result


class ResumeMismatch(Exception):
    """OUT is not a partial run of IN (the message names the first line that differs)."""


@dataclass
class ResumePoint:
    """``done`` results (``size`` bytes of OUT) are complete and match IN's first lines."""

    done: int = 0
    size: int = 0
    summary: Summary = field(default_factory=Summary)


def find_resume_point(source: Path, output: Path) -> ResumePoint:
    """Read OUT's complete lines against IN's entries. A last line without its newline
    (or not JSON) is a torn write and is not counted; any other disagreement raises
    `ResumeMismatch`: an id or verifier that is not the input's at that line, a bad line
    before the end, or more results than items."""
    point = ResumePoint()
    entries = read_items(source)
    with output.open("rb") as handle:
        lines = iter(handle)
        for raw in lines:
            result = _complete(raw)
            if result is None:
                if next(lines, None) is not None:
                    raise ResumeMismatch(f"line {point.done + 1} of {output} is not a result")
                break
            entry = next(entries, None)
            if entry is None:
                raise ResumeMismatch(f"{output} has more results than {source} has items")
            _require_match(entry, result, point.done + 1, source, output)
            point.done += 1
            point.size += len(raw)
            point.summary.add(result)
    return point


def _complete(raw: bytes) -> Result | None:
    if not raw.endswith(b"\n"):
        return None
    try:
        return Result.model_validate(orjson.loads(raw))
    except (orjson.JSONDecodeError, ValidationError):
        return None


def _require_match(
    entry: Item | Result, result: Result, line: int, source: Path, output: Path
) -> None:
    want = entry.id if isinstance(entry, Item) else None
    if result.id != want:
        raise ResumeMismatch(
            f"result {line} of {output} has id {result.id!r} but item {line} of {source} "
            f"has id {want!r}: {output} is not a run of {source}"
        )
    scored_by = (result.verifier or "").split("@")[0]
    if isinstance(entry, Item) and scored_by and scored_by != entry.verifier.split("@")[0]:
        raise ResumeMismatch(
            f"result {line} of {output} was scored by {result.verifier}, but item {line} "
            f"of {source} names {entry.verifier}: {output} is not a run of {source}"
        )
