"""Turn an item into what a process reward model reads: the response's steps, each ending
at a token where its score is read.

The response is split at the item's separator (blank steps dropped), written back joined
by the model's joiner with the model's tag after each step, and rendered with the prompt
through the chat template as the assistant's turn. The scored token of a step is the one
holding the last character of its tag (of the step itself when there is no tag), found
through the tokenizer's character offsets, so a tag that merges with its neighbours is
still read where it ends, never shifted. Steps whose ends fall in one token cannot be told
apart: the model reads one score there, so they are one step (``details.steps_merged``
counts the steps absorbed), never scored at a wrong place. Refusing them instead made an
``invalid`` a policy could buy with short steps under an untagged model.
"""

from __future__ import annotations

import bisect

from referee.gpu_rm.encoding import ChatEncoder, Encoded, Rejected, Truncation, Turn, Unearned
from referee.gpu_rm.errors import ModelMisconfigured
from referee.gpu_rm.settings import HeadKind, StepSpec
from referee.gpu_rm.verdict import Verdict, verdict_of

MAX_STEPS = 256


class StepEncoder:
    """Encodes items for one process reward model; ``verdict`` holds an ``lm`` head's
    positive/negative candidates (None for a classifier head)."""

    def __init__(self, chat: ChatEncoder, spec: StepSpec, head: HeadKind) -> None:
        self.chat = chat
        self.spec = spec
        self.head = head
        self.verdict: Verdict | None = None
        if head == "lm":
            groups = [(spec.positive_tokens, 1.0), (spec.negative_tokens, 0.0)]
            self.verdict = verdict_of(chat.tokenizer, groups)

    def split(self, response: str, separator: str) -> list[str]:
        """The response's non-blank steps."""
        return [step for step in response.split(separator) if step.strip()]

    def encode(
        self, prompt: list[Turn], response: str, separator: str, truncation: Truncation
    ) -> Encoded:
        """Encode one item; `Unearned` for a response without a step, with more than
        `MAX_STEPS` steps, or too long to read (`ChatEncoder.truncate`); `Rejected` for a
        prompt too long (special tokens in the response are read as text:
        `ChatEncoder.admit`; a written step tag adds no step); `ModelMisconfigured` when
        the model cannot read steps. Steps ending in one token are scored as one."""
        if self.head == "lm" and self.verdict is None:
            raise ModelMisconfigured(
                "steps.positive_tokens / steps.negative_tokens: no single token of this "
                "model's vocabulary on one side (REFEREE_RM_MODELS)"
            )
        for turn in prompt:
            self.chat.check("prompt", turn["content"])
        admitted = self.chat.admit("response", response)
        steps = self.split(admitted.text, separator)
        if not steps:
            raise Unearned("no_steps", "response: has no non-blank step")
        if len(steps) > MAX_STEPS:
            # the response's doing: its floor, never an ``invalid`` a policy could buy
            raise Unearned("too_many_steps", f"response: {len(steps)} steps (at most {MAX_STEPS})")
        built = self.spec.joiner.join(step + self.spec.tag for step in steps)
        rendered = self.chat.render([*prompt, {"role": "assistant", "content": built}])
        start = rendered.rfind(built)
        if start < 0:
            raise ModelMisconfigured(
                "the model's chat template changes the assistant's text, so steps cannot be "
                "located in it"
            )
        ids, spans = self.chat.tokenize(rendered, spans=True)
        ends = _tokens_at(spans, _step_ends(start, steps, self.spec))
        offsets = tuple(dict.fromkeys(ends))  # ends only grow: equal ones are neighbours
        details = {**self.chat.describe(ids), "steps": len(offsets)}
        if len(offsets) < len(ends):
            details["steps_merged"] = len(ends) - len(offsets)
        admitted.report(details)
        share_key = self.chat.render(prompt) if prompt else ""
        ids, offsets = self.chat.truncate(ids, truncation, details, offsets, share_key)
        candidates = self.verdict.candidates if self.verdict is not None else ()
        return Encoded(ids, share_key, details, offsets, candidates)


def _step_ends(start: int, steps: list[str], spec: StepSpec) -> list[int]:
    """The character index, in the rendered text, of each step's last character: its
    tag's when there is one, else the step's last non-blank one."""
    marks, position = [], start
    for step in steps:
        end = position + len(step) + len(spec.tag)
        marks.append(end - 1 if spec.tag else position + len(step.rstrip()) - 1)
        position = end + len(spec.joiner)
    return marks


def _tokens_at(spans: list[tuple[int, int]], marks: list[int]) -> tuple[int, ...]:
    """For each character index of ``marks``, the last token starting at or before it
    (the one holding it, or the one before a gap the tokenizer did not cover); tokens
    without text (special tokens a post-processor adds) are never chosen."""
    real = [token for token, (a, b) in enumerate(spans) if b > a]
    starts = [spans[token][0] for token in real]
    found = []
    for mark in marks:
        index = bisect.bisect_right(starts, mark) - 1
        if index < 0:
            raise Rejected("untokenizable", "response: a step's end maps to no token")
        found.append(real[index])
    return tuple(found)
