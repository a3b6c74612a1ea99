"""Find the program in a model's response.

Rule, in order: the last fenced block (```` ```lang ````) whose info string names the
requested language (or one of its aliases); when no language is requested, the last
fenced block of any language; when the response has no fence at all, the whole response
(some prompts ask for bare code). A response whose extracted code is blank has no code.

Asymmetry on purpose: when a language *is* requested and fenced blocks exist but none is
tagged with it, the last *untagged* block is taken (models often omit the tag), never a
block tagged with another language.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

# An opening fence of 3+ backticks or tildes, an optional info string, the body, and a
# closing fence of the same kind at least as long. An unclosed final fence runs to the end
# of the text (truncated generations are common in RL).
_FENCE = re.compile(
    r"^[ \t]*(?P<fence>`{3,}|~{3,})[ \t]*(?P<info>[^\n`]*)\n(?P<body>.*?)"
    r"(?:^[ \t]*(?P=fence)[`~]*[ \t]*$|\Z)",
    re.MULTILINE | re.DOTALL,
)

# Info-string tags that name the same language as a sandbox language name.
_TAGS: dict[str, frozenset[str]] = {
    "python3": frozenset({"python", "python3", "py", "py3"}),
    "cpp": frozenset({"cpp", "c++", "cxx", "cc"}),
    "c": frozenset({"c"}),
    "java": frozenset({"java"}),
    "javascript": frozenset({"javascript", "js", "node", "nodejs"}),
    "go": frozenset({"go", "golang"}),
    "rust": frozenset({"rust", "rs"}),
    "bash": frozenset({"bash", "sh", "shell"}),
    "sql": frozenset({"sql", "sqlite"}),
    "verilog": frozenset({"verilog", "systemverilog", "v", "sv"}),
}

Source = Literal["fenced", "whole_response", "none"]


@dataclass(frozen=True)
class Extraction:
    """The code found (empty when ``source`` is ``none``) and where it came from."""

    code: str
    source: Source
    tag: str = ""


def tags_for(language: str) -> frozenset[str]:
    """Fence tags accepted for the sandbox ``language`` (its own name at least)."""
    return _TAGS.get(language, frozenset({language}))


def extract_code(text: str, language: str | None) -> Extraction:
    """Extract the program from ``text`` (untrusted model output) for ``language``
    (a sandbox language name, or None for any); see the module docstring."""
    blocks = [
        (m.group("info").strip().split(" ")[0].lower(), m.group("body"))
        for m in _FENCE.finditer(text)
    ]
    if not blocks:
        return _found(text, "whole_response", "")
    if language is None:
        chosen = blocks[-1]
    else:
        wanted = tags_for(language)
        tagged = [b for b in blocks if b[0] in wanted]
        untagged = [b for b in blocks if not b[0]]
        if not (tagged or untagged):
            return Extraction("", "none")
        chosen = (tagged or untagged)[-1]
    return _found(chosen[1], "fenced", chosen[0])


def _found(code: str, source: Source, tag: str) -> Extraction:
    if not code.strip():
        return Extraction("", "none", tag)
    return Extraction(code, source, tag)
