"""The model benchmarks run end to end on a tiny model (a smoke run, not a measurement:
the numbers are meaningless at this size). A GPU is lent rarely and briefly: a benchmark
that broke since its last run must be found here, not in the GPU session."""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests.conftest import REPO

TINY_MODEL = ["--hidden", "64", "--layers", "1", "--seed", "1"]
RUNS = {
    "rm": [
        "bench/rm.py",
        "--workload",
        "grpo",  # "long" has fixed sizes (a minute here) and runs the same code
        "--groups",
        "1",
        "--heads",
        "2",
        "--kv-heads",
        "1",
        "--mlp",
        "128",
        *TINY_MODEL,
    ],
    "grm": [
        "bench/grm.py",
        "--task",
        "both",
        "--batch",
        "4",
        "--group",
        "2",
        "--vocab",
        "512",
        "--repeats",
        "1",
        *TINY_MODEL,
    ],
    "logprobs": [
        "bench/logprobs.py",
        "--part",
        "throughput",  # "memory" is 6 fresh processes of torch start-up (15 s) for a few lines
        "--batch",
        "4",
        "--group",
        "2",
        "--vocab",
        "512",
        "--repeats",
        "1",
        *TINY_MODEL,
    ],
    "logprobs-head": [
        "bench/logprobs.py",
        "--part",
        "head",
        "--vocab",
        "512",
        "--head-tokens",
        "64",
        "--repeats",
        "1",
        *TINY_MODEL,
    ],
}


@pytest.mark.parametrize("name", sorted(RUNS))
def test_the_benchmark_runs(name: str) -> None:
    done = subprocess.run(
        [sys.executable, *RUNS[name]],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert "referee / " in done.stdout, done.stdout[-2000:]  # the side-by-side ratio line
