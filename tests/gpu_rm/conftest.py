"""Tiny reward models and a tokenizer built here from configs: nothing is downloaded.

``TRITON_INTERPRET`` is set before anything imports Triton so the kernel tests run the
Triton kernel on CPU tensors (Triton reads it when a kernel is decorated).
"""

from __future__ import annotations

import os
import random
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

os.environ.setdefault("TRITON_INTERPRET", "1")

WORDS = [f"w{i}" for i in range(200)]
CHAT_TEMPLATE = (
    "{{ bos_token }}{% for m in messages %}{{ m['role'] }} : {{ m['content'] }} "
    "{{ eos_token }} {% endfor %}"
)


def build_tokenizer(path: Path) -> Any:
    """A word-level tokenizer whose template writes BOS while the tokenizer adds one too
    (so the duplicate-BOS rule is exercised), saved to ``path``."""
    tokenizers = pytest.importorskip("tokenizers")
    transformers = pytest.importorskip("transformers")
    specials = ["<pad>", "<s>", "</s>", "<unk>"]
    vocab = {tok: i for i, tok in enumerate([*specials, "user", "assistant", "system", ":"])}
    vocab.update({w: len(vocab) + i for i, w in enumerate(WORDS)})
    core = tokenizers.Tokenizer(tokenizers.models.WordLevel(vocab, unk_token="<unk>"))
    core.pre_tokenizer = tokenizers.pre_tokenizers.WhitespaceSplit()
    core.post_processor = tokenizers.processors.TemplateProcessing(
        single="<s> $A", special_tokens=[("<s>", 1)]
    )
    tok = transformers.PreTrainedTokenizerFast(
        tokenizer_object=core, bos_token="<s>", eos_token="</s>", pad_token="<pad>",
        unk_token="<unk>",
    )  # fmt: skip
    tok.chat_template = CHAT_TEMPLATE
    tok.save_pretrained(path)
    return tok


FAMILIES = {
    "llama": ("LlamaConfig", "LlamaForSequenceClassification"),
    "qwen2": ("Qwen2Config", "Qwen2ForSequenceClassification"),
    "mistral": ("MistralConfig", "MistralForSequenceClassification"),
    "gemma2": ("Gemma2Config", "Gemma2ForSequenceClassification"),
    "gemma3_text": ("Gemma3TextConfig", "Gemma3TextForSequenceClassification"),
    "olmo": ("OlmoConfig", "OlmoForSequenceClassification"),
}


def build_model(path: Path, family: str, num_labels: int = 1, **overrides: Any) -> Path:
    """Save a randomly initialised tiny ``family`` (a `FAMILIES` key) reward model at
    ``path``."""
    torch = pytest.importorskip("torch")
    transformers = pytest.importorskip("transformers")
    torch.manual_seed(1234)
    common: dict[str, Any] = dict(
        vocab_size=256, hidden_size=64, intermediate_size=128, num_hidden_layers=2,
        num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=512,
        pad_token_id=0, bos_token_id=1, eos_token_id=2, num_labels=num_labels,
        initializer_range=0.1,
    )  # fmt: skip
    if num_labels > 1:
        common["id2label"] = {i: f"objective_{i}" for i in range(num_labels)}
        common["label2id"] = {f"objective_{i}": i for i in range(num_labels)}
    common.update(overrides)
    config_class, model_class = FAMILIES[family]
    config = getattr(transformers, config_class)(**common)
    model = getattr(transformers, model_class)(config)
    # Random init gives a near-constant head; spread the weights so scores differ clearly.
    with torch.no_grad():
        for param in model.parameters():
            param.add_(torch.randn_like(param) * 0.05)
    model.save_pretrained(path)
    build_tokenizer(path)
    return path


@pytest.fixture(scope="session")
def model_dirs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Tiny Llama-like, Qwen-like and multi-objective (K=3) reward models on disk."""
    root = tmp_path_factory.mktemp("rm")
    return {
        "llama": build_model(root / "llama", "llama"),
        "qwen": build_model(root / "qwen", "qwen2"),
        "multi": build_model(root / "multi", "llama", num_labels=3),
    }


def random_text(rng: random.Random, n_words: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(n_words))


@pytest.fixture
def text() -> Callable[[int, int], str]:
    """``text(n_words, seed)``: reproducible random text in the tokenizer's vocabulary."""
    return lambda n, seed: random_text(random.Random(seed), n)
