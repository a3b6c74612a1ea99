"""Finding a job file's n-th line through its index: the same line a full scan finds,
for files with blank lines, a growing committed end and a torn last line."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from referee.service.jobs import line_index
from referee.service.jobs.line_index import LineIndex, LineIndexes


def scanned(path: Path, index: int, limit: int | None) -> bytes | None:
    """The reference: read from the start, count non-blank lines within ``limit``."""
    with path.open("rb") as source:
        seen = 0
        while (line := source.readline()) and (limit is None or source.tell() <= limit):
            if not line.strip():
                continue
            if seen == index:
                return line.rstrip(b"\n")
            seen += 1
    return None


@pytest.fixture(autouse=True)
def small_stride(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(line_index, "STRIDE", 7)


def write_lines(path: Path, count: int, rng: random.Random) -> None:
    with path.open("wb") as sink:
        for number in range(count):
            if rng.random() < 0.2:
                sink.write(b"\n" if rng.random() < 0.5 else b"   \n")
            sink.write(b'{"n": %d}\n' % number)


def test_every_line_is_the_one_a_scan_finds(tmp_path: Path) -> None:
    rng = random.Random(7)
    path = tmp_path / "items.jsonl"
    write_lines(path, 300, rng)
    index = LineIndex()
    asked = [*range(-2, 310), *(rng.randrange(-5, 320) for _ in range(300))]
    for n in asked:
        assert index.line(path, n, None) == scanned(path, n, None), n


def test_a_committed_end_that_grows_is_followed(tmp_path: Path) -> None:
    rng = random.Random(8)
    path = tmp_path / "results.jsonl"
    write_lines(path, 200, rng)
    size = path.stat().st_size
    index = LineIndex()
    for limit in (0, 40, size // 3, size // 3, size // 2, size - 3, size):
        for n in (0, 5, 50, 99, 150, 199, 250):
            assert index.line(path, n, limit) == scanned(path, n, limit), (limit, n)


def test_a_line_still_being_written_is_not_indexed_early(tmp_path: Path) -> None:
    path = tmp_path / "results.jsonl"
    path.write_bytes(b"".join(b'{"n": %d}\n' % n for n in range(20)) + b'{"n": 2')
    index = LineIndex()
    assert index.line(path, 20, None) == b'{"n": 2'  # found by the scan
    assert index.line(path, 40, None) is None  # the index read to the end of the file
    with path.open("ab") as sink:
        sink.write(b"0}\n" + b"".join(b'{"n": %d}\n' % n for n in range(21, 40)))
    for n in range(42):
        assert index.line(path, n, None) == scanned(path, n, None), n


def test_one_index_per_file_bounded_and_fresh_for_a_replaced_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(line_index, "KEPT_FILES", 3)
    indexes = LineIndexes()
    paths = [tmp_path / f"{n}.jsonl" for n in range(5)]
    for number, path in enumerate(paths):
        path.write_bytes(b"".join(b"%d-%d\n" % (number, k) for k in range(30)))
        assert indexes.line(path, 29) == b"%d-29" % number
    assert len(indexes._kept) == 3
    replaced = tmp_path / "new.jsonl"
    replaced.write_bytes(b"other\n" * 40)
    replaced.replace(paths[4])
    assert indexes.line(paths[4], 29) == b"other"
    assert indexes.line(tmp_path / "missing.jsonl", 0) is None
