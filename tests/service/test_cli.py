"""The ``referee`` command as a user runs it: real subprocesses, real files, real HTTP."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import cast

import orjson
import pytest

from referee.service.client import Client, RefereeError
from referee.verifiers import Item, Status
from tests.conftest import REPO, free_port, start_server, stop_server

ITEMS = [
    {"id": "right", "verifier": "string", "response": "a", "reference": "a"},
    {"id": "wrong", "verifier": "string", "response": "b", "reference": "a"},
    {
        "id": "len",
        "verifier": "length",
        "response": "one two three",
        "params": {"mode": "linear", "unit": "words", "budget": 2},
    },
]


def referee(
    *args: str, timeout: float = 120, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "referee.service", *args],
        cwd=REPO,
        env={**os.environ, **(env or {})},
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


@pytest.fixture
def items_file(tmp_path: Path) -> Path:
    path = tmp_path / "items.jsonl"
    lines = [orjson.dumps(item) for item in ITEMS[:2]]
    lines += [b"{not json", b"", orjson.dumps({"verifier": "string"}), orjson.dumps(ITEMS[2])]
    path.write_bytes(b"\n".join(lines) + b"\n")
    return path


def read_results(path: Path) -> list[dict[str, object]]:
    return [orjson.loads(line) for line in path.read_bytes().splitlines()]


def check_results(results: list[dict[str, object]]) -> None:
    assert [r["status"] for r in results] == ["ok", "ok", "invalid", "invalid", "ok"]
    assert [r["id"] for r in results[:2]] == ["right", "wrong"]
    assert [r["reward"] for r in results[:2]] == [1.0, 0.0]
    assert "line 3" in results[2]["error"]["message"]  # type: ignore[index]
    assert "line 5" in results[3]["error"]["message"]  # type: ignore[index]
    assert results[4]["reward"] == 0.5


def test_score_file_in_process(items_file: Path, tmp_path: Path) -> None:
    out = tmp_path / "out.jsonl"
    done = referee("score", str(items_file), "-o", str(out))
    assert done.returncode == 0, done.stderr
    check_results(read_results(out))
    assert "string@1" in done.stderr and "invalid" in done.stderr  # the summary tables


def test_score_file_to_stdout(items_file: Path) -> None:
    done = referee("score", str(items_file))
    assert done.returncode == 0, done.stderr
    check_results([orjson.loads(line) for line in done.stdout.splitlines()])


def test_score_file_through_a_server(items_file: Path, tmp_path: Path, live_server: str) -> None:
    out = tmp_path / "out.jsonl"
    done = referee("score", str(items_file), "-o", str(out), "--server", live_server)
    assert done.returncode == 0, done.stderr
    check_results(read_results(out))


def test_an_output_that_cannot_seek_is_written(items_file: Path, live_server: str) -> None:
    """``-o /dev/null`` (or a pipe) once failed with a bare "Invalid argument"."""
    done = referee("score", str(items_file), "-o", os.devnull, "--server", live_server)
    assert done.returncode == 0, done.stderr


def test_missing_file_is_a_usage_error() -> None:
    done = referee("score", "/nonexistent/items.jsonl")
    assert done.returncode == 2
    assert "does not exist" in done.stderr


def test_verifiers_lists_builtins_and_plugins() -> None:
    done = referee("verifiers")
    assert done.returncode == 0, done.stderr
    for name in ("string@1", "choice@1", "composite@1", "reverse@1"):
        assert name in done.stdout
    assert "broken" in done.stderr


def test_client_against_a_real_server(live_server: str) -> None:
    with Client(live_server) as client:
        results = client.score([Item(**ITEMS[0]), Item(verifier="nope", response="x")])  # type: ignore[arg-type]
        assert [r.status for r in results] == [Status.OK, Status.INVALID]
        with pytest.raises(RefereeError) as raised:
            client.score([])
        assert raised.value.status == 422 and raised.value.code == "invalid_request"


def one_line_error(done: subprocess.CompletedProcess[str]) -> str:
    assert done.returncode == 1, done.stderr
    assert "Traceback" not in done.stderr
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, done.stderr
    return lines[0]


def test_an_unreachable_server_is_one_line(items_file: Path) -> None:
    url = f"http://127.0.0.1:{free_port()}"
    line = one_line_error(referee("score", str(items_file), "--server", url))
    assert line.startswith(f"referee: cannot reach {url}")
    assert "referee serve" in line


def test_a_refused_api_key_is_one_line_with_the_hint(items_file: Path) -> None:
    proc, url = start_server({"REFEREE_API_KEYS": "right-key"})
    try:
        done = referee("score", str(items_file), "--server", url, "--api-key", "wrong")
        missing = referee("score", str(items_file), "--server", url, env={"REFEREE_API_KEY": ""})
    finally:
        stop_server(proc)
    line = one_line_error(done)
    assert "401 unauthorized" in line and "REFEREE_API_KEY" in line
    assert "401" in one_line_error(missing)


def test_an_unwritable_output_is_one_line(items_file: Path, tmp_path: Path) -> None:
    target = tmp_path / "missing-dir" / "out.jsonl"
    line = one_line_error(referee("score", str(items_file), "-o", str(target)))
    assert "No such file or directory" in line and str(target) in line


def test_doctor_exit_status_and_literal_brackets(tmp_path: Path) -> None:
    wide = {"COLUMNS": "300"}  # rich wraps table cells to the terminal's width
    done = referee("doctor", "--no-smoke", env={"REFEREE_DATA_DIR": str(tmp_path / "data"), **wide})
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"{tmp_path / 'data'}: writable" in done.stdout
    bad = "/nonexistent/[x]/bwrap"
    done = referee("doctor", "--no-smoke", env={"REFEREE_SANDBOX_BWRAP_PATH": bad, **wide})
    assert done.returncode == 1
    assert bad in done.stdout  # rich markup would eat "[x]"
    assert "cannot work here: backend bwrap (configured)" in done.stderr
    assert "does NOT isolate" not in done.stderr  # process is only listed, not configured


def test_doctor_fails_on_a_data_directory_it_cannot_write(tmp_path: Path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory")
    done = referee("doctor", "--no-smoke", env={"REFEREE_DATA_DIR": str(blocker / "data")})
    assert done.returncode == 1
    assert "data directory" in done.stderr and "not writable" in done.stderr


def test_score_prints_and_writes_the_summary(items_file: Path, tmp_path: Path) -> None:
    grouped = tmp_path / "grouped.jsonl"
    lines = [orjson.dumps({**cast("dict[str, object]", item), "group": "g"}) for item in ITEMS[:2]]
    grouped.write_bytes(b"\n".join(lines))
    out, summary = tmp_path / "out.jsonl", tmp_path / "summary.json"
    done = referee("score", str(grouped), "-o", str(out), "--summary-json", str(summary))
    assert done.returncode == 0, done.stderr
    view = orjson.loads(summary.read_bytes())
    assert view["by_status"] == {"ok": 2}
    assert view["rewards"]["string@1"]["histogram"][0] == view["rewards"]["string@1"][
        "histogram"][-1] == 1  # fmt: skip
    assert view["groups"] == {"count": 1, "zero_variance": 0,
                              "pass_rate_histogram": [0] * 10 + [1] + [0] * 10}  # fmt: skip
    assert "1 groups, 0.0% with zero reward variance" in done.stderr
    assert "█" in done.stderr  # the histogram's full bin
    # Results to stdout: the summary is folded while scoring, so it needs no OUTPUT file.
    alone = referee("score", str(grouped), "--summary-json", str(summary))
    assert alone.returncode == 0, alone.stderr
    again = orjson.loads(summary.read_bytes())
    assert [again[k] for k in ("by_status", "rewards", "groups")] == [
        view[k] for k in ("by_status", "rewards", "groups")
    ]
    assert alone.stdout.count("\n") == 2  # the results, and nothing else, on stdout


def test_jobs_lists_and_follows_a_server_job(items_file: Path, live_server: str) -> None:
    with Client(live_server) as client:
        job_id = client.submit_job(items_file)
    listed = referee("jobs", "--server", live_server)
    assert listed.returncode == 0, listed.stderr
    assert job_id in listed.stdout + listed.stderr
    followed = referee("jobs", "--server", live_server, "--follow", job_id)
    assert followed.returncode == 0, followed.stderr
    output = followed.stdout + followed.stderr
    assert f"job {job_id}: done" in output and "string@1" in output


def test_punkt_tab_writes_the_model_nltk_loads_by_name(tmp_path: Path) -> None:
    done = referee("punkt-tab", str(tmp_path / "nltk"))
    assert done.returncode == 0, done.stderr
    program = "import nltk; print(nltk.sent_tokenize('Dr. Smith went home. He slept.'))"
    split = subprocess.run(
        [sys.executable, "-c", program],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "NLTK_DATA": str(tmp_path / "nltk"), "HOME": str(tmp_path)},
    )
    assert split.stdout.strip() == "['Dr. Smith went home.', 'He slept.']"
