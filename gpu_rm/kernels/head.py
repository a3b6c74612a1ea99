"""The parameters the scoring kernels need: an RMS final norm and a linear reward head
(`ScoreHead`), or the same norm and a language model's output layer (`TokenHead`)."""

from __future__ import annotations

from dataclasses import dataclass

import torch


@dataclass(frozen=True)
class ScoreHead:
    """A model's final RMSNorm and reward head, detached from the model.

    ``norm_weight`` is (H,), ``head_weight`` (K, H) contiguous, ``head_bias`` (K,) or None,
    all in the model's dtype and on its device. ``norm_offset`` is added to the norm weight
    (1.0 for Gemma-style norms that store ``weight - 1``, else 0.0).
    """

    norm_weight: torch.Tensor
    norm_eps: float
    head_weight: torch.Tensor
    head_bias: torch.Tensor | None = None
    norm_offset: float = 0.0

    @property
    def num_outputs(self) -> int:
        """K, the number of reward outputs (objectives)."""
        return int(self.head_weight.shape[0])


@dataclass(frozen=True)
class TokenHead:
    """A causal language model's final RMSNorm and output layer, detached from the model.

    ``norm_weight`` (H,) and ``lm_weight`` (V, H) contiguous, in the model's dtype and on
    its device; ``lm_bias`` (V,) or None; ``norm_offset`` as in `ScoreHead`; ``softcap``
    the model's final logit soft-capping (``tanh(z / c) * c``; 0 for none).
    """

    norm_weight: torch.Tensor
    norm_eps: float
    lm_weight: torch.Tensor
    lm_bias: torch.Tensor | None = None
    norm_offset: float = 0.0
    softcap: float = 0.0

    @property
    def vocab_size(self) -> int:
        """V, the rows of the output layer."""
        return int(self.lm_weight.shape[0])
