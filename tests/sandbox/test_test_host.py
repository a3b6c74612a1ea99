"""A program hosting its test (`Program.hosts_test`) cannot read what holds the test's
expected values: its own binary, its class files, or its memory through ``/proc``; nor
write a file it could load as code that reads that memory (a Java ``System.load``).

Each program tries every door and prints what it read; the same program run as a plain
program (the control) reads them all, so each row can fail.
"""

from __future__ import annotations

import base64
import subprocess
from pathlib import Path

import pytest

from referee.sandbox import Case, Program, Sandbox, SandboxSettings

from .conftest import needs_bwrap

DOORS = ("binary", "memory", "exe", "write")
SOURCES = {
    "c": r"""
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>
static void door(const char *name, const char *path, int bytes) {
    char byte;
    int fd = open(path, O_RDONLY);
    int read_ = fd >= 0 && (!bytes || read(fd, &byte, 1) == 1);
    printf("%s %s\n", name, read_ ? "read" : "closed");
}
int main(int argc, char **argv) {
    door("binary", argv[0], 1);
    door("memory", "/proc/self/mem", 0); /* opened is enough: it reads at any address */
    door("exe", "/proc/self/exe", 1);
    printf("write %s\n", open("/dev/shm/door", O_WRONLY | O_CREAT, 0600) >= 0 ? "read" : "closed");
    return 0;
}
""",
    "go": r"""package main

import (
	"fmt"
	"os"
)

func door(name, path string) {
	data, err := os.ReadFile(path)
	if err == nil && len(data) > 0 {
		fmt.Println(name, "read")
	} else {
		fmt.Println(name, "closed")
	}
}

func main() {
	door("binary", os.Args[0])
	f, err := os.Open("/proc/self/mem")
	if err == nil {
		f.Close()
		fmt.Println("memory read")
	} else {
		fmt.Println("memory closed")
	}
	door("exe", "/proc/self/exe")
	if os.WriteFile("/work/door", []byte("x"), 0600) == nil {
		fmt.Println("write read")
	} else {
		fmt.Println("write closed")
	}
}
""",
    "rust": r"""
fn door(name: &str, path: &str) {
    let read = std::fs::read(path).map(|d| !d.is_empty()).unwrap_or(false);
    println!("{} {}", name, if read { "read" } else { "closed" });
}
fn main() {
    let me = std::env::args().next().unwrap();
    door("binary", &me);
    let memory = std::fs::File::open("/proc/self/mem").is_ok();
    println!("memory {}", if memory { "read" } else { "closed" });
    door("exe", "/proc/self/exe");
    let wrote = std::fs::write("/tmp/door", b"x").is_ok();
    println!("write {}", if wrote { "read" } else { "closed" });
}
""",
    "java": r"""
class Other { static int answer() { return 42; } }
class Main {
    public static void main(String[] args) throws Exception {
        int first = System.in.read();
        System.out.println("binary " + (Main.class.getResourceAsStream("Other.class") == null
            ? "closed" : "read"));
        System.out.println("memory " + (new java.io.File("/proc/self/mem").canRead()
            ? "read" : "closed"));
        System.out.println("exe " + (new java.io.File("/proc/self/exe").canRead()
            ? "read" : "closed"));
        String wrote = "read";
        try {
            java.nio.file.Files.write(java.nio.file.Path.of("/tmp/door"), new byte[] {1});
        } catch (java.io.IOException e) {
            wrote = "closed";
        }
        System.out.println("write " + wrote);
        System.out.println("stdin " + (first > '0' ? "records" : "none"));
    }
}
""",
}


@needs_bwrap
@pytest.mark.slow
@pytest.mark.parametrize("language", sorted(SOURCES))
def test_a_test_host_cannot_read_its_binary_or_memory(language: str) -> None:
    hosting = Program(language=language, source=SOURCES[language], hosts_test=True)
    plain = Program(language=language, source=SOURCES[language])
    with Sandbox(SandboxSettings()) as sandbox:
        [hosted] = sandbox.run(hosting, [Case()]).cases
        [control] = sandbox.run(plain, [Case()]).cases
    assert control.stdout.split("\n")[:4] == [f"{door} read" for door in DOORS], control
    assert hosted.stdout.split("\n")[:4] == [f"{door} closed" for door in DOORS], hosted
    if language == "java":  # the class files withheld come on stdin instead
        assert "stdin records" in hosted.stdout and "stdin none" in control.stdout


LOADER = """
class Main {
    public static void main(String[] args) throws Exception {
        byte[] library = java.util.Base64.getDecoder().decode("%s");
        java.nio.file.Path path = java.nio.file.Path.of("/tmp/native.so");
        try {
            java.nio.file.Files.write(path, library);
        } catch (java.io.IOException e) {
            System.out.println("no file to load");
            return;
        }
        System.load(path.toString());
    }
}
"""


@needs_bwrap
@pytest.mark.slow
def test_a_java_test_host_loads_no_native_code(tmp_path: Path) -> None:
    """Native code in a Java program's process reads anything there, the test's
    constants included: a plain run writes a shared library and loads it, a test host
    has nowhere to write it."""
    (tmp_path / "native.c").write_text(
        "#include <stdio.h>\n__attribute__((constructor)) static void ran(void) {\n"
        '    printf("native code ran\\n");\n    fflush(stdout);\n}\n'
    )
    built = tmp_path / "native.so"
    command = ["gcc", "-shared", "-fPIC", "-s", "-o", str(built), str(tmp_path / "native.c")]
    subprocess.run(command, check=True)
    source = LOADER % base64.b64encode(built.read_bytes()).decode()
    with Sandbox(SandboxSettings()) as sandbox:
        [plain] = sandbox.run(Program(language="java", source=source), [Case()]).cases
        hosting = Program(language="java", source=source, hosts_test=True)
        [hosted] = sandbox.run(hosting, [Case()]).cases
    assert "native code ran" in plain.stdout, plain
    assert hosted.stdout.strip() == "no file to load", hosted
