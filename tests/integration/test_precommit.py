"""The hooks in `.pre-commit-hooks.yaml`, run by the real `pre-commit` on a throwaway project.

Two ways, on purpose:

* ``pre-commit try-repo <this checkout>``: the way a user meets the hooks. It clones the repository,
  builds the `language: python` hook environment with ``pip install .`` (libcst, click, rich and
  hatchling come from PyPI) and runs the hooks as the manifest declares them. On a dirty tree
  try-repo commits the *tracked* files' working-tree state into a temporary shadow clone
  (untracked files are left out, so the manifest must be committed) and it always installs into a
  fresh store, so each call costs one environment install (~20 s with a warm pip cache). The test
  therefore makes a single call that runs both hooks.
* A ``repo: local`` config built from the same manifest entries, with ``language: system`` and the
  entry pointing at this virtualenv's ``pinlint``: no install, so it can afford the several runs
  that show the clean file passing and the fixed tree passing afterwards.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

yaml = pytest.importorskip("yaml")  # pre-commit depends on PyYAML
pytest.importorskip("pre_commit")

ROOT = Path(__file__).resolve().parents[2]
MANIFEST = ROOT / ".pre-commit-hooks.yaml"
PINLINT = Path(sys.executable).with_name("pinlint")

PYPROJECT = """\
[tool.pinlint]
pin-memory-helper = "myproj.utils:is_pin_memory_available(device)"
"""

CLEAN = """\
import torch


def upload(device):
    return torch.ones(3, pin_memory=True).to(device, non_blocking=True)
"""

HOT = """\
import torch


def upload(device):
    return torch.tensor([1, 2, 3]).to(device, non_blocking=True)
"""

HOT_FIXED = """\
import torch

from myproj.utils import is_pin_memory_available


def upload(device):
    return torch.tensor(
        [1, 2, 3],
        pin_memory=is_pin_memory_available(device),
    ).to(device, non_blocking=True)
"""


def _env() -> dict[str, str]:
    # GIT_DIR, GIT_INDEX_FILE... are set when pytest itself runs inside a git hook; they would
    # point pre-commit's git calls at the wrong repository.
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GIT_", "PRE_COMMIT"))}
    env["PINLINT_NO_CACHE"] = "1"
    return env


def _git(project: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=project, check=True, capture_output=True, env=_env())


@pytest.fixture()
def project(tmp_path: Path) -> Path:
    project = tmp_path / "proj"
    (project / "myproj").mkdir(parents=True)
    (project / "pyproject.toml").write_text(PYPROJECT)
    (project / "myproj" / "__init__.py").write_text("")
    (project / "myproj" / "clean.py").write_text(CLEAN)
    (project / "myproj" / "hot.py").write_text(HOT)
    _git(project, "init", "-q")
    _git(project, "add", "-A")  # pre-commit's --all-files means `git ls-files`
    return project


def _pre_commit(project: Path, *args: str, timeout: float) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pre_commit", *args, "--color", "never"],
        cwd=project,
        env=_env(),
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def _hook_block(output: str, hook_name: str) -> str:
    """The part of pre-commit's output that belongs to the hook whose status line starts with ``hook_name``."""
    lines = output.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(hook_name + "."))
    end = next(
        (
            i
            for i in range(start + 1, len(lines))
            if "...." in lines[i] and lines[i].rstrip().endswith(("Passed", "Failed", "Skipped"))
        ),
        len(lines),
    )
    return "\n".join(lines[start:end])


def _status(output: str, hook_name: str) -> str:
    return _hook_block(output, hook_name).splitlines()[0].rsplit(".", 1)[-1].strip()


def test_manifest_declares_both_hooks() -> None:
    hooks = {hook["id"]: hook for hook in yaml.safe_load(MANIFEST.read_text())}
    assert set(hooks) == {"pinlint", "pinlint-fix"}
    for hook in hooks.values():
        assert hook["language"] == "python"
        assert hook["entry"].startswith("pinlint check ") and "--force-exclude" in hook["entry"]
        assert hook["require_serial"] is True
    assert "--fix" in hooks["pinlint-fix"]["entry"].split()
    assert "--fix" not in hooks["pinlint"]["entry"].split()


