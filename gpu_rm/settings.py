"""Reward-model settings: which models exist, where they live, and how the batcher batches.

Read from the environment with the ``REFEREE_RM_`` prefix when an `RMSettings` is built
(once, by `verifiers.engines.EngineSettings.from_env`); nothing here runs at import time.
Tests build `RMSettings` directly.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import AliasChoices, BaseModel, ConfigDict, Field, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

DType = Literal["float32", "bfloat16", "float16", "auto"]
Activation = Literal["none", "sigmoid", "tanh"]
Attention = Literal["auto", "flex", "segments", "padded"]
HeadKind = Literal["sequence", "token", "lm"]
MAX_TOP_K = 20
"""The most alternatives a token-statistics reading returns per position."""

JUDGE_TEMPLATE = (
    "Judge the response to the question.\n\nQuestion:\n{prompt}\n\nResponse:\n{response}"
    "\n\nIs the response correct? Answer Yes or No."
)
SCORE_TEMPLATE = (
    "Rate the response to the question.\n\nQuestion:\n{prompt}\n\nResponse:\n{response}"
    "\n\nRate the response's quality from 1 (worst) to 5 (best). Answer with the number."
)
PAIR_TEMPLATE = (
    "Compare two responses to the question.\n\nQuestion:\n{prompt}\n\nResponse A:\n"
    "{response}\n\nResponse B:\n{reference}\n\nWhich response is better? Answer A or B."
)


class JudgeSpec(BaseModel):
    """How a generative reward model (``head: lm``, the ``grm`` verifier) is asked.

    Templates fill ``{prompt}``, ``{response}`` and ``{reference}`` (nothing else is
    interpreted) and become the user turn of the model's chat template, followed by its
    generation prompt; the verdict is read at the next token. Token strings that are not
    one token of the model's vocabulary are ignored; a set with none left makes the model
    unusable for that mode (its items are ``invalid``, ``unsupported_mode``). A verdict
    reads at most 64 tokens (`gpu_rm.kernels.triton_tokens.MAX_CANDIDATES`): the lists are
    capped so that no configuration can exceed it.
    """

    model_config = ConfigDict(extra="forbid")

    template: str = Field(default=JUDGE_TEMPLATE, max_length=20_000)
    score_template: str = Field(default=SCORE_TEMPLATE, max_length=20_000)
    pairwise_template: str = Field(default=PAIR_TEMPLATE, max_length=20_000)
    yes_tokens: list[str] = Field(
        default_factory=lambda: ["Yes", "yes", " Yes", " yes"], max_length=32
    )
    no_tokens: list[str] = Field(default_factory=lambda: ["No", "no", " No", " no"], max_length=32)
    score_tokens: dict[str, float] = Field(
        default_factory=lambda: {str(n): float(n) for n in range(1, 6)}, max_length=64
    )
    """G-Eval: the expected score over these tokens (the reward is that expectation)."""
    first_tokens: list[str] = Field(default_factory=lambda: ["A", " A"], max_length=32)
    second_tokens: list[str] = Field(default_factory=lambda: ["B", " B"], max_length=32)


class StepSpec(BaseModel):
    """How a process reward model (the ``prm`` verifier) reads steps.

    The response's steps (split by the item's ``step_separator``) are written back joined
    by ``joiner``, each followed by ``tag`` (Math-Shepherd's "ки", Qwen's "<extra_0>"); a
    step is scored at its tag's last token, or at its own last token when ``tag`` is empty.
    ``head: token`` models give P(label ``positive_label``) from their classifier (a
    sigmoid for one label); ``head: lm`` models P(positive | positive or negative tokens).
    """

    model_config = ConfigDict(extra="forbid")

    tag: str = Field(default="", max_length=64)
    joiner: str = Field(default="\n\n", max_length=64)
    positive_tokens: list[str] = Field(default_factory=lambda: ["+"], max_length=32)
    negative_tokens: list[str] = Field(default_factory=lambda: ["-"], max_length=32)
    positive_label: str | int = 1


class ModelSpec(BaseModel):
    """One model, a Hugging Face directory on disk: a reward model
    (``*ForSequenceClassification``, ``head: sequence``, the ``rm`` verifier), a token
    classifier (``head: token``, a process reward model) or a causal LM (``head: lm``,
    the ``grm`` verifier and process reward models read from yes/no tokens).

    ``device``/``dtype`` of ``auto`` mean: CUDA and bfloat16 when a GPU is present, else
    CPU and float32. ``max_length`` caps prompt + response tokens (None: the model's
    ``max_position_embeddings``). ``activation`` is applied to the raw logit to give the
    reward (``none`` keeps the logit). ``objective`` picks which of K outputs is the reward
    (name from ``id2label`` or index); the others are reported as components.
    """

    model_config = ConfigDict(extra="forbid")

    path: str
    head: HeadKind = "sequence"
    dtype: DType = "auto"
    device: str = "auto"
    max_length: int | None = Field(default=None, gt=1)
    activation: Activation = "none"
    objective: str | int = 0
    attention: Attention = "auto"
    """How a packed row attends (`gpu_rm.attention`): ``flex`` (one FlexAttention call
    per layer), ``segments`` (one SDPA call per prefix and suffix), ``padded`` (no
    packing: plain padded batches). ``auto``: flex on CUDA, segments on CPU unless the
    model needs flex (sliding windows, soft-capping), padded for a model whose attention
    packing cannot reproduce (bidirectional, chunked, or an unverified architecture)."""
    row_bucket: int = Field(default=1024, ge=1)
    """Flex rows are padded to a multiple of this, so compiled kernels are reused."""
    judge: JudgeSpec = Field(default_factory=JudgeSpec)
    steps: StepSpec = Field(default_factory=StepSpec)

    def path_problem(self) -> str | None:
        """Why ``path`` cannot hold a Hugging Face model, or None. Models load from local
        directories only: a hub id or a typo must not surface as a hub download error."""
        directory = Path(self.path)
        if not directory.is_dir():
            return f"path {self.path} is not a directory (models load from local directories)"
        if not (directory / "config.json").is_file():
            return f"path {self.path} holds no config.json: not a Hugging Face model directory"
        return None


class RMSettings(BaseSettings):
    """``REFEREE_RM_MODELS`` is JSON: ``{"name": {"path": "/models/rm", "dtype": ...}}``.
    ``REFEREE_LM_MODELS``, the same shape, lists language models (``head`` defaults to
    ``lm`` there) and is merged into ``models``: one catalog, so a model named by several
    verifiers (``grm``, ``prm``, ``refprob``, ``logprobs``) is loaded once, with one batcher.

        Batching: a batch holds at most ``max_batch_items`` items and ``token_budget`` tokens
        (shared prompts counted once); the batcher waits at most ``max_wait_ms`` after the first
        queued item for more to arrive; at most ``max_queue_items`` wait, beyond that callers
        get `Overloaded`.
    """

    model_config = SettingsConfigDict(env_prefix="REFEREE_RM_", extra="ignore")

    models: dict[str, ModelSpec] = Field(default_factory=dict)
    lm_models: dict[str, ModelSpec] = Field(
        default_factory=dict, validation_alias=AliasChoices("lm_models", "REFEREE_LM_MODELS")
    )
    token_budget: int = Field(default=16384, gt=0)
    max_batch_items: int = Field(default=256, gt=0)
    max_wait_ms: float = Field(default=5.0, ge=0)
    max_queue_items: int = Field(default=8192, gt=0)
    queue_timeout_s: float = Field(default=60.0, gt=0)
    """An item still queued this long after submission is dropped as ``timeout``."""

    @model_validator(mode="after")
    def _merge_language_models(self) -> RMSettings:
        for name, spec in self.lm_models.items():
            lm = spec if "head" in spec.model_fields_set else spec.model_copy(update={"head": "lm"})
            if name in self.models and self.models[name] != lm:  # equal: merged before
                raise ValueError(f"REFEREE_LM_MODELS: {name!r} is also in REFEREE_RM_MODELS")
            self.models[name] = lm
        return self
