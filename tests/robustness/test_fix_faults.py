"""Fix safety under faults.

* ``--fix`` over many files, interrupted (SIGINT, SIGKILL) at random moments: every file is either
  entirely old or entirely new; no stray ``*.py`` appears (the temp files of ``fix/write.py`` are
  ``.<name>.<random>.pinlint-tmp``, never ``*.py``, so even one left by SIGKILL is never linted or
  imported; SIGINT must leave none).
* A read-only file is reported, not skipped silently (``chattr +i`` as root; as a normal user a
  ``chmod 444`` file).
* A file edited between pinlint's read and its write is not clobbered (stale digest given to
  ``atomic_write``; a write racing the fixer at each stage of the pipeline).
"""

from __future__ import annotations

import os
import random
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from pinlint.fix import write as write_module
from pinlint.fix.write import ChangedOnDisk, atomic_write, digest
from tests.robustness.support import PIN_SNIPPET, PIN_SNIPPET_FIXED, _env, make_project, run_clirunner, run_subprocess

#: Faults injected by this module (reported at the end of the run).
FAULTS: dict[str, int] = {}

TRIALS = int(os.environ.get("PINLINT_FAULT_TRIALS", "6"))  # per signal
N_FILES = 120


@pytest.fixture(scope="module", autouse=True)
def _report_faults():
    yield
    print(f"\n[pinlint robustness] faults injected: {sum(FAULTS.values())} {dict(sorted(FAULTS.items()))}")


def _many_file_project(root: Path, n_files: int) -> dict[str, tuple[bytes, bytes]]:
    """``n_files`` modules with several fixable findings each; name -> (old bytes, expected new)."""
    body = []
    for k in range(6):
        body += [
            f"def move_{k}(dev):",
            f"    x = torch.tensor([{k}, 1, 2])",
            f"    y = torch.zeros({k + 1}, 4)",
            "    return x.to(dev, non_blocking=True), y.to(dev, non_blocking=True)",
            "",
            "",
        ]
    text = "import torch\n\n\n" + "\n".join(body)
    files = {f"pkg/m{i:03d}.py": text.replace("move_", f"move{i}_") for i in range(n_files)}
    files["pkg/__init__.py"] = ""
    make_project(root, files)
    return {name: (content.encode(), b"") for name, content in files.items()}


def _py_files(root: Path) -> set[str]:
    return {p.relative_to(root).as_posix() for p in root.rglob("*.py")}


@pytest.fixture(scope="module")
def reference(tmp_path_factory) -> tuple[Path, dict[str, tuple[bytes, bytes]], float]:
    """The project, every file's old and fixed content, and how long an uninterrupted fix takes."""
    root = tmp_path_factory.mktemp("reference")
    files = _many_file_project(root / "orig", N_FILES)
    fixed = root / "fixed"
    shutil.copytree(root / "orig", fixed)
    started = time.perf_counter()
    result = run_subprocess(["check", ".", "--fix", "--no-cache"], fixed, timeout=300)
    duration = time.perf_counter() - started
    assert result.exit_code == 0, result
    out = {}
    for name, (old, _) in files.items():
        new = (fixed / name).read_bytes()
        assert name == "pkg/__init__.py" or new != old
        out[name] = (old, new)
    return root / "orig", out, duration


