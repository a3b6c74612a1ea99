"""Packed and shared-prompt scores against the plain padded Transformers forward.

Tiny Llama-like, Qwen-like and multi-objective models are built from configs in conftest;
the reference is the unmodified `*ForSequenceClassification` forward on right-padded
batches with an attention mask, exactly how a Transformers user would score them.
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("torch")
import torch

transformers = pytest.importorskip("transformers")

from referee.gpu_rm.encoding import Encoded, Rejected, Unearned  # noqa: E402
from referee.gpu_rm.errors import ModelMisconfigured, ModelUnavailable  # noqa: E402
from referee.gpu_rm.model import RewardModel  # noqa: E402
from referee.gpu_rm.packing import TokenSequence, pack  # noqa: E402
from referee.gpu_rm.settings import ModelSpec  # noqa: E402
from tests.gpu_rm.conftest import random_text  # noqa: E402


def load(path: Path, **spec: Any) -> RewardModel:
    return RewardModel.load(
        "tiny", ModelSpec(path=str(path), dtype="float32", device="cpu", **spec)
    )


def padded_reference(path: Path, sequences: list[list[int]]) -> torch.Tensor:
    model = transformers.AutoModelForSequenceClassification.from_pretrained(
        path, dtype=torch.float32, attn_implementation="eager"
    ).eval()
    width = max(len(s) for s in sequences)
    ids = torch.zeros(len(sequences), width, dtype=torch.long)  # pad id 0
    mask = torch.zeros_like(ids)
    for row, seq in enumerate(sequences):
        ids[row, : len(seq)] = torch.tensor(seq)
        mask[row, : len(seq)] = 1
    with torch.no_grad():
        logits: torch.Tensor = model(input_ids=ids, attention_mask=mask).logits
        return logits.to(torch.float32)


def grpo_items(model: RewardModel, seed: int) -> list[Encoded]:
    """Two groups of 3 responses sharing a prompt, plus one lone item."""
    rng = random.Random(seed)
    items = []
    for prompt_words in (rng.randint(20, 60), rng.randint(5, 30)):
        prompt = [{"role": "user", "content": random_text(rng, prompt_words)}]
        for _ in range(3):
            response = [{"role": "assistant", "content": random_text(rng, rng.randint(1, 25))}]
            items.append(model.encoder.encode(prompt, response, "keep_end"))
    lone = [{"role": "assistant", "content": random_text(rng, 12)}]
    items.append(model.encoder.encode([], lone, "keep_end"))
    return items


def assert_relative(got: torch.Tensor, want: torch.Tensor, note: str, rtol: float = 1e-4) -> None:
    # Relative to each score, but a score that happens to sit near 0 is compared at a tenth
    # of the typical magnitude: relative error is meaningless at 0.
    scale = want.abs().clamp_min(0.1 * want.abs().mean().item())
    worst = ((got - want).abs() / scale).max().item()
    assert worst <= rtol, f"relative error {worst:.2e} ({note})\n{got}\n{want}"


@pytest.mark.parametrize("attention", ["segments", "flex", "padded"])
@pytest.mark.parametrize("name", ["llama", "qwen", "multi"])
@pytest.mark.parametrize("share", [False, True])
def test_packed_scores_match_padded_forward(
    model_dirs: dict[str, Path], name: str, share: bool, attention: str
) -> None:
    model = load(model_dirs[name], attention=attention, row_bucket=64)
    assert model.mode == attention
    seed = random.randrange(1 << 30)  # fresh texts every run; the seed is in the message
    items = grpo_items(model, seed)
    layout = pack([TokenSequence(e.ids, e.share_key if share else None) for e in items])
    want = padded_reference(model_dirs[name], [e.ids for e in items])
    got = model.score_tensor(layout)
    assert got.shape == want.shape == (len(items), 3 if name == "multi" else 1)
    assert want.std() > 1e-3, "scores must differ between items for the test to mean much"
    assert_relative(got, want, f"seed {seed}")
    assert layout.computed_tokens == len(layout.input_ids)  # one row, every token real
    if share:  # each prompt computed once: the row is shorter than the sum of the items
        prompts = [u.prefix[1] - u.prefix[0] for u in layout.units if u.prefix[1] > u.prefix[0]]
        assert len(prompts) == 2
        assert layout.computed_tokens == layout.logical_tokens - 2 * sum(prompts)
    else:
        assert layout.computed_tokens == layout.logical_tokens


def test_multi_objective_labels_and_objective(model_dirs: dict[str, Path]) -> None:
    model = load(model_dirs["multi"], objective="objective_2", activation="sigmoid")
    reward, outputs = model.reward([0.5, -1.0, 2.0])
    assert list(outputs) == ["objective_0", "objective_1", "objective_2"]
    assert reward == pytest.approx(1 / (1 + torch.exp(torch.tensor(-2.0)).item()))
    with pytest.raises(ModelUnavailable, match="objective"):
        load(model_dirs["multi"], objective="helpfulness")


def test_chat_template_applied_and_duplicate_bos_stripped(model_dirs: dict[str, Path]) -> None:
    model = load(model_dirs["llama"])
    enc = model.encoder.encode(
        [{"role": "user", "content": "w1 w2"}], [{"role": "assistant", "content": "w3"}], "reject"
    )
    tok = transformers.PreTrainedTokenizerFast.from_pretrained(model_dirs["llama"])
    assert tok.convert_ids_to_tokens(enc.ids) == [
        "<s>", "user", ":", "w1", "w2", "</s>", "assistant", ":", "w3", "</s>",
    ]  # fmt: skip
    assert enc.details == {"tokens": 10}


@pytest.mark.parametrize(
    ("policy", "kept_tail"), [("keep_end", ["w9", "</s>"]), ("keep_start", ["w4", "w5"])]
)
def test_truncation_policy_is_reported(
    model_dirs: dict[str, Path], policy: str, kept_tail: list[str]
) -> None:
    model = load(model_dirs["llama"], max_length=8)
    prompt = [{"role": "user", "content": "w1 w2 w3 w4 w5"}]
    response = [{"role": "assistant", "content": "w6 w7 w8 w9"}]
    enc = model.encoder.encode(prompt, response, policy)  # type: ignore[arg-type]
    tok = transformers.PreTrainedTokenizerFast.from_pretrained(model_dirs["llama"])
    tokens = tok.convert_ids_to_tokens(enc.ids)
    assert len(tokens) == 8 and tokens[0] == "<s>" and tokens[-2:] == kept_tail
    assert enc.details["truncated"] == {"policy": policy, "dropped_tokens": 8}
    with pytest.raises(Rejected, match="prompt: 9 tokens, the model's max_length is 8"):
        model.encoder.encode(prompt, response, "reject")  # the client's prompt does not fit
    short = [{"role": "user", "content": "w1"}]
    with pytest.raises(Unearned, match="response: 12 tokens exceed the model's max_length 8"):
        model.encoder.encode(short, response, "reject")  # the policy's response does not


@pytest.mark.parametrize(
    ("prompt", "response", "code", "field"),
    [
        ("w1", "w2 \ud800", "untokenizable", "response"),
        ("w1 \udfff", "w2", "untokenizable", "prompt"),
    ],
)
def test_bad_text_is_rejected_naming_the_field(
    model_dirs: dict[str, Path], prompt: str, response: str, code: str, field: str
) -> None:
    model = load(model_dirs["qwen"])
    with pytest.raises(Rejected) as info:
        model.encoder.encode(
            [{"role": "user", "content": prompt}],
            [{"role": "assistant", "content": response}],
            "keep_end",
        )
    assert info.value.code == code and info.value.message.startswith(field)


def test_an_empty_response_is_an_empty_turn(model_dirs: dict[str, Path]) -> None:
    """A policy that answers nothing is scored on what the model then reads: the
    conversation with an empty assistant turn (never an item refused for its response)."""
    model = load(model_dirs["llama"])
    prompt = [{"role": "user", "content": "w1"}]
    enc = model.encoder.encode(prompt, [{"role": "assistant", "content": "   "}], "keep_end")
    tok = transformers.PreTrainedTokenizerFast.from_pretrained(model_dirs["llama"])
    rendered = tok.apply_chat_template(
        [*prompt, {"role": "assistant", "content": "   "}], tokenize=False
    )
    assert tok.convert_ids_to_tokens(enc.ids) == tok.tokenize(rendered)


def test_unknown_words_are_counted(model_dirs: dict[str, Path]) -> None:
    model = load(model_dirs["llama"])
    enc = model.encoder.encode([], [{"role": "assistant", "content": "w1 zebra"}], "keep_end")
    assert enc.details["unknown_tokens"] == 1


def test_missing_directory_is_misconfigured_with_reason(tmp_path: Path) -> None:
    with pytest.raises(ModelMisconfigured, match="is not a directory") as raised:
        load(tmp_path / "nope")
    assert raised.value.code == "not_configured"


def test_a_kernel_that_fails_to_compile_fails_the_load_not_the_items(
    model_dirs: dict[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Loading ends with a forward: a compile error is the model's load failure, with its
    reason in readiness, never a forward_failed on every item later."""
    from referee.gpu_rm import heads
    from referee.gpu_rm.registry import ModelRegistry
    from referee.gpu_rm.settings import RMSettings

    def broken(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("NameError: Cannot access global variable Any from within @jit")

    monkeypatch.setattr(heads, "score_last_tokens", broken)
    spec = ModelSpec(path=str(model_dirs["llama"]), dtype="float32", device="cpu")
    registry = ModelRegistry(RMSettings(models={"rm": spec}))
    with pytest.raises(ModelUnavailable, match=r"first forward failed.*Cannot access global"):
        registry.get("rm")
    report = registry.readiness()["rm"]
    assert report["state"] == "failed" and "Cannot access global" in report["reason"]
