"""The degenerate-response table through the model verifiers (``rm``, ``grm``, ``prm``,
``refprob``) with real tiny models: each item is scored (``ok``), never ``invalid`` or
``error``; each batch is one GRPO group, so one bad response cannot take its group-mates
down either.

Lone surrogates are the exception, on purpose: no tokenizer decodes a policy's tokens to
them and JSON cannot carry them, so only a library caller's string can hold them, and a
model verifier refuses to guess what it meant (``invalid: untokenizable``, checked here)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("torch")
pytest.importorskip("transformers")

from referee.gpu_rm.registry import ModelRegistry
from referee.gpu_rm.settings import ModelSpec, RMSettings, StepSpec
from referee.verifiers import Item, Status, Verifier
from referee.verifiers.generative_rm import GenerativeRMVerifier
from referee.verifiers.process_rm import ProcessRMVerifier
from referee.verifiers.refprob import RefProbVerifier
from referee.verifiers.reward_model import RewardModelVerifier
from tests.integrity.test_degenerate_responses import DEGENERATE


@pytest.fixture(scope="module")
def registry(model_dirs: dict[str, Path], lm_dirs: dict[str, Path]) -> Iterator[ModelRegistry]:
    lm = str(lm_dirs["llama"])
    models = {
        "rm": ModelSpec(path=str(model_dirs["llama"]), dtype="float32", device="cpu",
                        max_length=64),
        "lm": ModelSpec(path=lm, head="lm", dtype="float32", device="cpu", max_length=120,
                        steps=StepSpec(tag=" ки", joiner="\n", positive_tokens=["+"],
                                       negative_tokens=["-"])),
    }  # fmt: skip
    reg = ModelRegistry(RMSettings(models=models, max_wait_ms=20))
    yield reg
    reg.close()


CASES: dict[str, tuple[type[Any], str, Any]] = {
    # verifier class, model, reference
    "rm": (RewardModelVerifier, "rm", None),
    "grm": (GenerativeRMVerifier, "lm", None),
    "prm": (ProcessRMVerifier, "lm", None),
    "refprob": (RefProbVerifier, "lm", "7"),
}


@pytest.mark.parametrize("name", list(CASES))
def test_every_degenerate_response_is_scored(registry: ModelRegistry, name: str) -> None:
    cls, model, reference = CASES[name]
    verifier: Verifier = cls(registry)
    items = [
        Item(verifier=verifier.name, prompt="w1 w2", response=response, reference=reference,
             params={"model": model}, group="g")
        for response in DEGENERATE.values()
    ]  # fmt: skip
    results = dict(zip(DEGENERATE, verifier.score(items), strict=True))
    refused = results.pop("lone surrogates")
    assert refused.error is not None and refused.error.code == "untokenizable"
    wrong = {n: str(r.error) for n, r in results.items() if r.status is not Status.OK}
    assert not wrong
