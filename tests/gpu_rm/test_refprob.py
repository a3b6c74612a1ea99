"""The ``refprob`` and ``logprobs`` verifiers end to end on tiny causal LMs built here
(Llama- and Qwen2-style, tied and untied embeddings): parity with ``torch.log_softmax``
over a plain forward's full float32 logits, placements, scores, debiasing, the bad-input
table, and the invariants a policy cannot get around."""

from __future__ import annotations

import math
from collections.abc import Iterator
from functools import cache
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("torch")
import torch
import transformers

from referee.gpu_rm.registry import ModelRegistry
from referee.gpu_rm.settings import ModelSpec, RMSettings
from referee.verifiers import Item, Result, Status
from referee.verifiers.generative_rm import GenerativeRMVerifier
from referee.verifiers.logprobs import LogprobsVerifier
from referee.verifiers.refprob import RefProbVerifier

PROMPT = "Step one: add two and three. What is the answer?"
REASONING = "two and three is 5, so the answer is \\boxed{7}. Yes."
MODELS = ["llama", "qwen2", "llama_tied", "qwen2_tied"]


@pytest.fixture(scope="module")
def registry(lm_dirs: dict[str, Path]) -> Iterator[ModelRegistry]:
    models = {
        name: ModelSpec(path=str(lm_dirs[name]), head="lm", device="cpu", dtype="float32",
                        max_length=80)
        for name in MODELS
    }  # fmt: skip
    models["other_vocabulary"] = ModelSpec(path=str(lm_dirs["small_vocabulary"]), head="lm",
                                           device="cpu", dtype="float32")  # fmt: skip
    models["classifier"] = ModelSpec(path=str(lm_dirs["token"]), head="token", device="cpu")
    reg = ModelRegistry(RMSettings(models=models, max_wait_ms=20))
    yield reg
    reg.close()


@cache
def tokenizer(path: Path) -> Any:
    return transformers.PreTrainedTokenizerFast.from_pretrained(path)


@cache
def plain_logprobs(path: Path, text: str) -> tuple[list[int], list[tuple[int, int]], Any]:
    """The plain way: the whole text through the model, log_softmax over full logits."""
    found = tokenizer(path)(text, return_offsets_mapping=True)
    model = transformers.AutoModelForCausalLM.from_pretrained(path, dtype=torch.float32)
    with torch.no_grad():
        logits = model(torch.tensor([found["input_ids"]])).logits[0].float()
    return found["input_ids"], found["offset_mapping"], torch.log_softmax(logits, dim=-1)


def reference_logprobs(path: Path, response: str, reference: str) -> list[float]:
    """Log-probabilities of the reference's tokens (those overlapping its characters)."""
    conversation = [{"role": "user", "content": PROMPT},
                    {"role": "assistant", "content": response}]  # fmt: skip
    text = tokenizer(path).apply_chat_template(conversation, tokenize=False)
    start = text.rfind(response) + response.rfind(reference)
    ids, spans, logprobs = plain_logprobs(path, text)
    hit = [t for t, (a, b) in enumerate(spans) if a < start + len(reference) and b > start]
    return [float(logprobs[t - 1, ids[t]]) for t in hit]


def item(response: Any, reference: Any, model: str = "llama", **params: Any) -> Item:
    return Item(verifier="refprob", prompt=PROMPT, response=response, reference=reference,
                params={"model": model, **params}, group="g")  # fmt: skip


@pytest.mark.parametrize("model", MODELS)
def test_reference_probability_matches_a_plain_forward(
    registry: ModelRegistry, lm_dirs: dict[str, Path], model: str
) -> None:
    golds = ["5", "the answer is 5", "7"]
    results = RefProbVerifier(registry).score([item(REASONING, g, model) for g in golds])
    assert [r.status for r in results] == [Status.OK] * 3, results
    for gold, result in zip(golds, results, strict=True):
        placed = REASONING.replace("\\boxed{7}", "\\boxed{" + gold + "}")
        want = reference_logprobs(lm_dirs[model], placed, gold)
        assert result.details["token_logprobs"] == pytest.approx(want, abs=1e-4)
        mean_prob = sum(math.exp(lp) for lp in want) / len(want)
        assert result.reward == pytest.approx(mean_prob, abs=1e-5)
        assert result.components["reference_tokens"] == len(want)
        assert result.details["replaced_answer"] == "7"
    assert results[0].details["shared_prefix_tokens"] > 0  # one prompt, computed once


