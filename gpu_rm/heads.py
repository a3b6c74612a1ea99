"""What a loaded model computes at its scored positions, from pre-norm hidden states.

`RewardModel` swaps the backbone's final norm for an identity, so the backbone returns
states *before* the norm; a head applies the norm and its output layer to the scored rows
only. Three kinds, by `ModelSpec.head`:

- ``sequence`` (``*ForSequenceClassification``) and ``token``
  (``*ForTokenClassification``): the model's ``score`` layer, K raw outputs per position
  (`kernels.score_last_tokens`);
- ``lm`` (``*ForCausalLM``): the output layer restricted to each position's candidate
  tokens, as log-probabilities over that set (`kernels.token_logprobs`): P(yes | {yes,
  no}) without ever forming a row of vocabulary logits; or whole-vocabulary statistics
  of a target token per position (`kernels.token_stats`): its log-probability, the
  entropy and the top-k alternatives, in vocabulary chunks.

A `Reading` says, for one packed layout, which rows are read which way; a head's `read`
returns one list of floats per scored row: K outputs (classifiers), the candidates'
log-probabilities, or ``[logprob, entropy, id_1, logprob_1, ...]``.

A final norm the kernels do not know (not an RMSNorm) runs through the model's own
modules on the same few rows.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Protocol

import torch
from transformers import (
    AutoModelForCausalLM,
    AutoModelForSequenceClassification,
    AutoModelForTokenClassification,
)

from referee.gpu_rm.kernels import (
    ScoreHead,
    TokenHead,
    TokenStats,
    score_last_tokens,
    token_logprobs,
    token_stats,
)
from referee.gpu_rm.kernels.reference import candidate_logprobs
from referee.gpu_rm.kernels.vocab_stats import stats_of_normed
from referee.gpu_rm.packing import PackedLayout
from referee.gpu_rm.settings import HeadKind

AUTO_CLASSES: dict[HeadKind, Any] = {
    "sequence": AutoModelForSequenceClassification,
    "token": AutoModelForTokenClassification,
    "lm": AutoModelForCausalLM,
}


@dataclass
class Reading:
    """How a layout's scored rows are read. ``rows`` (P,): every scored row, in
    `PackedLayout.scored_rows` order; ``choice`` and ``stats``: the indices into ``rows``
    read over candidate sets (with ``candidates``, (len(choice), K), -1 padded) and as
    whole-vocabulary statistics (with ``targets``, (len(stats),), and the largest
    ``top_k``); ``widths``: how many values each row keeps (its own set or top-k)."""

    rows: torch.Tensor
    choice: list[int]
    candidates: torch.Tensor | None
    stats: list[int]
    targets: torch.Tensor | None
    top_k: int
    widths: list[int]

    def to(self, device: torch.device) -> Reading:
        """The same reading with its tensors on ``device``."""
        return replace(self, rows=self.rows.to(device), candidates=_moved(self.candidates, device),
                       targets=_moved(self.targets, device))  # fmt: skip

    def tensors(self) -> list[torch.Tensor]:
        """Its tensors (a copy stream hands them to the forward's stream)."""
        return [t for t in (self.rows, self.candidates, self.targets) if t is not None]


def reading_of(layout: PackedLayout, kind: HeadKind) -> Reading:
    """The `Reading` of ``layout`` for a ``kind`` head, as CPU tensors."""
    rows = torch.tensor(layout.scored_rows(), dtype=torch.long)
    choice: list[int] = []
    stats: list[int] = []
    candidates: list[list[int]] = []
    targets: list[int] = []
    widths: list[int] = []
    flat = 0
    for index, scored in enumerate(layout.rows):
        for position in range(len(scored)):
            if kind == "lm" and layout.targets[index]:
                stats.append(flat)
                targets.append(layout.targets[index][position])
                widths.append(2 + 2 * layout.top_k[index])
            elif kind == "lm":
                choice.append(flat)
                candidates.append(list(layout.candidates[index]))
                widths.append(len(layout.candidates[index]))
            flat += 1
    width = max(map(len, candidates), default=0)
    table = torch.tensor([c + [-1] * (width - len(c)) for c in candidates], dtype=torch.long)
    return Reading(
        rows, choice, table.reshape(len(candidates), width) if choice else None, stats,
        torch.tensor(targets, dtype=torch.long) if stats else None,
        max((layout.top_k[i] for i, t in enumerate(layout.targets) if t), default=0), widths,
    )  # fmt: skip


class Head(Protocol):
    """Reads a `Reading` off ``hidden`` (N, H): one list of floats per scored row."""

    def read(self, hidden: torch.Tensor, reading: Reading) -> list[list[float]]: ...


@dataclass
class ClassifierHead:
    """A ``score`` layer over the final norm (sequence or token classification)."""

    norm: torch.nn.Module
    layer: torch.nn.Linear
    fused: ScoreHead | None

    def read(self, hidden: torch.Tensor, reading: Reading) -> list[list[float]]:
        """K raw outputs per scored row."""
        table: list[list[float]] = self.scores(hidden, reading.rows).tolist()
        return table

    def scores(self, hidden: torch.Tensor, rows: torch.Tensor) -> torch.Tensor:
        """(P, K) float32 raw outputs at ``rows``."""
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

    def read(self, hidden: torch.Tensor, reading: Reading) -> list[list[float]]:
        """Per scored row, the candidates' log-probabilities or the target's statistics,
        cut to the row's own width."""
        out: list[list[float]] = [[] for _ in reading.widths]
        if reading.candidates is not None:
            rows = reading.rows[reading.choice]
            for index, row in zip(reading.choice, self.scores(hidden, rows, reading.candidates)
                                  .tolist(), strict=True):  # fmt: skip
                out[index] = row
        if reading.targets is not None:
            stats = self.statistics(hidden, reading.rows[reading.stats], reading.targets,
                                    reading.top_k)  # fmt: skip
            for index, row in zip(reading.stats, _stat_rows(stats), strict=True):
                out[index] = row
        return [row[:width] for row, width in zip(out, reading.widths, strict=True)]

    def statistics(
        self, hidden: torch.Tensor, rows: torch.Tensor, targets: torch.Tensor, top_k: int
    ) -> TokenStats:
        """Whole-vocabulary statistics of ``targets`` at ``rows``."""
        if self.fused is not None:
            return token_stats(hidden, rows, targets, self.fused, top_k)
        normed = self.norm(hidden.index_select(0, rows)).to(torch.float32)
        return stats_of_normed(normed, targets, self._plain(), top_k)

    def scores(
        self, hidden: torch.Tensor, rows: torch.Tensor, candidates: torch.Tensor
    ) -> torch.Tensor:
        """(P, K) log-probabilities over each row's candidates (-inf at pads)."""
        if self.fused is not None:
            return token_logprobs(hidden, rows, candidates, self.fused)
        normed = self.norm(hidden.index_select(0, rows))
        return candidate_logprobs(normed, candidates, self._plain())

    def _plain(self) -> TokenHead:
        """The output layer as the references take it, for rows the model's own norm
        already normed (its norm fields unused)."""
        bias = None if self.layer.bias is None else self.layer.bias.detach()
        weight = self.layer.weight.detach()
        return TokenHead(weight.new_ones(1), 0.0, weight, bias, 0.0, self.softcap)


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


def _stat_rows(stats: TokenStats) -> list[list[float]]:
    """``[logprob, entropy, id_1, logprob_1, ...]`` per row (ids as floats: exact below
    2**24, far above any vocabulary)."""
    pairs = torch.stack([stats.top_ids.to(torch.float32), stats.top_logprobs], dim=-1)
    head = torch.stack([stats.logprobs, stats.entropies], dim=-1)
    table: list[list[float]] = torch.cat([head, pairs.flatten(1)], dim=1).cpu().tolist()
    return table


def _moved(tensor: torch.Tensor | None, device: torch.device) -> torch.Tensor | None:
    return None if tensor is None else tensor.to(device)
