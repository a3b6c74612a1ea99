"""A program hosting its test (`Program.hosts_test`) cannot read what holds the test's
expected values: its own binary, its class files, or its memory through ``/proc``.

Each program tries every door and prints what it read; the same program run as a plain
program (the control) reads them all, so each row can fail.
"""

from __future__ import annotations

import pytest

from referee.sandbox import Case, Program, Sandbox, SandboxSettings

from .conftest import needs_bwrap

DOORS = ("binary", "memory", "exe")
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
    assert control.stdout.split("\n")[:3] == [f"{door} read" for door in DOORS], control
    assert hosted.stdout.split("\n")[:3] == [f"{door} closed" for door in DOORS], hosted
    if language == "java":  # the class files withheld come on stdin instead
        assert "stdin records" in hosted.stdout and "stdin none" in control.stdout