def _default_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _interrupt(reference, tmp_path: Path, sig: int, trial: int, jobs: str) -> dict[str, int]:
    orig, files, total = reference
    work = tmp_path / f"trial{trial}"
    shutil.copytree(orig, work)
    rng = random.Random(f"{sig}-{trial}")
    # Files are fixed in path order: strike right after a randomly chosen one is rewritten (a
    # moment inside the writes, however fast the machine is); every third trial strikes at a
    # random moment of the whole run instead (analysis included).
    marker = work / "pkg" / f"m{rng.randrange(0, N_FILES - 20):03d}.py"
    marker_old = marker.read_bytes()
    proc = subprocess.Popen(
        [sys.executable, "-m", "pinlint", "check", ".", "--fix", "--no-cache", "--jobs", jobs],
        cwd=work,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=_env(),
        # A test run started in the background by a non-interactive shell inherits SIGINT ignored,
        # and so would pinlint (Python keeps an ignored SIGINT): give it the default back.
        preexec_fn=_default_sigint,
    )
    started = time.perf_counter()
    if trial % 3 == 2:
        time.sleep(rng.uniform(0.1, total))
    else:
        while proc.poll() is None and marker.read_bytes() == marker_old and time.perf_counter() - started < 120:
            time.sleep(0.0005)
    delay = time.perf_counter() - started
    proc.send_signal(sig)
    FAULTS[signal.Signals(sig).name] = FAULTS.get(signal.Signals(sig).name, 0) + 1
    try:
        _, stderr = proc.communicate(timeout=120)
    except subprocess.TimeoutExpired:
        proc.kill()
        _, stderr = proc.communicate()
        pytest.fail(f"pinlint did not stop within 120 s of {signal.Signals(sig).name}")
    # Any worker processes (forked pool) must go too.
    counts = {"old": 0, "new": 0}
    for name, (old, new) in files.items():
        data = (work / name).read_bytes()
        assert data in (old, new), (
            f"{name} is neither the old nor the fixed file after {signal.Signals(sig).name} at {delay:.2f}s "
            f"(trial {trial}): {len(data)} bytes"
        )
        counts["old" if data == old and old != new else "new"] += 1
    assert _py_files(work) == set(files), f"stray .py files: {_py_files(work) - set(files)}"
    leftovers = [p.name for p in work.rglob("*") if p.name.endswith(".pinlint-tmp")]
    if sig == signal.SIGINT:
        assert not leftovers, f"SIGINT left temp files: {leftovers}"
        assert b"Traceback" not in stderr, stderr.decode(errors="replace")[-2000:]
        # Exit 2 + "internal error" when Ctrl-C lands inside libcst is pinned down deterministically by
        # test_ctrl_c_during_analysis_is_an_interruption; here only the files' integrity is asserted.
        assert proc.returncode in (0, 1, 2, 130, -signal.SIGINT), proc.returncode
    if trial == 0:
        # After the interruption a plain rerun finishes the job.
        rerun = run_subprocess(["check", ".", "--fix", "--no-cache"], work, timeout=300)
        assert rerun.exit_code == 0, rerun
        for name, (_old, new) in files.items():
            assert (work / name).read_bytes() == new, name
    counts["leftover_tmp"] = len(leftovers)
    return counts


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGKILL], ids=["SIGINT", "SIGKILL"])
def test_interrupted_fix_leaves_every_file_old_or_new(reference, tmp_path: Path, sig: int) -> None:
    outcomes = []

    def partial() -> int:
        """Trials that hit the middle of the fix (a mix of old and new files)."""
        return sum(1 for o in outcomes if o["old"] and o["new"] > 1)

    # On a loaded machine a strike can land after the last write: more trials, until one hits.
    trial = 0
    while trial < TRIALS or not partial() and trial < 4 * TRIALS:
        outcomes.append(_interrupt(reference, tmp_path, sig, trial, jobs="1" if trial % 2 == 0 else "2"))
        trial += 1
    assert partial() >= 1, f"no trial struck in the middle of the fix: {outcomes}"
    print(f"\n{signal.Signals(sig).name}: {len(outcomes)} trials, {partial()} interrupted mid-fix: {outcomes}")


def test_atomic_write_refuses_stale_digest(tmp_path: Path) -> None:
    path = tmp_path / "m.py"
    path.write_text(PIN_SNIPPET)
    stale = digest(PIN_SNIPPET.encode())
    path.write_text(PIN_SNIPPET + "# edited by someone else\n")
    FAULTS["stale digest"] = FAULTS.get("stale digest", 0) + 1
    with pytest.raises(ChangedOnDisk):
        atomic_write(path, PIN_SNIPPET_FIXED.encode(), stale)
    assert path.read_text() == PIN_SNIPPET + "# edited by someone else\n"
    assert [p.name for p in tmp_path.iterdir()] == ["m.py"]


