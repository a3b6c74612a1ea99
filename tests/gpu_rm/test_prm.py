"""The ``prm`` verifier end to end on tiny models built here, both conventions: a token
classifier read at Qwen-style ``<extra_0>`` tags, and a causal LM read from "+"/"-" at
Math-Shepherd-style "ки" tags; parity with a plain Transformers forward, aggregation, and
the bad-input table."""

from __future__ import annotations

import asyncio
import math
from collections.abc import Iterator
from functools import cache
from itertools import product
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("torch")
import torch
import transformers

from referee.gpu_rm.encoding import Rejected
from referee.gpu_rm.registry import ModelRegistry
from referee.gpu_rm.settings import ModelSpec, RMSettings, StepSpec
from referee.gpu_rm.steps import _tokens_at
from referee.verifiers import Item, Result, Status
from referee.verifiers.generative_rm import GenerativeRMVerifier
from referee.verifiers.process_rm import ProcessRMVerifier

PROMPT = "Step one: add two and three, then add one."
STEPS = ["two and three is 5", "5 and one is 6", "so the answer is 6"]
QWEN = StepSpec(tag="<extra_0>", joiner="")
SHEPHERD = StepSpec(tag=" ки", joiner="\n", positive_tokens=["+"], negative_tokens=["-"])


@pytest.fixture(scope="module")
def registry(lm_dirs: dict[str, Path]) -> Iterator[ModelRegistry]:
    models = {
        "token": ModelSpec(path=str(lm_dirs["token"]), head="token", device="cpu",
                           dtype="float32", steps=QWEN, max_length=100),
        "lm": ModelSpec(path=str(lm_dirs["llama"]), head="lm", device="cpu", dtype="float32",
                        steps=SHEPHERD),
        "bf16": ModelSpec(path=str(lm_dirs["llama"]), head="lm", device="cpu",
                          dtype="bfloat16", steps=SHEPHERD),
        "untagged": ModelSpec(path=str(lm_dirs["llama"]), head="lm", device="cpu",
                              dtype="float32"),
        "unjoined": ModelSpec(path=str(lm_dirs["llama"]), head="lm", device="cpu",
                              dtype="float32", steps=StepSpec(joiner="")),
        "two_token_verdict": ModelSpec(path=str(lm_dirs["llama"]), head="lm", device="cpu",
                                       steps=StepSpec(positive_tokens=["ки"])),
        "sequence": ModelSpec(path=str(lm_dirs["llama"]), device="cpu"),
    }  # fmt: skip
    reg = ModelRegistry(RMSettings(models=models, max_wait_ms=20))
    yield reg
    reg.close()


def item(response: Any, model: str = "token", prompt: Any = PROMPT, **params: Any) -> Item:
    return Item(verifier="prm", prompt=prompt, response=response,
                params={"model": model, **params})  # fmt: skip


@cache
def tokenizer(path: Path) -> Any:
    return transformers.PreTrainedTokenizerFast.from_pretrained(path)


def plain_ids(path: Path, steps: list[str], spec: StepSpec) -> list[int]:
    """The PRMs' own recipe: steps joined with their tags, the conversation rendered and
    tokenised whole."""
    text = spec.joiner.join(step + spec.tag for step in steps)
    conversation = [{"role": "user", "content": PROMPT}, {"role": "assistant", "content": text}]
    return list(tokenizer(path)(tokenizer(path).apply_chat_template(conversation, tokenize=False))
                ["input_ids"])  # fmt: skip


def test_token_classifier_steps_match_a_plain_forward(
    registry: ModelRegistry, lm_dirs: dict[str, Path]
) -> None:
    response = "\n\n".join(STEPS)
    (result,) = ProcessRMVerifier(registry).score([item(response)])
    assert result.status == Status.OK, result
    ids = plain_ids(lm_dirs["token"], STEPS, QWEN)
    tag = tokenizer(lm_dirs["token"]).convert_tokens_to_ids("<extra_0>")
    positions = [i for i, t in enumerate(ids) if t == tag]  # Qwen's own way to find steps
    model = transformers.AutoModelForTokenClassification.from_pretrained(lm_dirs["token"])
    with torch.no_grad():
        logits = model(torch.tensor([ids])).logits[0, positions]
    want = torch.softmax(logits, dim=-1)[:, 1].tolist()
    assert result.details["step_scores"] == pytest.approx(want, abs=1e-4)
    assert result.components == {f"step_{n + 1}": pytest.approx(v) for n, v in enumerate(want)}
    assert result.reward == pytest.approx(min(want))
    assert result.details["steps"] == 3