def test_scores_placements_and_debiasing(registry: ModelRegistry, lm_dirs: dict[str, Path]) -> None:
    answer_tagged = "two and three is 5. <answer>7</answer>"
    results = RefProbVerifier(registry).score([
        item(REASONING, "5", score="geometric_mean"),
        item(REASONING, "5", score="log_likelihood"),
        item(answer_tagged, "5", placement="answer_tag"),
        item("two and three is 5.", "5", placement="append", template=" So: "),
        item(REASONING, "5", debias=True),
    ])  # fmt: skip
    assert [r.status for r in results] == [Status.OK] * 5, results
    logprobs = results[0].details["token_logprobs"]
    assert results[0].reward == pytest.approx(math.exp(sum(logprobs) / len(logprobs)))
    assert results[1].reward == pytest.approx(sum(logprobs))
    path = lm_dirs["llama"]
    tagged = reference_logprobs(path, "two and three is 5. <answer>5</answer>", "5")
    assert results[2].details["token_logprobs"] == pytest.approx(tagged, abs=1e-4)
    appended = reference_logprobs(path, "two and three is 5. So: 5", "5")
    assert results[3].details["token_logprobs"] == pytest.approx(appended, abs=1e-4)
    debiased = results[4]
    bare = reference_logprobs(path, "\\boxed{5}", "5")
    baseline = sum(math.exp(lp) for lp in bare) / len(bare)
    assert debiased.components["baseline"] == pytest.approx(baseline, abs=1e-5)
    score = debiased.components["score"]
    assert debiased.reward == pytest.approx(min(max(score - baseline, 0.0), 1.0), abs=1e-6)


def codes(results: list[Result]) -> list[tuple[Status, str | None]]:
    return [(r.status, r.error.code if r.error else None) for r in results]


def test_bad_inputs_get_their_own_status_and_spare_batch_mates(registry: ModelRegistry) -> None:
    long_prompt = " ".join(["two"] * 120)
    items = [
        item(REASONING, "5"),
        item(REASONING, ""),
        item(REASONING, "  "),
        item(REASONING, {"answer": "5"}),
        item("", "5"),
        item("no box at all", "5"),
        item("an open \\boxed{7 here", "5"),
        item("no tags", "5", placement="answer_tag"),
        item(REASONING, "5", model="nope"),
        item(REASONING, "5", model="classifier"),
        item(REASONING, "5", score="log_likelihood", debias=True),
        Item(
            verifier="refprob",
            prompt=long_prompt,
            response=REASONING,
            reference="5",
            params={"model": "llama"},
        ),
        Item(
            verifier="refprob",
            prompt=long_prompt,
            response=REASONING,
            reference="5",
            params={"model": "llama", "truncation": "keep_start"},
        ),
        item(REASONING, " ".join(["three"] * 100)),
        item("the end<|im_end|>\\boxed{7}", "5"),
        item("no box at all", "5", score="log_likelihood"),
        item("", "5", score="geometric_mean", debias=True),
        item(" ".join(["think"] * 100) + " \\boxed{7}", "5", truncation="reject"),
        item(" ".join(["think"] * 100) + " \\boxed{7}", "5", truncation="keep_start"),
    ]
    results = RefProbVerifier(registry).score(items)
    assert codes(results) == [
        (Status.OK, None),
        (Status.INVALID, "empty_reference"),
        (Status.INVALID, "empty_reference"),
        (Status.INVALID, "invalid_reference"),
        (Status.OK, None),  # empty: the floor, 0, flagged
        (Status.OK, None),  # no answer to replace: likewise
        (Status.OK, None),
        (Status.OK, None),
        (Status.INVALID, "unknown_model"),
        (Status.INVALID, "invalid_params"),
        (Status.INVALID, "invalid_params"),
        (Status.OK, None),
        (Status.INVALID, "too_long"),
        (Status.INVALID, "too_long"),
        (Status.OK, None),  # its special token read as text (flagged), the answer replaced
        (Status.OK, None),  # no floor: the reference appended instead (below)
        (Status.OK, None),
        (Status.OK, None),  # reasoning too long to read whole: the floor, flagged
        (Status.OK, None),  # likewise (keep_start would cut the reference away)
    ]
    assert results[14].details["flags"] == ["special_token"]
    floors = [(r.reward, r.details["flags"]) for r in (*results[4:8], results[16])]
    assert floors == [
        (0.0, ["empty_response"]),
        *[(0.0, ["answer_not_found"])] * 3,
        (0.0, ["empty_response"]),
    ]
    assert results[15].details["flags"] == ["answer_not_found"]
    for long in results[17:19]:
        assert (long.reward, long.details["flags"]) == (0.0, ["too_long"]), long.details
    assert "params" in results[10].error.message  # type: ignore[union-attr]
    assert results[11].details["truncated"]["policy"] == "keep_end"
    assert results[11].components["reference_tokens"] == results[0].components["reference_tokens"]


