"""docs/grafana-dashboard.json queries only metrics that /metrics exposes, except the ones
listed as pending (asked of service/, see docs/deployment.md, Observability)."""

from __future__ import annotations

import json
import re

from tests.deploy.conftest import ROOT

# Used by the dashboard and the queue-depth autoscaling, not yet exported by service/.
PENDING: set[str] = set()


def exported_metrics() -> set[str]:
    source = (ROOT / "service" / "metrics.py").read_text()
    return set(re.findall(r'"(referee_[a-z_]+)"', source))


def dashboard_metrics() -> set[str]:
    dashboard = json.loads((ROOT / "docs" / "grafana-dashboard.json").read_text())
    exprs = [t["expr"] for p in dashboard["panels"] for t in p.get("targets", [])]
    assert exprs
    names = {m for e in exprs for m in re.findall(r"\b(referee_[a-z_]+)\b", e)}
    return {re.sub(r"_(total|bucket|sum|count)$", "", name) for name in names}


def test_dashboard_uses_exported_or_pending_metrics_only() -> None:
    unknown = dashboard_metrics() - exported_metrics() - PENDING
    assert not unknown, f"not exported by service/metrics.py: {sorted(unknown)}"


def test_pending_metrics_are_still_pending() -> None:
    # When service/ exports one, drop it from PENDING so this list stays honest.
    assert not PENDING & exported_metrics()


def test_panels_have_unique_ids_and_a_datasource_variable() -> None:
    dashboard = json.loads((ROOT / "docs" / "grafana-dashboard.json").read_text())
    ids = [p["id"] for p in dashboard["panels"]]
    assert len(ids) == len(set(ids))
    variables = {v["name"] for v in dashboard["templating"]["list"]}
    assert {"datasource", "job", "verifier"} <= variables
