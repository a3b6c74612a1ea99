"""``referee score --resume``: a run killed at any point continues after the last
complete line of OUT, and ends identical to an uninterrupted run; a non-empty OUT is
never replaced silently; an OUT from another input is refused with nothing written."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import orjson

from referee.service.jobs.resume import find_resume_point
from tests.conftest import REPO, start_server, stop_server


def referee(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "referee.service", *args],
        cwd=REPO,
        env={**os.environ, "REFEREE_CPU_WORKERS": "1"},
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def write_items(path: Path, n: int, prefix: str = "i") -> Path:
    rows = [
        orjson.dumps(
            {"id": f"{prefix}{i}", "verifier": "string", "response": str(i % 3), "reference": "1"}
        )
        for i in range(n)
    ]
    rows.insert(2, b"{broken")
    path.write_bytes(b"\n".join(rows) + b"\n")
    return path


def expected(n: int) -> list[tuple[Any, ...]]:
    """What an uninterrupted run of `write_items` (n) writes, as `comparable` reads it:
    the ``string`` verifier's verdicts, and the broken third line as ``invalid``."""
    rows: list[tuple[Any, ...]] = [
        (f"i{i}", "ok", 1.0 if str(i % 3) == "1" else 0.0) for i in range(n)
    ]
    rows.insert(2, (None, "invalid", None))
    return rows


def comparable(path: Path) -> list[tuple[Any, ...]]:
    rows = [orjson.loads(line) for line in path.read_bytes().splitlines()]
    return [(r["id"], r["status"], r["reward"]) for r in rows]


def test_resume_after_a_torn_line_matches_an_uninterrupted_run(tmp_path: Path) -> None:
    items = write_items(tmp_path / "items.jsonl", 40)
    whole, partial = tmp_path / "whole.jsonl", tmp_path / "partial.jsonl"
    assert referee("score", str(items), "-o", str(whole)).returncode == 0
    assert comparable(whole) == expected(40)
    lines = whole.read_bytes().splitlines(keepends=True)
    partial.write_bytes(b"".join(lines[:7]) + lines[7][:20])  # killed mid-line
    refused = referee("score", str(items), "-o", str(partial))
    assert (
        refused.returncode == 1 and "--resume" in refused.stderr and "--overwrite" in refused.stderr
    )
    resumed = referee("score", str(items), "-o", str(partial), "--resume")
    assert resumed.returncode == 0, resumed.stderr
    assert "resuming after 7 results" in resumed.stderr
    assert comparable(partial) == expected(40)
    assert "41 items" in resumed.stderr  # the summary counts the earlier lines too


def test_an_output_of_another_input_is_refused_untouched(tmp_path: Path) -> None:
    items = write_items(tmp_path / "items.jsonl", 10)
    other = write_items(tmp_path / "other.jsonl", 10, prefix="x")
    out = tmp_path / "out.jsonl"
    assert referee("score", str(other), "-o", str(out)).returncode == 0
    before = out.read_bytes()
    done = referee("score", str(items), "-o", str(out), "--resume")
    assert done.returncode == 1
    assert (
        "cannot resume" in done.stderr and "'x0'" in done.stderr and "Traceback" not in done.stderr
    )
    assert out.read_bytes() == before
    assert referee("score", str(items), "-o", str(out), "--overwrite").returncode == 0
    assert comparable(out)[0][0] == "i0"


def test_killed_twice_the_run_still_has_every_line_once(tmp_path: Path) -> None:
    items = write_items(tmp_path / "items.jsonl", 12_000)  # 2 MB of results: killed well before
    out = tmp_path / "out.jsonl"
    command = [sys.executable, "-m", "referee.service", "score", str(items), "-o", str(out)]
    for _ in range(2):
        extra = ["--resume"] if out.exists() else []
        start = out.stat().st_size if out.exists() else 0
        proc = subprocess.Popen(
            [*command, *extra],
            cwd=REPO,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            env={**os.environ, "REFEREE_CPU_WORKERS": "1"},
            start_new_session=True,
        )
        deadline = time.monotonic() + 120
        while (
            not out.exists() or out.stat().st_size <= start + 4096
        ) and time.monotonic() < deadline:
            time.sleep(0.02)
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)
        assert out.read_bytes().count(b"\n") < 12_001, "finished before it was killed"
    done = referee("score", str(items), "-o", str(out), "--resume")
    assert done.returncode == 0, done.stderr
    assert comparable(out) == expected(12_000)


def test_a_server_job_run_reattaches_to_its_job(tmp_path: Path) -> None:
    items = write_items(tmp_path / "items.jsonl", 3000)
    out = tmp_path / "out.jsonl"
    proc, url = start_server({"REFEREE_DATA_DIR": str(tmp_path / "data")})
    try:
        args = ["score", str(items), "-o", str(out), "--server", url, "--job-threshold", "10"]
        run = subprocess.Popen(
            [sys.executable, "-m", "referee.service", *args], cwd=REPO,
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
        )  # fmt: skip
        job_file = tmp_path / "out.jsonl.job"
        deadline = time.monotonic() + 60
        while not job_file.exists() and time.monotonic() < deadline:
            time.sleep(0.01)
        os.killpg(run.pid, signal.SIGKILL)  # the job is on the server; this run is gone
        run.wait(timeout=30)
        job_id = job_file.read_text().strip()
        assert len(job_id) == 32, job_id  # written whole or not at all
        refused = referee(*args)
        assert refused.returncode == 1 and job_id in refused.stderr and "--resume" in refused.stderr
        resumed = referee(*args, "--resume")
    finally:
        stop_server(proc)
    assert resumed.returncode == 0, resumed.stderr
    assert f"reattached to job {job_id}" in resumed.stderr
    assert comparable(out) == expected(3000)
    assert not job_file.exists()


def test_a_line_that_only_looks_like_an_item_resumes_as_its_invalid_result(
    tmp_path: Path,
) -> None:
    source = tmp_path / "in.jsonl"
    rows = [
        {"id": "a", "verifier": "string", "response": "x", "reference": "x"},
        {"id": "b", "verifier": "string", "response": 5},  # JSON, but not a valid item
        {"id": "c", "verifier": "string", "response": "y", "reference": "x"},
    ]
    source.write_bytes(b"".join(orjson.dumps(row) + b"\n" for row in rows))
    out = tmp_path / "out.jsonl"
    assert referee("score", str(source), "-o", str(out)).returncode == 0
    two = out.read_bytes().splitlines(keepends=True)[:2]
    out.write_bytes(b"".join(two))
    point = find_resume_point(source, out)
    assert (point.done, point.size) == (2, len(b"".join(two)))
    assert dict(point.summary.by_status) == {"ok": 1, "invalid": 1}


def test_a_sidecar_without_a_job_id_is_named_not_sent(tmp_path: Path) -> None:
    """An empty or garbled ``OUT.job`` (left by an older version killed while writing it)
    is a clear error naming the file, never a request for an empty job id."""
    items = write_items(tmp_path / "items.jsonl", 20)
    out = tmp_path / "out.jsonl"
    for content in ["", "../../v1/admin\n"]:
        (tmp_path / "out.jsonl.job").write_text(content)
        args = ["score", str(items), "-o", str(out), "--server", "http://127.0.0.1:9"]
        done = referee(*args, "--job-threshold", "10", "--resume")
        assert done.returncode == 1
        assert "out.jsonl.job holds no job id" in done.stderr, done.stderr
