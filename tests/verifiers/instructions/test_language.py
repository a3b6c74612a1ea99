"""The vectorised detector against langdetect itself (seeded alike): the same language
and the same probabilities, bit for bit, on texts in many scripts and mixtures."""

from __future__ import annotations

import langdetect
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from langdetect.lang_detect_exception import LangDetectException

from referee.verifiers.instructions.language import detect, detect_probabilities
from tests.verifiers.instructions.test_lm_eval_agreement import TEXTS

SENTENCES = {
    "en": "the quick brown fox jumps over lazy dog and then runs away home",
    "de": "der schnelle braune Fuchs springt über den faulen Hund und läuft",
    "fr": "le renard brun rapide saute par dessus le chien paresseux et court",
    "es": "el rápido zorro marrón salta sobre el perro perezoso y corre lejos",
    "it": "la volpe marrone veloce salta sopra il cane pigro e corre via",
    "pt": "a raposa marrom rápida pula sobre o cão preguiçoso e corre longe",
    "nl": "de snelle bruine vos springt over de luie hond en rent weg",
    "ru": "быстрая коричневая лиса прыгает через ленивую собаку и убегает",
    "el": "η γρήγορη καφέ αλεπού πηδάει πάνω από τον τεμπέλη σκύλο",
    "ar": "الثعلب البني السريع يقفز فوق الكلب الكسول ويهرب",
    "hi": "तेज भूरी लोमड़ी आलसी कुत्ते के ऊपर कूदती है और भाग जाती",
    "zh": "敏捷 的 棕色 狐狸 跳过 了 懒惰 的 狗 然后 跑 开",
    "ja": "素早い 茶色 の 狐 が 怠け者 の 犬 を 飛び越える",
    "ko": "빠른 갈색 여우가 게으른 개를 뛰어넘어 도망간다",
    "vi": "con cáo nâu nhanh nhẹn nhảy qua con chó lười biếng",
    "tr": "hızlı kahverengi tilki tembel köpeğin üzerinden atlar ve kaçar",  # noqa: RUF001 - Turkish has a dotless i
}
WORDS = {language: sentence.split() for language, sentence in SENTENCES.items()}
ALL_WORDS = sorted({word for words in WORDS.values() for word in words})


def reference(text: str) -> tuple[str, list[tuple[str, float]]] | None:
    langdetect.DetectorFactory.seed = 0
    try:
        found = langdetect.detect_langs(text)
        return langdetect.detect(text), [(f.lang, float(f.prob)) for f in found]
    except LangDetectException:
        return None


def ours(text: str) -> tuple[str, list[tuple[str, float]]] | None:
    try:
        return detect(text), detect_probabilities(text)
    except LangDetectException:
        return None


@pytest.mark.parametrize("text", TEXTS)
def test_the_response_pool_gets_langdetects_answers(text: str) -> None:
    assert ours(text) == reference(text)


@settings(max_examples=150, deadline=None, derandomize=True)
@given(
    st.lists(st.sampled_from(ALL_WORDS), min_size=1, max_size=40),
    st.sampled_from([" ", "\n", ", ", ". "]),
)
def test_mixed_texts_get_langdetects_answers(words: list[str], joiner: str) -> None:
    text = joiner.join(words)
    assert ours(text) == reference(text)


@settings(max_examples=100, deadline=None, derandomize=True)
@given(st.text(max_size=200))
def test_any_text_gets_langdetects_answer_or_its_refusal(text: str) -> None:
    assert ours(text) == reference(text)


@pytest.mark.parametrize("language", sorted(WORDS))
def test_each_sample_language_is_told_as_langdetect_tells_it(language: str) -> None:
    text = " ".join(WORDS[language] * 3)
    assert ours(text) == reference(text)


def test_a_text_without_features_is_refused_like_langdetect() -> None:
    with pytest.raises(LangDetectException):
        detect("12345 !!! ...")
    assert reference("12345 !!! ...") is None
