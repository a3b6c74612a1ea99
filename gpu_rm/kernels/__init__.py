"""Scoring kernels: fused last-token gather + final norm + reward head, and its reference.

`score_last_tokens` dispatches; `score_reference` is the contract; the Triton kernel lives
in `gpu_rm.kernels.triton_score` and is imported only when used.
"""

from referee.gpu_rm.kernels.dispatch import Backend, score_last_tokens
from referee.gpu_rm.kernels.head import ScoreHead
from referee.gpu_rm.kernels.reference import score_reference

__all__ = ["Backend", "ScoreHead", "score_last_tokens", "score_reference"]
