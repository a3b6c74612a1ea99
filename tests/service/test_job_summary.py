"""`JobSummary`: table-driven folds, bounds that hold whatever the job's size, and a
stored summary that goes on exactly where it stopped."""

from __future__ import annotations

import random
from typing import Any

import orjson
import pytest

from referee.service.jobs.summary import BINS, MAX_KEYS, OPEN_GROUPS, JobSummary, group_of
from referee.verifiers import Item, Result, Status
from referee.verifiers.groups import summarize_groups


def result(status: str = "ok", reward: float | None = 1.0, **extra: Any) -> dict[str, Any]:
    return {"status": status, "reward": reward, "verifier": extra.pop("verifier", "string@1"),
            "elapsed_ms": extra.pop("ms", 1.0), "error": extra.pop("error", None),
            "details": extra.pop("details", {})}  # fmt: skip


def fold(rows: list[tuple[dict[str, Any], str | None]]) -> dict[str, Any]:
    summary = JobSummary()
    for row, group in rows:
        summary.add(row, group)
    return summary.view()


CASES = [
    ("statuses and errors", [(result(), None), (result("invalid", None, error={"code": "x"}), None),
                             (result("error", None, error={"code": "y"}), None)],
     lambda v: v["by_status"] == {"ok": 1, "invalid": 1, "error": 1}
     and v["by_error"] == {"x": 1, "y": 1}),
    ("histogram bins and outside [0, 1]", [(result(reward=r), None) for r in (0, 0.5, 1, 1, -2, 3)],
     lambda v: v["rewards"]["string@1"]["histogram"][0] == 1
     and v["rewards"]["string@1"]["histogram"][BINS // 2] == 1
     and v["rewards"]["string@1"]["histogram"][BINS - 1] == 2
     and (v["rewards"]["string@1"]["below_0"], v["rewards"]["string@1"]["above_1"]) == (1, 1)
     and v["rewards"]["string@1"]["mean"] == pytest.approx(3.5 / 6)),
    ("groups: pass rates and zero variance (a group of one included, as /v1/score's)",
     [(result(reward=r), g) for g, rs in (("a", [1, 1]), ("b", [0, 0]), ("c", [1, 0]), ("d", [1]))
      for r in rs],
     lambda v: v["groups"]["count"] == 4 and v["groups"]["zero_variance"] == 3
     and v["groups"]["pass_rate_histogram"][BINS] == 2
     and v["groups"]["pass_rate_histogram"][0] == 1
     and v["groups"]["pass_rate_histogram"][BINS // 2] == 1),
    ("non-ok items are in no group and no histogram",
     [(result("timeout", None), "a"), (result(reward=float("nan")), "a")],
     lambda v: v["groups"]["count"] == 0 and v["rewards"] == {}),
    ("slowest, most first", [(result(ms=m), None) for m in range(30)],
     lambda v: [s["elapsed_ms"] for s in v["slowest"]] == list(range(29, 19, -1))
     and v["slowest"][0]["index"] == 29),
    ("flags", [(result(details={"flags": ["custom_eq"]}), None), (result(), None),
               (result(details={"flags": ["early_exit", "custom_eq"]}), None)],
     lambda v: v["flags"] == {"custom_eq": 2, "early_exit": 1}
     and [f["index"] for f in v["flagged"]] == [0, 2]),
]  # fmt: skip


@pytest.mark.parametrize(("name", "rows", "check"), CASES, ids=[c[0] for c in CASES])
def test_folds(name: str, rows: list[Any], check: Any) -> None:
    view = fold(rows)
    assert check(view), view


def test_stored_halfway_it_goes_on_to_the_same_summary() -> None:
    rng = random.Random(7)
    rows = [(result(reward=rng.choice([0, 0.3, 1]), ms=rng.random() * 100,
                    details={"flags": ["f"]} if rng.random() < 0.1 else {}), f"g{i // 8}")
            for i in range(500)]  # fmt: skip
    whole = JobSummary()
    for row, group in rows:
        whole.add(row, group)
    first = JobSummary()
    for row, group in rows[:237]:
        first.add(row, group)
    stored = orjson.loads(orjson.dumps(first.to_json()))
    resumed = JobSummary.from_json(stored)
    for row, group in rows[237:]:
        resumed.add(row, group)
    assert resumed.view() == whole.view()
    assert resumed.folded == 500


def test_bounded_whatever_the_job() -> None:
    """Every group distinct, every verifier, error and flag distinct: what is kept stays a
    fixed size (groups closed as they leave the open window, names past the cap counted
    as ``other``)."""
    summary = JobSummary()
    for i in range(3 * OPEN_GROUPS):
        summary.add(result(reward=i % 2, verifier=f"v{i}", error={"code": f"e{i}"},
                           details={"flags": [f"f{i}"]}), f"g{i}")  # fmt: skip
    assert len(summary.open) == OPEN_GROUPS
    view = summary.view()
    assert view["groups"]["count"] == 3 * OPEN_GROUPS
    assert len(view["rewards"]) == len(view["by_error"]) == len(view["flags"]) == MAX_KEYS
    assert view["by_error"]["other"] == 3 * OPEN_GROUPS - (MAX_KEYS - 1)
    assert len(orjson.dumps(summary.to_json())) < 2_000_000


@pytest.mark.parametrize(("line", "group"), [
    (b'{"verifier": "string", "group": "g1"}', "g1"),
    (b'{"verifier": "string"}', None),
    (b'{"group": 3}', None),
    (b"not json", None),
    (b"[1, 2]", None),
])  # fmt: skip
def test_group_of_an_item_line(line: bytes, group: str | None) -> None:
    assert group_of(line) == group


def test_zero_variance_means_what_score_groups_mean() -> None:
    """One definition: the summary's zero-variance count equals the number of groups
    `verifiers.groups.summarize_groups` marks ``zero_variance`` for the same results."""
    rng = random.Random(3)
    rows = [(f"g{i // 4}", rng.choice([0.0, 1.0, 1.0 + 1e-15]) if i % 9 else 0.5)
            for i in range(200)]  # fmt: skip
    summary = JobSummary()
    for group, reward in rows:
        summary.add(result(reward=reward), group)
    items = [Item(verifier="string", response="x", group=g) for g, _ in rows]
    scored = [Result(status=Status.OK, reward=r) for _, r in rows]
    want = sum(s.zero_variance for s in summarize_groups(items, scored).values())
    assert summary.view()["groups"]["zero_variance"] == want > 0
