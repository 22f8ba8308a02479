"""Review #2: valid Python that segfaults libcst's native parser. One file must not kill the run
(exit 139, no report), and with the worker pool the run must finish instead of hanging."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.security.conftest import FINDING, pinlint, project

CRASHER = (
    "import torch\ndef f(d, y):\n    t = torch.tensor([1])\n    z = y"
    + " and y" * 8000
    + "\n    return t.to(d, non_blocking=True)\n"
)


def test_one_crashing_file_is_an_error_not_a_dead_run(tmp_path: Path, home: Path) -> None:
    proj = project(tmp_path / "p", {"c.py": CRASHER, "a.py": FINDING})
    ran = pinlint("check", "--no-cache", "--output-format", "concise", ".", cwd=proj, timeout=120)
    assert ran.returncode == 1, ran
    assert "a.py:5:12: PIN001" in ran.stdout
    assert "c.py: crashed the parser" in ran.stderr


@pytest.mark.parametrize("jobs", ["4"])
def test_worker_pool_finishes_after_a_worker_segfault(tmp_path: Path, home: Path, jobs: str) -> None:
    files = {f"m{i:02}.py": FINDING for i in range(60)}
    files["c.py"] = CRASHER
    proj = project(tmp_path / "p", files)
    ran = pinlint("check", "--no-cache", "-j", jobs, "--output-format", "concise", ".", cwd=proj, timeout=120)
    assert ran.returncode == 1, ran
    assert ran.stdout.count("PIN001") == 60
    assert ran.stderr.count("c.py: crashed the parser") == 1


def test_a_crashing_caller_kept_by_the_second_triage_is_isolated(tmp_path: Path, home: Path) -> None:
    # No `non_blocking` in c.py: only the second triage (it calls an imported copier) sends it to
    # the parser, which must then run it in a child. b.py, as deep but calling no copier, is
    # never parsed, and checked in-process without harm.
    deep = "    z = y" + " and y" * 8000 + "\n"
    copier = "def upload(t, d):\n    return t.to(d, non_blocking=True)\n"
    caller = (
        "import torch\nfrom helpers import upload\n\n\ndef f(d, y):\n" + deep + "    return upload(torch.zeros(2), d)\n"
    )
    quiet = "import torch\nimport helpers\n\n\ndef f(d, y):\n" + deep + "    return torch.zeros(2)\n"
    proj = project(tmp_path / "p", {"helpers.py": copier, "c.py": caller, "b.py": quiet, "a.py": FINDING})
    ran = pinlint("check", "--no-cache", "--output-format", "concise", ".", cwd=proj, timeout=120)
    assert ran.returncode == 1, ran
    assert "a.py:5:12: PIN001" in ran.stdout
    assert "c.py: crashed the parser" in ran.stderr
    assert "b.py" not in ran.stderr + ran.stdout


def test_flake8_plugin_survives_the_crasher(tmp_path: Path, home: Path) -> None:
    """The plugin shared the crash: flake8 died (and `flake8 --jobs` hung)."""
    import subprocess
    import sys

    files = {f"m{i:02}.py": FINDING for i in range(3)}
    files["c.py"] = CRASHER
    proj = project(tmp_path / "p", files)
    flake8 = str(Path(sys.executable).with_name("flake8"))
    for jobs in ("1", "4"):
        ran = subprocess.run(
            [flake8, "--select", "PIN", "-j", jobs, "."],
            cwd=proj,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        assert ran.returncode == 1, ran.stderr[-2000:]
        assert ran.stdout.count("PIN001") == 3
