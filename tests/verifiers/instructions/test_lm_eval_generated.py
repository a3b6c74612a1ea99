"""Agreement with lm-eval's IFEval checkers on generated cases: responses assembled from
the pieces the constraints look at (sentence ends, abbreviations, capitals and
contractions, bullets, highlights, sections, paragraphs, postscripts, titles, quotes,
JSON, commas) and kwargs drawn for every type, strict and loose. The written pool is in
test_lm_eval_agreement.py; this finds what nobody thought to write."""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from referee.verifiers.instructions import InstructionsVerifier
from referee.verifiers.types import Item, Status
from tests.verifiers.instructions.lm_eval_ifeval import ifeval_registry, lm_eval_follows
from tests.verifiers.instructions.test_lm_eval_agreement import LANGUAGE_CHECKS, undetectable

PROMPT = "Write about cats and dogs."
WORDS = [
    "the",
    "cat",
    "dog",
    "Cats",
    "DOGS",
    "ARE",
    "great",
    "Mr.",
    "Dr.",
    "e.g.",
    "U.S.",
    "i.e.",
    "don't",
    "DON'T",
    "CAN'T",
    "it's",
    "NASA's",
    "3.5",
    "1999",
    "well-known",
    "WELL-KNOWN",
    "zebra",
    "Section",
    "SECTION",
    "Paragraph",
    "answer",
    "yes",
    "[name]",
    "[place]",
    "[ ]",
    "*bold*",
    "**strong**",
    "* *",
    "<<Title>>",
    "<<>>",
    "P.S.",
    "p.p.s",
    "Note:",
    '"quoted"',
    "'single'",
    "(aside)",
    "le",
    "chat",
    "est",
    "très",
    "mignon",
    "der",
    "Hund",
    "ist",
    "groß",
    "猫",
    "犬",
    "は",
    "かわいい",
    '{"a": 1}',
    "My answer is yes.",
    "Any other questions?",
]
PUNCTUATION = ["", "", "", ".", ",", "!", "?", "...", ";", ":", " -"]
BREAKS = [
    " ",
    " ",
    " ",
    " ",
    "\n",
    "\n\n",
    "\n***\n",
    "\n* ",
    "\n- ",
    "\n******\n",
    "\nSection 2\n",
]


@st.composite
def responses(draw: st.DrawFn) -> str:
    pieces = []
    for _ in range(draw(st.integers(0, 40))):
        pieces.append(draw(st.sampled_from(WORDS)) + draw(st.sampled_from(PUNCTUATION)))
        pieces.append(draw(st.sampled_from(BREAKS)))
    text = "".join(pieces)
    wrap = draw(st.sampled_from(["", "", "", '"', "```json\n"]))
    return f"{wrap}{text}{'```' if wrap.startswith('```') else wrap}"


RELATIONS = st.sampled_from(["less than", "at least"])
# From 1: lm-eval's pipeline drops falsy kwargs and draws a random value over a 0 (referee
# takes a 0 as given: see verifiers.instructions.constraints).
COUNT = st.integers(1, 8)
KWARGS: dict[str, st.SearchStrategy[dict[str, Any]]] = {
    "keywords:existence": st.fixed_dictionaries(
        {"keywords": st.lists(st.sampled_from(["cat", "dog", "zebra", "yes"]), min_size=1)}
    ),
    "keywords:frequency": st.fixed_dictionaries(
        {
            "keyword": st.sampled_from(["cat", "the", "dog"]),
            "frequency": COUNT,
            "relation": RELATIONS,
        }
    ),
    "keywords:forbidden_words": st.fixed_dictionaries(
        {"forbidden_words": st.lists(st.sampled_from(["cat", "dog", "the", "est"]), min_size=1)}
    ),
    "keywords:letter_frequency": st.fixed_dictionaries(
        {
            "letter": st.sampled_from(["a", "e", "z", "T"]),
            "let_frequency": COUNT,
            "let_relation": RELATIONS,
        }
    ),
    "language:response_language": st.fixed_dictionaries(
        {"language": st.sampled_from(["en", "fr", "de", "ja"])}
    ),
    "length_constraints:number_sentences": st.fixed_dictionaries(
        {"num_sentences": COUNT, "relation": RELATIONS}
    ),
    "length_constraints:number_paragraphs": st.fixed_dictionaries({"num_paragraphs": COUNT}),
    "length_constraints:number_words": st.fixed_dictionaries(
        {"num_words": st.integers(1, 60), "relation": RELATIONS}
    ),
    "length_constraints:nth_paragraph_first_word": st.fixed_dictionaries(
        {
            "num_paragraphs": st.integers(1, 4),
            "nth_paragraph": st.integers(1, 4),
            "first_word": st.sampled_from(["the", "cat", "section"]),
        }
    ),
    "detectable_content:number_placeholders": st.fixed_dictionaries({"num_placeholders": COUNT}),
    "detectable_content:postscript": st.fixed_dictionaries(
        {"postscript_marker": st.sampled_from(["P.S.", "P.P.S", "Note"])}
    ),
    "detectable_format:number_bullet_lists": st.fixed_dictionaries({"num_bullets": COUNT}),
    "detectable_format:constrained_response": st.just({}),
    "detectable_format:number_highlighted_sections": st.fixed_dictionaries(
        {"num_highlights": COUNT}
    ),
    "detectable_format:multiple_sections": st.fixed_dictionaries(
        {"section_spliter": st.sampled_from(["Section", "SECTION"]), "num_sections": COUNT}
    ),
    "detectable_format:json_format": st.just({}),
    "detectable_format:title": st.just({}),
    "combination:two_responses": st.just({}),
    "combination:repeat_prompt": st.just({"prompt_to_repeat": PROMPT}),
    "startend:end_checker": st.fixed_dictionaries(
        {"end_phrase": st.sampled_from(["Any other questions?", "the end"])}
    ),
    "startend:quotation": st.just({}),
    "change_case:english_capital": st.just({}),
    "change_case:english_lowercase": st.just({}),
    "change_case:capital_word_frequency": st.fixed_dictionaries(
        {"capital_frequency": COUNT, "capital_relation": RELATIONS}
    ),
    "punctuation:no_comma": st.just({}),
}
VERIFIER = InstructionsVerifier()


def test_every_type_is_generated() -> None:
    assert set(KWARGS) == set(ifeval_registry())


@settings(
    max_examples=1500,
    deadline=None,
    derandomize=True,  # the same draws each run (15,000 fresh ones agreed here once)
    suppress_health_check=[HealthCheck.too_slow],
)
@given(
    st.sampled_from(sorted(KWARGS)).flatmap(lambda i: st.tuples(st.just(i), KWARGS[i])),
    responses(),
    st.sampled_from(["strict", "loose"]),
)
def test_generated_cases_get_lm_evals_verdict(
    case: tuple[str, dict[str, Any]], text: str, mode: str
) -> None:
    instruction, kwargs = case
    item = Item(
        verifier="instructions",
        prompt=PROMPT,
        response=text,
        reference={"instruction_id_list": [instruction], "kwargs": [kwargs]},
        params={"mode": mode},
    )
    [result] = VERIFIER.score([item])
    assert result.status == Status.OK, result.error
    ours = result.reward == 1.0
    theirs = lm_eval_follows(ifeval_registry(), instruction, kwargs, PROMPT, text, mode == "loose")
    deliberate = instruction in LANGUAGE_CHECKS and undetectable(text, mode)
    assert ours == theirs or (deliberate and theirs and not ours), (instruction, kwargs, text)
