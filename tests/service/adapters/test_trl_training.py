"""A real TRL GRPO run with referee as the reward: what TRL logged is what referee returned.

A tiny Qwen2 model and a character tokenizer are built here from configs (nothing is
downloaded); prompts are sums, and a completion is rewarded when it contains the answer
(``string`` verifier, ``contains``) through an embedded ``referee serve`` on loopback.
"""

from __future__ import annotations

import asyncio
import statistics
from pathlib import Path
from typing import Any

import pytest

from referee.service.adapters.mapping import ItemMapping
from referee.service.adapters.trl import reward_funcs
from referee.service.client import Client

pytestmark = [pytest.mark.integration, pytest.mark.slow]

torch = pytest.importorskip("torch")
trl = pytest.importorskip("trl")
datasets = pytest.importorskip("datasets")
transformers = pytest.importorskip("transformers")
tokenizers = pytest.importorskip("tokenizers")

CHARS = list("0123456789+=? ")
MAPPING = ItemMapping(verifier="string", params={"op": "contains"}, reference_column="answer")


def tokenizer() -> Any:
    vocab = {token: i for i, token in enumerate(["<pad>", "<eos>", "<unk>", *CHARS])}
    model = tokenizers.models.WordLevel(vocab=vocab, unk_token="<unk>")
    tok = tokenizers.Tokenizer(model)
    tok.pre_tokenizer = tokenizers.pre_tokenizers.Split(tokenizers.Regex("."), behavior="isolated")
    tok.decoder = tokenizers.decoders.Fuse()
    return transformers.PreTrainedTokenizerFast(
        tokenizer_object=tok, pad_token="<pad>", eos_token="<eos>", unk_token="<unk>"
    )


def model(vocab_size: int) -> Any:
    torch.manual_seed(0)
    config = transformers.Qwen2Config(
        vocab_size=vocab_size,
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=64,
        pad_token_id=0,
        eos_token_id=1,
        bos_token_id=1,
        tie_word_embeddings=True,
    )
    return transformers.Qwen2ForCausalLM(config)


def test_grpo_logs_exactly_the_rewards_referee_returned(live_server: str, tmp_path: Path) -> None:
    tok = tokenizer()
    rows = [
        {"prompt": f"{a}+{b}=", "answer": str(a + b)} for a, b in [(2, 3), (1, 4), (3, 3), (2, 2)]
    ]
    [scored] = reward_funcs(live_server, MAPPING, name="referee")
    returned: list[list[float | None]] = []

    async def referee(
        prompts: list[str], completions: list[str], **columns: Any
    ) -> list[float | None]:
        rewards = await scored(prompts, completions, **columns)
        returned.append(rewards)
        return rewards

    args = trl.GRPOConfig(
        output_dir=str(tmp_path),
        per_device_train_batch_size=4,
        num_generations=4,
        max_completion_length=6,
        max_steps=3,
        logging_steps=1,
        learning_rate=1e-3,
        use_cpu=True,
        report_to="none",
        save_strategy="no",
        seed=0,
        bf16=False,
    )
    trainer = trl.GRPOTrainer(
        model=model(len(tok)),
        reward_funcs=[referee],
        args=args,
        train_dataset=datasets.Dataset.from_list(rows),
        processing_class=tok,
    )
    trainer.train()

    logged = [
        e["rewards/referee/mean"] for e in trainer.state.log_history if "rewards/referee/mean" in e
    ]
    assert len(returned) == len(logged) == 3
    # Both outcomes occur, so the comparisons below check real signal, not all zeros.
    assert {x for batch in returned for x in batch} == {0.0, 1.0}
    for batch, mean in zip(returned, logged, strict=True):
        assert None not in batch
        assert mean == pytest.approx(statistics.fmean(x for x in batch if x is not None), abs=1e-6)

    # The trainer's own record of its last batch, re-scored by referee directly.
    prompts = list(trainer._logs["prompt"])
    completions = list(trainer._logs["completion"])
    rewards = list(trainer._logs["rewards"]["referee"])
    assert rewards == returned[-1]
    answers = {row["prompt"]: row["answer"] for row in rows}
    items = [
        MAPPING.item(p, c, {"answer": answers[p]})
        for p, c in zip(prompts, completions, strict=True)
    ]
    with Client(live_server) as client:
        assert [r.reward for r in client.score(items)] == rewards
    assert (
        asyncio.run(scored(prompts, completions, answer=[answers[p] for p in prompts])) == rewards
    )
