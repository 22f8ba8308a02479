"""Review #1, #8, #15, #18 and issue 20's "writes stay inside the project": -o, --fix,
--add-noqa and baselines never write outside the project through a symlink or `..`."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from tests.security.conftest import FINDING, pinlint, project

HELPER_CONFIG = '[tool.pinlint]\npin-memory-helper = "pkg.utils:is_pin_memory_available(device)"\n'


def test_output_file_symlink_is_replaced_not_followed(tmp_path: Path, home: Path) -> None:
    """Review #1: committed `pinlint.sarif -> ../outside/victim.txt` and a dangling link."""
    outside = tmp_path / "outside"
    outside.mkdir()
    victim = outside / "victim.txt"
    victim.write_text("ORIGINAL CONTENT\n")
    proj = project(tmp_path / "p")
    (proj / "pinlint.sarif").symlink_to("../outside/victim.txt")
    (proj / "gl.json").symlink_to("../outside/created-by-pinlint")
    for fmt, name in (("sarif", "pinlint.sarif"), ("gitlab", "gl.json")):
        ran = pinlint("check", "--output-format", fmt, "-o", name, "--exit-zero", ".", cwd=proj)
        assert ran.returncode == 0, ran.stderr
        assert not (proj / name).is_symlink() and "PIN001" in (proj / name).read_text()
    assert victim.read_text() == "ORIGINAL CONTENT\n"
    assert sorted(p.name for p in outside.iterdir()) == ["victim.txt"]