@pytest.mark.skipif(not (ROOT / ".git").exists(), reason="try-repo needs a git checkout of pinlint")
@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
def test_try_repo_check_then_fix(project: Path) -> None:
    # No hook id: try-repo runs every hook of the manifest, sorted by id (pinlint, then
    # pinlint-fix), against one environment install.
    result = _pre_commit(project, "try-repo", str(ROOT), "--all-files", timeout=240)
    out = result.stdout + result.stderr
    assert result.returncode == 1, out
    assert "Installing environment" in out, out  # the language: python env really was built

    check = _hook_block(out, "pinlint")
    assert _status(out, "pinlint") == "Failed", out
    assert "- exit code: 1" in check
    assert "myproj/hot.py:5:12" in check and "PIN001" in check
    assert "clean.py" not in check  # the clean file, passed to the same hook, has nothing to report

    fix = _hook_block(out, "pinlint (fix)")
    assert _status(out, "pinlint (fix)") == "Failed", out
    assert "- files were modified by this hook" in fix
    assert (project / "myproj" / "hot.py").read_text() == HOT_FIXED
    assert (project / "myproj" / "clean.py").read_text() == CLEAN


def _local_config(project: Path) -> Path:
    """`repo: local` hooks that copy the manifest's fields, running this virtualenv's pinlint."""
    hooks = []
    for hook in yaml.safe_load(MANIFEST.read_text()):
        local = {**hook, "language": "system"}
        local["entry"] = hook["entry"].replace("pinlint", str(PINLINT), 1)
        hooks.append(local)
    config = project / ".pre-commit-config.yaml"
    config.write_text(yaml.safe_dump({"repos": [{"repo": "local", "hooks": hooks}]}, sort_keys=False))
    _git(project, "add", ".pre-commit-config.yaml")
    return config


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
def test_local_hooks_clean_file_passes_and_fix_converges(project: Path) -> None:
    assert PINLINT.exists(), f"pinlint is not installed beside {sys.executable}"
    _local_config(project)

    clean_only = _pre_commit(project, "run", "pinlint", "--files", "myproj/clean.py", timeout=60)
    assert clean_only.returncode == 0, clean_only.stdout
    assert _status(clean_only.stdout, "pinlint") == "Passed"

    everything = _pre_commit(project, "run", "pinlint", "--all-files", timeout=60)
    assert everything.returncode == 1
    assert "myproj/hot.py:5:12" in everything.stdout

    fixed = _pre_commit(project, "run", "pinlint-fix", "--all-files", timeout=60)
    assert fixed.returncode == 1
    assert "files were modified by this hook" in fixed.stdout
    assert (project / "myproj" / "hot.py").read_text() == HOT_FIXED

    after = _pre_commit(project, "run", "--all-files", timeout=60)  # both hooks, on the fixed tree
    assert after.returncode == 0, after.stdout
    assert _status(after.stdout, "pinlint") == "Passed"
    assert _status(after.stdout, "pinlint (fix)") == "Passed"  # and the fix is idempotent
    assert (project / "myproj" / "hot.py").read_text() == HOT_FIXED


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
def test_force_exclude_applies_to_files_pre_commit_passes(project: Path) -> None:
    # pre-commit names files explicitly; the hook's --force-exclude makes [tool.pinlint] exclude hold.
    (project / "pyproject.toml").write_text(PYPROJECT + 'extend-exclude = ["myproj/hot.py"]\n')
    _local_config(project)
    result = _pre_commit(project, "run", "pinlint", "--all-files", timeout=60)
    assert result.returncode == 0, result.stdout
    assert _status(result.stdout, "pinlint") == "Passed"


UTILS_WITH_HELPER = """\
import torch


def is_pin_memory_available(device=None):
    return torch.cuda.is_available()
"""


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
def test_fix_hook_finds_the_helper_in_an_unstaged_module(tmp_path: Path) -> None:
    # Issue 14: pre-commit passes only the staged file; the helper lives in a module of the
    # project that is not part of the commit (and no pin-memory-helper is configured).
    project = tmp_path / "proj"
    (project / "myproj").mkdir(parents=True)
    (project / "pyproject.toml").write_text("[tool.pinlint]\n")
    (project / "myproj" / "__init__.py").write_text("")
    (project / "myproj" / "hot.py").write_text(HOT)
    _git(project, "init", "-q")
    _local_config(project)
    _git(project, "add", "myproj/hot.py", "myproj/__init__.py", "pyproject.toml")
    (project / "myproj" / "utils.py").write_text(UTILS_WITH_HELPER)  # untracked, unstaged
    result = _pre_commit(project, "run", "pinlint-fix", timeout=60)  # the staged files only
    assert "files were modified by this hook" in result.stdout, result.stdout
    assert (project / "myproj" / "hot.py").read_text() == HOT_FIXED
