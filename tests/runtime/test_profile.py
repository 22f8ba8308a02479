"""Runtime profiles end to end, under simulated CUDA: ``pinlint trace --profile`` writes what ran
where, ``pinlint check --profile`` puts those counts on the static findings.

The key property: a static finding and its runtime count name the same file, row and column, so
the round trip (trace -> check) gives every finding that ran its real count.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

from click.testing import CliRunner, Result

from pinlint import profile as fmt
from pinlint.cli import main
from pinlint.runtime import watch
from pinlint.runtime.cli import trace_command

REPO = Path(__file__).resolve().parents[2]
STEPS = 5

#: Line numbers matter: the test checks them.
PROGRAM = """\
import sys
import torch


def setup(device):
    table = torch.arange(16, dtype=torch.int64).to(device, non_blocking=True)  # line 6: once
    return torch.tensor([1, 2], device=device), table  # line 7: once (PIN003)


def step(lens, device):
    lens_cpu = torch.tensor(lens, dtype=torch.int32)  # line 11: every step (PIN001)
    lens_gpu = lens_cpu.to(device, non_blocking=True)
    total = torch.tensor(sum(lens), device=device)  # line 13: every step (PIN003)
    return lens_gpu, total


def main():
    steps = int(sys.argv[1])
    setup("cuda")
    for i in range(steps):
        step([i, i + 1, i + 2], "cuda")


