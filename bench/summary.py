"""Job-summary benchmark: the summary of a big job, its route and its page, in one run.

1. Fold: ``--fold-items`` (10,000,000) synthetic results, GRPO groups of 8, into one
   `JobSummary`; folding rate, the peak resident memory it added (``VmHWM`` before and
   after, results made one at a time and dropped) and the stored summary's size.
2. Route and page: a live ``referee serve`` (embedded jobs) scores a ``--job-items``
   (200,000) ``string`` job; once it is done, ``GET /v1/jobs/{id}/summary`` is timed on
   one keep-alive connection (median of 20), then ``GET /v1/jobs/{id}/items/{index}``
   (the last item first, then 20 anywhere: median) beside the scan each look made
   before the line index, and the job page is opened in headless chromium: the wall time of
   ``chromium --dump-dom`` on the job page minus the same on a static page (the
   browser's own start), median of 5.

    python bench/summary.py
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import httpx  # noqa: E402
import orjson  # noqa: E402

from referee.service.jobs.summary import JobSummary  # noqa: E402
from tests.conftest import start_server, stop_server  # noqa: E402


def peak_rss() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM"):
            return int(line.split()[1]) * 1024
    return 0


def fold(count: int) -> dict[str, Any]:
    rng = random.Random(0)
    summary = JobSummary()
    before = peak_rss()
    start = time.perf_counter()
    for index in range(count):
        reward = 1.0 if rng.random() < 0.4 else 0.0
        result = {"status": "ok", "reward": reward, "verifier": "math@1",
                  "elapsed_ms": rng.random() * 5, "error": None, "details": {}}  # fmt: skip
        summary.add(result, f"g{index // 8}")
    seconds = time.perf_counter() - start
    stored = len(orjson.dumps(summary.to_json()))
    return {"items": count, "seconds": seconds, "items_per_s": count / seconds,
            "added_peak_bytes": peak_rss() - before, "stored_bytes": stored}  # fmt: skip


def browse(url: str) -> float:
    chromium = shutil.which("chromium") or "chromium"
    start = time.perf_counter()
    subprocess.run([chromium, "--headless", "--no-sandbox", "--disable-gpu",
                    "--virtual-time-budget=10000", "--dump-dom", url],
                   capture_output=True, check=True, timeout=120)  # fmt: skip
    return time.perf_counter() - start


def timed(client: httpx.Client, paths: list[str]) -> list[float]:
    """Seconds of each GET, on one keep-alive connection (a new client per request costs
    httpx more than the route itself)."""
    seconds = []
    for path in paths:
        start = time.perf_counter()
        client.get(path).raise_for_status()
        seconds.append(time.perf_counter() - start)
    return seconds


def scanned_ms(data: str, job: str, count: int) -> float:
    """Median of 5: the last item's line and result found as every look did before the
    line index, reading both files from the start, line by line, to it."""
    runs = []
    for _ in range(5):
        start = time.perf_counter()
        for path in Path(data).rglob(f"{job}.*.jsonl"):
            with path.open("rb") as source:
                seen = 0
                while (line := source.readline()) and seen < count:
                    if line.strip():
                        seen += 1
        runs.append(time.perf_counter() - start)
    return statistics.median(runs) * 1e3


def scored_job(url: str, count: int) -> tuple[str, float]:
    """A ``count``-item ``string`` job (GRPO groups of 8), posted and waited for."""
    lines = b"\n".join(
        orjson.dumps({"verifier": "string", "response": "yes" if i % 3 else "no",
                      "reference": "yes", "group": f"g{i // 8}"})
        for i in range(count)
    )  # fmt: skip
    started = time.perf_counter()
    headers = {"content-type": "application/x-ndjson"}
    posted = httpx.post(f"{url}/v1/jobs", content=lines, timeout=600, headers=headers)
    job: str = posted.json()["id"]
    while httpx.get(f"{url}/v1/jobs/{job}", timeout=30).json()["state"] != "done":
        time.sleep(0.5)
    return job, time.perf_counter() - started


def live(count: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as data:
        proc, url = start_server({"REFEREE_DATA_DIR": data})
        try:
            job, scored_s = scored_job(url, count)
            rng = random.Random(0)
            with httpx.Client(base_url=url, timeout=30) as client:
                route = timed(client, [f"/v1/jobs/{job}/summary"] * 20)
                [first] = timed(client, [f"/v1/jobs/{job}/items/{count - 1}"])
                anywhere = [f"/v1/jobs/{job}/items/{rng.randrange(count)}" for _ in range(20)]
                item = timed(client, anywhere)
            scan_ms = scanned_ms(data, job, count)
            static = Path(data) / "blank.html"
            static.write_text("<html><body>blank</body></html>")
            page = [browse(f"{url}/ui#job/{job}") - browse(static.as_uri()) for _ in range(5)]
        finally:
            stop_server(proc)
    return {"items": count, "job_s": scored_s, "route_ms_median": statistics.median(route) * 1e3,
            "item_ms_first": first * 1e3, "item_ms_median": statistics.median(item) * 1e3,
            "scan_ms_median": scan_ms,
            "page_s_median": statistics.median(page), "page_s_runs": page}  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--fold-items", type=int, default=10_000_000)
    parser.add_argument("--job-items", type=int, default=200_000)
    args = parser.parse_args()
    folded = fold(args.fold_items)
    print(f"fold: {folded['items']:,} results in {folded['seconds']:.1f} s "
          f"({folded['items_per_s']:,.0f}/s); peak memory added "
          f"{folded['added_peak_bytes'] / 2**20:.1f} MiB; "
          f"stored {folded['stored_bytes']:,} B")  # fmt: skip
    served = live(args.job_items)
    print(f"job of {served['items']:,}: scored in {served['job_s']:.1f} s; summary route "
          f"{served['route_ms_median']:.1f} ms (median of 20); one item's line "
          f"{served['item_ms_first']:.1f} ms the first time (the last one), then "
          f"{served['item_ms_median']:.1f} ms (median of 20, anywhere; reading both files "
          f"to the last line, as each look did before: {served['scan_ms_median']:.1f} ms); "
          f"job page "
          f"{served['page_s_median']:.2f} s over a blank page (median of 5)")  # fmt: skip
    out = ROOT / "bench" / "results"
    out.mkdir(exist_ok=True)
    (out / "summary.json").write_text(json.dumps({"fold": folded, "live": served}, indent=2))


if __name__ == "__main__":
    main()
