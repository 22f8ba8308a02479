"""File-level cases in fixtures/<case>/: input files (usually with a pyproject.toml), and what
pinlint must make of them, written where it applies.

- Findings are markers in the input files: a trailing ``# expect: CODE@COLUMN`` on the row the
  finding reports (for a construction over several lines, the row its report gives: where the
  flagged expression starts), several comma-separated in column order
  (``# expect: PIN001@15, PIN001@42``). A row without a marker has no finding. The marker is
  always the end of the line, after any other comment (``# noqa: PIN002  # expect: PIN001@9``).
- Markers are stripped before pinlint runs (exactly two spaces, ``# expect: `` and the list, at
  the end of a line), so the checked files are byte for byte the code without them: a marker
  changes no line length (the fixer's layout depends on it), no ``# noqa``, no row.
- ``messages.txt`` is the rest of ``pinlint check --output-format concise``: for each finding in
  report order, what follows its position (``CODE [*] message``: the message and whether a fix
  applies), then the summary lines. Markers give the positions, messages.txt the text; together
  they are the whole concise report, which the test compares exactly.
- ``fixed.diff`` is the unified diff that ``--fix --unsafe-fixes`` makes to the case's files
  (``a/<file>`` → ``b/<file>``, from the files with their markers stripped); no file when no fix
  applies.
- ``args.txt`` holds the options (default ``--select ALL``).

Every fixed file must parse, re-lint without a fixable finding, and fix to itself (a fixed point).
Set PINLINT_UPDATE_FIXTURES=1 to rewrite markers, messages.txt and fixed.diff from what pinlint
does now (a case in the old layout, expected.txt and fixed/<file> copies, is converted), then
review the diff by hand.
"""

from __future__ import annotations

import ast
import difflib
import os
import re
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from pinlint.cli import main

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
CASES = sorted(p.name for p in FIXTURES.iterdir() if p.is_dir())
UPDATE = bool(os.environ.get("PINLINT_UPDATE_FIXTURES"))
MESSAGES, DIFF, ARGS = "messages.txt", "fixed.diff", "args.txt"
LEGACY = ("expected.txt", "fixed")  # the old layout: a concise snapshot and full fixed copies
SNAPSHOT_NAMES = {MESSAGES, DIFF, ARGS, *LEGACY}

_ITEM = r"[A-Z]+[0-9]+@[0-9]+"
MARKER = re.compile(rf"  # expect: ({_ITEM}(?:, {_ITEM})*)$")
_REPORTED = re.compile(r"^(?P<file>[^\n:]+):(?P<row>[0-9]+):(?P<column>[0-9]+): (?P<rest>(?P<code>[A-Z]+[0-9]+)\b.*)$")

#: (file relative to the case, row, column, code)
Finding = tuple[str, int, int, str]


def _lines(text: str) -> list[str]:
    """Lines with their endings, cut at "\\n" only (str.splitlines also cuts at form feeds)."""
    return re.findall(r"[^\n]*\n|[^\n]+$", text)


def strip_markers(text: str, relative: str) -> tuple[str, set[Finding]]:
    """The text without its markers, and the findings they expect."""
    out, expected = [], set()
    for row, line in enumerate(_lines(text), 1):
        body = line.rstrip("\r\n")
        match = MARKER.search(body)
        if match:
            for item in match.group(1).split(", "):
                code, column = item.split("@")
                expected.add((relative, row, int(column), code))
            line = body[: match.start()] + line[len(body) :]
        out.append(line)
    return "".join(out), expected


def with_markers(text: str, findings: set[Finding]) -> str:
    """``text`` (without markers) with a marker on each row that has findings."""
    by_row: dict[int, list[tuple[int, str]]] = {}
    for _file, row, column, code in findings:
        by_row.setdefault(row, []).append((column, code))
    lines = _lines(text)
    for row, items in by_row.items():
        body = lines[row - 1].rstrip("\r\n")
        if body.endswith("\\"):
            raise AssertionError(f"row {row} ends with a backslash: no marker can follow it; split the statement")
        marker = ", ".join(f"{code}@{column}" for column, code in sorted(items))
        lines[row - 1] = f"{body}  # expect: {marker}{lines[row - 1][len(body) :]}"
    return "".join(lines)


