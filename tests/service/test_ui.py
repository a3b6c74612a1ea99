"""``/ui`` in a real browser: Debian's chromium, headless, against a live ``referee
serve``. A job is submitted and scored; its page, opened once the job is done, shows the
counts and histograms the JSON routes give; the page logs no JavaScript error; a
screenshot is kept as a test artifact (``.artifacts/ui-job.png``)."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import tempfile
import time
from collections import Counter
from collections.abc import Iterator
from html.parser import HTMLParser
from pathlib import Path

import httpx
import pytest

from tests.conftest import REPO, start_server, stop_server

CHROMIUM = shutil.which("chromium")
needs_chromium = pytest.mark.skipif(CHROMIUM is None, reason="Debian's chromium is not installed")
ARTIFACTS = REPO / ".artifacts"


@pytest.fixture(scope="module")
def server() -> Iterator[str]:
    with tempfile.TemporaryDirectory(prefix="referee-ui-") as data:
        proc, url = start_server({"REFEREE_DATA_DIR": data})
        yield url
        stop_server(proc)


def browse(url: str, *extra: str) -> subprocess.CompletedProcess[str]:
    """Chromium, headless, run until the page's work settles; its console on stderr."""
    assert CHROMIUM is not None
    command = [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
               "--enable-logging=stderr", "--v=0", "--virtual-time-budget=10000",
               "--window-size=1280,1800", *extra, url]  # fmt: skip
    return subprocess.run(command, capture_output=True, text=True, timeout=120, check=False)


def console_errors(stderr: str) -> list[str]:
    """The page's console errors and uncaught exceptions as chromium logs them."""
    return [line for line in stderr.splitlines()
            if ":CONSOLE" in line and re.search(r"Uncaught|Error|error", line)]  # fmt: skip


class Dom(HTMLParser):
    """Tables' cells by table id, and every bar's count by its chart (the reward cards'
    verifier, or the chart's id)."""

    def __init__(self) -> None:
        super().__init__()
        self.cells: dict[str, list[str]] = {}
        self.bars: dict[str, list[int]] = {}
        self._table: str | None = None
        self._chart: list[str] = []
        self._in_cell = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = dict(attrs)
        if tag == "table":
            self._table = found.get("id")
        elif tag == "td":
            self._in_cell = True
        elif found.get("data-verifier"):
            self._chart.append(str(found["data-verifier"]))
        elif found.get("id") in ("pass-rates", "traffic-series"):
            self._chart.append(str(found["id"]))
        elif "bar" in (found.get("class") or "").split() and self._chart:
            self.bars.setdefault(self._chart[-1], []).append(int(found["data-count"] or 0))

    def handle_endtag(self, tag: str) -> None:
        if tag == "td":
            self._in_cell = False
        elif tag == "table":
            self._table = None

    def handle_data(self, data: str) -> None:
        if self._in_cell and self._table:
            self.cells.setdefault(self._table, []).append(data)


def submit(url: str) -> str:
    answers = ["yes" if (i * 7) % 5 else "no" for i in range(64)]
    lines = [json.dumps({"verifier": "string", "response": answer, "reference": "yes",
                         "group": f"g{i // 8}"}) for i, answer in enumerate(answers)]  # fmt: skip
    lines += [json.dumps({"verifier": "math", "response": r, "reference": "2"})
              for r in ("\\boxed{2}", "\\boxed{2} or \\boxed{3}")]  # fmt: skip
    lines.append("this line is not JSON")
    response = httpx.post(f"{url}/v1/jobs", content="\n".join(lines).encode(),
                          headers={"content-type": "application/x-ndjson"}, timeout=30)  # fmt: skip
    assert response.status_code == 202, response.text
    job_id: str = response.json()["id"]
    deadline = time.monotonic() + 60
    while httpx.get(f"{url}/v1/jobs/{job_id}", timeout=10).json()["state"] != "done":
        assert time.monotonic() < deadline, "the job did not finish"
        time.sleep(0.2)
    return job_id


