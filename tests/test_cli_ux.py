"""Issue 17: what ruff users expect of the command line. Every behaviour is checked twice, through
click's runner (fast, in-process) and as a real subprocess (the console script's streams, exit
codes and environment), because the two differ in ways that matter (isatty, stderr, env)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from click.testing import CliRunner

from pinlint.cli import main

# CPython puts this error at 4:25 (the `(` of `.to(`), where libcst's parser does not.
BROKEN = "import torch\n\n\ndef f(d):\n    x = torch.ones(2).to(d, non_blocking=True\n"
BROKEN_AT = (5, 25)
# The function that holds the finding parses on its own; the file as a whole does not.
BROKEN_ELSEWHERE = "import torch\nx = (1,\n\n\ndef f(d):\n    return torch.ones(2).to(d, non_blocking=True)\n"
HOT = "import torch\n\n\ndef f(d):\n    return torch.ones(2).to(d, non_blocking=True)\n"
HOT_FIXABLE = textwrap.dedent(
    """\
    import torch
    from myproj.utils import is_pin_memory_available


    def f(device, data):
        a = torch.tensor([1, 2, 3]).to(device, non_blocking=True)
        b = torch.tensor(data).to(device, non_blocking=True)
        c = torch.tensor(data).to(device, non_blocking=True)
        return a, b, c
    """
)
HELPER = '[tool.pinlint]\npin-memory-helper = "myproj.utils:is_pin_memory_available(device)"\n'


@dataclass
class Result:
    how: str
    code: int
    out: str
    err: str


def _clean_env(extra: dict[str, str] | None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "FORCE_COLOR", "PINLINT_OUTPUT_FORMAT")}
    env.update(extra or {})
    return env


def run_click(args: list[str], cwd: Path, input: str | None = None, env: dict[str, str] | None = None) -> Result:
    old = Path.cwd()
    os.chdir(cwd)
    try:
        runner = CliRunner(env={"NO_COLOR": None, "FORCE_COLOR": None, **(env or {})})  # type: ignore[dict-item]
        result = runner.invoke(main, args, input=input, catch_exceptions=False)
    finally:
        os.chdir(old)
    return Result("click", result.exit_code, result.stdout, result.stderr)


def run_process(args: list[str], cwd: Path, input: str | None = None, env: dict[str, str] | None = None) -> Result:
    proc = subprocess.run(
        [sys.executable, "-m", "pinlint", *args],
        check=False,
        cwd=cwd,
        input=input,
        capture_output=True,
        text=True,
        timeout=120,
        env=_clean_env(env),
    )
    return Result("subprocess", proc.returncode, proc.stdout, proc.stderr)


def both(args: list[str], cwd: Path, input: str | None = None, env: dict[str, str] | None = None) -> Iterator[Result]:
    yield run_click(args, cwd, input, env)
    yield run_process(args, cwd, input, env)


def write(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    return root


# ---------------------------------------------------------------------------------------------
# Syntax errors are findings (PIN000) at CPython's location, in every format
# ---------------------------------------------------------------------------------------------


def test_syntax_error_is_a_finding_at_cpythons_location(tmp_path: Path) -> None:
    write(tmp_path, {"broken.py": BROKEN, "hot.py": HOT})
    row, column = BROKEN_AT
    for r in both(["check", ".", "--no-cache", "--output-format", "concise"], tmp_path):
        assert r.code == 1, r
        assert f"broken.py:{row}:{column}: PIN000 SyntaxError: '(' was never closed" in r.out, r
        assert "hot.py:5:12: PIN001" in r.out, r  # the other file is still checked
        assert "Found 2 errors." in r.out and "All checks passed" not in r.out, r
    for r in both(["check", "broken.py", "--no-cache"], tmp_path):
        assert r.code == 1 and "All checks passed" not in r.out, r
        assert f" --> broken.py:{row}:{column}" in r.out and "^ PIN000" in r.out, r


def test_syntax_error_in_every_machine_format(tmp_path: Path) -> None:
    write(tmp_path, {"broken.py": BROKEN})
    row, column = BROKEN_AT
    for r in both(["check", "broken.py", "--no-cache", "--output-format", "json"], tmp_path):
        [item] = json.loads(r.out)
        assert (item["code"], item["location"]) == ("PIN000", {"row": row, "column": column}), r
        assert r.code == 1
    for r in both(["check", "broken.py", "--no-cache", "--output-format", "json-lines"], tmp_path):
        assert json.loads(r.out)["code"] == "PIN000", r
    for r in both(["check", "broken.py", "--no-cache", "--output-format", "sarif"], tmp_path):
        [result] = json.loads(r.out)["runs"][0]["results"]
        region = result["locations"][0]["physicalLocation"]["region"]
        assert result["ruleId"] == "PIN000" and (region["startLine"], region["startColumn"]) == (
            row,
            column,
        ), r
    for r in both(["check", "broken.py", "--no-cache", "--output-format", "github"], tmp_path):
        assert r.out.startswith(f"::error title=pinlint (PIN000),file=broken.py,line={row},col={column}"), r
    for r in both(["check", "broken.py", "--no-cache", "--output-format", "junit"], tmp_path):
        assert 'failures="1"' in r.out and "org.pinlint.PIN000" in r.out, r
    for r in both(["check", "broken.py", "--no-cache", "--output-format", "gitlab"], tmp_path):
        assert json.loads(r.out)[0]["check_name"].startswith("PIN000"), r
    for r in both(["check", "broken.py", "--no-cache", "--statistics"], tmp_path):
        assert "PIN000\tsyntax-error" in r.out, r


def test_syntax_error_outside_the_analysed_function_is_reported(tmp_path: Path) -> None:
    write(tmp_path, {"broken.py": BROKEN_ELSEWHERE})
    for r in both(["check", "broken.py", "--no-cache", "--output-format", "concise"], tmp_path):
        assert "broken.py:2:5: PIN000 SyntaxError: '(' was never closed" in r.out, r
        assert r.code == 1


def test_syntax_error_cannot_be_ignored_and_is_not_fixed(tmp_path: Path) -> None:
    write(tmp_path, {"broken.py": BROKEN})
    for r in both(
        [
            "check",
            "broken.py",
            "--no-cache",
            "--ignore",
            "PIN001,PIN002",
            "--fix",
            "--output-format",
            "concise",
        ],
        tmp_path,
    ):
        assert "PIN000" in r.out and r.code == 1, r
    assert (tmp_path / "broken.py").read_text() == BROKEN


def test_syntax_error_is_never_baselined(tmp_path: Path) -> None:
    write(tmp_path, {"broken.py": BROKEN, "hot.py": HOT})
    for r in both(["check", ".", "--no-cache", "--write-baseline", "b.json"], tmp_path):
        assert r.code == 0 and "Wrote 1 finding(s)" in r.err, r
    for r in both(["check", ".", "--no-cache", "--baseline", "b.json", "--output-format", "concise"], tmp_path):
        assert r.code == 1 and r.out.startswith("broken.py:5:25: PIN000") and "PIN001" not in r.out, r


def test_syntax_error_from_stdin(tmp_path: Path) -> None:
    row, column = BROKEN_AT
    for r in both(
        ["check", "-", "--stdin-filename", "x.py", "--output-format", "concise"],
        tmp_path,
        input=BROKEN,
    ):
        assert f"x.py:{row}:{column}: PIN000" in r.out and r.code == 1, r


# ---------------------------------------------------------------------------------------------
# Configuration: per file, shown, explained
# ---------------------------------------------------------------------------------------------


@pytest.fixture
def nested(tmp_path: Path) -> Path:
    """A parent without configuration, holding a project whose configuration ignores PIN001
    and excludes its benchmarks."""
    return write(
        tmp_path,
        {
            "top.py": HOT,
            "repo/pyproject.toml": '[tool.pinlint]\nextend-exclude = ["bench"]\nignore = ["PIN001"]\n',
            "repo/src/a.py": HOT,
            "repo/bench/b.py": HOT,
        },
    )


def test_nearest_configuration_applies_per_file(nested: Path) -> None:
    from_parent = list(both(["check", "repo", "--no-cache", "--output-format", "concise"], nested))
    from_inside = list(both(["check", ".", "--no-cache", "--output-format", "concise"], nested / "repo"))
    for r in [*from_parent, *from_inside]:
        assert r.code == 0 and r.out == "All checks passed!\n", r
    for r in both(["check", ".", "--no-cache", "--output-format", "concise"], nested):
        # top.py has no configuration above it: the defaults apply to it, not repo's.
        assert r.out.splitlines()[0].startswith("top.py:5:12: PIN001") and "repo/" not in r.out, r


def test_verbose_names_the_configuration(nested: Path) -> None:
    for r in both(["check", ".", "--no-cache", "-v"], nested):
        assert "pinlint: configuration: repo/pyproject.toml (1 file)" in r.err, r
        assert "pinlint: configuration: none (the defaults) (1 file)" in r.err, r


def test_show_files_and_show_settings(nested: Path) -> None:
    for r in both(["check", ".", "--show-files"], nested):
        assert r.code == 0 and r.out.splitlines() == ["repo/src/a.py", "top.py"], r
    for r in both(["check", ".", "--show-settings"], nested):
        assert r.code == 0, r
        assert "Configuration: repo/pyproject.toml" in r.out and "ignore = ['PIN001']" in r.out, r
        assert "Configuration: none (the defaults)" in r.out and "extend-exclude = ['bench']" in r.out, r


def test_no_python_files_found_warns(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    for r in both(["check", "empty"], tmp_path):
        assert r.code == 0 and "warning: No Python files found" in r.err, r


def test_config_key_typo_gets_did_you_mean(tmp_path: Path) -> None:
    write(tmp_path, {"pyproject.toml": '[tool.pinlint]\nextend-selct = ["PIN003"]\n', "a.py": HOT})
    for r in both(["check", "."], tmp_path):
        assert r.code == 2 and "unknown key `extend-selct`" in r.err and "did you mean `extend-select`?" in r.err, r


def test_override_errors_are_blamed_on_the_override(tmp_path: Path) -> None:
    write(tmp_path, {"pyproject.toml": HELPER, "a.py": HOT})
    for r in both(["check", ".", "--config", 'selct = ["PIN"]'], tmp_path):
        assert r.code == 2 and "--config 'selct = [\"PIN\"]'" in r.err and "pyproject.toml" not in r.err, r
        assert "did you mean `select`?" in r.err, r
    for r in both(["check", ".", "--config", "respect-gitignore = 1"], tmp_path):
        assert r.code == 2 and "--config 'respect-gitignore = 1'" in r.err and "pyproject.toml" not in r.err, r


def test_override_applies_to_nested_configurations(nested: Path) -> None:
    for r in both(
        ["check", ".", "--no-cache", "--config", "ignore = []", "--output-format", "concise"],
        nested,
    ):
        assert "repo/src/a.py:5:12: PIN001" in r.out, r


# ---------------------------------------------------------------------------------------------
# Messages and output files
# ---------------------------------------------------------------------------------------------


def test_headlines_are_short(tmp_path: Path) -> None:
    write(
        tmp_path,
        {"a.py": HOT + "\n\ndef g(arr, d):\n    return torch.from_numpy(arr).to(d, non_blocking=True)\n"},
    )
    for r in both(["check", ".", "--no-cache", "--output-format", "json"], tmp_path):
        messages = [item["message"] for item in json.loads(r.out)]
        assert {m.split()[0] for m in messages} == {
            "`torch.ones(...)`",
            "`torch.from_numpy(...)`",
        }, r
        assert all(len(m) <= 125 for m in messages), messages  # was about 170


def test_output_file_into_a_missing_folder(tmp_path: Path) -> None:
    write(tmp_path, {"a.py": HOT})
    for r in both(
        ["check", ".", "--no-cache", "--output-format", "json", "-o", "reports/new/r.json"],
        tmp_path,
    ):
        assert r.code == 1 and r.out == "" and "internal error" not in r.err, r
        report = tmp_path / "reports" / "new" / "r.json"
        assert json.loads(report.read_text())[0]["code"] == "PIN001"
        report.unlink()
        report.parent.rmdir()


def test_stdin_fix_excerpt_is_drawn_from_the_fixed_text(tmp_path: Path) -> None:
    write(tmp_path, {"pyproject.toml": HELPER})
    for r in both(["check", "-", "--stdin-filename", "x.py", "--fix"], tmp_path, input=HOT_FIXABLE):
        assert "pin_memory=is_pin_memory_available(device)" in r.out, r  # the fixed source
        # The two remaining findings (unsafe fixes) are shown on the lines they are on now.
        fixed = r.out.split("\n")
        for block in r.err.split("\n\n"):
            if "-->" not in block:
                continue
            row = int(block.split("-->")[1].split(":")[1])
            assert f"{row} | {fixed[row - 1]}" in block, (block, fixed[row - 1])


# ---------------------------------------------------------------------------------------------
# A command line that teaches
# ---------------------------------------------------------------------------------------------


def test_help_lists_whole_command_summaries(tmp_path: Path) -> None:
    for r in both(["--help"], tmp_path):
        flat = " ".join(r.out.split())
        assert "check Check PATHS (default: the current directory) for pageable non_blocking copies." in flat, r
        assert "(or -- python -m module ARGS)." in flat, r  # the longest one, not cut
        for command in ("help", "version", "rule", "clean"):
            assert f"\n  {command} " in r.out, (command, r)


def test_help_and_version_subcommands(tmp_path: Path) -> None:
    for r in both(["help"], tmp_path):
        assert r.code == 0 and "Commands:" in r.out, r
    for r in both(["help", "check"], tmp_path):
        assert r.code == 0 and "pinlint check [OPTIONS] [PATHS]" in r.out.splitlines()[0], r
    for r in both(["version"], tmp_path):
        from pinlint import __version__

        assert r.code == 0 and r.out == f"pinlint {__version__}\n", r


def test_mistyped_command_gets_did_you_mean(tmp_path: Path) -> None:
    for r in both(["chek"], tmp_path):
        assert r.code == 2 and "Did you mean `check`?" in r.err, r
    # An existing path of that name is still a path.
    write(tmp_path, {"chek/a.py": HOT})
    for r in both(["chek", "--no-cache", "--output-format", "concise"], tmp_path):
        assert r.code == 1 and "chek/a.py:5:12: PIN001" in r.out, r


def test_check_help_is_grouped(tmp_path: Path) -> None:
    for r in both(["check", "--help"], tmp_path):
        sections = [line for line in r.out.splitlines() if line and not line.startswith(" ") and line.endswith(":")]
        assert sections[:4] == [
            "Fixing:",
            "Rule selection:",
            "File selection:",
            "Configuration:",
        ], sections
        assert "Output:" in sections and "Options:" not in sections, sections
        assert "--color [auto|always|never]" in r.out and "--show-settings" in r.out


def test_color_choice_and_environment(tmp_path: Path) -> None:
    write(tmp_path, {"a.py": HOT})
    args = ["check", "a.py", "--no-cache"]
    for r in both([*args, "--color", "always"], tmp_path, env={"NO_COLOR": "1"}):
        assert "\x1b[" in r.out, r
    for r in both([*args, "--color", "never"], tmp_path, env={"FORCE_COLOR": "1"}):
        assert "\x1b[" not in r.out, r
    for r in both(args, tmp_path, env={"FORCE_COLOR": "1"}):
        assert "\x1b[" in r.out, r
    for r in both(args, tmp_path, env={"FORCE_COLOR": "1", "NO_COLOR": "1"}):
        assert "\x1b[" not in r.out, r
    for r in both(args, tmp_path):
        assert "\x1b[" not in r.out, r  # not a terminal


def test_statistics_marks_partly_fixable_rules(tmp_path: Path) -> None:
    write(tmp_path, {"pyproject.toml": HELPER, "hot.py": HOT_FIXABLE})
    for r in both(["check", ".", "--no-cache", "--statistics"], tmp_path):
        assert "3\tPIN001\t[-] unpinned-non-blocking-copy" in r.out, r
    for r in both(["check", ".", "--no-cache", "--statistics", "--unsafe-fixes"], tmp_path):
        assert "3\tPIN001\t[*] unpinned-non-blocking-copy" in r.out, r


def test_pinlint_passes_its_own_checkout() -> None:
    root = Path(__file__).resolve().parents[1]
    for r in both(["check", ".", "--no-cache"], root):
        assert r.code == 0 and r.out == "All checks passed!\n", r
