"""The ``rm`` verifier end to end with a real tiny model, and without torch installed."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("torch")
pytest.importorskip("transformers")

from referee.gpu_rm.registry import ModelRegistry
from referee.gpu_rm.settings import ModelSpec, RMSettings
from referee.verifiers import Item, Status
from referee.verifiers.base import AsyncVerifier
from referee.verifiers.builtin import builtin_verifiers
from referee.verifiers.reward_model import RewardModelVerifier
from referee.verifiers.types import Pool

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def registry(model_dirs: dict[str, Path], tmp_path: Path) -> Iterator[ModelRegistry]:
    models = {
        "llama": ModelSpec(path=str(model_dirs["llama"]), dtype="float32", device="cpu",
                           max_length=64),
        "multi": ModelSpec(path=str(model_dirs["multi"]), dtype="float32", device="cpu",
                           activation="sigmoid", objective="objective_1"),
        "broken": ModelSpec(path=str(tmp_path / "missing"), dtype="float32", device="cpu"),
    }  # fmt: skip
    reg = ModelRegistry(RMSettings(models=models, max_wait_ms=50))
    yield reg
    reg.close()


def item(
    response: Any, model: str | None = "llama", prompt: str = "w1 w2 w3", **params: Any
) -> Item:
    if model is not None:
        params["model"] = model
    return Item(verifier="rm", prompt=prompt, response=response, params=params, group="g")


def test_group_scores_in_one_batch_with_the_prompt_shared(registry: ModelRegistry) -> None:
    verifier = RewardModelVerifier(registry)
    items = [item(f"w{i} w{i + 1}") for i in range(4)]
    results = verifier.score(items)
    assert [r.status for r in results] == [Status.OK] * 4, results
    assert len({r.reward for r in results}) == 4
    assert all(r.details["batch_items"] == 4 for r in results)
    assert all(r.details["shared_prefix_tokens"] > 0 for r in results)
    assert results[0].verifier == "rm@1"


def test_concurrent_requests_share_batches(registry: ModelRegistry) -> None:
    verifier = RewardModelVerifier(registry)

    async def run() -> list[list[Any]]:
        requests = [[item(f"w{i}", prompt=f"w{10 * r}")] for r in range(3) for i in range(2)]
        return list(await asyncio.gather(*(verifier.ascore(req) for req in requests)))

    results = [r for batch in asyncio.run(run()) for r in batch]
    assert all(r.status == Status.OK for r in results)
    assert max(r.details["batch_items"] for r in results) > 1


def test_multi_objective_components_and_activation(registry: ModelRegistry) -> None:
    (result,) = RewardModelVerifier(registry).score([item("w5 w6", model="multi")])
    assert result.status == Status.OK
    assert set(result.components) == {"objective_0", "objective_1", "objective_2"}
    assert 0.0 < result.reward < 1.0  # type: ignore[operator]
    logit = result.components["objective_1"]
    assert result.reward == pytest.approx(1.0 / (1.0 + 2.718281828459045 ** (-logit)))


def test_bad_items_get_their_own_status_and_spare_batch_mates(registry: ModelRegistry) -> None:
    items = [
        item("w1 w2"),
        item(""),
        item("w3 \ud800"),
        item("w4", model="nope"),
        item("w5", model="broken"),
        item("w6", model=None),
        item("w7", truncation="sideways"),
        item(" ".join(["w9"] * 100)),
        item(" ".join(["w9"] * 100), truncation="reject"),
        item(" ".join(["w9"] * 100), truncation="reject", floor=-5.0),
    ]
    results = RewardModelVerifier(registry).score(items)
    got = [(r.status, r.error.code if r.error else None) for r in results]
    assert got == [
        (Status.OK, None),
        (Status.OK, None),  # an empty response: the model scores its empty turn
        (Status.INVALID, "untokenizable"),
        (Status.INVALID, "unknown_model"),
        (Status.ERROR, "not_configured"),
        (Status.INVALID, "invalid_params"),
        (Status.INVALID, "invalid_params"),
        (Status.OK, None),
        (Status.INVALID, "too_long"),  # no floor: a raw score has none of its own
        (Status.OK, None),  # the client's floor, flagged
    ]
    assert (results[9].reward, results[9].details["flags"]) == (-5.0, ["too_long"])
    assert "params.model" in results[3].error.message  # type: ignore[union-attr]
    assert "missing is not a directory" in results[4].error.message  # type: ignore[union-attr]
    assert "REFEREE_RM_MODELS" in results[4].error.message  # type: ignore[union-attr]
    assert results[4].error.retryable is False  # type: ignore[union-attr]
    assert results[0].error is None and results[2].error.retryable is False  # type: ignore[union-attr]
    assert results[1].reward is not None and results[1].reward != results[0].reward
    assert results[4].reward is None
    assert results[7].details["truncated"] == {"policy": "keep_end", "dropped_tokens": 46}
    assert results[7].details["tokens"] == 64
    assert registry.readiness()["broken"]["state"] == "failed"


def test_overload_is_a_retryable_error(registry: ModelRegistry) -> None:
    registry.settings.max_queue_items = 1
    results = RewardModelVerifier(registry).score([item("w1"), item("w2")])
    assert [r.error.code for r in results if r.error] == ["overloaded", "overloaded"]
    assert all(r.status == Status.ERROR for r in results)
    assert all(r.error.retryable for r in results if r.error)


def test_a_path_without_a_model_is_not_configured_not_a_hub_lookup(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    models = {
        "hub_id": ModelSpec(path="some-org/some-rm", device="cpu"),
        "empty": ModelSpec(path=str(tmp_path / "empty"), device="cpu"),
    }
    reg = ModelRegistry(RMSettings(models=models))
    try:
        results = RewardModelVerifier(reg).score(
            [item("w1", model="hub_id"), item("w1", model="empty")]
        )
    finally:
        reg.close()
    assert [(r.status, r.error.code) for r in results if r.error] == [
        (Status.ERROR, "not_configured")
    ] * 2
    messages = [r.error.message for r in results if r.error]
    assert "local directories" in messages[0] and "huggingface" not in messages[0].lower()
    assert "no config.json" in messages[1]


def test_builtin_registry_serves_rm_and_reports_missing_torch() -> None:
    rm = next(v for v in builtin_verifiers() if v.name == "rm")
    assert isinstance(rm, AsyncVerifier) and rm.pool == Pool.GPU
    code = (  # a base install: importing torch or transformers fails as if absent
        "import sys\n"
        "class NoGpuExtra:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name.split('.')[0] in ('torch', 'transformers', 'triton'):\n"
        "            raise ModuleNotFoundError(f'No module named {name!r}')\n"
        "sys.meta_path.insert(0, NoGpuExtra())\n"
        "from referee.verifiers.builtin import builtin_verifiers\n"
        "from referee.verifiers import Item\n"
        "rm = next(v for v in builtin_verifiers() if v.name == 'rm')\n"
        "r = rm.score([Item(verifier='rm', response='x')])[0]\n"
        "print(r.status.value, r.error.code, r.error.message)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        check=False,
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("error not_configured")
    assert "'gpu' extra" in out.stdout


def test_a_failed_load_is_raised_fresh_each_time(tmp_path: Path) -> None:
    """The stored failure is never re-raised as the same object, whose traceback would
    grow with every request for the broken model."""
    from referee.gpu_rm.errors import ModelMisconfigured

    reg = ModelRegistry(RMSettings(models={"gone": ModelSpec(path=str(tmp_path / "x"))}))
    raised = []
    for _ in range(2):
        with pytest.raises(ModelMisconfigured) as caught:
            reg.get("gone")
        raised.append(caught.value)
    assert raised[0] is not raised[1] and raised[0].message == raised[1].message
