"""The ``instructions`` verifier agrees with lm-eval's IFEval checkers: every constraint
type, several kwargs each, on a pool of responses written to hit and miss each
constraint (sentence ends Punkt must judge among them), strict and loose."""

from __future__ import annotations

from typing import Any

import pytest

from referee.verifiers.instructions import InstructionsVerifier
from referee.verifiers.instructions.text import language_of
from referee.verifiers.instructions.verifier import loose_variants
from referee.verifiers.types import Item
from tests.verifiers.instructions.lm_eval_ifeval import (
    ifeval_registry,
    lm_eval_follows,
)

PROMPT = "Write a poem about cats."
TEXTS = [
    "",
    "   ",
    "The cat sat on the mat. The dog barked at the cat, and then the cat ran away.",
    "the cat sat on the mat and the dog barked at it all day long",
    "THE CAT SAT ON THE MAT AND THE DOG BARKED AT IT ALL DAY LONG",
    "Le chat est assis sur le tapis et le chien aboie toute la journée.",
    "Die Katze sitzt auf der Matte und der Hund bellt den ganzen Tag.",
    "El gato está sentado en la alfombra y el perro ladra todo el día.",
    "猫はマットの上に座っていて、犬は一日中吠えています。",
    "12345 67890 !!!",
    "Sure!\n* first point\n* second point\n- third point\nHope this helps",
    "* one\n* two\n** not a bullet\n- three\n-four",
    "This has *one highlight* and **another one** and ** ** and *also this*.",
    "Section 1\nThe first part.\nSection 2\nThe second part.\nSECTION 3 the third.",
    "Paragraph one about cats.\n***\nParagraph two about dogs.\n***\nParagraph three.",
    "Paragraph one.\n***\n\n***\nParagraph three after an empty one.",
    "***\nOnly paragraph, with separators around it.\n***",
    "The first paragraph starts here.\n\nSecond paragraph starts with second.\n\nThird one.",
    "\n\nThe leading empty part.\n\nsecond one",
    "Main text here.\nP.S. a postscript.",
    "Main text.\np.p.s also this one",
    "Main text.\nNote: remember the cats.",
    '{"cats": 3, "dogs": [1, 2]}',
    '```json\n{"cats": 3}\n```',
    "{cats: 3}",
    "<<A Title About Cats>>\nThe poem follows.",
    "<<>> no real title here",
    "First answer about cats.\n******\nSecond answer about dogs.",
    "Same answer.\n******\nSame answer.",
    '"The whole response is quoted."',
    "My answer is yes.",
    "I think... My answer is maybe. Let me explain.",
    "The dogs are friendly. Any other questions?",
    '"Is there anything else I can help with?"',
    "Fill in [name] and [address] please, [ ] too.",
    "Write a poem about cats. Cats are soft, cats are warm.",
    "write a POEM about cats: meow.",
    "zebra zebra zebra, the zoo is fun; the end.",
    "No commas here at all just words",
    "the the the the cat cat",
    "Dr. Smith went to Washington. He arrived at 3 p.m. on Jan. 5th! Did he stay?",
    "Mr. and Mrs. Jones live in the U.S. They moved there in 1999. It was e.g. fine.",
    'She said "Stop." Then she left... Nobody followed her. (Really.) The end',
    "The price rose 3.5 percent. Analysts, i.e. most of them, expected 2.1 percent.",
    "I DON'T KNOW WHY. THE U.S.A. IS BIG! We CAN'T say, can we? OK.",
    "WELL-KNOWN FACTS: NASA and the FBI. NASA'S budget is HUGE; THE FBI'S is not.",
    "One sentence without an end",
    "A list: 1. first item. 2. second item. 3. third item.",
    "Please DON'T STOP now.",
    "Dr. Smith met Mr. Jones. They talked.",
]
KWARGS: dict[str, list[dict[str, Any]]] = {
    "keywords:existence": [
        {"keywords": ["cat", "dog"]},
        {"keywords": ["zebra"]},
        {"keywords": ["section"]},
    ],
    "keywords:frequency": [
        {"keyword": "the", "frequency": 2, "relation": "less than"},
        {"keyword": "the", "frequency": 3, "relation": "at least"},
        {"keyword": "cat", "frequency": 1, "relation": "at least"},
    ],
    "keywords:forbidden_words": [{"forbidden_words": ["dog", "mat"]}, {"forbidden_words": ["the"]}],
    "keywords:letter_frequency": [
        {"letter": "e", "let_frequency": 5, "let_relation": "at least"},
        {"letter": "z", "let_frequency": 1, "let_relation": "less than"},
    ],
    "language:response_language": [{"language": code} for code in ("en", "fr", "de", "es", "ja")],
    "length_constraints:number_paragraphs": [{"num_paragraphs": n} for n in (1, 2, 3)],
    "length_constraints:number_words": [
        {"num_words": 10, "relation": "less than"},
        {"num_words": 10, "relation": "at least"},
        {"num_words": 3, "relation": "at least"},
    ],
    "length_constraints:nth_paragraph_first_word": [
        {"num_paragraphs": 3, "nth_paragraph": 1, "first_word": "the"},
        {"num_paragraphs": 3, "nth_paragraph": 2, "first_word": "second"},
        {"num_paragraphs": 2, "nth_paragraph": 2, "first_word": "the"},
    ],
    "detectable_content:number_placeholders": [{"num_placeholders": n} for n in (1, 2, 3)],
    "detectable_content:postscript": [{"postscript_marker": m} for m in ("P.S.", "P.P.S", "Note")],
    "detectable_format:number_bullet_lists": [{"num_bullets": n} for n in (1, 3, 4)],
    "detectable_format:constrained_response": [{}],
    "detectable_format:number_highlighted_sections": [{"num_highlights": n} for n in (1, 2, 4)],
    "detectable_format:multiple_sections": [
        {"section_spliter": "Section", "num_sections": 2},
        {"section_spliter": "SECTION", "num_sections": 1},
        {"section_spliter": "Section", "num_sections": 3},
    ],
    "detectable_format:json_format": [{}],
    "detectable_format:title": [{}],
    "combination:two_responses": [{}],
    "combination:repeat_prompt": [{"prompt_to_repeat": PROMPT}],
    "startend:end_checker": [
        {"end_phrase": "Any other questions?"},
        {"end_phrase": "Is there anything else I can help with?"},
    ],
    "startend:quotation": [{}],
    "change_case:english_capital": [{}],
    "change_case:english_lowercase": [{}],
    "punctuation:no_comma": [{}],
    "length_constraints:number_sentences": [
        {"num_sentences": 2, "relation": "less than"},
        {"num_sentences": 3, "relation": "at least"},
        {"num_sentences": 4, "relation": "less than"},
    ],
    "change_case:capital_word_frequency": [
        {"capital_frequency": 2, "capital_relation": "at least"},
        {"capital_frequency": 3, "capital_relation": "less than"},
        {"capital_frequency": 6, "capital_relation": "at least"},
    ],
}
LANGUAGE_CHECKS = {
    "language:response_language",
    "change_case:english_capital",
    "change_case:english_lowercase",
}


