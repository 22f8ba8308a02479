"""Every ```console block of README.md and docs/*.md is real output: this test re-runs it.

A block is a shell session: lines starting with ``$ `` are commands, the lines after one are its
output (stdout and stderr together, as a terminal shows them). Each block runs in a fresh copy of
this checkout (tracked and untracked files, no caches), so a page can neither depend on another
page nor on the machine it was written on. In the expected output:

* a line ``...`` stands for any number of lines (the page shows an excerpt);
* a line ending in ``...`` matches any line that starts with the text before it (a long line cut).

An HTML comment just before the block may set it up, and that is visible in the page source:
``<!-- console: setup: CMD -->`` runs CMD first (not shown; e.g. lay out `myproj/`), and
``<!-- console: skip: REASON -->`` marks a block this machine cannot reproduce (a run on a corpus
that is not vendored here); the reason is required. ``PINLINT_UPDATE_DOCS=1`` prints each
mismatching block's real output, to paste in after review.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
DIRECTIVE = re.compile(r"<!--\s*console:\s*(setup|skip):\s*(.*?)\s*-->")
SKIP_PARTS = {".git", ".pinlint_cache", "__pycache__", ".pytest_cache", ".ruff_cache", ".tools"}


@dataclass
class Block:
    page: str
    line: int
    text: list[str]
    setup: list[str]
    skip: str | None

    @property
    def id(self) -> str:
        return f"{self.page}:{self.line}"


def console_blocks() -> list[Block]:
    blocks = []
    for page in PAGES:
        lines = page.read_text(encoding="utf-8").splitlines()
        i = 0
        while i < len(lines):
            if lines[i].strip() != "```console":
                i += 1
                continue
            setup: list[str] = []
            skip = None
            j = i - 1
            while j >= 0 and (not lines[j].strip() or DIRECTIVE.search(lines[j])):
                for kind, value in DIRECTIVE.findall(lines[j]):
                    if kind == "setup":
                        setup.insert(0, value)
                    else:
                        skip = value
                j -= 1
            end = lines.index("```", i + 1)
            blocks.append(Block(page.relative_to(ROOT).as_posix(), i + 1, lines[i + 1 : end], setup, skip))
            i = end + 1
    return blocks


def _sandbox(tmp_path: Path) -> Path:
    sandbox = tmp_path / "torch-pinlint"

    def ignore(directory: str, names: list[str]) -> set[str]:
        return {n for n in names if n in SKIP_PARTS or n.endswith(".egg-info")}

    shutil.copytree(ROOT, sandbox, ignore=ignore, symlinks=True)
    return sandbox


def _sessions(block: Block) -> list[tuple[str, list[str]]]:
    """(command, expected output lines) for each `$ ` line of the block."""
    sessions: list[tuple[str, list[str]]] = []
    for line in block.text:
        if line.startswith("$ "):
            sessions.append((line[2:], []))
        else:
            assert sessions, f"{block.id}: a console block must start with a `$ command` line"
            sessions[-1][1].append(line)
    return sessions


MARK = "@@pinlint-docs-command@@"


def _run(block: Block, sandbox: Path) -> list[list[str]]:
    commands = [command for command, _expected in _sessions(block)]
    # The newline before `}` keeps a trailing `# comment` of the command from eating `2>&1`.
    script = [*block.setup, *(f"echo {MARK}\n{{ {command}\n}} 2>&1" for command in commands)]
    env = {
        k: v for k, v in os.environ.items() if k not in ("FORCE_COLOR", "PINLINT_OUTPUT_FORMAT", "PINLINT_CACHE_DIR")
    }
    # The console scripts of this interpreter's environment come first; output is not buffered,
    # so stderr and stdout interleave as a terminal shows them; no colour (not a terminal).
    env.update(
        PATH=f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}",
        PYTHONUNBUFFERED="1",
        NO_COLOR="1",
        COLUMNS="100",
    )
    proc = subprocess.run(
        ["bash", "-c", "\n".join(script)],
        cwd=sandbox,
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
        check=False,
    )
    parts = proc.stdout.split(MARK + "\n")
    assert len(parts) == len(commands) + 1, f"{block.id}: the setup failed:\n{proc.stdout}\n{proc.stderr}"
    return [[line.rstrip() for line in part.replace(str(sandbox), ".").splitlines()] for part in parts[1:]]


def matches(expected: list[str], actual: list[str]) -> bool:
    """``...`` lines match any run of lines; a line ending in ``...`` matches by prefix."""
    expected = [line.rstrip() for line in expected]
    actual = list(actual)
    while actual and not actual[-1]:
        actual.pop()
    while expected and not expected[-1]:
        expected.pop()

    def line_ok(want: str, got: str) -> bool:
        return got.startswith(want[:-3]) if want.endswith("...") else want == got

    def go(i: int, j: int) -> bool:
        if i == len(expected):
            return j == len(actual)
        if expected[i] == "...":
            return any(go(i + 1, k) for k in range(j, len(actual) + 1))
        return j < len(actual) and line_ok(expected[i], actual[j]) and go(i + 1, j + 1)

    return go(0, 0)


BLOCKS = console_blocks()


def test_every_block_is_a_session_or_says_why_not() -> None:
    for block in BLOCKS:
        if block.skip is not None:
            assert len(block.skip) > 10, f"{block.id}: a skipped block needs a reason"
            continue
        assert block.text and block.text[0].startswith("$ "), f"{block.id}: first line is not a `$ command`"


def test_matcher() -> None:
    assert matches(["a", "...", "d"], ["a", "b", "c", "d"])
    assert matches(["a", "...", "d"], ["a", "d"])
    assert not matches(["a", "d"], ["a", "b", "d"])
    assert matches(["long line..."], ["long line that goes on"])
    assert not matches(["long line..."], ["short"])


@pytest.mark.parametrize("block", [b for b in BLOCKS if b.skip is None], ids=lambda b: b.id)
def test_console_block_is_real_output(block: Block, tmp_path: Path) -> None:
    path = f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"
    for command, _expected in _sessions(block):
        program = command.split()[0]
        if program in ("ruff", "flake8") and shutil.which(program, path=path) is None:
            pytest.skip(f"{block.id} shows `{program}`, which is not installed here")
    outputs = _run(block, _sandbox(tmp_path))
    problems = []
    for (command, expected), actual in zip(_sessions(block), outputs):
        if not matches(expected, actual):
            problems.append(
                f"$ {command}\n--- the page shows:\n" + "\n".join(expected) + "\n--- real output:\n" + "\n".join(actual)
            )
    if problems and os.environ.get("PINLINT_UPDATE_DOCS"):
        print(f"\n===== {block.id}\n" + "\n\n".join(problems))
    assert not problems, f"{block.id}: the page disagrees with real output\n" + "\n\n".join(problems)