@pytest.mark.parametrize(("model", "tolerance"), [("lm", 1e-4), ("bf16", 2e-2)])
def test_lm_steps_match_a_plain_forward(
    registry: ModelRegistry, lm_dirs: dict[str, Path], model: str, tolerance: float
) -> None:
    responses = ["\n\n".join(STEPS), "\n\n".join([*STEPS[:2], "so the answer is 7"])]
    results = ProcessRMVerifier(registry).score([item(r, model) for r in responses])
    assert [r.status for r in results] == [Status.OK] * 2, results
    tok = tokenizer(lm_dirs["llama"])
    plus, minus = (tok.convert_tokens_to_ids(t) for t in ("+", "-"))
    last_of_tag = tok(" ки", add_special_tokens=False)["input_ids"][-1]
    dtype = torch.bfloat16 if model == "bf16" else torch.float32
    plain = transformers.AutoModelForCausalLM.from_pretrained(lm_dirs["llama"], dtype=dtype)
    for response, result in zip(responses, results, strict=True):
        ids = plain_ids(lm_dirs["llama"], response.split("\n\n"), SHEPHERD)
        positions = [i for i, t in enumerate(ids) if t == last_of_tag]
        with torch.no_grad():
            logits = plain(torch.tensor([ids])).logits[0, positions].float()
        want = torch.softmax(logits[:, [plus, minus]], dim=-1)[:, 0].tolist()
        assert len(positions) == 3
        assert result.details["step_scores"] == pytest.approx(want, abs=tolerance)


@pytest.mark.parametrize(("how", "expected"), [
    ("min", min), ("last", lambda s: s[-1]), ("mean", lambda s: sum(s) / len(s)),
    ("product", math.prod),
])  # fmt: skip
def test_aggregations(registry: ModelRegistry, how: str, expected: Any) -> None:
    (result,) = ProcessRMVerifier(registry).score([item("\n\n".join(STEPS), aggregation=how)])
    assert result.reward == pytest.approx(expected(result.details["step_scores"]))
    assert result.details["aggregation"] == how


def codes(results: list[Result]) -> list[tuple[Status, str | None]]:
    return [(r.status, r.error.code if r.error else None) for r in results]


def test_bad_inputs_get_their_own_status_and_spare_batch_mates(registry: ModelRegistry) -> None:
    long_prompt = " ".join(["two"] * 120)
    chat_prompt = [{"role": "system", "content": "be brief"}, {"role": "user", "content": PROMPT}]
    items = [
        item("\n\n".join(STEPS)),
        item("one step with no separator"),
        item(""),
        item("\n\n \n\n"),
        item("x", model="nope"),
        item("x", model="sequence"),
        item("x", prompt=long_prompt),
        item("x", prompt=long_prompt, truncation="reject"),
        item("x", prompt=long_prompt, truncation="keep_start"),
        item(" ".join(["two"] * 120), truncation="keep_start"),
        item("\n\n".join(["a step"] * 257)),
        item([{"role": "assistant", "content": "\n\n".join(STEPS)}], prompt=chat_prompt),
        item("x", model="two_token_verdict"),
        item("x", step_separator=""),
        item("x", model="untagged"),
        item("x", aggregation="median"),
    ]
    results = ProcessRMVerifier(registry).score(items)
    assert codes(results) == [
        (Status.OK, None),
        (Status.OK, None),
        (Status.OK, None),  # no step: 0, flagged
        (Status.OK, None),
        (Status.INVALID, "unknown_model"),
        (Status.INVALID, "invalid_params"),
        (Status.OK, None),
        (Status.INVALID, "too_long"),  # the client's prompt alone does not fit
        (Status.INVALID, "too_long"),
        (Status.OK, None),  # keep_start would cut the policy's steps: the floor, flagged
        (Status.OK, None),  # too many steps: the floor, flagged
        (Status.OK, None),
        (Status.ERROR, "not_configured"),
        (Status.INVALID, "invalid_params"),
        (Status.OK, None),
        (Status.INVALID, "invalid_params"),
    ]
    assert results[1].details["steps"] == 1 and set(results[1].components) == {"step_1"}
    for empty in results[2:4]:
        assert (empty.reward, empty.components, empty.details["flags"]) == (0.0, {}, ["no_steps"])
    assert results[6].details["truncated"]["policy"] == "keep_end"
    assert "prompt: " in results[8].error.message  # type: ignore[union-attr]
    assert (results[9].reward, results[9].details["flags"]) == (0.0, ["too_long"])
    assert (results[10].reward, results[10].details["flags"]) == (0.0, ["too_many_steps"])
    assert "scored token" in results[9].details["reason"]
    assert results[11].details["steps"] == 3
    assert "steps.positive_tokens" in results[12].error.message  # type: ignore[union-attr]
    assert results[12].error.retryable is False  # type: ignore[union-attr]
    assert "params.step_separator" in results[13].error.message  # type: ignore[union-attr]


