"""Which attention a loaded model gets: can packing reproduce its attention exactly?

Packing replaces the model's own attention mask with one built from the layout, so it is
exact only for causal decoder attention, optionally with a sliding window and logit
soft-capping (both part of the flex mask and score function). Anything else (a
bidirectional prefix, chunked local attention, an architecture nobody checked) is scored
by the plain padded forward instead: never a silently different score.
"""

from __future__ import annotations

from typing import Any

import torch

from referee.gpu_rm.attention import AttentionBackend
from referee.gpu_rm.settings import Attention

Mode = AttentionBackend | str
PADDED = "padded"

CHECKED_FAMILIES = frozenset(
    {"llama", "mistral", "qwen2", "qwen3", "gemma", "gemma2", "gemma3_text", "phi3", "olmo2"}
)
"""Architectures whose packed scores are checked against their own padded forward (the
first three families in CI, on every run; the rest share their attention code)."""


def packing_problem(model: Any) -> str | None:
    """Why packing cannot reproduce ``model``'s attention, or None when it can."""
    config = model.config
    family = getattr(config, "model_type", "")
    if family not in CHECKED_FAMILIES:
        return f"architecture {family!r} is not checked for packing"
    if getattr(config, "use_bidirectional_attention", False):
        return "bidirectional attention"
    if getattr(config, "attention_chunk_size", None):
        return "chunked attention"
    if any(getattr(m, "is_causal", True) is False for m in _attention_modules(model)):
        return "non-causal attention layers"
    return None


def needs_flex(model: Any) -> bool:
    """True when a layer has a sliding window or logit soft-capping (a layer's own
    attribute, else its config's: Mistral reads the window from the config per call)."""
    for module in _attention_modules(model):
        config = getattr(module, "config", None)
        window = getattr(module, "sliding_window", getattr(config, "sliding_window", None))
        if window or getattr(module, "attn_logit_softcapping", None):
            return True
    return False


def choose(wanted: Attention, model: Any, device: torch.device) -> tuple[Mode, str | None]:
    """The attention mode for ``model`` on ``device`` and, when it is not what ``wanted``
    asked for, why."""
    problem = packing_problem(model)
    if problem is not None:
        return PADDED, None if wanted == PADDED else f"packing off: {problem}"
    if wanted == "auto":
        flex = device.type == "cuda" or needs_flex(model)
        return ("flex" if flex else "segments"), None
    if wanted == "segments" and needs_flex(model):
        return "flex", "segments cannot apply sliding windows or soft-capping: using flex"
    return wanted, None


def _attention_modules(model: Any) -> list[Any]:
    return [m for name, m in model.named_modules() if name.endswith("self_attn")]
