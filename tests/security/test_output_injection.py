"""Review #4, #14, #20: repository text (file names, config keys, source) cannot start a GitHub
workflow command, reach the terminal as escape sequences, or split a JSON-lines record."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tests.security.conftest import FINDING, pinlint, project

ESC = "\x1b"


def _commands(text: str) -> list[str]:
    """Lines the Actions runner would parse as workflow commands (it splits at CR, LF, CRLF)."""
    return [line for line in re.split(r"\r\n|\r|\n", text) if line.lstrip().startswith("::")]


def test_file_names_on_stderr_start_no_workflow_command(tmp_path: Path, home: Path) -> None:
    """Review #4a: a dangling link named `x\\n::stop-commands::t\\n.py` (an error line)."""
    proj = project(tmp_path / "p")
    (proj / "x\n::stop-commands::t\n.py").symlink_to("nowhere")
    (proj / "y\r::error file=a.py::forged\r.py").write_text(FINDING)
    ran = pinlint("check", "--output-format", "github", ".", cwd=proj)
    assert ran.returncode == 1
    commands = _commands(ran.stdout + "\n" + ran.stderr)
    assert commands and all(c.startswith("::error title=pinlint (PIN") for c in commands), commands
    assert not _commands(ran.stderr)


def test_config_keys_and_selectors_start_no_workflow_command(tmp_path: Path, home: Path) -> None:
    """Review #4b."""
    proj = project(tmp_path / "p", {"a.py": FINDING, "pinlint.toml": '"x\\n::error::forged" = 1\n'})
    ran = pinlint("check", ".", cwd=proj)
    assert ran.returncode == 2 and not _commands(ran.stderr)
    (proj / "pinlint.toml").write_text('select = ["PIN\\r::error::forged"]\n')
    ran = pinlint("check", ".", cwd=proj)
    assert ran.returncode == 2 and not _commands(ran.stderr)
    ran = pinlint("check", "--select", "X\n::error::forged", ".", cwd=proj)
    assert ran.returncode == 2 and not _commands(ran.stderr)


def test_lone_cr_in_device_text_starts_no_workflow_command(tmp_path: Path, home: Path) -> None:
    """Review #4c: with the default `full` format, a triple-quoted device argument holding lone
    CRs (valid Python) was copied into the fix's help line."""
    src = (
        "import torch\n\n\ndef step(lens_list):\n"
        "    lens = torch.tensor(lens_list, dtype=torch.int64)\n"
        '    return lens.to("""cuda\r::error file=a.py,line=1::forged\r""", non_blocking=True)\n'
    )
    proj = project(
        tmp_path / "p",
        {
            "m.py": src,
            "pyproject.toml": '[tool.pinlint]\npin-memory-helper = "pkg.u:is_pin_memory_available(device)"\n',
        },
    )
    for fmt in ("full", "concise", "github"):
        ran = pinlint("check", "--output-format", fmt, "--show-fixes", ".", cwd=proj)
        assert ran.returncode == 1, ran
        forged = [c for c in _commands(ran.stdout + "\n" + ran.stderr) if not c.startswith("::error title=pinlint")]
        assert not forged, (fmt, forged)


def test_terminal_escapes_from_names_and_source_are_escaped(tmp_path: Path, home: Path) -> None:
    """Review #14 / 11: OSC title, clear screen, cursor moves, OSC 52 clipboard."""
    name = f"m{ESC}]0;owned-title\x07{ESC}[2J.py"
    src = (
        "import torch\n\n\ndef step(device):\n"
        f"    lens = torch.tensor([1], dtype=torch.int64); s = '{ESC}[1A{ESC}[2K{ESC}]52;c;ZWNobyBwd25lZA==\x07'\n"
        "    return lens.to(device, non_blocking=True)\n"
    )
    proj = project(tmp_path / "p", {name: src})
    for fmt in ("full", "concise"):
        ran = pinlint("check", "--output-format", fmt, ".", cwd=proj)
        assert ran.returncode == 1
        assert ESC not in ran.stdout and "\x07" not in ran.stdout, fmt
        assert "\\x1b" in ran.stdout
    # Colour output (rich) as on a terminal.
    from pinlint.core.diagnostics import Diagnostic, Location
    from pinlint.report.human import render_full

    d = Diagnostic(
        code="PIN001",
        name="n",
        message="m",
        filename=str(proj / name),
        location=Location(5, 5),
        end_location=Location(5, 9),
        noqa_row=5,
        url="",
    )
    coloured = render_full([d], proj, color=True)
    assert "\x1b[2J" not in coloured and "\x1b]" not in coloured and "\x07" not in coloured


def test_json_lines_record_is_one_line_for_splitlines(tmp_path: Path, home: Path) -> None:
    """Review #20: U+2028 in a file name split a record for `str.splitlines()` readers."""
    proj = project(tmp_path / "p", {"a\u2028b.py": FINDING, "c.py": FINDING})
    ran = pinlint("check", "--output-format", "json-lines", ".", cwd=proj)
    records = ran.stdout.splitlines()
    assert len(records) == 2
    assert {Path(json.loads(r)["filename"]).name for r in records} == {"a\u2028b.py", "c.py"}


@pytest.mark.parametrize("fmt", ["json", "sarif", "gitlab"])
def test_machine_formats_stay_valid_json(tmp_path: Path, home: Path, fmt: str) -> None:
    proj = project(tmp_path / "p", {"a\u2028\x1b.py": FINDING})
    ran = pinlint("check", "--output-format", fmt, ".", cwd=proj)
    assert ran.returncode == 1
    json.loads(ran.stdout)
