"""Tagged blocks in a response (``<answer>...</answer>``, ``<tool_call>...</tool_call>``),
found in linear time.

`blocks` reads what ``re.findall(open + r"\\s*(.*?)\\s*" + close, text, re.DOTALL)``
reads: left to right, each opening tag paired with the first closing tag after it, the
content stripped of whitespace. That regex is quadratic on a response of many unclosed
opening tags (it rescans to the end of the text from each: 20,000 ``<tool_call>`` tags,
220 kB, took 60 s), and a policy stuck repeating a tag writes exactly that.
"""

from __future__ import annotations


def blocks(text: str, open_tag: str, close_tag: str) -> list[str]:
    """The stripped contents of the ``open_tag``...``close_tag`` blocks of ``text``, in order."""
    found: list[str] = []
    at = 0
    while (start := text.find(open_tag, at)) >= 0:
        end = text.find(close_tag, start + len(open_tag))
        if end < 0:
            break
        found.append(text[start + len(open_tag) : end].strip())
        at = end + len(close_tag)
    return found
