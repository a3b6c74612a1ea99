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


CHATML = (
    "{% for m in messages %}<|im_start|>{{ m['role'] }}\n{{ m['content'] }}<|im_end|>\n"
    "{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)
BPE_SPECIALS = ["<pad>", "<s>", "</s>", "<|im_start|>", "<|im_end|>", "<extra_0>"]
BPE_CORPUS = (
    "Judge the response to the question. Question: Response: Is the response correct? "
    "Answer Yes or No. Rate the response's quality from 1 (worst) to 5 (best). Answer "
    "with the number. Compare two responses. Which response is better? Answer A or B. "
    "Yes No yes no Step one two three the answer is so we add and then ки + - "
    "user assistant system\n\n"
)


def build_bpe_tokenizer(path: Path, vocab_size: int = 400) -> Any:
    """A byte-level BPE tokenizer trained here on a small corpus (real merges and
    character offsets, as production tokenizers have), with ChatML special tokens and a
    ChatML template; saved to ``path``."""
    tokenizers = pytest.importorskip("tokenizers")
    transformers = pytest.importorskip("transformers")
    core = tokenizers.Tokenizer(tokenizers.models.BPE())
    core.pre_tokenizer = tokenizers.pre_tokenizers.ByteLevel(add_prefix_space=False)
    core.decoder = tokenizers.decoders.ByteLevel()
    trainer = tokenizers.trainers.BpeTrainer(
        vocab_size=vocab_size, special_tokens=BPE_SPECIALS,
        initial_alphabet=tokenizers.pre_tokenizers.ByteLevel.alphabet(),
    )  # fmt: skip
    core.train_from_iterator([BPE_CORPUS] * 50 + [" ".join(WORDS)] * 5, trainer)
    tok = transformers.PreTrainedTokenizerFast(
        tokenizer_object=core, bos_token="<s>", eos_token="</s>", pad_token="<pad>",
        additional_special_tokens=["<|im_start|>", "<|im_end|>", "<extra_0>"],
    )  # fmt: skip
    tok.chat_template = CHATML
    tok.save_pretrained(path)
    return tok


LM_FAMILIES = {
    "llama": ("LlamaConfig", "LlamaForCausalLM"),
    "qwen2": ("Qwen2Config", "Qwen2ForCausalLM"),
    "gemma2": ("Gemma2Config", "Gemma2ForCausalLM"),
    "olmo": ("OlmoConfig", "OlmoForCausalLM"),  # a LayerNorm: the heads' fallback path
}
TOKEN_FAMILIES = {"llama": ("LlamaConfig", "LlamaForTokenClassification")}


def build_lm(
    path: Path, family: str, token_classes: int = 0, bpe_vocab: int = 400, **overrides: Any
) -> Path:
    """Save a randomly initialised tiny causal LM of ``family`` (an `LM_FAMILIES` key),
    or a token classifier with ``token_classes`` labels, over a BPE tokenizer of
    ``bpe_vocab`` tokens."""
    torch = pytest.importorskip("torch")
    transformers = pytest.importorskip("transformers")
    tok = build_bpe_tokenizer(path, bpe_vocab)
    torch.manual_seed(4321)
    common: dict[str, Any] = dict(
        vocab_size=len(tok), hidden_size=64, intermediate_size=128, num_hidden_layers=2,
        num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=512,
        pad_token_id=tok.pad_token_id, bos_token_id=tok.bos_token_id,
        eos_token_id=tok.eos_token_id, initializer_range=0.1, tie_word_embeddings=False,
    )  # fmt: skip
    if token_classes:
        common["num_labels"] = token_classes
    common.update(overrides)
    table = TOKEN_FAMILIES if token_classes else LM_FAMILIES
    config_class, model_class = table[family]
    model = getattr(transformers, model_class)(getattr(transformers, config_class)(**common))
    with torch.no_grad():
        for param in model.parameters():
            param.add_(torch.randn_like(param) * 0.05)
    model.save_pretrained(path)
    return path


@pytest.fixture(scope="session")
def lm_dirs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Tiny causal LMs (Llama, Qwen2, Gemma2 with soft-capping; Llama and Qwen2 also with
    tied embeddings) and a two-label Llama token classifier, over a byte-level BPE
    tokenizer; and a Llama over a smaller vocabulary."""
    root = tmp_path_factory.mktemp("lm")
    return {
        "llama": build_lm(root / "llama", "llama"),
        "qwen2": build_lm(root / "qwen2", "qwen2"),
        "gemma2": build_lm(root / "gemma2", "gemma2", final_logit_softcapping=5.0,
                           head_dim=16),
        "token": build_lm(root / "token", "llama", token_classes=2),
        "llama_tied": build_lm(root / "llama_tied", "llama", tie_word_embeddings=True),
        "qwen2_tied": build_lm(root / "qwen2_tied", "qwen2", tie_word_embeddings=True),
        "small_vocabulary": build_lm(root / "small_vocabulary", "llama", bpe_vocab=350),
        "olmo": build_lm(root / "olmo", "olmo"),
    }  # fmt: skip
