"""``pinlint trace`` and ``pinlint probe``, invoked directly (CliRunner) and as ``python -m``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import click
import pytest

torch = pytest.importorskip("torch")

from click.testing import CliRunner

from pinlint.core.paths import display_path
from pinlint.runtime.cli import Program, parse_program, probe_command, trace_command

REPO = Path(__file__).resolve().parents[2]
RUFF_FIELDS = [
    "code",
    "name",
    "message",
    "filename",
    "location",
    "end_location",
    "fix",
    "noqa_row",
    "url",
]

SCRIPT = """\
import sys
import torch

def is_pin_memory_available(device=None):
    return torch.cuda.is_available()

print("args:", sys.argv[1:])
bad = torch.tensor([1, 2, 3], dtype=torch.int32).to("cuda", non_blocking=True)
good = torch.tensor([4], pin_memory=is_pin_memory_available("cuda")).to("cuda", non_blocking=True)
print("after the copies")
sys.exit(int(sys.argv[1]) if len(sys.argv) > 1 else 0)
"""
BAD_ROW = 8

CLEAN = """\
import torch
x = torch.ones(4, pin_memory=torch.cuda.is_available()).to("cuda", non_blocking=True)
y = torch.ones(2).to("cuda")
"""


@pytest.fixture
def script(tmp_path: Path) -> Path:
    path = tmp_path / "prog.py"
    path.write_text(SCRIPT)
    return path


def invoke(*args: str) -> click.testing.Result:
    return CliRunner().invoke(trace_command, list(args), catch_exceptions=False)


def test_parse_program_forms(tmp_path: Path) -> None:
    f = tmp_path / "s.py"
    f.write_text("")
    assert parse_program(["python", str(f), "a", "-x"]) == Program("path", str(f), (str(f), "a", "-x"))
    assert parse_program([sys.executable, "-m", "pkg.mod", "1"]) == Program("module", "pkg.mod", ("pkg.mod", "1"))
    assert parse_program([str(f)]) == Program("path", str(f), (str(f),))
    assert parse_program(["python3", "-c", "pass", "z"]) == Program("code", "pass", ("-c", "z"))
    for bad in (
        [],
        ["python"],
        ["python", "-m"],
        ["python", "-X", "dev"],
        ["python", str(tmp_path / "missing.py")],
    ):
        with pytest.raises(click.UsageError):
            parse_program(bad)


def test_trace_full_output_and_exit_1(script: Path) -> None:
    result = invoke("--simulate-cuda", "--", "python", str(script), "0")
    assert result.exit_code == 1
    assert "args: ['0']" in result.stdout and "after the copies" in result.stdout
    path = display_path(script, Path.cwd())  # as `pinlint check` shows it: outside the cwd, as given
    line = SCRIPT.splitlines()[BAD_ROW - 1]
    assert f"{path}:{BAD_ROW}:{line.index('torch.tensor') + 1}: PIN001 " in result.stdout
    assert "Found 1 violation in 2 H2D transfers (simulated CUDA)." in result.stdout
    assert "pinlint trace: program exited with status 0" in result.stderr


def test_trace_json_has_exactly_ruffs_fields(script: Path) -> None:
    result = invoke("--simulate-cuda", "--output-format", "json", "--", "python", str(script))
    assert result.exit_code == 1
    doc = json.loads(result.stdout)  # the program's prints went to stderr
    assert "after the copies" in result.stderr
    [d] = doc
    assert list(d) == [*RUFF_FIELDS, "related"]  # ruff's fields in ruff's order, then pinlint's one addition
    assert (d["code"], d["name"], d["filename"], d["location"]["row"], d["noqa_row"], d["fix"]) == (
        "PIN001",
        "unpinned-non-blocking-copy",
        str(script.resolve()),
        BAD_ROW,
        BAD_ROW,
        None,
    )
    assert d["end_location"]["row"] == BAD_ROW and d["end_location"]["column"] > d["location"]["column"]
    assert d["url"].endswith("PIN001-unpinned-non-blocking-copy.md")


def test_trace_clean_program_passes_its_status_through(tmp_path: Path) -> None:
    clean = tmp_path / "clean.py"
    clean.write_text(CLEAN + "raise SystemExit(5)\n")
    result = invoke("--simulate-cuda", "--", "python", str(clean))
    assert "All checks passed: 2 H2D transfers observed (simulated CUDA)." in result.stdout
    assert result.exit_code == 5
    clean.write_text(CLEAN)
    result = invoke("--simulate-cuda", "--", "python", str(clean))
    assert "All checks passed: 2 H2D transfers observed" in result.stdout
    assert result.exit_code == 0


def test_violation_wins_over_program_status(script: Path) -> None:
    result = invoke("--simulate-cuda", "--", "python", str(script), "5")
    assert "Found 1 violation in 2 H2D transfers" in result.stdout
    assert result.exit_code == 1
    assert "pinlint trace: program exited with status 5" in result.stderr


def test_program_exception_is_status_1_and_printed(tmp_path: Path) -> None:
    prog = tmp_path / "boom.py"
    prog.write_text('import torch\ntorch.ones(2).to("cuda")\nraise ValueError("boom")\n')
    result = invoke("--simulate-cuda", "--", "python", str(prog))
    assert "ValueError: boom" in result.stderr
    assert "All checks passed: 1 H2D transfer observed" in result.stdout
    assert result.exit_code == 1
    assert "program exited with status 1" in result.stderr


def test_strict_stops_the_program(script: Path) -> None:
    result = invoke("--strict", "--simulate-cuda", "--", "python", str(script))
    assert result.exit_code == 1
    assert "after the copies" not in result.stdout
    assert "Found 1 violation in 1 H2D transfer (simulated CUDA)." in result.stdout


def test_module_form(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pkg = tmp_path / "tracedpkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "main.py").write_text(SCRIPT)
    monkeypatch.chdir(tmp_path)
    result = invoke("--simulate-cuda", "--", "python", "-m", "tracedpkg.main", "0")
    assert result.exit_code == 1
    assert f"{os.path.join('tracedpkg', 'main.py')}:{BAD_ROW}:" in result.stdout
    assert "Found 1 violation in 2 H2D transfers" in result.stdout
    sys.modules.pop("tracedpkg", None)


@pytest.mark.parametrize(
    "args",
    [
        [],
        ["--"],
        ["--", "python"],
        ["--", "python", "missing_script.py"],
        ["--output-format", "xml", "--", "python", "x.py"],
    ],
)
def test_usage_errors_exit_2(args: list[str]) -> None:
    result = CliRunner().invoke(trace_command, args)
    assert result.exit_code == 2


def test_missing_module_is_a_usage_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(trace_command, ["--", "python", "-m", "no_such_module_xyz"])
    assert result.exit_code == 2


def test_python_dash_m_entry_point(script: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "pinlint.runtime.cli",
            "trace",
            "--simulate-cuda",
            "--output-format",
            "json",
            "--",
            "python",
            str(script),
        ],
        capture_output=True,
        text=True,
        check=False,
        env=env,
        cwd=script.parent,
    )
    assert out.returncode == 1, out.stderr
    [d] = json.loads(out.stdout)
    assert (d["code"], d["location"]["row"]) == ("PIN001", BAD_ROW)
    assert "program exited with status 0" in out.stderr


@pytest.mark.skipif(torch.cuda.is_available(), reason="checks the no-CUDA path")
def test_probe_skips_with_status_3_without_cuda(tmp_path: Path) -> None:
    out_json = tmp_path / "probe.json"
    result = CliRunner().invoke(probe_command, ["--json", str(out_json)])
    assert result.exit_code == 3
    doc = json.loads(out_json.read_text())
    assert doc["skipped"] == "no CUDA device" and doc["exit_status"] == 3


def test_probe_bad_run_spec_is_usage_error() -> None:
    result = CliRunner().invoke(probe_command, ["--run", "not a spec"])
    assert result.exit_code == 2


@pytest.mark.skipif(torch.cuda.is_available(), reason="checks the no-CUDA path")
def test_probe_as_python_dash_m() -> None:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    out = subprocess.run(
        [sys.executable, "-m", "pinlint.runtime.cli", "probe"],
        capture_output=True,
        text=True,
        check=False,
        env=env,
    )
    assert out.returncode == 3
    assert "SKIPPED (not passed): no CUDA device" in out.stdout


# -- one report for static and runtime --------------------------------------------------------------
def _static_render(fmt: str, path: Path) -> str:
    """What ``pinlint check --output-format FMT`` prints for the same file (same formatter)."""
    from pinlint.cli import main as pinlint_main

    result = CliRunner().invoke(pinlint_main, ["check", "--no-cache", "--output-format", fmt, str(path)])
    return result.stdout


@pytest.mark.parametrize("fmt", ["sarif", "github", "junit", "gitlab", "json-lines", "concise"])
def test_trace_renders_through_checks_formatters(script: Path, fmt: str) -> None:
    result = invoke("--simulate-cuda", "--output-format", fmt, "--", "python", str(script))
    assert result.exit_code == 1
    assert "after the copies" in result.stderr  # stdout holds only the report
    out = result.stdout
    assert "PIN001" in out and str(BAD_ROW) in out
    if fmt == "sarif":
        doc = json.loads(out)
        [res] = doc["runs"][0]["results"]
        assert res["ruleId"] == "PIN001"
        assert res["locations"][0]["physicalLocation"]["region"]["startLine"] == BAD_ROW
    elif fmt == "github":
        assert out.startswith("::error ") and f"line={BAD_ROW}" in out
    elif fmt == "junit":
        assert "<testsuites" in out and "PIN001" in out
    elif fmt == "json-lines":
        assert json.loads(out.splitlines()[0])["code"] == "PIN001"


def test_trace_github_annotation_matches_checks_wording(tmp_path: Path) -> None:
    prog = tmp_path / "p.py"
    prog.write_text("import torch\nx = torch.ones(4)\nx.to('cuda', non_blocking=True)\n")
    runtime = invoke("--simulate-cuda", "--output-format", "github", "--", "python", str(prog)).stdout
    static = _static_render("github", prog)
    # Same formatter: the same "::error title=pinlint (PIN001),file=...,line=2,..." prefix.
    assert runtime.split("::", 2)[1].split(",")[0] == static.split("::", 2)[1].split(",")[0]
    assert "line=2" in runtime and "line=2" in static


def test_trace_prints_what_it_observed(script: Path) -> None:
    result = invoke("--simulate-cuda", "--", "python", str(script))
    assert "pinlint trace: observed 2 H2D transfer(s) (Tensor.to x2)" in result.stderr


def test_blind_spots_never_print_all_checks_passed(tmp_path: Path) -> None:
    prog = tmp_path / "blind.py"
    prog.write_text(
        "import torch\n"
        "x = torch.ones(4, pin_memory=True)\n"
        "x.to('cuda', non_blocking=True)\n"
        "dst = torch.empty(4, device='cuda')\n"
        "try:\n    torch.ops.aten._copy_from(x, dst, True)\nexcept Exception:\n    pass\n"
    )
    result = invoke("--simulate-cuda", "--", "python", str(prog))
    assert result.exit_code == 0
    assert "All checks passed" not in result.stdout
    assert "could not be classified" in result.stdout
    assert "warning: some torch copies went through entry points the watch cannot classify" in result.stderr


def test_clean_run_says_all_checks_passed(tmp_path: Path) -> None:
    clean = tmp_path / "clean.py"
    clean.write_text(CLEAN)
    result = invoke("--simulate-cuda", "--", "python", str(clean))
    assert result.exit_code == 0
    assert "All checks passed: 2 H2D transfers observed (simulated CUDA)." in result.stdout


def test_no_cuda_failure_suggests_simulate_cuda(tmp_path: Path) -> None:
    prog = tmp_path / "needs_cuda.py"
    prog.write_text("import torch\ntorch.ones(4).cuda()\n")
    result = invoke("--", "python", str(prog))
    if torch.cuda.is_available():
        pytest.skip("this machine has CUDA")
    assert result.exit_code == 1
    assert "rerun with --simulate-cuda" in result.stderr


def test_trace_watches_threads_by_default(tmp_path: Path) -> None:
    prog = tmp_path / "producer.py"
    prog.write_text(
        "import threading, torch\n"
        "def produce():\n"
        "    try:\n        torch.ones(4).to('cuda', non_blocking=True)\n"
        "    except (AssertionError, RuntimeError):\n        print('unwatched thread: no CUDA')\n"
        "t = threading.Thread(target=produce)\nt.start()\nt.join()\n"
    )
    result = invoke("--simulate-cuda", "--", "python", str(prog))
    assert result.exit_code == 1 and "PIN001" in result.stdout
    assert "observed 1 H2D transfer(s)" in result.stderr
    only_main = invoke("--simulate-cuda", "--threads", "current", "--", "python", str(prog))
    assert "observed 0 H2D transfer(s)" in only_main.stderr
    assert "unwatched thread: no CUDA" in only_main.stdout


def test_pin_memory_false_at_run_time_is_explained(tmp_path: Path) -> None:
    prog = tmp_path / "helper.py"
    prog.write_text(
        "import torch\n"
        "PIN = False  # e.g. a helper that said no\n"
        "torch.ones(4, pin_memory=PIN).to('cuda', non_blocking=True)\n"
    )
    result = invoke("--simulate-cuda", "--", "python", str(prog))
    assert "its `pin_memory=` argument evaluated to False at run time" in result.stdout
