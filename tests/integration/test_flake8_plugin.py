"""pinlint's flake8 plugin, run by the real flake8 (a subprocess) on a temporary project."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("flake8")

HOT = """\
import torch


def alloc(lens, device):
    lens_cpu = torch.tensor(
        [int(n) for n in lens],
        dtype=torch.int64,
    )
    return lens_cpu.to(device, non_blocking=True)


def one_line(n, device):
    return torch.zeros(n).to(device, non_blocking=True)
"""

DEVICE = """\
import torch


def build(xs, device):
    return torch.tensor([1, 2], device=device)
"""

NOQA_ON_COPY = """\
import torch


def f(device):
    t = torch.ones(3)
    return t.to(device, non_blocking=True)  # noqa: PIN001
"""

PINNED_FACTORY = """\
import torch
from myproj.buffers import make_buffer


def f(device):
    t = torch.tensor([1, 2])
    return t.to(device, non_blocking=True), make_buffer().to(device, non_blocking=True)
"""


def flake8(project: Path, *args: str) -> subprocess.CompletedProcess[str]:
    # --isolated: no flake8 config from the developer's machine; [tool.pinlint] is still read
    # by the plugin from the working directory, which is the point of one test below.
    return subprocess.run(
        [sys.executable, "-m", "flake8", "--isolated", "--format", "%(path)s:%(row)d:%(col)d: %(code)s", *args],
        cwd=project,
        capture_output=True,
        text=True,
        timeout=60,
    )


def reported(result: subprocess.CompletedProcess[str]) -> list[str]:
    assert "Traceback" not in result.stderr, result.stderr
    return sorted(line for line in result.stdout.splitlines() if " PIN" in line)


@pytest.fixture()
def project(tmp_path: Path) -> Path:
    for name, text in {
        "hot.py": HOT,
        "device.py": DEVICE,
        "noqa_copy.py": NOQA_ON_COPY,
        "pinned.py": PINNED_FACTORY,
    }.items():
        (tmp_path / name).write_text(text)
    (tmp_path / "clean.py").write_text("import os\n\nprint(os.sep)\n")
    return tmp_path


def test_plugin_is_registered() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "flake8", "--version"], capture_output=True, text=True, timeout=60
    ).stdout
    assert "torch-pinlint" in out


def test_select_pin_reports_rows_and_columns(project: Path) -> None:
    result = flake8(project, "--select", "PIN", "hot.py", "clean.py")
    assert result.returncode == 1
    # Rows and columns (1-based, as flake8 prints them) of the constructions, like `pinlint check`.
    assert reported(result) == ["hot.py:13:12: PIN001", "hot.py:5:16: PIN001"]
    full = subprocess.run(
        [sys.executable, "-m", "flake8", "--isolated", "--select", "PIN", "hot.py"],
        cwd=project,
        capture_output=True,
        text=True,
        timeout=60,
    ).stdout
    assert (
        "hot.py:5:16: PIN001 `torch.tensor(...)` is pageable and reaches `.to(..., non_blocking=True)` on line 9"
        in full
    )


def test_positions_match_pinlint_check(project: Path) -> None:
    pinlint = subprocess.run(
        [sys.executable, "-m", "pinlint", "check", "--no-cache", "--output-format", "concise", "hot.py"],
        cwd=project,
        capture_output=True,
        text=True,
        timeout=60,
    ).stdout
    expected = sorted(
        ":".join(line.split(":")[:3]) + ": " + line.split(": ")[1].split()[0]
        for line in pinlint.splitlines()
        if " PIN" in line
    )
    assert expected == reported(flake8(project, "--select", "PIN", "hot.py"))


def test_opt_in_rule_is_off_by_default(project: Path) -> None:
    # No --select: flake8's default selection plus the plugin's `PIN` entry point name.
    assert reported(flake8(project, "device.py")) == []
    assert reported(flake8(project, "hot.py")) == ["hot.py:13:12: PIN001", "hot.py:5:16: PIN001"]
    assert reported(flake8(project, "--extend-select", "PIN003", "device.py")) == ["device.py:5:12: PIN003"]
    # As with `pinlint check --select PIN`, the prefix selects every PIN rule.
    assert reported(flake8(project, "--select", "PIN", "device.py")) == ["device.py:5:12: PIN003"]
    assert reported(flake8(project, "--select", "PIN", "--ignore", "PIN003", "device.py")) == []


def test_noqa_on_the_copy_line_and_disable_noqa(project: Path) -> None:
    assert reported(flake8(project, "--select", "PIN", "noqa_copy.py")) == []
    assert reported(flake8(project, "--select", "PIN", "--disable-noqa", "noqa_copy.py")) == [
        "noqa_copy.py:5:9: PIN001"
    ]


def test_reads_host_functions_from_tool_pinlint(project: Path) -> None:
    assert reported(flake8(project, "--select", "PIN", "pinned.py")) == ["pinned.py:6:9: PIN001"]
    (project / "pyproject.toml").write_text('[tool.pinlint]\nhost-functions = ["make_buffer"]\n')
    assert reported(flake8(project, "--select", "PIN", "pinned.py")) == [
        "pinned.py:6:9: PIN001",
        "pinned.py:7:45: PIN002",
    ]


def test_many_files_in_parallel(project: Path) -> None:
    # flake8 forks workers for several files; the class-level options must reach them.
    for i in range(6):
        (project / f"copy{i}.py").write_text(DEVICE)
    result = flake8(project, "--jobs", "2", "--extend-select", "PIN003", ".")
    assert len([line for line in reported(result) if line.endswith("PIN003")]) == 7