def test_output_file_under_a_symlinked_folder_out_of_the_project(tmp_path: Path, home: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    proj = project(tmp_path / "p")
    (proj / "reports").symlink_to(outside)
    ran = pinlint("check", "--output-format", "gitlab", "-o", "reports/gl.json", ".", cwd=proj)
    assert ran.returncode == 2 and "outside the project" in ran.stderr
    assert list(outside.iterdir()) == []


def test_shell_payload_file_name_cannot_reach_a_startup_file(tmp_path: Path, home: Path) -> None:
    """Review #1b: a file named `x$(touch PWNED).py` and `gl.json -> ../outside/profile`."""
    outside = tmp_path / "outside"
    outside.mkdir()
    profile = outside / "profile"
    profile.write_text('export PS1="$ "\n')
    proj = project(tmp_path / "p", {"x$(touch${IFS}PWNED).py": FINDING})
    (proj / "gl.json").symlink_to("../outside/profile")
    pinlint("check", "--output-format", "gitlab", "-o", "gl.json", "--exit-zero", ".", cwd=proj)
    assert profile.read_text() == 'export PS1="$ "\n'


@pytest.mark.parametrize("mode", ["--fix", "--add-noqa"])
def test_file_symlink_out_of_the_project_is_left_alone(tmp_path: Path, home: Path, mode: str) -> None:
    """Review #15: `innocent.py -> ../outside/private_train.py` is not read, quoted or copied."""
    outside = tmp_path / "outside"
    outside.mkdir()
    secret = outside / "private_train.py"
    secret.write_text(FINDING.replace("import torch", 'import torch\nAPI_TOKEN = "s3cr3t"'))
    before = secret.read_text()
    proj = project(tmp_path / "p", {"pyproject.toml": HELPER_CONFIG})
    (proj / "innocent.py").symlink_to("../outside/private_train.py")
    report = pinlint("check", ".", cwd=proj)
    assert "s3cr3t" not in report.stdout + report.stderr
    assert "outside the project" in report.stderr
    pinlint("check", mode, "--unsafe-fixes", ".", cwd=proj)
    assert (proj / "innocent.py").is_symlink() and secret.read_text() == before


@pytest.mark.parametrize("mode", ["--fix", "--add-noqa"])
def test_named_directory_symlink_out_of_the_project(tmp_path: Path, home: Path, mode: str) -> None:
    """Review #8: CI runs `pinlint check --fix src`; the PR made `src` a symlink outside."""
    lib = tmp_path / "outside" / "lib"
    lib.mkdir(parents=True)
    (lib / "victim.py").write_text(FINDING)
    proj = project(tmp_path / "p", {"pyproject.toml": HELPER_CONFIG})
    (proj / "src").symlink_to("../outside/lib")
    ran = pinlint("check", mode, "--unsafe-fixes", "src", cwd=proj)
    assert "outside the project" in ran.stderr
    assert (lib / "victim.py").read_text() == FINDING


def test_symlink_inside_the_project_is_written_through(tmp_path: Path, home: Path) -> None:
    """A link whose target is inside the project: fix the target, keep the link."""
    proj = project(tmp_path / "p", {"real/m.py": FINDING})
    (proj / "alias.py").symlink_to("real/m.py")
    ran = pinlint("check", "--add-noqa", "alias.py", cwd=proj)
    assert ran.returncode == 0, ran.stderr
    assert (proj / "alias.py").is_symlink()
    assert "# noqa: PIN001" in (proj / "real" / "m.py").read_text()


def test_atomic_write_refuses_a_link_out_of_the_project(tmp_path: Path) -> None:
    """The writer's own guard, for callers that did not go through discovery."""
    from pinlint.fix.write import OutsideProject, atomic_write, digest

    outside = tmp_path / "outside.py"
    outside.write_text(FINDING)
    proj = project(tmp_path / "p", {})
    (proj / "link.py").symlink_to(outside)
    with pytest.raises(OutsideProject):
        atomic_write(proj / "link.py", b"x = 1\n", digest(FINDING.encode()))
    assert outside.read_text() == FINDING


def test_setuid_bits_are_not_copied(tmp_path: Path, home: Path) -> None:
    """Review #18: a 4755 file rewritten by --add-noqa loses setuid/setgid."""
    proj = project(tmp_path / "p")
    (proj / "a.py").chmod(0o6755)
    ran = pinlint("check", "--add-noqa", ".", cwd=proj)
    assert ran.returncode == 0, ran.stderr
    mode = stat.S_IMODE((proj / "a.py").stat().st_mode)
    assert "# noqa" in (proj / "a.py").read_text()
    assert mode == 0o755, oct(mode)


def test_baseline_under_a_symlinked_folder_out_of_the_project(tmp_path: Path, home: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    proj = project(tmp_path / "p")
    (proj / "ci").symlink_to(outside)
    ran = pinlint("check", "--write-baseline", "ci/baseline.json", ".", cwd=proj)
    assert ran.returncode == 2 and "outside the project" in ran.stderr and "Traceback" not in ran.stderr
    assert list(outside.iterdir()) == []
    # A committed baseline *file* link is replaced, not written through.
    (proj / "bl.json").symlink_to(outside / "victim.json")
    assert pinlint("check", "--write-baseline", "bl.json", ".", cwd=proj).returncode == 0
    assert not (proj / "bl.json").is_symlink() and not (outside / "victim.json").exists()


def test_cache_and_outputs_stay_put_with_dotdot_relative_paths(tmp_path: Path, home: Path) -> None:
    """`..` in a config value cannot move pinlint's writes out (cache-dir is checked)."""
    proj = project(tmp_path / "p", {"a.py": FINDING, "pinlint.toml": 'cache-dir = "sub/../../escape"\n'})
    ran = pinlint("check", ".", cwd=proj)
    assert ran.returncode == 2
    assert not (tmp_path / "escape").exists()
    assert os.listdir(tmp_path) == ["p"] or sorted(os.listdir(tmp_path)) == ["home", "p"]


def test_add_noqa_never_writes_into_a_string(tmp_path: Path) -> None:
    """Review #19: a flagged line that ends inside a multi-line string must not get the comment
    (it would change the string's value); the file is left alone and the run says why."""
    import subprocess
    import sys

    (tmp_path / "pyproject.toml").write_text("[tool.pinlint]\n")
    source = (
        "import torch\n\n"
        "def f(device):\n"
        '    t = torch.tensor([1, 2]); s = """abc\n'
        '    def"""\n'
        "    return t.to(device, non_blocking=True), s\n"
    )
    (tmp_path / "m.py").write_text(source)
    ran = subprocess.run(
        [sys.executable, "-m", "pinlint", "check", ".", "--add-noqa", "--no-cache"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert (tmp_path / "m.py").read_text() == source
    assert "inside a multi-line string" in ran.stderr and ran.returncode == 2
