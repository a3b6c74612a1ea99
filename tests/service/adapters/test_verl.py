"""verl: ``compute_score`` returns verl's dict; concurrent threads share requests."""

from __future__ import annotations

import asyncio
from concurrent.futures import ThreadPoolExecutor

import pytest

from referee.service.adapters import verl
from referee.service.client import RefereeError


@pytest.fixture(autouse=True)
def configured(live_server: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("REFEREE_URL", live_server)
    monkeypatch.setenv(
        "REFEREE_VERL_MAPPINGS",
        '{"openai/gsm8k": {"verifier": "math", "params": {"strategies": ["gsm8k", "last_number"]}},'
        ' "exact": {"verifier": "string", "reference_column": "answer"},'
        ' "toolrl": {"verifier": "tool_call"}, "ifeval": {"verifier": "instructions"}}',
    )
    monkeypatch.setattr(verl, "_client", None)


def test_compute_score_per_data_source() -> None:
    assert verl.compute_score("openai/gsm8k", "so #### 72", "72")["score"] == 1.0
    assert verl.compute_score("openai/gsm8k", "so #### 71", "72")["score"] == 0.0
    assert verl.compute_score("exact", "Paris", "Paris") == {"score": 1.0, "status": "ok"}
    assert verl.compute_score("anything/else", "\\boxed{\\frac{1}{2}}", "0.5")["score"] == 1.0


def test_threads_calling_at_once_get_their_own_scores() -> None:
    cases = [(f"#### {i}", str(i if i % 2 else i + 1)) for i in range(60)]
    with ThreadPoolExecutor(max_workers=16) as pool:
        scores = list(pool.map(lambda c: verl.compute_score("openai/gsm8k", *c)["score"], cases))
    assert scores == [1.0 if i % 2 else 0.0 for i in range(60)]


def test_failures_raise_by_default_and_zero_only_when_asked(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    with pytest.raises(RefereeError) as raised:
        verl.compute_score("openai/gsm8k", "#### 1", "\\frac{")
    assert raised.value.code == "invalid_reference"
    monkeypatch.setenv("REFEREE_VERL_ON_FAILURE", "zero")
    assert verl.compute_score("openai/gsm8k", "#### 1", "\\frac{") == {
        "score": 0.0,
        "status": "invalid",
    }


def test_async_compute_score() -> None:
    async def scenario() -> list[float]:
        calls = [verl.compute_score_async("x", f"\\boxed{{{i}}}", "3") for i in range(6)]
        return [r["score"] for r in await asyncio.gather(*calls)]

    assert asyncio.run(scenario()) == [0.0, 0.0, 0.0, 1.0, 0.0, 0.0]


APPS_GROUND_TRUTH = '{"fn_name": "add", "inputs": [[1, 2], [5, 5]], "outputs": [[3], [10]]}'


def test_code_ground_truth_as_verl_stores_it() -> None:
    """verl keeps code tests as a JSON string; APPS/TACO wrap each return value in a list."""
    right = "```python\ndef add(a, b):\n    return a + b\n```"
    wrong = "```python\ndef add(a, b):\n    return a - b\n```"
    assert verl.compute_score("apps", right, APPS_GROUND_TRUTH)["score"] == 1.0
    assert verl.compute_score("taco", wrong, APPS_GROUND_TRUTH)["score"] == 0.0
    stdio = '{"inputs": ["2\\n"], "outputs": ["4\\n"]}'
    assert verl.compute_score("codeforces", "```python\nprint(int(input())*2)\n```", stdio) == {
        "score": 1.0,
        "status": "ok",
    }


def test_every_item_of_a_mixed_batch_returns_the_same_keys(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """verl appends each key's value to one list per batch and asserts the lengths match."""
    monkeypatch.setenv("REFEREE_VERL_EXTRA_KEYS", "pass_rate")
    right = "```python\ndef add(a, b):\n    return a + b\n```"
    scores = [
        verl.compute_score("apps", right, APPS_GROUND_TRUTH),
        verl.compute_score("openai/gsm8k", "#### 72", "72"),
        verl.compute_score("exact", "Paris", "Paris"),
    ]
    assert [sorted(s) for s in scores] == [["pass_rate", "score", "status"]] * 3
    assert scores[0]["pass_rate"] == 1.0
    assert all(s["pass_rate"] != s["pass_rate"] for s in scores[1:])  # NaN: no such component


def test_object_ground_truth_kept_as_json_text() -> None:
    """Datasets made for verl keep a tool-call gold or IFEval's constraints as a string."""
    gold = '{"calls": [{"name": "weather", "arguments": {"city": "Paris"}}]}'
    assert verl.compute_score("toolrl", "weather(city='Paris')", gold)["score"] == 1.0
    assert verl.compute_score("toolrl", "weather(city='Rome')", gold)["score"] == 0.0
    constraints = '{"instruction_id_list": ["punctuation:no_comma"], "kwargs": [{}]}'
    assert verl.compute_score("ifeval", "No commas at all", constraints)["score"] == 1.0
    assert verl.compute_score("ifeval", "One, two", constraints)["score"] == 0.0


def test_search_r1_data_sources_score_exact_match_as_verl_does() -> None:
    """verl's Search-R1 QA sources default to ``qa``: ground truth ``{"target": [...]}``,
    the last ``<answer>`` compared after SQuAD's normalisation (``math`` would misread
    names as expressions)."""
    truth = {"target": ["Barack Obama", "Obama"]}
    right = "<search>who</search> ... <answer> barack obama. </answer>"
    assert verl.compute_score("searchR1_nq", right, truth)["score"] == 1.0
    wrong = "<answer>Obama Bush Clinton</answer>"
    assert verl.compute_score("searchR1_hotpotqa", wrong, truth)["score"] == 0.0
