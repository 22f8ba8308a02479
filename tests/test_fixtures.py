"""File-level snapshot cases in fixtures/<case>/.

Each case holds input files (and usually a pyproject.toml). Snapshots beside them:
- expected.txt: `pinlint check --output-format concise` (default args: `--select ALL`);
- fixed/<file>: the file after `--fix --unsafe-fixes` (a file without one must stay unchanged).
Every fixed file is re-parsed, re-linted (no fixable finding may remain) and fixed again (no change).
Set PINLINT_UPDATE_FIXTURES=1 to rewrite the snapshots, then review the diff by hand.
"""

from __future__ import annotations

import ast
import os
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from pinlint.cli import main

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
CASES = sorted(p.name for p in FIXTURES.iterdir() if p.is_dir())
UPDATE = bool(os.environ.get("PINLINT_UPDATE_FIXTURES"))
SNAPSHOT_NAMES = {"expected.txt", "args.txt", "fixed"}


def _inputs(case: Path) -> list[Path]:
    return sorted(p.relative_to(case) for p in case.rglob("*.py") if "fixed" not in p.relative_to(case).parts)


def _prepare(case: Path, tmp_path: Path) -> Path:
    work = tmp_path / case.name
    shutil.copytree(case, work, ignore=shutil.ignore_patterns("expected.txt", "args.txt", "fixed"))
    if not (work / "pyproject.toml").exists():
        (work / "pyproject.toml").write_text("[tool.pinlint]\n")
    return work


def _args(case: Path) -> list[str]:
    args = case / "args.txt"
    return args.read_text().split() if args.exists() else ["--select", "ALL"]


def _run(work: Path, args: list[str], monkeypatch: pytest.MonkeyPatch) -> tuple[int, str]:
    monkeypatch.chdir(work)
    result = CliRunner().invoke(main, ["check", ".", "--no-cache", *args], catch_exceptions=False)
    return result.exit_code, result.output


@pytest.mark.parametrize("name", CASES)
def test_fixture(name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    case = FIXTURES / name
    work = _prepare(case, tmp_path)
    args = _args(case)

    code, output = _run(work, [*args, "--output-format", "concise"], monkeypatch)
    expected_file = case / "expected.txt"
    if UPDATE:
        expected_file.write_text(output)
    assert output == expected_file.read_text()
    assert code == (1 if "Found" in output else 0)

    _run(work, [*args, "--fix", "--unsafe-fixes"], monkeypatch)
    for relative in _inputs(case):
        original = (case / relative).read_text()
        fixed = (work / relative).read_text()
        snapshot = case / "fixed" / relative
        if UPDATE:
            if fixed != original:
                snapshot.parent.mkdir(parents=True, exist_ok=True)
                snapshot.write_text(fixed)
            elif snapshot.exists():
                snapshot.unlink()
        expected = snapshot.read_text() if snapshot.exists() else original
        assert fixed == expected, relative
        ast.parse(fixed)  # fixed output is valid Python

    # Re-lint: no fix is left to apply, and fixing again changes nothing (a fixed point).
    _, after = _run(work, [*args, "--output-format", "concise", "--unsafe-fixes"], monkeypatch)
    assert "[*]" not in after
    before = {r: (work / r).read_text() for r in _inputs(case)}
    _run(work, [*args, "--fix", "--unsafe-fixes"], monkeypatch)
    assert before == {r: (work / r).read_text() for r in _inputs(case)}
