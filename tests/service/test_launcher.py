"""The ``referee`` entry point starts the pools' fork server first exactly for the
commands that will run pools (a wrong guess costs time, or an idle fork server)."""

from __future__ import annotations

import pytest

from referee.service.launcher import runs_pools

BROKER = "redis://127.0.0.1:9/0"

CASES = [
    # (args, broker set, runs pools)
    (["score", "items.jsonl"], False, True),
    (["score", "items.jsonl", "-o", "out.jsonl", "--resume"], True, True),
    (["score", "items.jsonl", "--server", "http://h:8000"], False, False),
    (["score", "items.jsonl", "--server=http://h:8000"], False, False),
    (["serve", "--port", "8000"], False, True),
    (["serve"], True, False),  # the gateway of a cluster: its workers score
    (["worker"], True, True),  # --pool cpu by default
    (["worker", "--pool", "sandbox"], True, True),
    (["worker", "--pool=io"], True, False),
    (["worker", "--pool", "gpu"], True, False),
    (["worker"], False, False),  # refused: nothing to consume from
    (["doctor"], False, False),
    (["list-verifiers"], False, False),
    (["--help"], False, False),
    ([], False, False),
]


@pytest.mark.parametrize(("args", "broker", "pooled"), CASES, ids=[" ".join(c[0]) for c in CASES])
def test_the_fork_server_starts_first_for_pooled_commands(
    monkeypatch: pytest.MonkeyPatch, args: list[str], broker: bool, pooled: bool
) -> None:
    if broker:
        monkeypatch.setenv("REFEREE_BROKER_URL", BROKER)
    else:
        monkeypatch.delenv("REFEREE_BROKER_URL", raising=False)
    assert runs_pools(args) is pooled


def test_settings_the_command_will_refuse_start_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("REFEREE_CPU_WORKERS", "many")
    assert runs_pools(["serve"]) is False
