"""The parameters the scoring kernel needs: an RMS final norm and a linear reward head."""

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