def unified_diff(relative: str, before: str, after: str) -> str:
    out = []
    for line in difflib.unified_diff(_lines(before), _lines(after), f"a/{relative}", f"b/{relative}"):
        out.append(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n")
    return "".join(out)


def _inputs(case: Path) -> list[str]:
    return sorted(
        p.relative_to(case).as_posix() for p in case.rglob("*.py") if "fixed" not in p.relative_to(case).parts
    )


def _prepare(case: Path, tmp_path: Path) -> tuple[Path, dict[str, str], set[Finding]]:
    """The case copied to a work folder with its markers stripped: (folder, texts, expected)."""
    work = tmp_path / case.name
    shutil.copytree(case, work, ignore=shutil.ignore_patterns(*SNAPSHOT_NAMES))
    if not (work / "pyproject.toml").exists():
        (work / "pyproject.toml").write_text("[tool.pinlint]\n")
    texts, expected = {}, set()
    for relative in _inputs(case):
        texts[relative], found = strip_markers((case / relative).read_text(), relative)
        expected |= found
        (work / relative).write_text(texts[relative])
    return work, texts, expected


def _args(case: Path) -> list[str]:
    args = case / ARGS
    return args.read_text().split() if args.exists() else ["--select", "ALL"]


def _run(work: Path, args: list[str], monkeypatch: pytest.MonkeyPatch) -> tuple[int, str]:
    monkeypatch.chdir(work)
    result = CliRunner().invoke(main, ["check", ".", "--no-cache", *args], catch_exceptions=False)
    return result.exit_code, result.output


def split_report(output: str) -> tuple[list[Finding], list[str]]:
    """The concise report as (positions of its findings, in order) and its lines with the
    positions taken out (what messages.txt holds)."""
    positions, rest = [], []
    for line in output.splitlines():
        match = _REPORTED.match(line)
        if match is None:
            rest.append(line)
            continue
        positions.append((match["file"], int(match["row"]), int(match["column"]), match["code"]))
        rest.append(match["rest"])
    return positions, rest


def _update(case: Path, texts: dict[str, str], positions: list[Finding], messages: list[str], diff: str) -> None:
    for relative, text in texts.items():
        marked = with_markers(text, {f for f in positions if f[0] == relative})
        if (case / relative).read_text() != marked:
            (case / relative).write_text(marked)
    (case / MESSAGES).write_text("".join(f"{line}\n" for line in messages))
    if diff:
        (case / DIFF).write_text(diff)
    else:
        (case / DIFF).unlink(missing_ok=True)
    (case / LEGACY[0]).unlink(missing_ok=True)
    shutil.rmtree(case / LEGACY[1], ignore_errors=True)


@pytest.mark.parametrize("name", CASES)
def test_fixture(name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    case = FIXTURES / name
    work, texts, expected = _prepare(case, tmp_path)
    args = _args(case)

    code, output = _run(work, [*args, "--output-format", "concise"], monkeypatch)
    positions, messages = split_report(output)
    _run(work, [*args, "--fix", "--unsafe-fixes"], monkeypatch)
    fixed = {relative: (work / relative).read_text() for relative in texts}
    diff = "".join(unified_diff(relative, texts[relative], fixed[relative]) for relative in sorted(texts))
    if UPDATE:
        _update(case, texts, positions, messages, diff)
        expected = set().union(*(strip_markers((case / r).read_text(), r)[1] for r in texts))
    assert not any((case / legacy).exists() for legacy in LEGACY), "old layout: run with PINLINT_UPDATE_FIXTURES=1"

    assert set(positions) == expected, "findings (left) differ from the # expect: markers (right)"
    assert positions == sorted(positions)  # report order, so that messages.txt pairs with them
    assert messages == (case / MESSAGES).read_text().splitlines()
    assert code == (1 if "Found" in output else 0)

    assert diff == ((case / DIFF).read_text() if (case / DIFF).exists() else "")
    for text in fixed.values():
        ast.parse(text)  # fixed output is valid Python

    # Re-lint: no fix is left to apply, and fixing again changes nothing (a fixed point).
    _, after = _run(work, [*args, "--output-format", "concise", "--unsafe-fixes"], monkeypatch)
    assert "[*]" not in after
    before = {r: (work / r).read_text() for r in texts}
    _run(work, [*args, "--fix", "--unsafe-fixes"], monkeypatch)
    assert before == {r: (work / r).read_text() for r in texts}