def test_atomic_write_race_at_the_last_moment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The file changes after the temp file is written, just before the rename."""
    path = tmp_path / "m.py"
    path.write_text(PIN_SNIPPET)
    real_fsync = os.fsync

    def racing_fsync(fd: int) -> None:
        real_fsync(fd)
        if path.read_text() == PIN_SNIPPET:
            path.write_text(PIN_SNIPPET + "# racing edit\n")

    monkeypatch.setattr(write_module.os, "fsync", racing_fsync)
    FAULTS["race before rename"] = FAULTS.get("race before rename", 0) + 1
    with pytest.raises(ChangedOnDisk):
        atomic_write(path, PIN_SNIPPET_FIXED.encode(), digest(PIN_SNIPPET.encode()))
    assert path.read_text() == PIN_SNIPPET + "# racing edit\n"
    assert [p.name for p in tmp_path.iterdir()] == ["m.py"]  # the temp file is gone


@pytest.mark.parametrize("moment", ["mkstemp", "fsync", "chmod", "replace"])
@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_signal_during_a_write_waits_for_its_end(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, moment: str, sig: int
) -> None:
    """A signal at any moment of a write (the one this test injects lands right after the step
    named, which is where a handled Ctrl-C used to leave the temp file behind) is delivered only
    once the file is whole and renamed: the new file, no temp file, then the signal's own effect."""
    import tempfile

    from pinlint import atomic_write as atomic_module

    path = tmp_path / "m.py"
    path.write_text(PIN_SNIPPET)
    module = tempfile if moment == "mkstemp" else atomic_module.os
    real = getattr(module, moment)

    def then_signal(*args: object, **kwargs: object) -> object:
        out = real(*args, **kwargs)
        signal.raise_signal(sig)
        return out

    delivered: list[int] = []

    def handler(signum: int, _frame: object) -> None:
        delivered.append(signum)
        raise KeyboardInterrupt

    monkeypatch.setattr(module, moment, then_signal)
    previous = signal.signal(sig, handler)
    try:
        with pytest.raises(KeyboardInterrupt):
            atomic_write(path, PIN_SNIPPET_FIXED.encode(), digest(PIN_SNIPPET.encode()))
    finally:
        signal.signal(sig, previous)
    assert delivered == [sig]
    assert path.read_text() == PIN_SNIPPET_FIXED
    assert [p.name for p in tmp_path.iterdir()] == ["m.py"]
    # The handlers are the caller's again.
    assert signal.getsignal(sig) is previous


def test_atomic_write_keeps_mode(tmp_path: Path) -> None:
    path = tmp_path / "m.py"
    path.write_text(PIN_SNIPPET)
    path.chmod(0o751)
    atomic_write(path, PIN_SNIPPET_FIXED.encode(), digest(PIN_SNIPPET.encode()))
    assert path.read_text() == PIN_SNIPPET_FIXED
    assert (path.stat().st_mode & 0o777) == 0o751


@pytest.mark.parametrize("stage", ["after check", "before atomic_write", "before rename"])
def test_file_edited_during_fix_is_not_clobbered(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, stage: str) -> None:
    """Through the CLI (CliRunner): an edit racing pinlint at each stage is kept and reported."""
    import pinlint.app.engine as pipeline

    project = make_project(tmp_path, {"m.py": PIN_SNIPPET, "other.py": PIN_SNIPPET})
    target = project / "m.py"
    edited = PIN_SNIPPET + "# edited while pinlint ran\n"

    def edit_once() -> None:
        if target.read_text() == PIN_SNIPPET:
            target.write_text(edited)

    if stage == "after check":
        real = pipeline._fix_file

        def fix_file(path, *args, **kwargs):
            if path.name == "m.py":
                edit_once()
            return real(path, *args, **kwargs)

        monkeypatch.setattr(pipeline, "_fix_file", fix_file)
    elif stage == "before atomic_write":
        real_write = write_module.atomic_write  # the engine imports it from there when it writes

        def racing_write(path, data, expected):
            if path.name == "m.py":
                edit_once()
            return real_write(path, data, expected)

        monkeypatch.setattr(write_module, "atomic_write", racing_write)
    else:
        real_fsync = os.fsync

        def racing_fsync(fd: int) -> None:
            real_fsync(fd)
            edit_once()

        monkeypatch.setattr(write_module.os, "fsync", racing_fsync)
    FAULTS[f"edit {stage}"] = FAULTS.get(f"edit {stage}", 0) + 1
    result = run_clirunner(["check", ".", "--fix", "--no-cache", "--jobs", "1"], project)
    result.assert_no_crash()
    assert target.read_text() == edited, "a concurrent edit was overwritten"
    assert result.exit_code == 1, result  # not everything could be fixed
    assert "m.py" in result.stderr and ("changed" in result.stderr or "modified" in result.stderr), result
    assert (project / "other.py").read_text() == PIN_SNIPPET_FIXED or stage == "before rename"
    assert not [p for p in project.iterdir() if p.name.endswith(".pinlint-tmp")]


