"""The command line, through click's runner and as a real subprocess (ruff's conventions)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from click.testing import CliRunner

from pinlint.cli import main

HOT = textwrap.dedent(
    """\
    import torch
    from myproj.utils import is_pin_memory_available


    def f(device, data):
        a = torch.tensor([1, 2, 3]).to(device, non_blocking=True)
        b = torch.tensor(data).to(device, non_blocking=True)
        return a, b
    """
)
CLEAN = "import torch\n\n\ndef g(x, device):\n    return x.to(device, non_blocking=True)\n"
CONFIG = '[tool.pinlint]\npin-memory-helper = "myproj.utils:is_pin_memory_available(device)"\n'


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "pyproject.toml").write_text(CONFIG)
    (tmp_path / "hot.py").write_text(HOT)
    (tmp_path / "clean.py").write_text(CLEAN)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def invoke(*args: str, input: str | None = None) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, list(args), input=input, catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr


def subprocess_run(*args: str, cwd: Path, input: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pinlint", *args], cwd=cwd, input=input, capture_output=True, text=True, timeout=120
    )


def test_exit_codes_and_summary(project: Path) -> None:
    code, out, _ = invoke("check", "clean.py")
    assert code == 0 and out == "All checks passed!\n"
    code, out, _ = invoke("check", ".", "--no-cache")
    assert code == 1
    assert out.rstrip().endswith(
        "Found 2 errors.\n[*] 1 fixable with the `--fix` option (1 hidden fix can be enabled with the `--unsafe-fixes` option)."
    )
    assert invoke("check", ".", "--exit-zero")[0] == 0
    # The short form `pinlint PATHS` is `pinlint check PATHS`.
    assert (
        invoke("hot.py", "--output-format", "concise")[1] == invoke("check", "hot.py", "--output-format", "concise")[1]
    )


def test_check_writes_nothing(project: Path) -> None:
    before = (project / "hot.py").read_bytes()
    invoke("check", ".", "--no-cache")
    invoke("check", ".", "--diff")
    assert (project / "hot.py").read_bytes() == before


def test_json_has_ruffs_shape(project: Path) -> None:
    code, out, _ = invoke("check", "hot.py", "--output-format", "json", "--no-cache")
    assert code == 1
    data = json.loads(out)
    assert [d["code"] for d in data] == ["PIN001", "PIN001"]
    first = data[0]
    ruff_keys = ["code", "name", "message", "filename", "location", "end_location", "fix", "noqa_row", "url"]
    assert list(first) == [*ruff_keys, "related"]  # ruff's keys in ruff's order, then the copy
    assert first["related"][0]["message"] == "the non_blocking copy"
    assert first["filename"] == str(project / "hot.py")
    assert first["location"] == {"row": 6, "column": 9} and first["end_location"] == {"row": 6, "column": 32}
    assert first["fix"]["applicability"] == "safe"
    assert first["fix"]["edits"] == [
        # The new argument would run past 88 columns (the default line length): the call is
        # exploded one argument per line, with a magic trailing comma.
        {
            "content": "\n        [1, 2, 3],\n        pin_memory=is_pin_memory_available(device),\n    ",
            "location": {"row": 6, "column": 22},
            "end_location": {"row": 6, "column": 31},
        }
    ]
    assert data[1]["fix"]["applicability"] == "unsafe"
    assert first["noqa_row"] == 6 and first["url"].endswith("PIN001-unpinned-non-blocking-copy.md")


def test_selection(project: Path) -> None:
    assert invoke("check", "hot.py", "--ignore", "PIN001")[0] == 0
    assert invoke("check", "hot.py", "--select", "PIN002")[0] == 0
    assert invoke("check", "hot.py", "--select", "PIN")[0] == 1
    assert invoke("check", "hot.py", "--select", "ALL", "--ignore", "PIN0")[0] == 0
    code, _, err = invoke("check", "hot.py", "--select", "PIN999")
    assert code == 2 and "unknown rule selector `PIN999`" in err
    (project / "dev.py").write_text("import torch\n\ndef f(d):\n    return torch.tensor([1], device=d)\n")
    assert invoke("check", "dev.py")[0] == 0  # PIN003 is off by default
    code, out, _ = invoke("check", "dev.py", "--extend-select", "PIN003", "--output-format", "concise")
    assert code == 1 and "PIN003" in out


def test_fix_diff_and_summary(project: Path) -> None:
    code, out, err = invoke("check", "hot.py", "--diff")
    assert code == 1
    assert (
        "+    a = torch.tensor(\n+        [1, 2, 3],\n+        pin_memory=is_pin_memory_available(device),\n+    ).to(device, non_blocking=True)"
        in out
    )
    assert "Would fix 1 error (1 additional fix available with `--unsafe-fixes`)." in err
    code, out, _ = invoke("check", "hot.py", "--fix")
    assert code == 1
    assert "Found 2 errors (1 fixed, 1 remaining).\n1 more fix available with `--unsafe-fixes`." in out
    code, out, _ = invoke("check", "hot.py", "--fix", "--unsafe-fixes")
    assert code == 0 and "Found 1 error (1 fixed, 0 remaining)." in out
    text = (project / "hot.py").read_text()
    assert "        data,\n        pin_memory=is_pin_memory_available(device),\n    ).to(device" in text
    assert invoke("check", "hot.py", "--diff")[0] == 0  # converged: nothing left to do


def test_show_fixes_and_statistics(project: Path) -> None:
    code, out, _ = invoke("check", ".", "--statistics")
    assert code == 1
    assert "PIN001" in out and "unpinned-non-blocking-copy" in out
    code, out, _ = invoke("check", "hot.py", "--fix", "--unsafe-fixes", "--show-fixes")
    assert "Fixed 2 errors:\n- hot.py:\n    2 × PIN001 (unpinned-non-blocking-copy)" in out


def test_stdin(project: Path) -> None:
    code, out, _ = invoke("check", "-", "--stdin-filename", "hot.py", "--output-format", "concise", input=HOT)
    assert code == 1 and out.startswith("hot.py:6:9: PIN001 [*]")
    proc = subprocess_run("check", "-", "--stdin-filename", "hot.py", "--fix", cwd=project, input=HOT)
    assert proc.stdout.startswith("import torch\n")
    assert "        pin_memory=is_pin_memory_available(device),\n    ).to(device" in proc.stdout
    assert "Found 2 errors (1 fixed, 1 remaining)." in proc.stderr
    assert proc.returncode == 1


def test_subprocess_version_and_rule(project: Path) -> None:
    proc = subprocess_run("--version", cwd=project)
    assert proc.returncode == 0 and proc.stdout.startswith("pinlint ")
    proc = subprocess_run("rule", "PIN001", cwd=project)
    assert proc.returncode == 0 and proc.stdout.startswith("# unpinned-non-blocking-copy (PIN001)")
    assert "## Fix safety" in proc.stdout
    proc = subprocess_run("rule", "unpinnable-non-blocking-source", cwd=project)
    assert "(PIN002)" in proc.stdout
    proc = subprocess_run("rule", "PIN404", cwd=project)
    assert proc.returncode == 2 and "unknown rule" in proc.stderr


def test_version_does_not_import_heavy_modules(project: Path) -> None:
    code = (
        "import sys, runpy; sys.argv=['pinlint','--version']; from pinlint.__main__ import main; main(); "
        "print(sorted(m for m in ('libcst', 'rich', 'click', 'torch') if m in sys.modules))"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert proc.stdout.strip().endswith("[]")


def test_missing_path_and_config_errors(project: Path) -> None:
    code, _, err = invoke("check", "nope.py")
    assert code == 2 and "nope.py: no such file or directory" in err
    (project / "pyproject.toml").write_text("[tool.pinlint]\nselcet = ['PIN001']\n")
    code, _, err = invoke("check", ".")
    assert code == 2 and "unknown key `selcet`" in err and "Traceback" not in err
    (project / "pyproject.toml").write_text("[tool.pinlint]\nselect = 'PIN001'\n")
    code, _, err = invoke("check", ".")
    assert code == 2 and "`select` must be a list of strings" in err
    (project / "pyproject.toml").write_text("[tool.pinlint\n")
    code, _, err = invoke("check", ".")
    assert code == 2 and "invalid TOML" in err
    (project / "pyproject.toml").write_text('[tool.pinlint]\npin-memory-helper = "no_colon"\n')
    code, _, err = invoke("check", ".")
    assert code == 2 and "pin-memory-helper must look like" in err


def test_config_override_and_per_file_ignores(project: Path) -> None:
    (project / "pyproject.toml").write_text(CONFIG + '[tool.pinlint.per-file-ignores]\n"hot.py" = ["PIN001"]\n')
    assert invoke("check", ".")[0] == 0
    assert invoke("check", ".", "--config", "per-file-ignores = {}")[0] == 1


def test_exclusions_and_gitignore(project: Path) -> None:
    sub = project / "gen"
    sub.mkdir()
    (sub / "hot2.py").write_text(HOT)
    assert "gen/hot2.py" in invoke("check", ".", "--output-format", "concise")[1]
    assert "gen/hot2.py" not in invoke("check", ".", "--output-format", "concise", "--extend-exclude", "gen")[1]
    (project / ".gitignore").write_text("gen/\n")
    assert "gen/hot2.py" not in invoke("check", ".", "--output-format", "concise")[1]
    assert "gen/hot2.py" in invoke("check", ".", "--output-format", "concise", "--no-respect-gitignore")[1]
    # A file named explicitly is checked unless --force-exclude (the pre-commit case).
    assert invoke("check", "gen/hot2.py", "--extend-exclude", "gen")[0] == 1
    assert invoke("check", "gen/hot2.py", "--extend-exclude", "gen", "--force-exclude")[0] == 0


def test_noqa_and_add_noqa(project: Path) -> None:
    code, _, err = invoke("check", ".", "--add-noqa")
    assert code == 0 and "Added 2 noqa directives." in err
    assert invoke("check", ".")[0] == 0
    assert invoke("check", ".", "--ignore-noqa")[0] == 1
    text = (project / "hot.py").read_text()
    assert text.count("# noqa: PIN001") == 2
    invoke("check", ".", "--add-noqa")
    assert (project / "hot.py").read_text() == text  # idempotent


def test_baseline(project: Path) -> None:
    code, _, _ = invoke("check", ".", "--write-baseline", "baseline.json")
    assert code == 0
    assert invoke("check", ".", "--baseline", "baseline.json")[0] == 0
    # Unrelated lines above shift the findings: still known.
    (project / "hot.py").write_text("# a comment\n\n" + HOT)
    assert invoke("check", ".", "--baseline", "baseline.json")[0] == 0
    # A new finding is reported.
    (project / "new.py").write_text(HOT.replace("[1, 2, 3]", "[4]"))
    code, out, _ = invoke("check", ".", "--baseline", "baseline.json", "--output-format", "concise")
    assert code == 1 and "new.py" in out and "hot.py" not in out
    (project / "broken.json").write_text("{")
    assert invoke("check", ".", "--baseline", "broken.json")[0] == 2


def test_cache_and_workers_agree(project: Path) -> None:
    for i in range(60):  # enough files for worker processes
        (project / f"m{i}.py").write_text(HOT if i % 3 == 0 else CLEAN)
    cold = invoke("check", ".", "--output-format", "json", "--no-cache", "--jobs", "1")[1]
    many = invoke("check", ".", "--output-format", "json", "--no-cache", "--jobs", "2")[1]
    first = invoke("check", ".", "--output-format", "json")[1]
    warm = invoke("check", ".", "--output-format", "json")[1]
    assert cold == many == first == warm
    assert len(json.loads(cold)) == 2 * 21
    assert (project / ".pinlint_cache").is_dir()
    # A changed file is re-analyzed, not served stale from the cache.
    (project / "m0.py").write_text(CLEAN)
    assert len(json.loads(invoke("check", ".", "--output-format", "json")[1])) == 2 * 20
    invoke("clean")
    assert not (project / ".pinlint_cache").exists()


def test_syntax_error_is_reported_and_run_continues(project: Path) -> None:
    (project / "broken.py").write_text("import torch\n\ndef f(d):\n    x = torch.ones(2).to(d, non_blocking=True\n")
    code, out, err = invoke("check", ".", "--output-format", "concise")
    assert code == 1
    # A finding (PIN000) at CPython's location, the unclosed `(` of `.to(`.
    assert "broken.py:4:25: PIN000 SyntaxError: '(' was never closed" in out
    assert "hot.py:6:9: PIN001" in out


def test_machine_formats_are_plain(project: Path) -> None:
    for fmt in ("json", "json-lines", "github", "sarif", "gitlab", "junit", "concise"):
        proc = subprocess_run("check", "hot.py", "--output-format", fmt, cwd=project)
        assert proc.returncode == 1, fmt
        assert "\x1b[" not in proc.stdout, fmt
        assert "Traceback" not in proc.stderr
    proc = subprocess_run("check", "hot.py", "--output-format", "github", cwd=project)
    assert proc.stdout.startswith("::error title=pinlint (PIN001),file=hot.py,line=6,col=9,endLine=6,endColumn=32::")


def test_output_file(project: Path) -> None:
    code, out, _ = invoke("check", "hot.py", "--output-format", "json", "-o", "report.json")
    assert code == 1 and out == ""
    assert len(json.loads((project / "report.json").read_text())) == 2


def test_environment_is_respected(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PINLINT_OUTPUT_FORMAT", "concise")
    out = invoke("check", "hot.py")[1]
    assert out.startswith("hot.py:6:9: PIN001")
    assert os.environ["PINLINT_OUTPUT_FORMAT"] == "concise"