def undetectable(text: str, mode: str) -> bool:
    """Where we differ on purpose (the module docstring of
    verifiers.instructions.constraints): IFEval passes a language check on a text, or in
    loose mode on any variant of it, whose language cannot be detected (no letters)."""
    variants = loose_variants(text) if mode == "loose" else [text]
    return any(v.strip() and language_of(v) is None for v in variants)


def test_every_constraint_type_is_compared() -> None:
    from referee.verifiers.instructions.constraints import CONSTRAINTS

    assert set(KWARGS) == set(CONSTRAINTS)
    assert set(ifeval_registry()) == set(CONSTRAINTS)


@pytest.mark.parametrize("mode", ["strict", "loose"])
def test_verdicts_agree_with_lm_eval(mode: str) -> None:
    registry = ifeval_registry()
    verifier = InstructionsVerifier()
    compared, disagreements = 0, []
    for instruction, variants in KWARGS.items():
        for kwargs in variants:
            items = [
                Item(
                    verifier="instructions",
                    prompt=PROMPT,
                    response=text,
                    reference={"instruction_id_list": [instruction], "kwargs": [kwargs]},
                    params={"mode": mode},
                )
                for text in TEXTS
            ]
            for text, result in zip(TEXTS, verifier.score(items), strict=True):
                assert result.status.value == "ok", (instruction, kwargs, result.error)
                ours = result.reward == 1.0
                theirs = lm_eval_follows(
                    registry, instruction, kwargs, PROMPT, text, mode == "loose"
                )
                compared += 1
                deliberate = instruction in LANGUAGE_CHECKS and undetectable(text, mode)
                if ours != theirs and not (deliberate and theirs and not ours):
                    disagreements.append((instruction, kwargs, text[:40], ours, theirs))
    assert compared > 1500
    assert disagreements == [], (len(disagreements), disagreements[:8])
