"""Text normalisation options shared by the rule verifiers."""

from __future__ import annotations

import re
import unicodedata

from pydantic import BaseModel, ConfigDict

_WHITESPACE = re.compile(r"\s+")


class Normalization(BaseModel):
    """How both sides are normalised before comparing. Applied in the order listed."""

    model_config = ConfigDict(extra="forbid")

    nfkc: bool = True
    """Unicode NFKC: full-width letters, ligatures and compatibility forms fold together."""
    strip: bool = True
    """Remove leading and trailing whitespace."""
    collapse_whitespace: bool = False
    """Replace every run of whitespace (including newlines) with one space."""
    casefold: bool = False
    """Compare case-insensitively (Unicode case folding, so 'Straße' == 'STRASSE')."""

    def apply(self, text: str) -> str:
        """Return ``text`` normalised by the enabled options."""
        if self.nfkc:
            text = unicodedata.normalize("NFKC", text)
        if self.strip:
            text = text.strip()
        if self.collapse_whitespace:
            text = _WHITESPACE.sub(" ", text)
        if self.casefold:
            text = text.casefold()
        return text
