"""The CLI's view of a scored file or a server job: the same `JobSummary` the job pages
show (folded while the file is scored, or the server's), printed with rich (a reward
histogram per verifier, group statistics, the slowest and flagged items) and written as
JSON on request."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
from rich.console import Console
from rich.table import Table

BLOCKS = " ▁▂▃▄▅▆▇█"


def sparkline(counts: list[int]) -> str:
    """One block character per bin, height by count (the fullest bin full)."""
    most = max(counts) or 1
    return "".join(BLOCKS[round(count / most * (len(BLOCKS) - 1))] for count in counts)


def print_summary(console: Console, view: dict[str, Any]) -> None:
    """``view`` (`JobSummary.view` or the summary route's body) as tables."""
    statuses = Table("status", "items", title=f"{view['items']} items")
    for status, count in sorted(view["by_status"].items()):
        statuses.add_row(status, str(count))
    for code, count in sorted(view["by_error"].items()):
        statuses.add_row(f"  error {code}", str(count))
    console.print(statuses)
    rewards = Table("verifier", "ok", "mean", "min", "max", "0 ... 1", "<0", ">1")
    for name, r in sorted(view["rewards"].items()):
        rewards.add_row(name, str(r["count"]), _number(r["mean"]), _number(r["min"]),
                        _number(r["max"]), sparkline(r["histogram"]), str(r["below_0"]),
                        str(r["above_1"]))  # fmt: skip
    console.print(rewards)
    groups = view["groups"]
    if groups["count"]:
        share = groups["zero_variance"] / groups["count"]
        rates = sparkline(groups["pass_rate_histogram"])
        console.print(f"{groups['count']} groups, {share:.1%} with zero reward variance; "
                      f"pass rates 0 ... 1: {rates}")  # fmt: skip
    if view["flags"]:
        flags = ", ".join(f"{name} {count}" for name, count in sorted(view["flags"].items()))
        console.print(f"flagged: {flags}")


def write_summary(path: Path, view: dict[str, Any]) -> None:
    """``view`` as JSON at ``path``."""
    path.write_bytes(orjson.dumps(view, option=orjson.OPT_INDENT_2))


def _number(value: float | None) -> str:
    return "-" if value is None else f"{value:.4f}"
