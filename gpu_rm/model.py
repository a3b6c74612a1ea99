"""A loaded reward model: a local Hugging Face ``*ForSequenceClassification`` directory.

Loading swaps the backbone's final norm for an identity, so the backbone returns hidden
states *before* the final norm; the norm and the reward head then run only on each
sequence's last token (`gpu_rm.kernels`). The backbone runs with `gpu_rm.attention`, so a
`PackedLayout` row is one forward pass with no padding. Files come only from disk
(``local_files_only``): nothing is downloaded at run time.

Not thread-safe: one thread (the batcher's owner) runs `score_layout` at a time.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch

from gpu_rm.attention import register_packed_attention
from gpu_rm.encoding import ChatEncoder
from gpu_rm.errors import ModelUnavailable
from gpu_rm.kernels import ScoreHead, score_last_tokens
from gpu_rm.packing import PackedLayout
from gpu_rm.settings import ModelSpec

_DTYPES = {"float32": torch.float32, "bfloat16": torch.bfloat16, "float16": torch.float16}


@dataclass(frozen=True)
class Placement:
    """Where and in what precision a model runs."""

    device: torch.device
    dtype: torch.dtype


def resolve_placement(spec: ModelSpec) -> Placement:
    """``auto`` means CUDA + bfloat16 when a GPU is present, else CPU + float32."""
    cuda = torch.cuda.is_available()
    device = torch.device(("cuda" if cuda else "cpu") if spec.device == "auto" else spec.device)
    if spec.dtype == "auto":
        dtype = torch.bfloat16 if device.type == "cuda" else torch.float32
    else:
        dtype = _DTYPES[spec.dtype]
    return Placement(device, dtype)


class RewardModel:
    """Scores packed rows. ``labels`` names the K outputs; ``objective`` indexes the reward."""

    def __init__(self, name: str, spec: ModelSpec, model: Any, tokenizer: Any) -> None:
        self.name = name
        self.spec = spec
        self._backbone = getattr(model, model.base_model_prefix)
        self._final_norm: torch.nn.Module = self._backbone.norm
        self._head_module: torch.nn.Linear = model.score
        self.head = _score_head(self._final_norm, self._head_module)
        # The backbone now returns pre-norm states; the norm runs on last tokens only.
        self._backbone.norm = torch.nn.Identity()
        self.device = next(model.parameters()).device
        config = model.config
        id2label = getattr(config, "id2label", None) or {}
        self.labels = [str(id2label.get(i, f"output_{i}")) for i in range(config.num_labels)]
        self.objective = _objective_index(spec.objective, self.labels)
        limit = getattr(config, "max_position_embeddings", None) or 4096
        self.encoder = ChatEncoder(tokenizer, min(spec.max_length or limit, limit))

    @classmethod
    def load(cls, name: str, spec: ModelSpec) -> RewardModel:
        """Load from ``spec.path`` only; raise `ModelUnavailable` with the reason on failure."""
        try:
            from transformers import AutoModelForSequenceClassification
        except ImportError as exc:
            raise ModelUnavailable(f"transformers is not installed: {exc}") from None
        placement = resolve_placement(spec)
        from transformers.utils import logging as hf_logging

        hf_logging.disable_progress_bar()  # type: ignore[no-untyped-call]  # a server's logs are not a terminal
        try:
            tokenizer = _load_tokenizer(spec.path)
            model = AutoModelForSequenceClassification.from_pretrained(
                spec.path, dtype=placement.dtype, local_files_only=True
            )
            model.set_attn_implementation(register_packed_attention())
            model.to(placement.device).eval()
            return cls(name, spec, model, tokenizer)
        except Exception as exc:  # noqa: BLE001 - any load failure makes the model unavailable
            raise ModelUnavailable(
                f"model {name!r} failed to load from {spec.path}: {type(exc).__name__}: {exc}"
            ) from None

    def score_layout(self, layout: PackedLayout) -> list[list[float]]:
        """S rows of K raw scores for the sequences of ``layout``, in input order."""
        return [[float(v) for v in row] for row in self.score_tensor(layout).tolist()]

    @torch.inference_mode()
    def score_tensor(self, layout: PackedLayout) -> torch.Tensor:
        """(S, K) float32 raw scores on CPU for the sequences of ``layout``, input order."""
        ids = torch.tensor([layout.input_ids], dtype=torch.long, device=self.device)
        positions = torch.tensor([layout.position_ids], dtype=torch.long, device=self.device)
        out = self._backbone(input_ids=ids, position_ids=positions, layout=layout, use_cache=False)
        hidden = out.last_hidden_state[0]
        ends = torch.tensor(layout.ends, dtype=torch.long, device=self.device)
        if self.head is not None:
            scores = score_last_tokens(hidden, ends, self.head)
        else:  # a final norm the kernel does not know: same gather, the model's own modules
            rows = self._final_norm(hidden.index_select(0, ends - 1))
            scores = self._head_module(rows).to(torch.float32)
        return scores.cpu()

    def reward(self, scores: list[float]) -> tuple[float, dict[str, float]]:
        """The reward (the objective's score after the activation) and every raw output."""
        raw = scores[self.objective]
        if self.spec.activation == "sigmoid":
            value = 1.0 / (1.0 + math.exp(-raw)) if raw >= -700 else 0.0
        elif self.spec.activation == "tanh":
            value = math.tanh(raw)
        else:
            value = raw
        return value, dict(zip(self.labels, scores, strict=True))


def _load_tokenizer(path: str) -> Any:
    """The tokenizer exactly as ``tokenizer.json`` defines it when there is one.

    Transformers 5's AutoTokenizer may rebuild a model-family tokenizer class from the
    vocabulary instead (seen with a Qwen2 config over a word-level tokenizer), which can
    silently change the ids; the reward model was trained on what the file says.
    """
    from transformers import AutoTokenizer, PreTrainedTokenizerFast

    if (Path(path) / "tokenizer.json").is_file():
        return PreTrainedTokenizerFast.from_pretrained(path, local_files_only=True)
    return AutoTokenizer.from_pretrained(path, local_files_only=True)


def _score_head(norm: torch.nn.Module, head: torch.nn.Linear) -> ScoreHead | None:
    """The kernel's view of an RMS final norm (Llama, Qwen, Mistral, Gemma); None for others."""
    kind = type(norm).__name__
    eps = getattr(norm, "variance_epsilon", getattr(norm, "eps", None))
    weight = getattr(norm, "weight", None)
    if not kind.endswith("RMSNorm") or eps is None or not isinstance(weight, torch.Tensor):
        return None
    return ScoreHead(
        norm_weight=weight.detach(),
        norm_eps=float(eps),
        head_weight=head.weight.detach().contiguous(),
        head_bias=None if head.bias is None else head.bias.detach(),
        norm_offset=1.0 if kind.startswith("Gemma") else 0.0,
    )


def _objective_index(objective: str | int, labels: list[str]) -> int:
    if isinstance(objective, int):
        if not 0 <= objective < len(labels):
            raise ModelUnavailable(f"objective {objective} out of range for {len(labels)} outputs")
        return objective
    if objective not in labels:
        raise ModelUnavailable(f"objective {objective!r} is not one of {labels}")
    return labels.index(objective)
