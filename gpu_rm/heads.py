"""What a loaded model computes at its scored positions, from pre-norm hidden states.

`RewardModel` swaps the backbone's final norm for an identity, so the backbone returns
states *before* the norm; a head applies the norm and its output layer to the scored rows
only. Three kinds, by `ModelSpec.head`:

- ``sequence`` (``*ForSequenceClassification``) and ``token``
  (``*ForTokenClassification``): the model's ``score`` layer, K raw outputs per position
  (`kernels.score_last_tokens`);
- ``lm`` (``*ForCausalLM``): the output layer restricted to each position's candidate
  tokens, as log-probabilities over that set (`kernels.token_logprobs`): P(yes | {yes,
  no}) without ever forming a row of vocabulary logits.

A final norm the kernels do not know (not an RMSNorm) runs through the model's own
modules on the same few rows.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

import torch
from transformers import (
    AutoModelForCausalLM,
    AutoModelForSequenceClassification,
    AutoModelForTokenClassification,
)

from referee.gpu_rm.kernels import ScoreHead, TokenHead, score_last_tokens, token_logprobs
from referee.gpu_rm.settings import HeadKind

AUTO_CLASSES: dict[HeadKind, Any] = {
    "sequence": AutoModelForSequenceClassification,
    "token": AutoModelForTokenClassification,
    "lm": AutoModelForCausalLM,
}


class Head(Protocol):
    """Scores at ``rows`` of ``hidden`` (N, H): a float32 (P, K) tensor. ``candidates``
    (P, K) holds each row's vocabulary ids for an ``lm`` head (-1 pads) and is None for
    the others."""

    def scores(
        self, hidden: torch.Tensor, rows: torch.Tensor, candidates: torch.Tensor | None
    ) -> torch.Tensor: ...


@dataclass
class ClassifierHead:
    """A ``score`` layer over the final norm (sequence or token classification)."""

    norm: torch.nn.Module
    layer: torch.nn.Linear
    fused: ScoreHead | None

    def scores(
        self, hidden: torch.Tensor, rows: torch.Tensor, candidates: torch.Tensor | None
    ) -> torch.Tensor:
        if self.fused is not None:
            return score_last_tokens(hidden, rows + 1, self.fused)
        scores: torch.Tensor = self.layer(self.norm(hidden.index_select(0, rows)))
        return scores.to(torch.float32)


@dataclass
class VocabularyHead:
    """A causal LM's output layer, restricted to candidate tokens per position."""

    norm: torch.nn.Module
    layer: torch.nn.Linear
    softcap: float
    fused: TokenHead | None

    def scores(
        self, hidden: torch.Tensor, rows: torch.Tensor, candidates: torch.Tensor | None
    ) -> torch.Tensor:
        if candidates is None:
            raise ValueError("a language-model head scores candidate tokens: none were given")
        if self.fused is not None:
            return token_logprobs(hidden, rows, candidates, self.fused)
        normed = self.norm(hidden.index_select(0, rows))
        ids = candidates.clamp(min=0)
        weights = self.layer.weight.index_select(0, ids.reshape(-1)).view(*ids.shape, -1)
        logits = (weights.to(torch.float32) * normed.to(torch.float32)[:, None, :]).sum(-1)
        if self.layer.bias is not None:
            logits = logits + self.layer.bias.to(torch.float32)[ids]
        if self.softcap > 0:
            logits = torch.tanh(logits / self.softcap) * self.softcap
        return torch.log_softmax(logits.masked_fill(candidates < 0, float("-inf")), dim=-1)


def head_of(model: Any, kind: HeadKind) -> Head:
    """The head of a loaded ``kind`` model, before its final norm is swapped out."""
    norm = getattr(model, model.base_model_prefix).norm
    if kind == "lm":
        layer = model.get_output_embeddings()
        softcap = float(getattr(model.config, "final_logit_softcapping", None) or 0.0)
        return VocabularyHead(norm, layer, softcap, _token_head(norm, layer, softcap))
    return ClassifierHead(norm, model.score, _score_head(norm, model.score))


def _rms(norm: torch.nn.Module) -> tuple[torch.Tensor, float, float] | None:
    """(weight, eps, offset) of an RMS final norm (Llama, Qwen, Mistral, Gemma: Gemma's
    stores ``weight - 1``), or None for a norm the kernels do not know."""
    kind = type(norm).__name__
    eps = getattr(norm, "variance_epsilon", getattr(norm, "eps", None))
    weight = getattr(norm, "weight", None)
    if not kind.endswith("RMSNorm") or eps is None or not isinstance(weight, torch.Tensor):
        return None
    return weight.detach(), float(eps), 1.0 if kind.startswith("Gemma") else 0.0


def _score_head(norm: torch.nn.Module, layer: torch.nn.Linear) -> ScoreHead | None:
    found = _rms(norm)
    if found is None:
        return None
    weight, eps, offset = found
    bias = None if layer.bias is None else layer.bias.detach()
    return ScoreHead(weight, eps, layer.weight.detach().contiguous(), bias, offset)


def _token_head(norm: torch.nn.Module, layer: torch.nn.Linear, softcap: float) -> TokenHead | None:
    found = _rms(norm)
    if found is None:
        return None
    weight, eps, offset = found
    bias = None if layer.bias is None else layer.bias.detach()
    return TokenHead(weight, eps, layer.weight.detach().contiguous(), bias, offset, softcap)
