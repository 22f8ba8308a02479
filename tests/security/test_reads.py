"""Review #3, #6, #9, #11, #12, #16: what pinlint reads is bounded, found only inside the
project, parsed without super-linear work, and one bad file never aborts the whole run."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from tests.security.conftest import FINDING, pinlint, project


def _concise(proj: Path, *args: str, timeout: float = 60) -> tuple[int, str, str]:
    ran = pinlint("check", "--output-format", "concise", *args, cwd=proj, timeout=timeout)
    return ran.returncode, ran.stdout, ran.stderr


def test_gitignore_redos(tmp_path: Path, home: Path) -> None:
    """Review #3: `**a**a**a**a**a**b` against a 200-character name took 150 s per path."""
    proj = project(tmp_path / "p", {"a.py": FINDING, ".gitignore": "**a**a**a**a**a**b\n" * 3})
    (proj / ("a" * 200 + ".py")).write_text(FINDING)
    started = time.perf_counter()
    code, out, _ = _concise(proj, ".", timeout=30)
    assert time.perf_counter() - started < 20
    assert code == 1 and out.count("PIN001") == 2


def test_gitignore_semantics_kept(tmp_path: Path, home: Path) -> None:
    files = {
        "keep.py": FINDING,
        "gen/x.py": FINDING,
        "deep/a/b/logs/y.py": FINDING,
        "d/skip_me.py": FINDING,
        ".gitignore": "gen/\n**/logs\nskip_*.py\n",
    }
    proj = project(tmp_path / "p", files)
    _code, out, _ = _concise(proj, ".")
    assert [line.split(":")[0] for line in out.splitlines() if "PIN001" in line] == ["keep.py"]


def test_gitignore_pattern_python_rejects_does_not_abort(tmp_path: Path, home: Path) -> None:
    """Review #16 / 13b: `[z-a]` (git accepts it) used to be `re.error` → internal error."""
    proj = project(tmp_path / "p", {"a.py": FINDING, "vendor/lib/.gitignore": "[z-a]\n"})
    code, out, err = _concise(proj, ".")
    assert code == 1 and "PIN001" in out and "internal error" not in err


def test_ancestor_gitignore_outside_the_repository_is_ignored(tmp_path: Path, home: Path) -> None:
    """Review #6 / 13a: a `.gitignore` planted in a shared parent must not un-lint the repo."""
    proj = project(tmp_path / "shared" / "repo")
    (tmp_path / "shared" / ".gitignore").write_text("*.py\n")
    code, out, _ = _concise(proj, ".")
    assert code == 1 and "PIN001" in out


def test_ancestor_config_outside_the_repository_is_ignored(tmp_path: Path, home: Path) -> None:
    """Review #6 / 04: `.pinlint.toml` planted above the repository root configures nothing."""
    proj = project(tmp_path / "shared" / "repo")
    (tmp_path / "shared" / ".pinlint.toml").write_text('extend-exclude = ["*.py"]\n')
    (tmp_path / "shared" / "pyproject.toml").write_text('[tool.pinlint]\nextend-exclude = ["*.py"]\n')
    code, out, _ = _concise(proj, ".")
    assert code == 1 and "PIN001" in out
    # Inside the repository, a config in a parent of the cwd still applies.
    (proj / "pinlint.toml").write_text('extend-exclude = ["a.py"]\n')
    (proj / "sub").mkdir()
    (proj / "sub" / "b.py").write_text(FINDING)
    out = _concise(proj / "sub", "..")[1]
    assert "b.py" in out and "a.py" not in out


def test_without_a_repository_a_world_writable_parent_is_not_searched(tmp_path: Path, home: Path) -> None:
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o1777)  # like /tmp
    (shared / ".pinlint.toml").write_text('extend-exclude = ["*.py"]\n')
    proj = project(shared / "proj", git=False)
    code, out, _ = _concise(proj, ".")
    assert code == 1 and "PIN001" in out


@pytest.mark.parametrize("device", ["/dev/zero", "/dev/urandom"])
def test_gitignore_link_to_a_device_is_not_read(tmp_path: Path, home: Path, device: str) -> None:
    """Review #11 / 02: `sub/.gitignore -> /dev/zero` exhausted memory."""
    proj = project(tmp_path / "p", {"a.py": FINDING, "sub/b.py": FINDING})
    (proj / "sub" / ".gitignore").symlink_to(device)
    code, out, _ = _concise(proj, ".", timeout=30)
    assert code == 1 and out.count("PIN001") == 2


def test_gitignore_link_to_stdin_does_not_block(tmp_path: Path, home: Path) -> None:
    proj = project(tmp_path / "p", {"a.py": FINDING, "sub/b.py": FINDING})
    (proj / "sub" / ".gitignore").symlink_to("/dev/stdin")
    code, out, _ = _concise(proj, ".", timeout=30)
    assert code == 1 and out.count("PIN001") == 2


def test_fifo_named_explicitly_does_not_block(tmp_path: Path, home: Path) -> None:
    """`pinlint check $(git diff --name-only)` with a FIFO (or a device link) among the names."""
    proj = project(tmp_path / "p")
    os.mkfifo(proj / "c.py")
    os.mkfifo(proj / ".gitignore")
    _code, out, err = _concise(proj, "--no-cache", "c.py", "a.py", timeout=30)
    assert "c.py: cannot read: not a regular file" in err and "PIN001" in out