def _chattr(path: Path, flag: str) -> bool:
    try:
        return subprocess.run(["chattr", flag, str(path)], capture_output=True).returncode == 0
    except FileNotFoundError:
        return False


def test_read_only_file_is_reported(tmp_path: Path) -> None:
    project = make_project(tmp_path, {"locked.py": PIN_SNIPPET, "other.py": PIN_SNIPPET})
    locked = project / "locked.py"
    if os.geteuid() == 0:
        # root writes through chmod 444 (and rename replaces it anyway): make it immutable.
        if not _chattr(locked, "+i"):
            pytest.skip(
                "running as root and `chattr +i` is unavailable here; the stale-digest and race tests "
                "cover atomic_write refusing to write"
            )
    else:
        locked.chmod(0o444)
    FAULTS["read-only file"] = FAULTS.get("read-only file", 0) + 1
    try:
        for runner in (run_subprocess, run_clirunner):
            result = runner(["check", ".", "--fix", "--no-cache"], project)
            result.assert_no_crash()
            assert result.exit_code == 1, result
            assert any(
                "locked.py" in line
                and ("not fixed" in line or "cannot" in line or "read-only" in line or "ermission" in line)
                for line in result.stderr.splitlines()
            ), result
            assert locked.read_text() == PIN_SNIPPET
            assert (project / "other.py").read_text() == PIN_SNIPPET_FIXED
            (project / "other.py").write_text(PIN_SNIPPET)  # again for the second runner
        assert not [p for p in project.iterdir() if p.name.endswith(".pinlint-tmp")]
    finally:
        if os.geteuid() == 0:
            _chattr(locked, "-i")
        locked.chmod(0o644)


def test_read_only_directory_is_reported(tmp_path: Path) -> None:
    """The temp file cannot be created next to the file: reported, file unchanged."""
    project = make_project(tmp_path, {"sub/m.py": PIN_SNIPPET, "other.py": PIN_SNIPPET})
    sub = project / "sub"
    if os.geteuid() == 0:
        if not _chattr(sub, "+i"):
            pytest.skip("running as root and `chattr +i` is unavailable")
    else:
        sub.chmod(0o555)
    FAULTS["read-only directory"] = FAULTS.get("read-only directory", 0) + 1
    try:
        result = run_subprocess(["check", ".", "--fix", "--no-cache"], project)
        result.assert_no_crash()
        assert result.exit_code == 1, result
        assert "m.py" in result.stderr, result
        assert (sub / "m.py").read_text() == PIN_SNIPPET
        assert (project / "other.py").read_text() == PIN_SNIPPET_FIXED
    finally:
        if os.geteuid() == 0:
            _chattr(sub, "-i")
        sub.chmod(0o755)


def test_ctrl_c_during_analysis_is_an_interruption(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Ctrl-C while positions are computed (inside libcst's code generation): the run ends as
    interrupted (exit 130, or click's "Aborted!" exit 1), not as an "internal error ... please report
    it" with exit 2 and a dump of CST nodes. (A position recorder can raise KeyError while unwinding
    the KeyboardInterrupt; ``run_check_command`` must see the interrupt behind it.)"""
    import pinlint.analysis.positions as positions

    project = make_project(tmp_path, {"m.py": PIN_SNIPPET})
    state = positions._OffsetState
    real = state.after_codegen
    calls = [0]

    def interrupted(self, node):
        calls[0] += 1
        if calls[0] == 20:
            raise KeyboardInterrupt
        return real(self, node)

    monkeypatch.setattr(state, "after_codegen", interrupted)
    FAULTS["Ctrl-C inside libcst"] = FAULTS.get("Ctrl-C inside libcst", 0) + 1
    result = run_clirunner(["check", ".", "--no-cache", "--jobs", "1"], project)
    assert calls[0] >= 20
    assert "internal error" not in result.stderr, result
    assert result.exit_code in (1, 130), result
    assert (project / "m.py").read_text() == PIN_SNIPPET
