"""SandboxFusion's own Python client (``sandbox-fusion`` on PyPI) against referee."""

from __future__ import annotations

import asyncio
import base64
import re
import typing

import pytest
import sandbox_fusion as sf

from referee.sandbox import doctor, languages
from referee.service.http.run_schemas import FUSION_LANGUAGES, FUSION_UNSUPPORTED
from tests.service.peers.conftest import KEY


@pytest.fixture
def endpoint(keyed_server: str) -> str:
    """The client takes a bare endpoint: the key goes in the path."""
    return f"{keyed_server}/k/{KEY}"


def run(endpoint: str, **fields: object) -> sf.RunCodeResponse:
    request = sf.RunCodeRequest(**fields)
    return sf.run_code(request, endpoint=endpoint, max_attempts=1)


def test_success_with_stdin_and_nested_files(endpoint: str) -> None:
    data = base64.b64encode(b"from a file").decode()
    answer = run(
        endpoint,
        code="print(input(), open('data/in.txt').read())",
        language="python",
        stdin="typed",
        files={"data/in.txt": data},
    )
    assert answer.status == sf.RunStatus.Success, answer
    assert answer.run_result is not None and answer.run_result.stdout == "typed from a file\n"


def test_cpu_time_is_reported_apart_from_wall_time(endpoint: str) -> None:
    code = "import time\nx = 0\nfor i in range(3 * 10**6): x += i\ntime.sleep(0.5)"
    answer = run(endpoint, code=code, language="python")
    assert answer.status == sf.RunStatus.Success, answer
    result = answer.run_result
    assert result is not None and result.cpu_time is not None and result.execution_time
    assert 0.02 < result.cpu_time < result.execution_time - 0.4


@pytest.mark.parametrize(
    ("language", "code", "run_status"),
    [
        ("python", "import sys; sys.exit(2)", "Finished"),
        ("python", "while True: pass", "TimeLimitExceeded"),
        ("cpp", "int main(){ int *p = 0; return *p; }", "Finished"),
        (
            "java",
            "public class Main { public static void main(String[] a) { assert false; } }",
            "Finished",
        ),
    ],
)
def test_failed_runs(endpoint: str, language: str, code: str, run_status: str) -> None:
    answer = run(endpoint, code=code, language=language, run_timeout=2)
    assert answer.status == sf.RunStatus.Failed, answer
    assert answer.run_result is not None and answer.run_result.status == run_status
    assert answer.run_result.return_code != 0


@pytest.mark.parametrize(
    ("language", "code"),
    [
        (
            "python",
            "import numpy as np, pandas as pd\n"
            "print(int(np.arange(5).sum()) + pd.Series([1]).size)",
        ),
        ("nodejs", "const _ = require('lodash'); console.log(_.sum([5, 6]))"),
        (
            "java",
            "import org.javatuples.Pair; public class Main { public static void main(String[] a)"
            " { System.out.println(Pair.with(5, 11).getValue1()); } }",
        ),
    ],
)
def test_the_usual_packages_are_there(endpoint: str, language: str, code: str) -> None:
    answer = run(endpoint, code=code, language=language)
    assert answer.status == sf.RunStatus.Success, answer
    assert answer.run_result is not None and answer.run_result.stdout == "11\n"


def test_compile_error_is_failed_with_the_compiler_output(endpoint: str) -> None:
    answer = run(endpoint, code="int main( {", language="cpp")
    assert answer.status == sf.RunStatus.Failed
    assert answer.compile_result is not None and answer.compile_result.return_code != 0
    assert answer.compile_result.stderr and "error" in answer.compile_result.stderr
    assert answer.run_result is None


def test_async_client(endpoint: str) -> None:
    async def both() -> list[sf.RunCodeResponse]:
        requests = [
            sf.run_code_async(
                sf.RunCodeRequest(code=f"print({i} * 2)", language="python"),
                endpoint=endpoint,
                max_attempts=1,
            )
            for i in range(4)
        ]
        return list(await asyncio.gather(*requests))

    answers = asyncio.run(both())
    assert [a.run_result.stdout for a in answers if a.run_result] == ["0\n", "2\n", "4\n", "6\n"]


def test_a_wrong_key_in_the_path_is_refused(keyed_server: str) -> None:
    with pytest.raises(Exception, match="401"):
        run(f"{keyed_server}/k/wrong-key", code="print(1)", language="python")


def test_run_jupyter_keeps_state_across_cells(endpoint: str) -> None:
    cells = [
        "a = 123",
        "a",
        "print(a)",
        'import sys; sys.stderr.write("stderr message")',
        'raise RuntimeError("error message")',
        "a + 1",
    ]
    answer = sf.run_jupyter(sf.RunJupyterRequest(cells=cells), endpoint=endpoint, max_attempts=1)
    assert answer.status == sf.RunStatus.Success, answer
    results = answer.cells
    assert results[1].display == [{"text/plain": "123"}]
    assert results[2].stdout == "123\n"
    assert results[3].stderr == "stderr message"
    assert results[4].error[0]["ename"] == "RuntimeError"
    assert results[4].error[0]["evalue"] == "error message"
    assert results[5].display == [{"text/plain": "124"}]  # an exception ends no session