@needs_chromium
def test_a_finished_jobs_page_shows_what_its_results_say(server: str) -> None:
    job_id = submit(server)
    listing = httpx.get(f"{server}/v1/jobs/{job_id}/results", timeout=30).text
    results = [json.loads(line) for line in listing.splitlines()]
    page = browse(f"{server}/ui#job/{job_id}", "--dump-dom")
    assert page.returncode == 0, page.stderr[-2000:]
    assert console_errors(page.stderr) == []
    dom = Dom()
    dom.feed(page.stdout)
    statuses = Counter(r["status"] for r in results)
    shown = dict(
        zip(dom.cells["statuses"][::2], map(int, dom.cells["statuses"][1::2]), strict=True)
    )
    assert shown == dict(statuses) and statuses["invalid"] == 1
    for verifier in {r["verifier"] for r in results if r["status"] == "ok"}:
        rewards = [
            r["reward"] for r in results if r["verifier"] == verifier and r["status"] == "ok"
        ]
        want = [0] * 20
        for reward in rewards:
            want[min(int(reward * 20), 19)] += 1
        assert dom.bars[verifier] == want, verifier
    assert sum(dom.bars["pass-rates"]) == 8  # eight groups of eight
    assert "flagged" in dom.cells and any("conflicting" in c for c in dom.cells["flagged"])
    ARTIFACTS.mkdir(exist_ok=True)
    shot = ARTIFACTS / "ui-job.png"
    taken = browse(f"{server}/ui#job/{job_id}", f"--screenshot={shot}")
    assert taken.returncode == 0 and shot.stat().st_size > 10_000


@needs_chromium
def test_the_jobs_list_links_each_job(server: str) -> None:
    job_id = submit(server)
    page = browse(f"{server}/ui", "--dump-dom")
    assert console_errors(page.stderr) == []
    assert f'href="#job/{job_id}"' in page.stdout


@needs_chromium
def test_console_errors_are_seen(tmp_path: Path) -> None:
    """The console check above can fail: a page that throws is caught by it."""
    broken = tmp_path / "broken.html"
    broken.write_text("<script>notAFunction()</script>")
    assert console_errors(browse(broken.as_uri(), "--dump-dom").stderr) != []


def test_a_restarted_server_still_has_the_summary(tmp_path: Path) -> None:
    """The summary is stored beside the job: a new server process on the same data
    directory answers the same summary, counting nothing twice."""
    env = {"REFEREE_DATA_DIR": str(tmp_path)}
    proc, url = start_server(env)
    try:
        job_id = submit(url)
        before = httpx.get(f"{url}/v1/jobs/{job_id}/summary", timeout=30).json()
    finally:
        stop_server(proc)
    assert (tmp_path / "jobs" / f"{job_id}.summary.json").is_file() or any(
        tmp_path.rglob(f"{job_id}.summary.json")
    )
    proc, url = start_server(env)
    try:
        after = httpx.get(f"{url}/v1/jobs/{job_id}/summary", timeout=30).json()
    finally:
        stop_server(proc)
    assert after["items"] == before["items"] == 67
    assert {k: after[k] for k in ("by_status", "rewards", "groups", "flags")} == {
        k: before[k] for k in ("by_status", "rewards", "groups", "flags")
    }


@needs_chromium
def test_a_flagged_item_drills_down_to_its_request_and_result(server: str) -> None:
    job_id = submit(server)
    summary = httpx.get(f"{server}/v1/jobs/{job_id}/summary", timeout=30).json()
    (flagged,) = summary["flagged"]
    page = browse(f"{server}/ui#job/{job_id}", "--dump-dom")
    assert f'href="#job/{job_id}/item/{flagged["index"]}"' in page.stdout
    item_page = browse(f"{server}/ui#job/{job_id}/item/{flagged['index']}", "--dump-dom")
    assert console_errors(item_page.stderr) == []
    assert "\\\\boxed{2} or \\\\boxed{3}" in item_page.stdout  # the request, as JSON text
    assert "conflicting_answers" in item_page.stdout  # the result's details