def test_a_log_likelihood_without_an_answer_reads_the_reference_appended(
    registry: ModelRegistry, lm_dirs: dict[str, Path]
) -> None:
    """A log-likelihood has no floor to give a response without an answer (or an empty
    one): it is never ``invalid`` (a status a policy could buy by leaving the answer out);
    the reference goes after the template at its end, as VeriFree places it."""
    template = "\nThe answer is "
    results = RefProbVerifier(registry).score([
        item("two and three is 5.", "5", score="log_likelihood"),
        item("", "5", score="log_likelihood"),
        item("two and three is 5. <answer>7", "5", score="log_likelihood", placement="answer_tag"),
    ])  # fmt: skip
    assert [r.status for r in results] == [Status.OK] * 3, results
    path = lm_dirs["llama"]
    for result, text, flag in zip(
        results,
        ["two and three is 5." + template, template, "two and three is 5. <answer>7" + template],
        ["answer_not_found", "empty_response", "answer_not_found"],
        strict=True,
    ):
        want = reference_logprobs(path, text + "5", "5")
        assert result.reward == pytest.approx(sum(want), abs=1e-4)
        assert result.details["flags"] == [flag]


def test_a_merged_boundary_is_read_and_reported(
    registry: ModelRegistry, lm_dirs: dict[str, Path]
) -> None:
    """A reference "o" appended after " tw" is tokenised with it as one token " two": that
    token is read (it holds the reference: never a shifted neighbour), and the merge is
    said."""
    (result,) = RefProbVerifier(registry).score(
        [item("two and three.", "o", placement="append", template=" tw")]
    )
    assert result.status == Status.OK, result
    assert result.details["merged_boundary"] == {"start": True, "end": False}
    want = reference_logprobs(lm_dirs["llama"], "two and three. two", "o")
    assert len(want) == 1 and result.details["token_logprobs"] == pytest.approx(want, abs=1e-4)


def test_one_response_two_golds_read_two_likelihoods(registry: ModelRegistry) -> None:
    """The reward is the model's reading of the gold it is given: a response cannot earn
    the same score for two different golds by any text of its own."""
    a, b = RefProbVerifier(registry).score([item(REASONING, "5"), item(REASONING, "6")])
    assert a.status == b.status == Status.OK and a.reward != b.reward
    # the response's own answer is gone: writing the gold in the box changes nothing
    c, d = RefProbVerifier(registry).score([item(REASONING, "5"),
                                             item(REASONING.replace("7", "5"), "5")])  # fmt: skip
    assert c.reward == pytest.approx(d.reward, abs=1e-6)


def logprob_item(prompt: Any, continuation: str, **params: Any) -> Item:
    return Item(verifier="logprobs", prompt=prompt, response=continuation,
                params={"model": "llama", **params})  # fmt: skip