def test_run_jupyter_cell_and_total_timeouts(endpoint: str) -> None:
    slow = sf.RunJupyterRequest(cells=["import time", "time.sleep(5)", "'after'"], cell_timeout=1)
    answer = sf.run_jupyter(slow, endpoint=endpoint, max_attempts=1)
    assert answer.status == sf.RunStatus.Success, answer
    assert answer.cells[1].error[0]["ename"] == "TimeoutError"
    assert answer.cells[2].display == [{"text/plain": "'after'"}]
    stuck = sf.RunJupyterRequest(cells=["while True: pass"], total_timeout=1)
    answer = sf.run_jupyter(stuck, endpoint=endpoint, max_attempts=1)
    assert answer.status == sf.RunStatus.Failed
    assert answer.driver is not None and answer.driver.status == "TimeLimitExceeded"


def test_run_jupyter_sees_files_and_the_runtime(endpoint: str) -> None:
    data = base64.b64encode(b"1,2\n3,4\n").decode()
    cells = ["import pandas as pd", "int(pd.read_csv('d/t.csv', header=None).values.sum())"]
    request = sf.RunJupyterRequest(cells=cells, files={"d/t.csv": data})
    answer = sf.run_jupyter(request, endpoint=endpoint, max_attempts=1)
    assert answer.status == sf.RunStatus.Success, answer
    assert answer.cells[1].display == [{"text/plain": "10"}], answer.cells[1]


def test_fetch_files_come_back_base64(endpoint: str) -> None:
    code = "import os\nos.makedirs('out', exist_ok=True)\nopen('out/r.txt', 'w').write('result')"
    answer = run(endpoint, code=code, language="python", fetch_files=["out/r.txt", "nope.txt"])
    assert answer.status == sf.RunStatus.Success, answer
    assert answer.files == {"out/r.txt": base64.b64encode(b"result").decode()}
    cpp = '#include <fstream>\nint main(){ std::ofstream("o.txt") << "from c++"; }'
    answer = run(endpoint, code=cpp, language="cpp", fetch_files=["o.txt"])
    assert answer.files == {"o.txt": base64.b64encode(b"from c++").decode()}, answer


def test_run_jupyter_fetches_files(endpoint: str) -> None:
    request = sf.RunJupyterRequest(
        cells=["open('n.txt', 'w').write('cell')"], fetch_files=["n.txt"]
    )
    answer = sf.run_jupyter(request, endpoint=endpoint, max_attempts=1)
    assert answer.files == {"n.txt": base64.b64encode(b"cell").decode()}, answer


@pytest.mark.parametrize(
    ("language", "code", "status"),
    [
        (
            "junit",
            "import org.junit.jupiter.api.Test;\n"
            "import static org.junit.jupiter.api.Assertions.*;\n"
            "public class SumTest { @Test void sums() { assertEquals(3, 1 + 2); } }",
            sf.RunStatus.Success,
        ),
        (
            "gtest",
            "#include <gtest/gtest.h>\nTEST(Sum, Wrong) { EXPECT_EQ(1 + 2, 4); }",
            sf.RunStatus.Failed,
        ),
        ("pytest", "def test_sum():\n    assert 1 + 2 == 3\n", sf.RunStatus.Success),
        ("jest", 'test("sum", () => { expect(1 + 2).toBe(3); });', sf.RunStatus.Success),
        ("jest", 'test("sum", () => { expect(1 + 2).toBe(4); });', sf.RunStatus.Failed),
        (
            "react",
            'import { render, screen } from "@testing-library/react";\n'
            'test("shows", () => { render(<b>3</b>);\n'
            'expect(screen.getByText("3")).toBeVisible(); });',
            sf.RunStatus.Success,
        ),
    ],
)
def test_test_runner_modes(endpoint: str, language: str, code: str, status: sf.RunStatus) -> None:
    answer = run(endpoint, code=code, language=language, run_timeout=20)
    assert answer.status == status, answer


@pytest.mark.parametrize("language", typing.get_args(sf.models.Language))
def test_every_language_the_client_names(endpoint: str, language: str) -> None:
    """Each name in the client's own ``Language`` runs (a hello program, or a passing
    test for a runner mode), or is refused with the reason it is not offered."""
    if language in FUSION_UNSUPPORTED:
        with pytest.raises(Exception, match=re.escape(FUSION_UNSUPPORTED[language])):
            run(endpoint, code="x", language=language)
        return
    source = doctor.HELLO[FUSION_LANGUAGES[language]]
    answer = run(endpoint, code=source, language=language, run_timeout=20, compile_timeout=60)
    assert answer.status == sf.RunStatus.Success, answer
    runs_tests = languages.LANGUAGES[FUSION_LANGUAGES[language]].runs_tests
    assert runs_tests or (answer.run_result is not None and answer.run_result.stdout == "ok\n")
