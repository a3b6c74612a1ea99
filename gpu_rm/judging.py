"""Turn an item into what a generative reward model reads: a judging prompt whose next
token is the verdict.

The template (the model's, or the item's) is filled in one pass: ``{prompt}``,
``{response}`` and ``{reference}``, nothing else, and text put in for one placeholder is
never read again, so a response that writes "{reference}" shows those characters, not
the reference. The filled text is the user turn of the model's chat template, followed
by its generation prompt; the verdict is read at the last token. Items with the same
template and prompt share their token prefix in a batch (computed once).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Literal

from referee.gpu_rm.encoding import ChatEncoder, Encoded, Rejected, Truncation
from referee.gpu_rm.settings import JudgeSpec
from referee.gpu_rm.verdict import Verdict, verdict_of

JudgeMode = Literal["yes_no", "score", "pairwise"]
_PLACEHOLDER = re.compile(r"\{(prompt|response|reference)\}")


def fill(template: str, values: Mapping[str, str]) -> str:
    """``template`` with each placeholder replaced, in one pass (see the module docstring)."""
    return _PLACEHOLDER.sub(lambda match: values[match.group(1)], template)


class JudgeEncoder:
    """Encodes items for one model; ``verdicts`` holds each mode's candidates (None for a
    mode this vocabulary cannot read)."""

    def __init__(self, chat: ChatEncoder, spec: JudgeSpec) -> None:
        self.chat = chat
        self.spec = spec
        tokenizer = chat.tokenizer
        self.verdicts: dict[JudgeMode, Verdict | None] = {
            "yes_no": verdict_of(tokenizer, [(spec.yes_tokens, 1.0), (spec.no_tokens, 0.0)]),
            "score": verdict_of(tokenizer, [([t], v) for t, v in spec.score_tokens.items()]),
            "pairwise": verdict_of(
                tokenizer, [(spec.first_tokens, 1.0), (spec.second_tokens, 0.0)]
            ),
        }

    def template_for(self, mode: JudgeMode) -> str:
        """The model's default template for ``mode``."""
        if mode == "score":
            return self.spec.score_template
        if mode == "pairwise":
            return self.spec.pairwise_template
        return self.spec.template

    def encode(
        self,
        texts: Mapping[str, str],
        mode: JudgeMode,
        template: str | None,
        truncation: Truncation,
        own: str = "response",
    ) -> Encoded:
        """Encode ``texts`` (``prompt``, ``response`` and, when given, ``reference``);
        ``own``: the one holding the text being rewarded (``reference`` when a pair is read
        the other way round), which alone is charged when the item is too long.
        Raises `Rejected` for unencodable text, an empty ``reference`` when pairwise, a
        template missing a placeholder the mode needs, or an over-long item under
        ``reject`` (no policy may cut the verdict position). An empty response is judged.
        Special tokens in text the policy wrote (the response; the reference too when
        pairwise, where it is the other response) are read as text (`ChatEncoder.admit`)."""
        verdict = self.verdicts[mode]
        if verdict is None:
            raise Rejected("unsupported_mode", f"params.mode: this model's vocabulary cannot "
                           f"read {mode!r} verdicts (no single-token candidates)")  # fmt: skip
        chosen = template if template is not None else self.template_for(mode)
        needed = ("response", "reference") if mode == "pairwise" else ("response",)
        for name in needed:
            if "{" + name + "}" not in chosen:
                raise Rejected("invalid_params", f"params.template: has no {{{name}}}")
        admitted = [self.chat.admit(name, texts.get(name, "")) for name in needed]
        for name, text in texts.items():
            if name not in needed:
                self.chat.check(name, text)
        texts = {**texts, **{name: a.text for name, a in zip(needed, admitted, strict=True)}}
        # the client's other response, missing or only stop tokens (read the other way
        # round, the reference slot holds the item's own response: empty is judged)
        if "reference" in needed and own != "reference" and not texts["reference"].strip():
            raise Rejected("empty_reference", "reference: is empty")
        filled = fill(chosen, {"prompt": "", "reference": "", **texts})
        rendered = self.chat.render([{"role": "user", "content": filled}], generation_prompt=True)
        ids, _ = self.chat.tokenize(rendered)
        details = {**self.chat.describe(ids), "mode": mode}
        for found in admitted:
            found.report(details)
        alone = None  # rendered only for an item too long: off the hot path
        if len(ids) > self.chat.max_length:
            bare = fill(chosen, {"prompt": "", "reference": "", **texts, own: ""})
            alone = self.chat.render([{"role": "user", "content": bare}], generation_prompt=True)
        ids, _ = self.chat.truncate(ids, truncation, details, (len(ids) - 1,), alone)
        share_key = f"{chosen}\0{texts.get('prompt', '')}"
        return Encoded(ids, share_key, details, candidates=verdict.candidates)
