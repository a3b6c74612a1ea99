"""A trainer's decoded text as the policy wrote it.

OpenRLHF decodes its queries with ``skip_special_tokens=False``: the response ends with
the stop token the policy ended on (``<|im_end|>``, ``<|eot_id|>``, ``</s>``...), written
out as text. Compared as text, it would fail every rule that looks at the response's end
(an exact answer, IFEval's ``end_checker``, a JSON format), so it is dropped. Older
OpenRLHF versions send the query alone: when it holds a known chat template's assistant
marker, the response is what follows the last one (never the prompt's text, whose
few-shot answers would otherwise be scored).
"""

from __future__ import annotations

STOP_TOKENS = (
    "<|im_end|>",  # ChatML: Qwen, Yi, many fine-tunes
    "<|endoftext|>",  # GPT-2 family, Qwen's end of text
    "<|eot_id|>",  # Llama 3
    "<|eom_id|>",
    "<|end_of_text|>",
    "</s>",  # Llama 2, Mistral
    "<end_of_turn>",  # Gemma
    "<eos>",
    "<|end|>",  # Phi-3
    "<|return|>",  # gpt-oss
    "<\uff5cend\u2581of\u2581sentence\uff5c>",  # DeepSeek
)
"""End-of-turn and end-of-text tokens of the common model families, as text."""

ASSISTANT_MARKERS = (
    "<|im_start|>assistant\n",
    "<|start_header_id|>assistant<|end_header_id|>\n\n",
    "<start_of_turn>model\n",
    "<|assistant|>\n",
    "<\uff5cAssistant\uff5c>",
    "[/INST]",
)
"""What the common chat templates write before the assistant's text."""


def without_stop_tokens(text: str) -> str:
    """``text`` without the stop tokens (and the blanks between them) at its end."""
    while True:
        trimmed = text.rstrip()
        end = next((token for token in STOP_TOKENS if trimmed.endswith(token)), None)
        if end is None:
            return text
        text = trimmed[: -len(end)]


def last_assistant_turn(query: str) -> str | None:
    """The text after the last assistant marker of a known chat template, or None when
    the query holds none."""
    found = max(((query.rfind(m), m) for m in ASSISTANT_MARKERS), key=lambda pair: pair[0])
    start, marker = found
    if start < 0:
        return None
    return query[start + len(marker) :]