def test_one_line_of_a_job(server: str) -> None:
    job_id = submit(server)
    last = httpx.get(f"{server}/v1/jobs/{job_id}/items/66", timeout=30).json()
    assert last["item"] == "this line is not JSON"
    assert last["result"]["error"]["code"] == "malformed_line"
    first = httpx.get(f"{server}/v1/jobs/{job_id}/items/0", timeout=30).json()
    assert first["item"]["group"] == "g0" and first["result"]["status"] == "ok"
    past = httpx.get(f"{server}/v1/jobs/{job_id}/items/67", timeout=30)
    assert past.status_code == 404 and "67" in past.json()["error"]["message"]
    assert httpx.get(f"{server}/v1/jobs/{job_id}/items/-1", timeout=30).status_code == 422


@needs_chromium
def test_the_live_traffic_view_shows_scored_items(server: str) -> None:
    items = [{"verifier": "string", "response": "a", "reference": r} for r in "aab"]
    assert httpx.post(f"{server}/v1/score", json={"items": items}, timeout=30).status_code == 200
    page = browse(f"{server}/ui", "--dump-dom")
    assert console_errors(page.stderr) == []
    dom = Dom()
    dom.feed(page.stdout)
    rows = dom.cells["traffic"]
    at = rows.index("string@1")
    assert int(rows[at + 1]) >= 3 and "ok" in rows[at + 3]
    assert sum(dom.bars["traffic-series"]) >= 3


def test_a_running_jobs_summary_is_folded_before_anyone_looks(tmp_path: Path) -> None:
    """The server folds a running job's summary as it goes (every 2 s), so a first look
    at a big job never folds it whole: the stored summary appears while it runs."""
    proc, url = start_server({"REFEREE_DATA_DIR": str(tmp_path)})
    try:
        # three batches of the job runner (512 items each), about 2.5 s each
        slow = json.dumps({"verifier": "slow", "response": "x", "params": {"seconds": 0.01}})
        body = "\n".join([slow] * 1100).encode()
        headers = {"content-type": "application/x-ndjson"}
        response = httpx.post(f"{url}/v1/jobs", content=body, headers=headers, timeout=30)
        job_id = response.json()["id"]
        seen_running = False
        deadline = time.monotonic() + 60
        while (state := httpx.get(f"{url}/v1/jobs/{job_id}", timeout=10).json()["state"]) != "done":
            assert time.monotonic() < deadline
            seen_running |= state == "running" and any(tmp_path.rglob(f"{job_id}.summary.json"))
            time.sleep(0.1)
        assert seen_running, "no summary was stored while the job ran"
    finally:
        stop_server(proc)


@needs_chromium
def test_text_a_policy_wrote_is_shown_as_text_never_run(server: str) -> None:
    """A response is the policy's text: in the drill-down it is shown, not parsed as
    markup (the page sets text, never HTML), so it cannot run script in the operator's
    browser with their key."""
    attack = '<img src=x onerror="document.title=\'pwned\'"><script>document.title="pwned"</script>'
    body = json.dumps({"verifier": "string", "response": attack, "reference": "x"}).encode()
    headers = {"content-type": "application/x-ndjson"}
    job_id = httpx.post(f"{server}/v1/jobs", content=body, headers=headers, timeout=30).json()["id"]
    deadline = time.monotonic() + 30
    while httpx.get(f"{server}/v1/jobs/{job_id}", timeout=10).json()["state"] != "done":
        assert time.monotonic() < deadline
        time.sleep(0.1)
    page = browse(f"{server}/ui#job/{job_id}/item/0", "--dump-dom")
    assert "pwned" not in page.stdout.split("<title>")[1].split("</title>")[0]
    assert "&lt;img src=x" in page.stdout and "<img" not in page.stdout