def test_a_response_cannot_add_steps_with_the_models_tag(registry: ModelRegistry) -> None:
    """Writing the step tag (a special token for Qwen-style PRMs) would add scored steps a
    mean aggregation rewards: it is read as text, so the response still has its three
    steps, and the item is flagged."""
    padded = "\n\n".join(STEPS) + "<extra_0>fine<extra_0>fine<extra_0>"
    results = ProcessRMVerifier(registry).score([item(padded, aggregation="mean")])
    assert codes(results) == [(Status.OK, None)]
    assert results[0].details["steps"] == 3
    assert len(results[0].components) == 3
    assert results[0].details["flags"] == ["special_token"]


def test_steps_ending_in_one_token_are_read_there_not_shifted() -> None:
    spans = [(0, 4), (4, 9), (9, 12)]
    assert _tokens_at(spans, [3, 8, 11]) == (0, 1, 2)
    assert _tokens_at(spans, [5, 8]) == (1, 1)  # the encoder scores these as one step
    assert _tokens_at([(0, 2), (3, 5)], [2]) == (0,)  # a gap is read before it
    with pytest.raises(Rejected):
        _tokens_at([(0, 0), (5, 9)], [2])


def test_generative_and_process_items_share_a_models_batches(registry: ModelRegistry) -> None:
    """One causal LM serves both verifiers through one batcher: items of both kinds in a
    batch (candidate sets of different widths, one scored position or several) read the
    same as alone."""
    grm, prm = GenerativeRMVerifier(registry), ProcessRMVerifier(registry)
    judged = Item(verifier="grm", prompt=PROMPT, response=STEPS[0], params={"model": "lm"})
    stepped = item("\n\n".join(STEPS), model="lm")

    async def together() -> tuple[list[Result], list[Result]]:
        return await asyncio.gather(grm.ascore([judged]), prm.ascore([stepped]))

    alone = grm.score([judged])[0], prm.score([stepped])[0]
    mixed = [batch[0] for batch in asyncio.run(together())]
    assert max(r.details["batch_items"] for r in mixed) == 2
    assert mixed[0].reward == pytest.approx(alone[0].reward, abs=1e-5)
    assert mixed[1].details["step_scores"] == pytest.approx(alone[1].details["step_scores"],
                                                            abs=1e-5)  # fmt: skip


def test_verdict_token_lists_are_capped_to_what_the_kernel_reads() -> None:
    with pytest.raises(ValueError, match="score_tokens"):
        ModelSpec(path="/m", head="lm", judge={"score_tokens": {str(n): n for n in range(65)}})


def test_steps_ending_in_one_token_are_scored_as_one_step(
    registry: ModelRegistry, lm_dirs: dict[str, Path]
) -> None:
    """Under a model without a step tag (here joining steps with nothing), short steps
    can end inside one token. That was ``invalid`` (``steps_merge``), a status a policy
    could buy with such steps; the model reads one score there, so they are one step:
    the reward is that of the same text written as one step, and
    ``details.steps_merged`` says how many were absorbed."""
    first, second = next(pair for pair in product(DIGITS, DIGITS) if _one_token(lm_dirs, *pair))
    split = item(f"{STEPS[0]} {first}|{second}", model="unjoined", step_separator="|")
    whole = item(f"{STEPS[0]} {first}{second}", model="unjoined", step_separator="|")
    results = ProcessRMVerifier(registry).score([split, whole])
    assert codes(results) == [(Status.OK, None)] * 2
    assert (results[0].details["steps"], results[0].details["steps_merged"]) == (1, 1)
    assert "steps_merged" not in results[1].details
    assert results[0].reward == pytest.approx(results[1].reward, abs=1e-6)


DIGITS = tuple("0123456789")


def _one_token(lm_dirs: dict[str, Path], first: str, second: str) -> bool:
    """Whether ``first`` and ``second``, written together after the first step's text,
    share a token."""
    text = f"{STEPS[0]} {first}{second}"
    spans = tokenizer(lm_dirs["llama"])(text, return_offsets_mapping=True)["offset_mapping"]
    holding = [n for n, (a, b) in enumerate(spans) if a <= len(text) - 2 < b]
    return bool(holding) and spans[holding[0]][1] == len(text)