main()
"""

#: (code, row, column) -> runs per program run.
EXPECTED = {
    ("PIN001", 6, 13): 1,
    ("PIN003", 7, 12): 1,
    ("PIN001", 11, 16): STEPS,
    ("PIN003", 13, 13): STEPS,
}


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "pyproject.toml").write_text("[tool.pinlint]\nextend-select = ['PIN003']\n")
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "prog.py").write_text(PROGRAM)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def trace(*args: str) -> Result:
    return CliRunner().invoke(trace_command, list(args), catch_exceptions=False)


def check(*args: str) -> Result:
    return CliRunner().invoke(main, ["check", "--no-cache", "-j", "1", *args], catch_exceptions=False)


def findings(result: Result) -> dict[tuple[str, int, int], dict[str, object]]:
    data = json.loads(result.stdout)
    return {(d["code"], d["location"]["row"], d["location"]["column"]): d for d in data}


def test_trace_then_check_round_trip(project: Path) -> None:
    result = trace("--simulate-cuda", "--profile", "profile.json", "--", "python", "pkg/prog.py", str(STEPS))
    assert result.exit_code == 1, result.output  # PIN001 violations at run time
    assert "site(s) recorded; profile.json now sums 1 run (" in result.stderr
    profile = fmt.load(project / "profile.json")
    assert profile.runs == 1
    # Keys are relative to the project root (the folder of pyproject.toml), POSIX separators.
    assert {e.file for e in profile.entries()} == {"pkg/prog.py"}

    checked = check("--profile", "profile.json", "--output-format", "json", "pkg")
    assert checked.exit_code == 1, checked.output
    got = findings(checked)
    # Static findings and runtime counts agree on file, row and column: every finding matched.
    assert {k: d["profile"]["count"] for k, d in got.items()} == EXPECTED
    assert got[("PIN003", 13, 13)]["profile"]["kind"] == fmt.DEVICE_CONSTRUCTION
    assert got[("PIN001", 11, 16)]["profile"]["kind"] == fmt.HOST_CONSTRUCTION
    assert got[("PIN001", 11, 16)]["profile"]["bytes"] == STEPS * 3 * 4  # three int32 per step
    # The extra key comes after ruff's (and pinlint's `related`).
    keys = list(next(iter(got.values())))
    assert keys[-1] == "profile" and keys.index("url") < keys.index("profile")

    # The static positions are exactly the positions the runtime recorded.
    runtime_positions = {(e.row, e.column) for e in profile.entries()}
    assert {(row, col) for _code, row, col in EXPECTED} <= runtime_positions


def test_human_output_ranks_hot_findings_first_and_hot_only_drops_the_rest(project: Path) -> None:
    trace("--simulate-cuda", "--profile", "profile.json", "--", "python", "pkg/prog.py", str(STEPS))
    ranked = check("--profile", "profile.json", "--output-format", "concise", "pkg")
    lines = [line for line in ranked.stdout.splitlines() if line.startswith("pkg/")]
    assert [line.split(":")[1] for line in lines] == [
        "11",
        "13",
        "6",
        "7",
    ]  # hot first, then by position
    assert lines[0].endswith(f"(ran {STEPS} times, 60 B)")
    assert lines[2].endswith("(ran once, 128 B)")

    full = check("--profile", "profile.json", "pkg")
    assert f"  = profile: ran {STEPS} times, 60 B" in full.stdout

    hot = check("--profile", "profile.json", "--min-runs", str(STEPS), "--output-format", "concise", "pkg")
    assert [line.split(":")[1] for line in hot.stdout.splitlines() if line.startswith("pkg/")] == [
        "11",
        "13",
    ]
    assert "2 findings not shown" in hot.stderr
    assert hot.exit_code == 1

    # The config key does the same; --no-hot-only turns it off again.
    (project / "pyproject.toml").write_text(
        f"[tool.pinlint]\nextend-select = ['PIN003']\nhot-only = true\nmin-runs = {STEPS}\n"
    )
    assert len(findings(check("--profile", "profile.json", "--output-format", "json", "pkg"))) == 2
    assert len(findings(check("--profile", "profile.json", "--no-hot-only", "--output-format", "json", "pkg"))) == 4


def test_profile_merges_across_runs(project: Path) -> None:
    for _ in range(2):
        result = trace(
            "--simulate-cuda",
            "--profile",
            "profile.json",
            "--",
            "python",
            "pkg/prog.py",
            str(STEPS),
        )
        assert result.exit_code == 1
    profile = fmt.load(project / "profile.json")
    assert profile.runs == 2
    got = findings(check("--profile", "profile.json", "--output-format", "json", "pkg"))
    assert {k: d["profile"]["count"] for k, d in got.items()} == {k: 2 * n for k, n in EXPECTED.items()}


def test_trace_refuses_a_bad_profile_before_running_the_program(project: Path) -> None:
    (project / "profile.json").write_text('{"format": "pinlint-profile", "version": 1, "runs": 1, "sites": [')
    (project / "pkg" / "marker.py").write_text("open('ran', 'w').close()\n")
    result = CliRunner().invoke(trace_command, ["--profile", "profile.json", "--", "python", "pkg/marker.py"])
    assert result.exit_code == 2
    assert "profile.json: not a profile: invalid JSON" in result.stderr
    assert "truncated" in result.stderr
    assert "Traceback" not in result.output
    assert not (project / "ran").exists()


def test_watch_profile_argument_counts_and_appends(project: Path) -> None:
    path = project / "w.json"
    with watch(simulate="fake", profile=path, profile_root=project):
        for _ in range(3):
            torch.tensor([1.0, 2.0]).to("cuda", non_blocking=True)  # one line: construction + copy
    with watch(simulate="fake", profile=path, profile_root=project):
        torch.tensor([1.0, 2.0]).to("cuda")
    profile = fmt.load(path)
    assert profile.runs == 2
    here = fmt.file_key(__file__, project)
    by_kind: dict[str, int] = {}
    for e in profile.entries():
        assert e.file == here
        by_kind[e.kind] = by_kind.get(e.kind, 0) + e.count
    assert by_kind == {fmt.HOST_CONSTRUCTION: 4, fmt.NON_BLOCKING_COPY: 3, fmt.BLOCKING_COPY: 1}


def test_watch_profile_counts_past_max_records(project: Path) -> None:
    path = project / "w.json"
    with watch(simulate="fake", profile=path, profile_root=project, max_records=2) as report:
        for _ in range(10):
            torch.zeros(2).to("cuda", non_blocking=True)
    assert report.dropped == 8
    copies = [e for e in fmt.load(path).entries() if e.kind == fmt.NON_BLOCKING_COPY]
    assert [e.count for e in copies] == [10]


def test_watch_refuses_a_bad_profile_when_made(project: Path) -> None:
    (project / "bad.json").write_text("[]")
    with pytest.raises(fmt.ProfileError, match="expected a JSON object"):
        watch(simulate="fake", profile=project / "bad.json")


def test_the_shipped_example_ranks_per_step_sites_first(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """docs/runtime.md's worked example: examples/serving_loop.py under simulated CUDA."""
    shutil.copy(REPO / "examples" / "serving_loop.py", tmp_path / "serving_loop.py")
    monkeypatch.chdir(tmp_path)
    result = trace("--simulate-cuda", "--profile", "profile.json", "--", "python", "serving_loop.py")
    assert result.exit_code == 1, result.output
    ranked = check(
        "--extend-select",
        "PIN003",
        "--profile",
        "profile.json",
        "--output-format",
        "json",
        "serving_loop.py",
    )
    data = json.loads(ranked.stdout)
    counts = [(d["code"], d["location"]["row"], d["profile"]["count"]) for d in data]
    # Every static finding ran; the per-step ones (64 steps) ran most, warm-up 3 times, init once.
    assert sorted(c for *_, c in counts) == [1, 1, 3, 3, 64, 64, 64]
    human = check(
        "--extend-select",
        "PIN003",
        "--profile",
        "profile.json",
        "--output-format",
        "concise",
        "serving_loop.py",
    )
    rows = [line.split(":")[1] for line in human.stdout.splitlines() if line.startswith("serving_loop.py")]
    assert rows == ["40", "42", "44", "34", "35", "27", "28"]
    hot = check(
        "--extend-select",
        "PIN003",
        "--profile",
        "profile.json",
        "--min-runs",
        "10",
        "--output-format",
        "concise",
        "serving_loop.py",
    )
    assert [line.split(":")[1] for line in hot.stdout.splitlines() if line.startswith("serving_loop.py")] == [
        "40",
        "42",
        "44",
    ]


