"""What answers that keep sympy busy cost the service, with and without the CPU budget.

    python bench/budgets.py [--slow 8] [--plain 200]

One run, two configurations of the same embedded service (`LocalScorer`, 2 CPU workers,
item timeout 10 s): the default budget (``REFEREE_CPU_BUDGET_S`` 3 s) and the budget set
past the item timeout (3600 s: no budget applies, what referee did before budgets). The
same request in both: ``--slow`` math answers that keep sympy busy for 30 s to minutes
(`SLOW`, alternating, each with its own number so that no verdict comes from a cache)
and ``--plain`` ordinary ones, shuffled. Prints the request's wall time and its results
by status; writes ``bench/results/budgets.json``.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import platform
import random
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from referee.service.execution.local import LocalScorer  # noqa: E402
from referee.service.settings import Settings  # noqa: E402
from referee.verifiers import Item  # noqa: E402
from referee.verifiers.engines import EngineSettings  # noqa: E402

SLOW = [
    r"\boxed{||\binom{\pi}{%d}||}",
    r"\boxed{e^{\binom{\sin(\sqrt{%d})}{\sin(n^{e})}}}",
]
"""Distinct answers (a number in each, from 1000 up): none is answered from a cache."""


def workload(slow: int, plain: int) -> list[Item]:
    rng = random.Random(3)
    items = [
        Item(verifier="math", response=SLOW[i % 2] % (1000 + i), reference="1") for i in range(slow)
    ]
    for _ in range(plain):
        a, b = rng.randint(1, 99), rng.randint(1, 99)
        answer = a + b if rng.random() < 0.5 else a + b + 1
        items.append(Item(verifier="math", response=f"\\boxed{{{answer}}}", reference=a + b))
    rng.shuffle(items)
    return items


def measure(budget_s: float, items: list[Item]) -> dict[str, object]:
    settings = Settings(
        cpu_workers=2,
        item_timeout_s=10.0,
        default_deadline_s=600.0,
        max_deadline_s=600.0,
        engines=EngineSettings(cpu_budget_s=budget_s),
    )
    with LocalScorer(settings) as scorer:
        start = time.monotonic()
        results = scorer.score(items, deadline_s=600.0)
        wall = time.monotonic() - start
    statuses = collections.Counter(r.status.value for r in results)
    flagged = sum("over_budget" in r.details.get("flags", ()) for r in results)
    return {"budget_s": budget_s, "wall_s": round(wall, 2), "statuses": dict(statuses),
            "over_budget": flagged}  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--slow", type=int, default=8)
    parser.add_argument("--plain", type=int, default=200)
    args = parser.parse_args()
    items = workload(args.slow, args.plain)
    rows = [measure(3.0, items), measure(3600.0, items)]
    for row in rows:
        print(json.dumps(row), flush=True)
    out = ROOT / "bench" / "results" / "budgets.json"
    out.parent.mkdir(exist_ok=True)
    machine = {"cpu": platform.processor() or platform.machine(), "cores": os.cpu_count()}
    out.write_text(json.dumps({"machine": machine, "slow": args.slow, "rows": rows}, indent=2))


if __name__ == "__main__":
    main()
