"""Where a stopped ``referee score -o OUT`` run can continue: the complete result lines
of OUT, checked against the input's order, so a resumed run appends exactly the rest."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from referee.service.jobs.jsonl import parse_line
from referee.service.jobs.summary import JobSummary
from referee.verifiers.types import Result, Status


class ResumeMismatch(Exception):
    """OUT is not a partial run of IN (the message names the first line that differs)."""


@dataclass
class ResumePoint:
    """``done`` results (``size`` bytes of OUT) are complete and match IN's first lines."""

    done: int = 0
    size: int = 0
    summary: JobSummary = field(default_factory=JobSummary)


def find_resume_point(source: Path, output: Path) -> ResumePoint:
    """Read OUT's complete lines against IN's entries. A last line without its newline
    (or not JSON) is a torn write and is not counted; any other disagreement raises
    `ResumeMismatch`: an id or verifier that is not the input's at that line, a bad line
    before the end, or more results than items."""
    point = ResumePoint()
    entries = _inputs(source)
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
            point.summary.add(result.data, entry.group)
    return point


@dataclass(frozen=True)
class _Input:
    """What an input line's result must carry: its id and verifier (both None for a
    line that is not a valid item, whose result is its own ``invalid``), read cheaply;
    `exact` validates the line in full."""

    id: str | None
    verifier: str | None
    raw: bytes
    number: int
    group: str | None = None

    def matches(self, result: _Line) -> bool:
        scored_by = (result.verifier or "").split("@")[0]
        same_verifier = (
            not (self.verifier and scored_by) or scored_by == (self.verifier.split("@")[0])
        )
        return result.id == self.id and same_verifier

    def exact(self) -> _Input:
        entry = parse_line(self.raw, self.number)
        if isinstance(entry, Result):
            return _Input(None, None, self.raw, self.number)
        return _Input(entry.id, entry.verifier, self.raw, self.number, entry.group)


def _inputs(source: Path) -> Iterator[_Input]:
    """Each non-blank input line's `_Input`: parsed as JSON only (a million lines take
    seconds); a line that does not even look like an item is validated in full."""
    with source.open("rb") as handle:
        for number, raw in enumerate(handle, start=1):
            if not raw.strip():
                continue
            try:
                data = orjson.loads(raw)
            except orjson.JSONDecodeError:
                yield _Input(None, None, raw, number)
                continue
            quick = (
                isinstance(data, dict)
                and isinstance(data.get("verifier"), str)
                and isinstance(data.get("id", ""), str)
            )
            if quick:
                group = data.get("group")
                group = group if isinstance(group, str) else None
                yield _Input(data.get("id"), data["verifier"], raw, number, group)
            else:
                yield _Input(None, None, raw, number).exact()


@dataclass(frozen=True)
class _Line:
    """What a results line must hold to be counted (read without building a `Result`:
    a million lines are checked in seconds)."""

    id: str | None
    status: str
    reward: float | None
    verifier: str | None
    data: dict[str, Any]


_STATUSES = frozenset(status.value for status in Status)


def _complete(raw: bytes) -> _Line | None:
    if not raw.endswith(b"\n"):
        return None
    try:
        data = orjson.loads(raw)
    except orjson.JSONDecodeError:
        return None
    if not isinstance(data, dict) or data.get("status") not in _STATUSES:
        return None
    reward, ident, verifier = data.get("reward"), data.get("id"), data.get("verifier")
    if not (reward is None or isinstance(reward, int | float)):
        return None
    if not all(v is None or isinstance(v, str) for v in (ident, verifier)):
        return None
    return _Line(ident, data["status"], reward, verifier, data)


def _require_match(entry: _Input, result: _Line, line: int, source: Path, output: Path) -> None:
    if not entry.matches(result):
        entry = entry.exact()  # a line that looked like an item may still be invalid
    if result.id != entry.id:
        raise ResumeMismatch(
            f"result {line} of {output} has id {result.id!r} but item {line} of {source} "
            f"has id {entry.id!r}: {output} is not a run of {source}"
        )
    if not entry.matches(result):
        raise ResumeMismatch(
            f"result {line} of {output} was scored by {result.verifier}, but item {line} "
            f"of {source} names {entry.verifier}: {output} is not a run of {source}"
        )
