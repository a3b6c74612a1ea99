"""How a trainer's sample becomes a referee `Item`: declared, not coded."""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from typing import Any

import orjson
from pydantic import BaseModel, ConfigDict, Field

from referee.verifiers.types import Conversation, Item


class ItemMapping(BaseModel):
    """Which verifier scores a sample, with which params, against which column.

    ``reference_column`` names the dataset column (TRL kwargs, verl ``ground_truth``,
    OpenRLHF ``labels``) holding the reference; ``reference`` is a fixed reference used
    when no column is named. Samples of one prompt share a ``group`` so the response
    carries GRPO group statistics.
    """

    model_config = ConfigDict(extra="forbid")

    verifier: str = "math"
    params: dict[str, Any] = Field(default_factory=dict)
    reference_column: str | None = "answer"
    reference: Any = None
    group_by_prompt: bool = True

    def item(
        self,
        prompt: str | Conversation | None,
        response: str | Conversation,
        row: Mapping[str, Any],
        group: str | None = None,
    ) -> Item:
        """The item for one sample; ``row`` holds this sample's dataset columns."""
        reference = self.reference
        if self.reference_column is not None and self.reference_column in row:
            reference = row[self.reference_column]
        return Item(
            verifier=self.verifier,
            prompt=prompt,
            response=response,
            reference=reference,
            params=self.params,
            group=group if self.group_by_prompt else None,
        )


def row_at(columns: Mapping[str, Any], index: int) -> dict[str, Any]:
    """Sample ``index`` of column-major batch data (TRL passes columns as lists)."""
    return {
        name: values[index]
        for name, values in columns.items()
        if isinstance(values, list | tuple) and index < len(values)
    }


def group_key(prompt: object) -> str:
    """A stable group key for a prompt (text or messages)."""

    raw = prompt.encode() if isinstance(prompt, str) else orjson.dumps(prompt, default=str)
    return hashlib.blake2b(raw, digest_size=12).hexdigest()