def test_baseline_and_named_path_links_to_dev_zero(tmp_path: Path, home: Path) -> None:
    """Review #11 / 03."""
    proj = project(tmp_path / "p")
    (proj / ".pinlint-baseline.json").symlink_to("/dev/zero")
    ran = pinlint("check", "--baseline", ".pinlint-baseline.json", ".", cwd=proj, timeout=30)
    assert ran.returncode == 2 and "not a regular file" in ran.stderr and "Traceback" not in ran.stderr
    (proj / "changed.py").symlink_to("/dev/zero")
    _code, out, err = _concise(proj, "--no-cache", "changed.py", "a.py", timeout=30)
    assert "error: changed.py:" in err and "PIN001" in out


def test_config_link_to_dev_zero_is_not_read(tmp_path: Path, home: Path) -> None:
    proj = project(tmp_path / "p")
    (proj / "pyproject.toml").symlink_to("/dev/zero")
    ran = pinlint("check", ".", cwd=proj, timeout=30)
    assert ran.returncode == 1 and "PIN001" in ran.stdout and "Traceback" not in ran.stderr
    (proj / "pyproject.toml").unlink()
    (proj / "pyproject.toml").write_text("[tool.pinlint]\n#" + "x" * (2 << 20) + "\n")
    ran = pinlint("check", ".", cwd=proj, timeout=30)
    assert ran.returncode == 2 and "larger than" in ran.stderr and "Traceback" not in ran.stderr


@pytest.mark.parametrize("kind", ["deep toml", "bad baseline shape", "deep baseline", "huge int baseline"])
def test_bad_user_files_exit_2_with_a_message(tmp_path: Path, home: Path, kind: str) -> None:
    proj = project(tmp_path / "p")
    args = ["check", "."]
    if kind == "deep toml":
        (proj / "pinlint.toml").write_text("x = " + "[" * 100_000 + "]" * 100_000 + "\n")
    else:
        text = {
            "bad baseline shape": '{"tool": "pinlint", "version": 1, "findings": {}}',
            "deep baseline": "[" * 200_000,
            "huge int baseline": "1" * 100_000,
        }[kind]
        (proj / "bl.json").write_text(text)
        args = ["check", "--baseline", "bl.json", "."]
    ran = pinlint(*args, cwd=proj, timeout=30)
    assert ran.returncode == 2, ran
    assert "Traceback" not in ran.stderr and "internal error" not in ran.stderr


def test_huge_source_is_refused_not_analyzed(tmp_path: Path, home: Path) -> None:
    """Review #12: 20 MB of newlines (19.6 KB in git) cost 1 GB of memory."""
    proj = project(
        tmp_path / "p",
        {"a.py": FINDING, "nl.py": "import torch\n# non_blocking\n" + "\n" * 20_000_000},
    )
    _code, out, err = _concise(proj, "--no-cache", ".", timeout=60)
    assert "nl.py: cannot read: larger than" in err and "a.py:5" in out


SCANS = {
    # Review #9 / 07: unbalanced `import (` lines inside a string, cubic.
    "imports": 'import torch  # non_blocking\nDOC = """\n' + "import (\n" * 300 + "(\n" * 20000 + '"""\n',
    # 08: `.to(` scanned to the end of one long comment line for each occurrence.
    "hit": "import torch\n# non_blocking " + ".to(x" * 100_000 + "\n",
    # 08: the helper-call regex restarting inside a long identifier.
    "helper": "import torch  # non_blocking, is_pin_memory_available\nx = 1  # " + "a" * 150_000 + "\n",
    # 08: a `(` in a string in every def header never balances.
    "headers": "import torch  # non_blocking\n"
    + "".join(f"def f{i}(a='(', b=1):\n    return a\n" for i in range(8000)),
}


@pytest.mark.parametrize("kind", list(SCANS))
def test_small_valid_files_are_linear(tmp_path: Path, home: Path, kind: str) -> None:
    import ast

    ast.parse(SCANS[kind])  # all valid Python
    proj = project(tmp_path / "p", {"s.py": SCANS[kind]})
    started = time.perf_counter()
    pinlint("check", "--no-cache", "s.py", cwd=proj, timeout=60)
    assert time.perf_counter() - started < 10


@pytest.mark.parametrize("codec", ["rot13", "zlib", "undefined", "hex", "base64"])
def test_exotic_coding_cookie_is_one_files_error(tmp_path: Path, home: Path, codec: str) -> None:
    """Review #16 / 25."""
    proj = project(
        tmp_path / "p",
        {"real.py": FINDING, "evil.py": f"# coding: {codec}\nimport torch  # non_blocking\n"},
    )
    for fmt in ("sarif", "concise"):
        ran = pinlint("check", "--exit-zero", "--output-format", fmt, ".", cwd=proj)
        assert ran.returncode == 0 and "internal error" not in ran.stderr, ran
        assert "evil.py" in ran.stderr and "real.py" in ran.stdout


@pytest.mark.parametrize(
    "args",
    [
        ["--output-format", "sarif"],
        ["--output-format", "gitlab"],
        ["--output-format", "json"],
        ["--output-format", "json-lines"],
        ["--baseline", "bl.json"],
        ["--write-baseline", "bl2.json"],
        ["--output-format", "concise", "-o", "r.txt"],
        [],
    ],
)
def test_non_utf8_file_name_does_not_abort(tmp_path: Path, home: Path, args: list[str]) -> None:
    """Review #16 / 12."""
    proj = project(tmp_path / "p", {"real.py": FINDING})
    pinlint("check", "--write-baseline", "bl.json", ".", cwd=proj)
    with open(os.fsencode(proj) + b"/bad\xff.py", "w") as fh:
        fh.write(FINDING)
    ran = pinlint("check", *args, ".", cwd=proj)
    assert ran.returncode in (0, 1), ran
    assert "internal error" not in ran.stderr
