"""The degenerate-response table through the ``rm`` verifier with a real tiny model: each
item is scored (``ok``), never ``invalid`` or ``error``; the batch is one GRPO group, so
one bad response cannot take its group-mates down either.

Lone surrogates are the exception, on purpose: no tokenizer decodes a policy's tokens to
them and JSON cannot carry them, so only a library caller's string can hold them, and a
model verifier refuses to guess what it meant (``invalid: untokenizable``, checked here)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

pytest.importorskip("torch")
pytest.importorskip("transformers")

from referee.gpu_rm.registry import ModelRegistry
from referee.gpu_rm.settings import ModelSpec, RMSettings
from referee.verifiers import Item, Status
from referee.verifiers.reward_model import RewardModelVerifier
from tests.integrity.test_degenerate_responses import DEGENERATE


@pytest.fixture
def registry(model_dirs: dict[str, Path]) -> Iterator[ModelRegistry]:
    spec = ModelSpec(path=str(model_dirs["llama"]), dtype="float32", device="cpu", max_length=64)
    reg = ModelRegistry(RMSettings(models={"llama": spec}, max_wait_ms=20))
    yield reg
    reg.close()


def test_every_degenerate_response_is_scored(registry: ModelRegistry) -> None:
    items = [
        Item(verifier="rm", prompt="w1 w2", response=response, params={"model": "llama"},
             group="g")
        for response in DEGENERATE.values()
    ]  # fmt: skip
    results = dict(zip(DEGENERATE, RewardModelVerifier(registry).score(items), strict=True))
    refused = results.pop("lone surrogates")
    assert refused.error is not None and refused.error.code == "untokenizable"
    wrong = {
        n: f"{r.status.value} {r.error}" for n, r in results.items() if r.status is not Status.OK
    }
    assert not wrong
