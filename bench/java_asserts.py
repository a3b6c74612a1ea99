"""Java assert tests (MultiPL-E's HumanEval-Java shape), side by side in one run:
`bench.cpp_asserts`'s two paths (referee's two linked JVMs, `verifiers.code.boundary.java`,
against the test appended to the program, one ``javac`` and one ``java -ea`` per
response, no isolation) on problems whose functions take and return numbers, strings
and lists.

Usage: python -m bench.java_asserts [--group 8] [--out bench/results]
"""

from __future__ import annotations

import subprocess
from pathlib import Path

from bench.cpp_asserts import arguments, run
from referee.verifiers import Item

PROMPT = "import java.util.*;\nimport java.lang.*;\n\nclass Problem {\n"

# (the function's body after its header, the bug a wrong one has as (old, new), the
# header, the test's asserts)
PROBLEMS: list[tuple[str, tuple[str, str], str, str]] = [
    (
        "        long a = 0, b = 1;\n        for (long i = 0; i < n; i++) {\n"
        "            long c = a + b;\n            a = b;\n            b = c;\n        }\n"
        "        return a;\n",
        ("long c = a + b;", "long c = a + b + 1;"),
        "    public static long fib(long n) {\n",
        "    assert(fib((10l)) == (55l));\n    assert(fib((1l)) == (1l));\n",
    ),
    (
        "        StringBuilder out = new StringBuilder();\n"
        "        for (char c : string.toCharArray())\n"
        "            out.append(Character.isUpperCase(c) ? Character.toLowerCase(c)"
        " : Character.toUpperCase(c));\n        return out.toString();\n",
        ("Character.toUpperCase(c)", "c"),
        "    public static String flipCase(String string) {\n",
        '    assert(flipCase(("")).equals(("")));\n'
        '    assert(flipCase(("Hello!")).equals(("hELLO!")));\n',
    ),
    (
        "        ArrayList<Long> out = new ArrayList<>(l);\n        Collections.sort(out);\n"
        "        return out;\n",
        ("Collections.sort(out);", "Collections.sort(out, Collections.reverseOrder());"),
        "    public static ArrayList<Long> sortArray(ArrayList<Long> l) {\n",
        "    assert(sortArray((new ArrayList<Long>(Arrays.asList((long)3l, (long)1l, (long)2l))))"
        ".equals((new ArrayList<Long>(Arrays.asList((long)1l, (long)2l, (long)3l)))));\n",
    ),
    (
        "        long balance = 0;\n        for (long op : operations) {\n"
        "            balance += op;\n            if (balance < 0) return true;\n        }\n"
        "        return false;\n",
        ("balance < 0", "balance < -1"),
        "    public static boolean belowZero(ArrayList<Long> operations) {\n",
        "    assert(belowZero((new ArrayList<Long>(Arrays.asList((long)1l, (long)2l, (long)-4l,"
        " (long)5l)))) == (true));\n"
        "    assert(belowZero((new ArrayList<Long>(Arrays.asList((long)1l, (long)2l,"
        " (long)-3l)))) == (false));\n",
    ),
]


def items(group: int) -> list[tuple[Item, bool]]:
    """``group`` responses per problem, every other one wrong; with whether it is right."""
    made = []
    for body, (old, new), header, asserts in PROBLEMS:
        test = f"    }}\n    public static void main(String[] args) {{\n{asserts}    }}\n\n}}\n"
        for index in range(group):
            code = PROMPT + header + (body if index % 2 == 0 else body.replace(old, new))
            item = Item(
                verifier="code",
                response=f"```java\n{code}\n```",
                reference={"test": test},
                params={"language": "java"},
            )
            made.append((item, index % 2 == 0))
    return made


def naive_one(item: Item, folder: Path, index: int) -> bool:
    """Append the test, ``javac``, ``java -ea``: exit status 0 is a pass."""
    code = item.response_text().split("```java\n", 1)[1].rsplit("\n```", 1)[0]
    box = folder / f"item{index}"
    box.mkdir()
    (box / "Problem.java").write_text(f"{code}\n{item.reference['test']}")
    built = subprocess.run(
        ["javac", "-J-XX:+UseSerialGC", "-d", str(box), str(box / "Problem.java")],
        capture_output=True,
        check=False,
    )
    if built.returncode != 0:
        return False
    ran = subprocess.run(
        ["java", "-ea", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-cp", str(box), "Problem"],
        capture_output=True,
        timeout=30,
        check=False,
    )
    return ran.returncode == 0


def main() -> None:
    args = arguments()
    label = "test appended, javac and java -ea"
    run(items(args.group), "java_asserts", args.group, args.out, (label, naive_one))


if __name__ == "__main__":
    main()
