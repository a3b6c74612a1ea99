"""Reward-model settings: which models exist, where they live, and how the batcher batches.

Read from the environment with the ``REFEREE_RM_`` prefix when an `RMSettings` is built
(once, by `verifiers.engines.EngineSettings.from_env`); nothing here runs at import time.
Tests build `RMSettings` directly.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field
from pydantic_settings import BaseSettings, SettingsConfigDict

DType = Literal["float32", "bfloat16", "float16", "auto"]
Activation = Literal["none", "sigmoid", "tanh"]
Attention = Literal["auto", "flex", "segments", "padded"]


class ModelSpec(BaseModel):
    """One reward model, a Hugging Face ``*ForSequenceClassification`` directory on disk.

    ``device``/``dtype`` of ``auto`` mean: CUDA and bfloat16 when a GPU is present, else
    CPU and float32. ``max_length`` caps prompt + response tokens (None: the model's
    ``max_position_embeddings``). ``activation`` is applied to the raw logit to give the
    reward (``none`` keeps the logit). ``objective`` picks which of K outputs is the reward
    (name from ``id2label`` or index); the others are reported as components.
    """

    model_config = ConfigDict(extra="forbid")

    path: str
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

    Batching: a batch holds at most ``max_batch_items`` items and ``token_budget`` tokens
    (shared prompts counted once); the batcher waits at most ``max_wait_ms`` after the first
    queued item for more to arrive; at most ``max_queue_items`` wait, beyond that callers
    get `Overloaded`.
    """

    model_config = SettingsConfigDict(env_prefix="REFEREE_RM_", extra="ignore")

    models: dict[str, ModelSpec] = Field(default_factory=dict)
    token_budget: int = Field(default=16384, gt=0)
    max_batch_items: int = Field(default=256, gt=0)
    max_wait_ms: float = Field(default=5.0, ge=0)
    max_queue_items: int = Field(default=8192, gt=0)
    queue_timeout_s: float = Field(default=60.0, gt=0)
    """An item still queued this long after submission is dropped as ``timeout``."""
