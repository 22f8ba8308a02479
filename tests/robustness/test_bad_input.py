"""Files pinlint must survive. Each case runs the CLI as a subprocess AND in-process through
click's CliRunner (``pinlint.cli.main``): a clear diagnostic naming the file, the rest of the run
continues, no traceback, and truthful exit codes (0 clean, 1 findings or unreadable files,
2 usage/config errors).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from pinlint.core.results import AnalysisSettings
from pinlint.core.text import split_lines
from pinlint.lint import analyze_text
from tests.robustness.support import (
    HELPER_IMPORT,
    PIN_SNIPPET,
    PIN_SNIPPET_FIXED,
    Result,
    make_project,
    run_both,
    run_clirunner,
    run_subprocess,
)

IS_ROOT = hasattr(os, "geteuid") and os.geteuid() == 0
NOBODY = 65534


def _json_findings(result: Result) -> list[dict]:
    return json.loads(result.stdout) if result.stdout.strip() else []


def _check_json(project: Path, *extra: str) -> list[Result]:
    return run_both(["check", ".", "--output-format", "json", "--no-cache", *extra], project)


def _assert_good_file_still_checked(result: Result, name: str = "good.py") -> None:
    files = {Path(f["filename"]).name for f in _json_findings(result)}
    assert name in files, f"[{result.how}] the run stopped: no finding for {name}\n{result}"


def _assert_diagnostic(result: Result, name: str, *words: str) -> None:
    """A problem with file ``name`` is reported: on stderr, or (a syntax error, PIN000) as a
    finding of the json output, rendered here as ``name:row:column: CODE message``."""
    lines = [line for line in result.stderr.splitlines() if name in line]
    try:
        findings = _json_findings(result)
    except ValueError:
        findings = []
    lines += [
        f"{name}:{f['location']['row']}:{f['location']['column']}: {f['code']} {f['message']}"
        for f in findings
        if Path(f["filename"]).name == name and f["code"] == "PIN000"
    ]
    assert lines, f"[{result.how}] no diagnostic naming {name}\n{result}"
    for word in words:
        assert any(word in line for line in lines), f"[{result.how}] diagnostic for {name} lacks {word!r}: {lines}"


# --------------------------------------------------------------------------------------------
# Unparsable and undecodable files
# --------------------------------------------------------------------------------------------

SYNTAX_ERROR = (
    "import torch\n\n\ndef move(dev):\n    x = torch.tensor([1, 2, 3]\n    return x.to(dev, non_blocking=True)\n"
)


def test_syntax_error_reported_with_path_line_and_message(tmp_path: Path) -> None:
    project = make_project(tmp_path, {"a_broken.py": SYNTAX_ERROR, "good.py": PIN_SNIPPET})
    for result in _check_json(project):
        result.assert_no_crash()
        assert result.exit_code == 1, result
        _assert_diagnostic(result, "a_broken.py", "PIN000 SyntaxError")
        [finding] = [f for f in _json_findings(result) if f["code"] == "PIN000"]
        line = f"a_broken.py:{finding['location']['row']}:{finding['location']['column']}: {finding['message']}"
        # A finding at CPython's own location (the unclosed `(`), then the parser's own words.
        assert line.startswith("a_broken.py:5:21: "), line
        assert "expected" in line or "never closed" in line or "invalid syntax" in line, line
        _assert_good_file_still_checked(result)


def test_syntax_error_with_fix_leaves_file_alone(tmp_path: Path) -> None:
    project = make_project(tmp_path, {"a_broken.py": SYNTAX_ERROR, "good.py": PIN_SNIPPET})
    result = run_subprocess(["check", ".", "--fix", "--no-cache"], project)
    result.assert_no_crash()
    assert result.exit_code == 1, result
    assert (project / "a_broken.py").read_text() == SYNTAX_ERROR
    assert (project / "good.py").read_text() == PIN_SNIPPET_FIXED


def test_null_bytes(tmp_path: Path) -> None:
    project = make_project(
        tmp_path, {"nul.py": PIN_SNIPPET.encode().replace(b"[1, 2, 3]", b"[1, 2,\x00 3]"), "good.py": PIN_SNIPPET}
    )
    for result in _check_json(project):
        result.assert_no_crash()
        assert result.exit_code == 1, result
        _assert_diagnostic(result, "nul.py", "null bytes")
        _assert_good_file_still_checked(result)


def test_null_byte_in_a_file_without_triggers_is_not_an_error(tmp_path: Path) -> None:
    project = make_project(tmp_path, {"blob.py": b"x = 1\x00\n"})
    for result in run_both(["check", ".", "--no-cache"], project):
        result.assert_no_crash()
        assert result.exit_code == 0, result


LATIN = "# caf\xe9 cr\xe8me\n"


def test_non_utf8_without_cookie(tmp_path: Path) -> None:
    data = PIN_SNIPPET.replace("\n\n\n", "\n" + LATIN + "\n", 1).encode("latin-1")
    project = make_project(tmp_path, {"latin.py": data, "good.py": PIN_SNIPPET})
    for result in _check_json(project):
        result.assert_no_crash()
        assert result.exit_code == 1, result
        _assert_diagnostic(result, "latin.py", "decode")
        _assert_good_file_still_checked(result)


@pytest.mark.parametrize(
    "cookie", ["# -*- coding: latin-1 -*-\n", "#!/usr/bin/env python\n# vim: set fileencoding=iso-8859-1 :\n"]
)
def test_latin1_with_coding_cookie_decodes_and_fix_keeps_encoding(tmp_path: Path, cookie: str) -> None:
    text = cookie + PIN_SNIPPET.replace("\n\n\n", "\n" + LATIN + "\n", 1)
    data = text.encode("latin-1")
    project = make_project(tmp_path, {"latin.py": data})
    for result in _check_json(project):
        result.assert_no_crash()
        assert result.exit_code == 1, result
        assert [f["code"] for f in _json_findings(result)] == ["PIN001"]
        assert not result.stderr.strip(), result
    result = run_subprocess(["check", ".", "--fix", "--no-cache"], project)
    result.assert_no_crash()
    assert result.exit_code == 0, result
    fixed = (project / "latin.py").read_bytes()
    assert b"caf\xe9 cr\xe8me" in fixed  # still latin-1, not re-encoded as UTF-8
    assert fixed.decode("latin-1") == text.replace("import torch\n", f"import torch\n{HELPER_IMPORT}\n", 1).replace(
        "torch.tensor([1, 2, 3])", "torch.tensor([1, 2, 3], pin_memory=is_pin_memory_available(dev))"
    )


def test_bad_coding_cookie(tmp_path: Path) -> None:
    project = make_project(
        tmp_path, {"cookie.py": "# -*- coding: no-such-codec -*-\n" + PIN_SNIPPET, "good.py": PIN_SNIPPET}
    )
    for result in _check_json(project):
        result.assert_no_crash()
        assert result.exit_code == 1, result
        _assert_diagnostic(result, "cookie.py", "no-such-codec")
        _assert_good_file_still_checked(result)


def test_utf8_bom_kept_by_fix(tmp_path: Path) -> None:
    project = make_project(tmp_path, {"bom.py": b"\xef\xbb\xbf" + PIN_SNIPPET.encode()})
    for result in _check_json(project):
        result.assert_no_crash()
        assert result.exit_code == 1
        finding = _json_findings(result)[0]
        assert finding["location"]["row"] == 5 and finding["location"]["column"] == 9  # the BOM is no column
    result = run_subprocess(["check", ".", "--fix", "--no-cache"], project)
    assert result.exit_code == 0, result
    assert (project / "bom.py").read_bytes() == b"\xef\xbb\xbf" + PIN_SNIPPET_FIXED.encode()


# --------------------------------------------------------------------------------------------
# Line endings and indentation
# --------------------------------------------------------------------------------------------


def _endings(data: bytes) -> list[bytes]:
    lines = split_lines(data.decode())
    return [line[len(line.rstrip("\r\n")) :].encode() for line in lines]


def test_crlf_fix_keeps_line_endings(tmp_path: Path) -> None:
    data = PIN_SNIPPET.replace("\n", "\r\n").encode()
    project = make_project(tmp_path, {"crlf.py": data})
    result = run_subprocess(["check", ".", "--fix", "--no-cache"], project)
    result.assert_no_crash()
    assert result.exit_code == 0, result
    assert (project / "crlf.py").read_bytes() == PIN_SNIPPET_FIXED.replace("\n", "\r\n").encode()


def test_mixed_line_endings_fix_keeps_each_lines_ending(tmp_path: Path) -> None:
    lines = PIN_SNIPPET.splitlines()
    endings = ["\r\n", "\n", "\n", "\r\n", "\n", "\r\n"]
    text = "".join(line + end for line, end in zip(lines, endings))
    project = make_project(tmp_path, {"mixed.py": text.encode()})
    result = run_subprocess(["check", ".", "--fix", "--no-cache"], project)
    result.assert_no_crash()
    assert result.exit_code == 0, result
    fixed = (project / "mixed.py").read_bytes().decode()
    new_lines = split_lines(fixed)
    assert len(new_lines) == len(lines) + 1
    # Every original line keeps its own ending; the added import uses one the file already has.
    originals = [line for line in new_lines if HELPER_IMPORT not in line]
    assert [line[len(line.rstrip("\r\n")) :] for line in originals] == endings
    assert originals[4].rstrip("\r\n") == "    x = torch.tensor([1, 2, 3], pin_memory=is_pin_memory_available(dev))"
    added = next(line for line in new_lines if HELPER_IMPORT in line)
    assert added[len(HELPER_IMPORT) :] in ("\n", "\r\n")


def test_old_mac_cr_only_line_endings(tmp_path: Path) -> None:
    project = make_project(tmp_path, {"cr.py": PIN_SNIPPET.replace("\n", "\r").encode(), "good.py": PIN_SNIPPET})
    for result in _check_json(project):
        result.assert_no_crash()
        assert result.exit_code == 1, result
        _assert_good_file_still_checked(result)
    result = run_subprocess(["check", ".", "--fix", "--no-cache"], project)
    result.assert_no_crash()
    data = (project / "cr.py").read_bytes()
    assert b"\n" not in data  # never mixes in another line ending
    compile(data, "cr.py", "exec")


def test_tabs(tmp_path: Path) -> None:
    text = PIN_SNIPPET.replace("    ", "\t")
    project = make_project(tmp_path, {"tabs.py": text})
    for result in _check_json(project):
        result.assert_no_crash()
        assert result.exit_code == 1, result
        assert _json_findings(result)[0]["location"] == {"row": 5, "column": 6}
    result = run_subprocess(["check", ".", "--fix", "--no-cache"], project)
    assert result.exit_code == 0, result
    assert (project / "tabs.py").read_text() == PIN_SNIPPET_FIXED.replace("    ", "\t")


def test_inconsistent_tabs_and_spaces(tmp_path: Path) -> None:
    text = (
        "import torch\n\n\ndef move(dev):\n\tx = torch.tensor([1, 2, 3])\n        return x.to(dev, non_blocking=True)\n"
    )
    project = make_project(tmp_path, {"taberr.py": text, "good.py": PIN_SNIPPET})
    for result in _check_json(project):
        result.assert_no_crash()
        assert result.exit_code == 1, result
        _assert_good_file_still_checked(result)


# --------------------------------------------------------------------------------------------
# Size and nesting
# --------------------------------------------------------------------------------------------


def _big_source(n_lines: int, copy_every: int = 500) -> tuple[str, int]:
    """``n_lines`` lines of plausible code; one fixable PIN001 every ``copy_every`` lines."""
    lines = ["import torch", "import math", ""]
    findings = 0
    i = 0
    while len(lines) < n_lines:
        if (i * 10) % copy_every == 0:
            lines += [
                f"def hot_{i}(dev):",
                f"    buf = torch.tensor([{i}, {i + 1}])",
                "    scale = math.sqrt(2.0)",
                "    # move it",
                "    out = buf.to(dev, non_blocking=True)",
                "    return out * scale",
                "",
                "",
                "",
                "",
            ]
            findings += 1
        else:
            lines += [
                f"def cold_{i}(values):",
                "    total = 0",
                "    for v in values:",
                f"        total += v * {i}",
                "    if total > 10:",
                "        return total",
                "    return -total",
                "",
                "",
                "",
            ]
        i += 1
    return "\n".join(lines[:n_lines]) + "\n", findings


def test_50000_line_file_finishes(tmp_path: Path) -> None:
    text, expected = _big_source(50_000)
    assert len(text.splitlines()) == 50_000
    project = make_project(tmp_path, {"big.py": text})
    started = time.perf_counter()
    result = run_subprocess(["check", "big.py", "--output-format", "json", "--no-cache"], project, timeout=300)
    elapsed = time.perf_counter() - started
    result.assert_no_crash()
    assert result.exit_code == 1, result
    assert len(_json_findings(result)) == expected
    assert elapsed < 120, f"50,000 lines took {elapsed:.1f} s"
    fixed = run_subprocess(["check", "big.py", "--fix", "--no-cache", "--output-format", "json"], project, timeout=300)
    fixed.assert_no_crash()
    assert fixed.exit_code == 0, fixed
    new = (project / "big.py").read_text()
    assert new.count("pin_memory=is_pin_memory_available(dev)") == expected
    compile(new, "big.py", "exec")


def test_no_quadratic_blowup_in_file_length() -> None:
    """Analysis time grows about linearly: 5x the lines may cost ~5x, never ~25x."""

    def best_of(text: str, n: int = 3) -> float:
        best = float("inf")
        for _ in range(n):
            started = time.perf_counter()
            analyze_text(text, AnalysisSettings(rules=("PIN001", "PIN002", "PIN003")))
            best = min(best, time.perf_counter() - started)
        return best

    small, _ = _big_source(4_000, copy_every=200)
    large, _ = _big_source(20_000, copy_every=200)
    best_of(small, 1)  # warm imports
    ratio = best_of(large) / best_of(small)
    assert ratio < 12, f"5x the lines cost {ratio:.1f}x the time (quadratic?)"


def _nested_source(depth: int, kind: str) -> str:
    if kind == "parens":
        expr = "(" * depth + "1" + ")" * depth
    elif kind == "lists":
        expr = "[" * depth + "]" * depth
    elif kind == "calls":
        expr = "f(" * depth + "1" + ")" * depth
    else:  # a long flat chain: a left-deep tree, no brackets
        expr = " + ".join(["'x'"] * depth)
    return (
        "import torch\n\n\n"
        "def move(dev):\n"
        f"    deep = {expr}\n"
        "    x = torch.tensor([1, 2, 3])\n"
        "    return x.to(dev, non_blocking=True), deep\n"
    )


DEEP_BUDGET_S = 30


@pytest.mark.parametrize("kind", ["parens", "lists", "calls"])
def test_deeply_nested_expression_1000(tmp_path: Path, kind: str) -> None:
    """1000 levels (CPython itself refuses more than 200 nested brackets): a clear diagnostic or
    findings, the other files checked, the deep file never rewritten into something unverified."""
    deep_source = _nested_source(1000, kind)
    project = make_project(tmp_path, {"deep.py": deep_source, "good.py": PIN_SNIPPET})
    started = time.perf_counter()
    try:
        results = [
            run_subprocess(["check", ".", "--output-format", "json", "--no-cache"], project, timeout=DEEP_BUDGET_S)
        ]
    except subprocess.TimeoutExpired:
        pytest.fail(
            f"pinlint spent more than {DEEP_BUDGET_S} s on one 1000-deep {kind} expression (libcst is "
            "super-linear in nesting depth; CPython rejects more than 200 levels outright)"
        )
    assert time.perf_counter() - started < DEEP_BUDGET_S
    if kind == "parens":  # the cheap one also in-process (libcst is slow on 1000-deep lists/calls)
        results.append(run_clirunner(["check", ".", "--output-format", "json", "--no-cache"], project))
    for result in results:
        result.assert_no_crash()
        assert result.exit_code == 1, result
        _assert_good_file_still_checked(result)
        deep = [f for f in _json_findings(result) if Path(f["filename"]).name == "deep.py"]
        if not deep:  # not analyzed: then it must say so
            _assert_diagnostic(result, "deep.py", "nested")
    if kind == "parens":
        result = run_subprocess(["check", ".", "--fix", "--no-cache"], project)
        result.assert_no_crash()
        assert (project / "good.py").read_text() == PIN_SNIPPET_FIXED
        assert (project / "deep.py").read_text() == deep_source  # CPython cannot verify a fix of it


@pytest.mark.parametrize("kind", ["parens", "lists"])
def test_pathologically_nested_expression_does_not_kill_the_run(tmp_path: Path, kind: str) -> None:
    """5,000 levels: beyond CPython's own parser limits (200 nested brackets). pinlint must report
    the file and go on; it must not die (libcst's native parser overflows its stack on this input,
    so pinlint has to refuse such files before handing them to libcst). Subprocess only: a crash
    here would take the test process down with it."""
    project = make_project(tmp_path, {"deep.py": _nested_source(5000, kind), "good.py": PIN_SNIPPET})
    result = run_subprocess(["check", ".", "--output-format", "json", "--no-cache"], project, timeout=120)
    assert result.exit_code >= 0, f"pinlint was killed by signal {-result.exit_code}\n{result}"
    result.assert_no_crash()
    assert result.exit_code == 1, result
    _assert_good_file_still_checked(result)
    _assert_diagnostic(result, "deep.py")


def test_long_flat_expression(tmp_path: Path) -> None:
    project = make_project(tmp_path, {"flat.py": _nested_source(500, "flat"), "good.py": PIN_SNIPPET})
    for result in _check_json(project):
        result.assert_no_crash()
        assert result.exit_code == 1, result
        _assert_good_file_still_checked(result)
        if not [f for f in _json_findings(result) if Path(f["filename"]).name == "flat.py"]:
            _assert_diagnostic(result, "flat.py")


# --------------------------------------------------------------------------------------------
# Newer syntax than this interpreter (3.11) parses
# --------------------------------------------------------------------------------------------

PY312 = {
    "typeparams.py": (
        "import torch\n\n\n"
        "def move[T](dev: T) -> T:\n"
        "    x = torch.tensor([1, 2, 3])\n"
        "    return x.to(dev, non_blocking=True)\n"
    ),
    "typealias.py": "import torch\n\ntype Vec = list[float]\n\n\ndef move(dev):\n    x = torch.zeros(3)\n    return x.to(dev, non_blocking=True)\n",
    "fstrings.py": (
        "import torch\n\n\n"
        "def move(dev):\n"
        '    name = f"{f"{dev}"!r}"\n'
        "    x = torch.tensor([1, 2, 3])\n"
        "    return x.to(dev, non_blocking=True), name\n"
    ),
    "generic_class.py": (
        "import torch\n\n\n"
        "class Box[T]:\n"
        "    def move(self, dev):\n"
        "        x = torch.ones(2)\n"
        "        return x.cuda(non_blocking=True)\n"
    ),
}


@pytest.mark.skipif(sys.version_info >= (3, 12), reason="checks behaviour on an interpreter older than the syntax")
def test_python312_syntax_is_handled_or_reported(tmp_path: Path) -> None:
    project = make_project(tmp_path, {**PY312, "good.py": PIN_SNIPPET})
    for result in _check_json(project):
        result.assert_no_crash()
        assert result.exit_code == 1, result
        _assert_good_file_still_checked(result)
        reported = {Path(f["filename"]).name for f in _json_findings(result)}
        for name in PY312:
            assert name in reported or name in result.stderr, (
                f"[{result.how}] {name}: neither findings nor a diagnostic\n{result}"
            )
    result = run_subprocess(["check", ".", "--fix", "--no-cache"], project)
    result.assert_no_crash()
    assert result.exit_code == 1, result  # the 3.12 files' findings cannot be verified here, so they remain
    assert (project / "good.py").read_text() == PIN_SNIPPET_FIXED
    for name, text in PY312.items():
        # A fix whose result this interpreter cannot verify is dropped (with a warning), never written.
        assert (project / name).read_text() == text, f"{name} was rewritten without verification"
        # Either dropped after the fact (a warning on stderr) or not offered, saying why.
        said = name in result.stderr or "cannot parse the file" in result.stdout
        assert said, f"{name}: no word about the unverifiable fix\n{result}"


# --------------------------------------------------------------------------------------------
# Unreadable files, links, empty files, many files, missing paths
# --------------------------------------------------------------------------------------------


@pytest.fixture
def shared_tmp():
    """A temp dir that another user can enter (pytest's tmp_path sits in a 0700 directory)."""
    import tempfile

    path = Path(tempfile.mkdtemp(prefix="pinlint-robust-"))
    path.chmod(0o755)
    yield path
    for p in path.rglob("*"):
        if p.is_dir() and not p.is_symlink():
            p.chmod(0o755)
    shutil.rmtree(path, ignore_errors=True)


def _world_readable_project(tmp_path: Path, files: dict) -> Path:
    root = tmp_path / "proj"
    make_project(root, files)
    for p in [root, *root.rglob("*")]:
        p.chmod(0o755 if p.is_dir() else 0o644)
    return root


def test_unreadable_file_subprocess(shared_tmp: Path) -> None:
    tmp_path = shared_tmp
    project = _world_readable_project(tmp_path, {"secret.py": PIN_SNIPPET, "good.py": PIN_SNIPPET})
    (project / "secret.py").chmod(0o000)
    kwargs: dict = {}
    if IS_ROOT:
        # root reads any file: run pinlint as `nobody`, for whom chmod 000 means something.
        kwargs = dict(user=NOBODY, group=NOBODY, extra_groups=[])
    args = [sys.executable, "-m", "pinlint", "check", ".", "--output-format", "json", "--no-cache"]
    env = {**os.environ, "PINLINT_NO_CACHE": "1", "HOME": str(tmp_path)}
    try:
        proc = subprocess.run(args, cwd=project, capture_output=True, text=True, timeout=120, env=env, **kwargs)
    except PermissionError as exc:  # pragma: no cover - no CAP_SETUID in this container
        pytest.skip(f"cannot drop privileges to test an unreadable file as root: {exc}")
    if IS_ROOT and "Permission denied" in proc.stderr and "secret.py" not in proc.stderr:
        pytest.skip(f"`nobody` cannot run this interpreter: {proc.stderr[-300:]}")
    result = Result(proc.returncode, proc.stdout, proc.stderr, "subprocess as nobody" if IS_ROOT else "subprocess")
    result.assert_no_crash()
    assert result.exit_code == 1, result
    _assert_diagnostic(result, "secret.py", "cannot read")
    _assert_good_file_still_checked(result)


def test_unreadable_file_clirunner(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """In-process, the read is made to fail (chmod does not stop root): the engine's open()."""
    import builtins

    import pinlint.runner

    project = make_project(tmp_path, {"secret.py": PIN_SNIPPET, "good.py": PIN_SNIPPET})
    real_open = builtins.open

    def fake_open(file, *args, **kwargs):
        if str(file).endswith("secret.py"):
            raise PermissionError(13, "Permission denied", str(file))
        return real_open(file, *args, **kwargs)

    monkeypatch.setattr(pinlint.runner, "open", fake_open, raising=False)
    result = run_clirunner(["check", ".", "--output-format", "json", "--no-cache", "--jobs", "1"], project)
    result.assert_no_crash()
    assert result.exit_code == 1, result
    _assert_diagnostic(result, "secret.py", "cannot read")
    _assert_good_file_still_checked(result)


def test_a_bug_on_one_file_costs_that_file_not_the_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """An exception in the analysis of one file is that file's error (exit 1, the file named,
    the others checked): it does not stop the run."""
    import pinlint.lint

    project = make_project(tmp_path, {"buggy.py": PIN_SNIPPET, "good.py": PIN_SNIPPET})
    real = pinlint.lint.analyze_text

    def failing(text, settings, **kwargs):
        if str(kwargs.get("path", "")).endswith("buggy.py"):
            raise ValueError("a bug")
        return real(text, settings, **kwargs)

    monkeypatch.setattr(pinlint.lint, "analyze_text", failing)
    monkeypatch.delenv("PINLINT_DEBUG", raising=False)
    result = run_clirunner(["check", ".", "--output-format", "json", "--no-cache", "--jobs", "1"], project)
    result.assert_no_crash()
    assert result.exit_code == 1, result
    _assert_diagnostic(result, "buggy.py", "a pinlint bug", "ValueError: a bug")
    _assert_good_file_still_checked(result)


def test_unlistable_directory(shared_tmp: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    project = _world_readable_project(shared_tmp, {"good.py": PIN_SNIPPET, "locked/inner.py": PIN_SNIPPET})
    (project / "locked").chmod(0o000)
    try:
        if not IS_ROOT:
            results = run_both(["check", ".", "--output-format", "json", "--no-cache"], project)
        else:
            # chmod 000 does not stop root: make listing that directory fail in-process instead.
            import pinlint.discovery

            real_scandir = os.scandir

            def scandir(path):
                if str(path).endswith("locked"):
                    raise PermissionError(13, "Permission denied", str(path))
                return real_scandir(path)

            monkeypatch.setattr(pinlint.discovery.os, "scandir", scandir)
            results = [run_clirunner(["check", ".", "--output-format", "json", "--no-cache"], project)]
        for result in results:
            result.assert_no_crash()
            assert result.exit_code == 1, result
            _assert_diagnostic(result, "locked", "cannot list")
            _assert_good_file_still_checked(result)
    finally:
        (project / "locked").chmod(0o755)


def test_broken_symlink(tmp_path: Path) -> None:
    project = make_project(tmp_path, {"good.py": PIN_SNIPPET})
    (project / "dangling.py").symlink_to(project / "no_such_target.py")
    for result in _check_json(project):
        result.assert_no_crash()
        assert result.exit_code == 1, result
        # The diagnostic names the link the user has, not the target that does not exist.
        _assert_diagnostic(result, "dangling.py", "broken symbolic link")
        _assert_good_file_still_checked(result)


def test_broken_symlink_given_explicitly(tmp_path: Path) -> None:
    project = make_project(tmp_path, {"good.py": PIN_SNIPPET})
    (project / "dangling.py").symlink_to(project / "no_such_target.py")
    for result in run_both(["check", "dangling.py", "good.py", "--output-format", "json", "--no-cache"], project):
        result.assert_no_crash()
        assert result.exit_code == 1, result
        _assert_diagnostic(result, "dangling.py", "broken symbolic link")
        _assert_good_file_still_checked(result)


def test_symlink_loop_file(tmp_path: Path) -> None:
    project = make_project(tmp_path, {"good.py": PIN_SNIPPET})
    (project / "loop_a.py").symlink_to(project / "loop_b.py")
    (project / "loop_b.py").symlink_to(project / "loop_a.py")
    for result in _check_json(project):
        result.assert_no_crash()
        assert result.exit_code == 1, result
        _assert_diagnostic(result, "loop_a.py")
        _assert_good_file_still_checked(result)


def test_symlink_loop_directory(tmp_path: Path) -> None:
    project = make_project(tmp_path, {"good.py": PIN_SNIPPET, "pkg/mod.py": PIN_SNIPPET})
    (project / "pkg" / "again").symlink_to(project / "pkg")  # pkg/again/again/again/...
    (project / "pkg" / "up").symlink_to(project)
    for result in _check_json(project):
        result.assert_no_crash()
        assert result.exit_code == 1, result
        names = sorted(Path(f["filename"]).relative_to(project).as_posix() for f in _json_findings(result))
        assert names == ["good.py", "pkg/mod.py"], names  # each file once, links not followed


def test_empty_file(tmp_path: Path) -> None:
    project = make_project(tmp_path, {"empty.py": "", "__init__.py": b""})
    for result in run_both(["check", ".", "--no-cache"], project):
        result.assert_no_crash()
        assert result.exit_code == 0, result
    for result in run_both(["check", "empty.py", "--fix", "--no-cache"], project):
        assert result.exit_code == 0, result
    assert (project / "empty.py").read_bytes() == b""


def test_only_whitespace_and_comments(tmp_path: Path) -> None:
    project = make_project(tmp_path, {"blank.py": "\n\n   \n# torch non_blocking=True\n\t\n", "good.py": PIN_SNIPPET})
    for result in _check_json(project):
        result.assert_no_crash()
        assert result.exit_code == 1, result
        assert {Path(f["filename"]).name for f in _json_findings(result)} == {"good.py"}


def test_directory_of_10000_files(tmp_path: Path) -> None:
    project = make_project(tmp_path)
    expected = 0
    for i in range(10_000):
        sub = project / f"pkg{i // 1000}"
        if i % 1000 == 0:
            sub.mkdir()
        if i % 250 == 0:
            (sub / f"m{i}.py").write_text(PIN_SNIPPET)
            expected += 1
        elif i % 7 == 0:
            (sub / f"m{i}.py").write_text(f"import torch\n\n\ndef g{i}(x):\n    return torch.zeros({i}) + x\n")
        else:
            (sub / f"m{i}.py").write_text(f"VALUE_{i} = {i}\n\n\ndef f(x):\n    return x + VALUE_{i}\n")
    for result in _check_json(project):
        started = time.perf_counter()
        result.assert_no_crash()
        assert result.exit_code == 1, result
        assert len(_json_findings(result)) == expected
    started = time.perf_counter()
    result = run_subprocess(["check", ".", "--output-format", "json", "--no-cache"], project, timeout=300)
    elapsed = time.perf_counter() - started
    assert result.exit_code == 1
    assert elapsed < 90, f"10,000 small files took {elapsed:.1f} s"


def test_missing_path_is_a_usage_error(tmp_path: Path) -> None:
    project = make_project(tmp_path, {"good.py": PIN_SNIPPET})
    for result in run_both(["check", "no_such_dir", "good.py", "--no-cache"], project):
        result.assert_no_crash()
        assert result.exit_code == 2, result
        assert "no_such_dir" in result.stderr and "no such file" in result.stderr, result


def test_exit_codes_are_truthful(tmp_path: Path) -> None:
    clean = make_project(tmp_path / "clean", {"ok.py": "import torch\n\n\ndef f(x):\n    return x + 1\n"})
    dirty = make_project(tmp_path / "dirty", {"good.py": PIN_SNIPPET})
    for result in run_both(["check", ".", "--no-cache"], clean):
        assert result.exit_code == 0, result
    for result in run_both(["check", ".", "--no-cache"], dirty):
        assert result.exit_code == 1, result
    for result in run_both(["check", ".", "--no-cache", "--exit-zero"], dirty):
        assert result.exit_code == 0, result
    for result in run_both(["check", ".", "--no-cache", "--fix"], dirty):
        assert result.exit_code == 0, result  # everything fixed
    assert (dirty / "good.py").read_text() == PIN_SNIPPET_FIXED
    for result in run_both(["check", ".", "--no-cache", "--no-such-option"], dirty):
        assert result.exit_code == 2, result