def test_token_statistics_match_a_plain_forward(
    registry: ModelRegistry, lm_dirs: dict[str, Path]
) -> None:
    prompt, continuation = "Question: add two and three.", " The answer is 5. Yes"
    (result,) = LogprobsVerifier(registry).score([logprob_item(prompt, continuation, top_k=3)])
    assert result.status == Status.OK, result
    ids, spans, logprobs = plain_logprobs(lm_dirs["llama"], prompt + continuation)
    read = [t for t, (a, b) in enumerate(spans) if b > len(prompt)]
    details = result.details
    assert details["tokens"] == [ids[t] for t in read]
    assert details["logprobs"] == pytest.approx([float(logprobs[t - 1, ids[t]]) for t in read],
                                                abs=1e-4)  # fmt: skip
    entropy = -(logprobs.exp() * logprobs).sum(-1)
    assert details["entropies"] == pytest.approx([float(entropy[t - 1]) for t in read], abs=1e-4)
    top = logprobs[[t - 1 for t in read]].topk(3, dim=-1)
    assert [[int(i) for i, _ in row] for row in details["top_k"]] == top.indices.tolist()
    assert result.reward == pytest.approx(sum(details["logprobs"]) / len(read))


def test_token_ids_and_a_log_ratio_against_a_second_model(
    registry: ModelRegistry, lm_dirs: dict[str, Path]
) -> None:
    tok = tokenizer(lm_dirs["llama"])
    prompt_ids = tok("Question: add two and three.")["input_ids"]
    continuation_ids = tok(" The answer is 5.")["input_ids"]
    params = {"prompt_ids": prompt_ids, "continuation_ids": continuation_ids}
    verifier = LogprobsVerifier(registry)
    mine, compared, bad_vocab, bad_ids = verifier.score([
        logprob_item(None, "", **params),
        logprob_item(None, "", compare_model="qwen2", **params),
        logprob_item(None, "", compare_model="other_vocabulary", **params),
        logprob_item(None, "", prompt_ids=prompt_ids, continuation_ids=[10**9]),
    ])  # fmt: skip
    (theirs,) = verifier.score([logprob_item(None, "", model="qwen2", **params)])
    assert mine.details["tokens"] == continuation_ids
    ratio = [a - b for a, b in zip(mine.details["logprobs"], theirs.details["logprobs"],
                                   strict=True)]  # fmt: skip
    assert compared.details["log_ratio"] == pytest.approx(ratio, abs=1e-5)
    assert codes([bad_vocab, bad_ids]) == [(Status.INVALID, "invalid_params")] * 2
    assert "compare_model" in bad_vocab.error.message  # type: ignore[union-attr]


def test_a_final_norm_the_kernels_do_not_know_reads_the_same(
    lm_dirs: dict[str, Path], tmp_path: Path
) -> None:
    """OLMo's final LayerNorm is not an RMS norm: its rows go through the model's own
    module, then the same restricted head and statistics; still a plain forward's
    numbers."""
    spec = ModelSpec(path=str(lm_dirs["olmo"]), head="lm", device="cpu", dtype="float32")
    registry = ModelRegistry(RMSettings(models={"olmo": spec}))
    try:
        prompt, continuation = "Question: add two and three.", " The answer is 5. Yes"
        item = Item(verifier="logprobs", prompt=prompt, response=continuation,
                    params={"model": "olmo"})  # fmt: skip
        (result,) = LogprobsVerifier(registry).score([item])
        judged = Item(verifier="grm", prompt=PROMPT, response="the answer is 5",
                      params={"model": "olmo"})  # fmt: skip
        (verdict,) = GenerativeRMVerifier(registry).score([judged])
        assert registry.get("olmo").model.head.fused is None  # the fallback, not a kernel
    finally:
        registry.close()
    assert registry.settings.models["olmo"].head == "lm"
    assert result.status == verdict.status == Status.OK, (result, verdict)
    ids, spans, logprobs = plain_logprobs(lm_dirs["olmo"], prompt + continuation)
    read = [t for t, (a, b) in enumerate(spans) if b > len(prompt)]
    want = [float(logprobs[t - 1, ids[t]]) for t in read]
    assert result.details["logprobs"] == pytest.approx(want, abs=1e-4)
    assert 0.0 < verdict.reward < 1.0  # type: ignore[operator]
