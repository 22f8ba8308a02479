"""Shared helpers of the robustness suite: run pinlint as a subprocess and in-process (click's
CliRunner), build throw-away projects with a configured pin-memory helper, fix text in memory.
"""

from __future__ import annotations

import os
import subprocess
import sys
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from pinlint import catalog
from pinlint.app import CheckOptions, CheckRun, check_stdin
from pinlint.config import Config

REPO = Path(__file__).resolve().parents[2]
HELPER_SPEC = "myproj.utils:is_pin_memory_available(device)"
HELPER_IMPORT = "from myproj.utils import is_pin_memory_available"
PYPROJECT = f'[tool.pinlint]\npin-memory-helper = "{HELPER_SPEC}"\n'
ALL_CODES = frozenset(catalog.all_codes())

#: What must never appear on stderr, whatever the input.
CRASH_MARKERS = ("Traceback (most recent call last)", "internal error")


@dataclass
class Result:
    """One pinlint run, from a subprocess or from CliRunner."""

    exit_code: int
    stdout: str
    stderr: str
    how: str

    def assert_no_crash(self) -> None:
        for marker in CRASH_MARKERS:
            assert marker not in self.stderr, f"[{self.how}] {marker!r} on stderr:\n{self.stderr[-4000:]}"
            assert marker not in self.stdout, f"[{self.how}] {marker!r} on stdout:\n{self.stdout[-4000:]}"

    def __str__(self) -> str:  # for assertion messages
        return f"[{self.how}] exit {self.exit_code}\n--- stdout ---\n{self.stdout[-3000:]}\n--- stderr ---\n{self.stderr[-3000:]}"


def _env(extra: dict[str, str] | None = None) -> dict[str, str]:
    env = dict(os.environ)
    env.pop("PINLINT_DEBUG", None)
    env.pop("PINLINT_OUTPUT_FORMAT", None)
    env.setdefault("PINLINT_NO_CACHE", "1")
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    env.update(extra or {})
    return env


def run_subprocess(
    args: list[str], cwd: Path, *, timeout: float = 120, stdin: bytes | None = None, env: dict[str, str] | None = None
) -> Result:
    proc = subprocess.run(
        [sys.executable, "-m", "pinlint", *args],
        cwd=cwd,
        input=stdin,
        capture_output=True,
        timeout=timeout,
        env=_env(env),
    )
    return Result(
        proc.returncode, proc.stdout.decode("utf-8", "replace"), proc.stderr.decode("utf-8", "replace"), "subprocess"
    )


@contextmanager
def chdir(path: Path):
    old = Path.cwd()
    os.chdir(path)
    try:
        yield
    finally:
        os.chdir(old)


def run_clirunner(args: list[str], cwd: Path, *, stdin: bytes | None = None) -> Result:
    """``pinlint.cli.main`` through click's CliRunner, in this process (exceptions are crashes)."""
    from click.testing import CliRunner

    from pinlint.cli import main

    runner = CliRunner()
    with chdir(cwd):
        result = runner.invoke(
            main, args, input=stdin, env={"PINLINT_NO_CACHE": "1", "PINLINT_DEBUG": None, "PINLINT_OUTPUT_FORMAT": None}
        )
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        import traceback

        tb = "".join(traceback.format_exception(result.exception))
        raise AssertionError(f"CliRunner: pinlint raised {type(result.exception).__name__}:\n{tb}")
    return Result(result.exit_code, result.stdout, result.stderr, "CliRunner")


def run_both(args: list[str], cwd: Path, **kw) -> list[Result]:
    """The same command as a subprocess and through CliRunner (both must behave)."""
    results = [run_subprocess(args, cwd, **kw)]
    cli_kw = {k: v for k, v in kw.items() if k == "stdin"}
    results.append(run_clirunner(args, cwd, **cli_kw))
    return results


def make_project(root: Path, files: dict[str, str | bytes] | None = None, *, helper: bool = True) -> Path:
    """A temp project: ``pyproject.toml`` with ``[tool.pinlint]`` (stops config discovery here)."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "pyproject.toml").write_text(PYPROJECT if helper else "[tool.pinlint]\n")
    for name, content in (files or {}).items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_bytes(content.encode("utf-8"))
    return root


def fix_in_memory(
    text: str,
    *,
    unsafe: bool = True,
    select: frozenset[str] = frozenset({"PIN001", "PIN002"}),
    filename: str = "/tmp/pinlint_robustness/case.py",
) -> CheckRun:
    """``pipeline.check_stdin`` with ``--fix``: the fixed text is ``run.stdin_output``."""
    config = Config(root=Path(filename).parent, pin_memory_helper=HELPER_SPEC)
    options = CheckOptions(selected=set(select), fix=True, unsafe_fixes=unsafe, use_cache=False, jobs=1)
    return check_stdin(text, Path(filename), config, options)


def check_in_memory(
    text: str, *, select: frozenset[str] = ALL_CODES, filename: str = "/tmp/pinlint_robustness/case.py"
) -> CheckRun:
    config = Config(root=Path(filename).parent, pin_memory_helper=HELPER_SPEC)
    options = CheckOptions(selected=set(select), use_cache=False, jobs=1)
    return check_stdin(text, Path(filename), config, options)


# A tiny hot path with exactly one fixable PIN001 (safe fix: Python-list data, device parameter).
PIN_SNIPPET = (
    "import torch\n\n\ndef move(dev):\n    x = torch.tensor([1, 2, 3])\n    return x.to(dev, non_blocking=True)\n"
)
PIN_SNIPPET_FIXED = (
    "import torch\n"
    f"{HELPER_IMPORT}\n"
    "\n"
    "\n"
    "def move(dev):\n"
    "    x = torch.tensor([1, 2, 3], pin_memory=is_pin_memory_available(dev))\n"
    "    return x.to(dev, non_blocking=True)\n"
)
