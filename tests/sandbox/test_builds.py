"""The build cache (`sandbox.builds`): a program compiled once is not compiled again, and
nothing of one build reaches a program with any other source, flags or compile."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from referee.sandbox import Case, CaseStatus, CompileStatus, Program, Sandbox, SandboxSettings
from referee.sandbox.builds import BuildCache
from referee.sandbox.leftovers import BOX_PREFIX

PRODUCT = '#include <cstdio>\nint main(){long a,b;scanf("%ld %ld",&a,&b);printf("%ld\\n",a*b);}'
CASES = [Case(stdin="6 7\n"), Case(stdin="-2 3\n")]


@pytest.fixture
def sandbox(work_root: Path) -> Iterator[Sandbox]:
    with Sandbox(SandboxSettings(work_root=work_root)) as box:
        yield box


def test_a_second_run_of_the_same_program_reuses_its_build(sandbox: Sandbox) -> None:
    program = Program(language="cpp", source=PRODUCT)
    first = sandbox.run(program, CASES)
    second = sandbox.run(program, CASES)
    assert first.compile is not None and second.compile is not None
    assert (first.compile.status, first.compile.cached) == (CompileStatus.OK, False)
    assert (second.compile.status, second.compile.cached) == (CompileStatus.OK, True)
    assert second.compile.wall_s == 0.0
    for report in (first, second):
        assert [c.stdout for c in report.cases] == ["42\n", "-6\n"]


@pytest.mark.parametrize(
    "other",
    [
        Program(language="cpp", source=PRODUCT.replace("a*b", "a+b")),
        Program(language="cpp", source=PRODUCT, build_flags=["-O0"]),
        Program(language="cpp", source=PRODUCT, files={"extra.h": "#define X 1\n"}),
        Program(language="c", source=PRODUCT.replace("#include <cstdio>", "#include <stdio.h>")),
    ],
    ids=["source", "flags", "files", "language"],
)
def test_any_difference_in_what_builds_the_program_misses(sandbox: Sandbox, other: Program) -> None:
    sandbox.run(Program(language="cpp", source=PRODUCT), CASES)
    report = sandbox.run(other, CASES)
    assert report.compile is not None and not report.compile.cached


def test_a_failed_build_is_not_kept(sandbox: Sandbox) -> None:
    broken = Program(language="cpp", source="int main() { return x; }")
    for _ in range(2):
        report = sandbox.run(broken, CASES)
        assert report.compile is not None
        assert (report.compile.status, report.compile.cached) == (CompileStatus.ERROR, False)


def test_a_program_cannot_change_the_build_the_next_run_gets(sandbox: Sandbox) -> None:
    """The program's directory is read-only to it, and a hit copies the cache's files
    (this process's, in a private directory) into a directory of the run's own."""
    rewrite = (
        '#include <cstdio>\nint main(){ FILE *f = fopen("/box/main", "w");'
        ' printf(f ? "ESCAPED\\n" : "refused\\n"); }'
    )
    program = Program(language="cpp", source=rewrite)
    runs = [sandbox.run(program, [Case()]) for _ in range(3)]
    assert [r.compile.cached for r in runs if r.compile] == [False, True, True]
    assert all(r.cases[0].stdout == "refused\n" for r in runs), runs


def test_java_builds_keep_all_their_classes(sandbox: Sandbox) -> None:
    source = (
        "public class Main { static class Pair { int a = 4, b = 5; }\n"
        "  public static void main(String[] x) { Pair p = new Pair();"
        " System.out.println(p.a * p.b); } }\n"
    )
    program = Program(language="java", source=source)
    limits = sandbox.settings.limits.model_copy(update={"memory_mb": 512})
    reports = [sandbox.run(program, [Case()], limits) for _ in range(2)]
    assert [r.compile.cached for r in reports if r.compile] == [False, True]
    assert all(r.cases[0].status is CaseStatus.OK for r in reports), reports
    assert [r.cases[0].stdout for r in reports] == ["20\n", "20\n"]


def test_the_cache_is_bounded_and_removed_with_its_sandbox(tmp_path: Path) -> None:
    cache = BuildCache(tmp_path, max_entries=2, max_bytes=1 << 20)
    box = tmp_path / "box"
    box.mkdir()
    (box / "main").write_bytes(b"x" * 1000)
    for key in ("a", "b", "c"):
        cache.put(key, box, key)
    assert cache.get("a") is None and cache.get("b") is not None and cache.get("c") is not None
    (box / "main").write_bytes(b"x" * (1 << 19))  # over a quarter of the bytes: not kept
    cache.put("big", box, "")
    assert cache.get("big") is None
    homes = [p for p in tmp_path.iterdir() if p.name.startswith(BOX_PREFIX)]
    assert len(homes) == 1 and homes[0].name.startswith(f"{BOX_PREFIX}{os.getpid()}-")
    cache.close()
    assert not homes[0].exists()


def test_a_cache_of_no_entries_keeps_nothing(tmp_path: Path) -> None:
    cache = BuildCache(tmp_path, max_entries=0, max_bytes=1 << 20)
    (tmp_path / "main").write_bytes(b"x")
    cache.put("a", tmp_path, "")
    assert cache.get("a") is None


def test_a_build_for_one_run_only_is_never_kept(sandbox: Sandbox) -> None:
    """Programs carrying a per-run secret (in-process tests' proofs) would only churn
    the cache."""
    program = Program(language="cpp", source=PRODUCT, keep_build=False)
    reports = [sandbox.run(program, CASES) for _ in range(2)]
    assert [r.compile.cached for r in reports if r.compile] == [False, False]


def test_a_cached_build_over_this_runs_disk_quota_is_not_used(sandbox: Sandbox) -> None:
    """The compile checks a build against the run's disk quota; a build kept under a
    larger quota is compiled again, and refused, under a smaller one."""
    big = (
        "#include <cstdio>\nchar ballast[3 << 20] = {1};\nint main(){long a,b;"
        'scanf("%ld %ld",&a,&b);printf("%ld\\n",a*b+ballast[1]);}'
    )
    program = Program(language="cpp", source=big)
    roomy = sandbox.settings.limits.model_copy(update={"disk_mb": 64})
    tight = sandbox.settings.limits.model_copy(update={"disk_mb": 1})
    first = sandbox.run(program, CASES, roomy)
    second = sandbox.run(program, CASES, tight)
    assert first.compile is not None and first.compile.status is CompileStatus.OK
    assert second.compile is not None and not second.compile.cached
    assert second.compile.status is CompileStatus.ERROR


def test_nothing_is_kept_after_close(tmp_path: Path) -> None:
    cache = BuildCache(tmp_path / "root", max_entries=4, max_bytes=1 << 20)
    (tmp_path / "root").mkdir()
    box = tmp_path / "box"
    box.mkdir()
    (box / "main").write_bytes(b"x")
    cache.close()
    cache.put("a", box, "")
    assert cache.get("a") is None and list((tmp_path / "root").iterdir()) == []
