"""BFCL's own AST checker and sample data (``bfcl-eval`` installed ``--no-deps`` by
scripts/test.sh), loaded without the model handlers its config module imports."""

from __future__ import annotations

import importlib
import json
import sys
from pathlib import Path
from types import ModuleType, SimpleNamespace
from typing import Any

import pytest


def bfcl_checker() -> ModuleType:
    """``bfcl_eval.eval_checker.ast_eval.ast_checker``. Its ``model_config`` import (every
    model handler: openai, anthropic, vllm...) is replaced by the one entry it reads: a
    model that keeps dots in function names."""
    if importlib.util.find_spec("bfcl_eval") is None:
        pytest.fail("bfcl-eval is not installed: run scripts/test.sh")
    config = ModuleType("bfcl_eval.constants.model_config")
    config.MODEL_CONFIG_MAPPING = {"referee": SimpleNamespace(underscore_to_dot=False)}  # type: ignore[attr-defined]
    sys.modules.setdefault("bfcl_eval.constants.model_config", config)
    return importlib.import_module("bfcl_eval.eval_checker.ast_eval.ast_checker")


def bfcl_no_call(text: str) -> bool:
    """BFCL's irrelevance verdict on a model's text: its prompting decoder, then
    ``is_empty_output``; any decoding failure counts as "no call", as in its runner."""
    bfcl_checker()  # the config stub before BFCL's modules load
    utils = importlib.import_module("bfcl_eval.model_handler.utils")
    shared = importlib.import_module("bfcl_eval.utils")
    try:
        decoded = utils.default_decode_ast_prompting(text)
    except Exception:  # noqa: BLE001 - BFCL counts any decoding failure as "no call"
        return True
    return bool(shared.is_empty_output(decoded))


def bfcl_entries(category: str) -> list[dict[str, Any]]:
    """Every sample of ``category`` (``irrelevance`` has no ground truth)."""
    return _lines(_data() / f"BFCL_v4_{category}.json")


def bfcl_data(category: str) -> list[tuple[dict[str, Any], list[dict[str, Any]]]]:
    """(entry, ground truth) of every sample of ``category`` (``simple_python``...)."""
    data = _data()
    entries = bfcl_entries(category)
    answers = {
        a["id"]: a["ground_truth"]
        for a in _lines(data / "possible_answer" / f"BFCL_v4_{category}.json")
    }
    return [(entry, answers[entry["id"]]) for entry in entries]


def _data() -> Path:
    spec = importlib.util.find_spec("bfcl_eval")
    assert spec is not None and spec.origin is not None
    return Path(spec.origin).parent / "data"


def _lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
