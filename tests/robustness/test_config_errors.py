"""Configuration errors: one clear line on stderr, exit 2, no traceback (subprocess and CliRunner)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.robustness.support import PIN_SNIPPET, make_project, run_both

CASES = {
    "bad TOML": ('[tool.pinlint]\nselect = ["PIN001"\n', ["invalid TOML"]),
    "bad TOML, other table broken": ('[tool.ruff\n[tool.pinlint]\nselect = ["PIN001"]\n', ["invalid TOML"]),
    "unknown key": ('[tool.pinlint]\nselekt = ["PIN001"]\n', ["selekt", "unknown key"]),
    "wrong type: select a string": ('[tool.pinlint]\nselect = "PIN001"\n', ["select", "list of strings"]),
    "wrong type: list of ints": ("[tool.pinlint]\nextend-select = [1, 2]\n", ["extend-select"]),
    "wrong type: bool": ('[tool.pinlint]\nrespect-gitignore = "yes"\n', ["respect-gitignore", "true or false"]),
    "wrong type: per-file-ignores": ('[tool.pinlint]\nper-file-ignores = ["a.py"]\n', ["per-file-ignores"]),
    "per-file-ignores value": ('[tool.pinlint.per-file-ignores]\n"a.py" = "PIN001"\n', ["per-file-ignores"]),
    "per-file-ignores unknown code": ('[tool.pinlint.per-file-ignores]\n"a.py" = ["PIN999"]\n', ["PIN999"]),
    "unknown code in select": ('[tool.pinlint]\nselect = ["PIN001", "XYZ123"]\n', ["XYZ123"]),
    "unknown code in ignore": ('[tool.pinlint]\nignore = ["E501"]\n', ["E501"]),
    "bad helper: no colon": (
        '[tool.pinlint]\npin-memory-helper = "myproj.utils.is_pin_memory_available"\n',
        ["pin-memory-helper"],
    ),
    "bad helper: not identifiers": (
        '[tool.pinlint]\npin-memory-helper = "my-proj:is pinned(device)"\n',
        ["pin-memory-helper"],
    ),
    "bad helper: empty": ('[tool.pinlint]\npin-memory-helper = ""\n', ["pin-memory-helper"]),
    "bad helper: wrong type": ("[tool.pinlint]\npin-memory-helper = 3\n", ["pin-memory-helper"]),
    "bad output-format": ('[tool.pinlint]\noutput-format = "xml"\n', ["output-format"]),
    "tool.pinlint not a table": ("[tool]\npinlint = 3\n", ["must be a table"]),
    "not UTF-8": (b'[tool.pinlint]\n# caf\xe9\nselect = ["PIN001"]\n', ["pyproject.toml"]),
}


def _assert_one_clear_line(result, words: list[str]) -> None:
    result.assert_no_crash()
    assert result.exit_code == 2, result
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, f"[{result.how}] expected one line on stderr, got {len(lines)}:\n{result.stderr}"
    line = lines[0]
    assert line.startswith("pinlint: error:"), line
    for word in words:
        assert word in line, f"[{result.how}] {word!r} missing from: {line}"
    assert len(line) < 600, f"[{result.how}] not one short line: {len(line)} characters"
    assert not result.stdout.strip(), f"[{result.how}] a report was printed despite the config error\n{result.stdout}"


@pytest.mark.parametrize("name", list(CASES))
def test_config_error_in_pyproject(tmp_path: Path, name: str) -> None:
    content, words = CASES[name]
    project = make_project(tmp_path, {"good.py": PIN_SNIPPET})
    data = content if isinstance(content, bytes) else content.encode()
    (project / "pyproject.toml").write_bytes(data)
    for result in run_both(["check", ".", "--no-cache"], project):
        _assert_one_clear_line(result, words)


@pytest.mark.parametrize("filename", ["pinlint.toml", ".pinlint.toml"])
def test_config_error_in_pinlint_toml(tmp_path: Path, filename: str) -> None:
    project = make_project(tmp_path, {"good.py": PIN_SNIPPET})
    (project / filename).write_text('select = ["PIN001"]\nnot-a-key = true\n')
    for result in run_both(["check", ".", "--no-cache"], project):
        _assert_one_clear_line(result, ["not-a-key", filename])


CLI_CASES = {
    "unknown --select": (["--select", "PIN001,NOPE9"], ["NOPE9"]),
    "unknown --extend-select": (["--extend-select", "PIN00X"], ["PIN00X"]),
    "unknown --ignore": (["--ignore", "W291"], ["W291"]),
    "--config missing file": (["--config", "no_such.toml"], ["no_such.toml"]),
    "--config bad override": (["--config", "select = [PIN001"], ["--config"]),
    "--config unknown key override": (["--config", "frobnicate = 1"], ["frobnicate"]),
    "--config bad helper override": (["--config", 'pin-memory-helper = "nocolon"'], ["pin-memory-helper"]),
    "--config file with bad TOML": (["--config", "broken.toml"], ["invalid TOML"]),
}


@pytest.mark.parametrize("name", list(CLI_CASES))
def test_config_error_on_the_command_line(tmp_path: Path, name: str) -> None:
    args, words = CLI_CASES[name]
    project = make_project(tmp_path, {"good.py": PIN_SNIPPET})
    (project / "broken.toml").write_text("select = [\n")
    for result in run_both(["check", ".", "--no-cache", *args], project):
        _assert_one_clear_line(result, words)


def test_config_found_from_a_subdirectory(tmp_path: Path) -> None:
    """The config is looked up from the current directory upwards: a broken one above still counts."""
    project = make_project(tmp_path, {"sub/good.py": PIN_SNIPPET})
    (project / "pyproject.toml").write_text('[tool.pinlint]\nselect = ["PIN001", "BAD1"]\n')
    for result in run_both(["check", ".", "--no-cache"], project / "sub"):
        _assert_one_clear_line(result, ["BAD1"])


def test_valid_config_variants_are_accepted(tmp_path: Path) -> None:
    project = make_project(tmp_path, {"good.py": PIN_SNIPPET})
    (project / "pyproject.toml").write_text(
        '[tool.pinlint]\nselect = ["PIN"]\nignore = ["PIN003"]\npin-memory-helper = "myproj.utils:is_pin_memory_available()"\n'
        'per-file-ignores = { "tests/*" = ["PIN001"] }\nrespect-gitignore = false\n'
    )
    for result in run_both(["check", ".", "--no-cache"], project):
        result.assert_no_crash()
        assert result.exit_code == 1, result