def _plugin_args() -> list[str]:
    """Load the plugin explicitly unless the installed entry point already does."""
    from importlib.metadata import entry_points

    installed = any(ep.value == "pinlint.runtime.pytest_plugin" for ep in entry_points(group="pytest11"))
    return [] if installed else ["-p", "pinlint.runtime.pytest_plugin"]


def test_pytest_plugin_writes_a_profile(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        hot="import torch\n\ndef make(device):\n    return torch.tensor([1, 2]).to(device, non_blocking=True)\n",
        test_hot=(
            "import hot\n\n"
            "def test_a(pinlint_watch):\n    hot.make('cuda'); hot.make('cuda')\n\n"
            "def test_b(pinlint_watch):\n    hot.make('cuda')\n"
        ),
    )
    pytester.makefile(".toml", pyproject="[tool.pinlint]\n")
    pytester.syspathinsert()
    args = ["--pinlint-simulate=fake", "--pinlint-profile=prof.json", *_plugin_args()]
    result = pytester.runpytest_subprocess(*args)
    result.assert_outcomes(passed=2)
    result.stdout.fnmatch_lines(["*pinlint runtime: profile: * site(s) added to prof.json (1 run(s)*"])
    profile = fmt.load(pytester.path / "prof.json")
    construction = [e for e in profile.entries() if e.kind == fmt.HOST_CONSTRUCTION]
    assert [(e.file, e.row, e.column, e.count) for e in construction] == [("hot.py", 4, 12, 3)]

    (pytester.path / "bad.json").write_text("{}")
    bad = pytester.runpytest_subprocess("--pinlint-profile=bad.json", *_plugin_args())
    assert bad.ret == pytest.ExitCode.USAGE_ERROR
    bad.stderr.fnmatch_lines(["*--pinlint-profile: bad.json: not a profile*"])
