"""The second triage: a file that never writes ``non_blocking`` but hands tensors to a copy an
imported project function or class makes. The shapes (flagged, and OK twins) are the fixture
``fixtures/pin001_callers_elsewhere``; here, what the triage reads, and that the cache, one-file
runs and a whole run agree on it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from pinlint.analysis import caller_triage
from pinlint.analysis.caller_triage import calls_project_copier, is_test_file
from tests.test_across_files import _check, _summary, _tree, _where
from tests.test_fixtures import FIXTURES, _prepare

CASE = FIXTURES / "pin001_callers_elsewhere"

_COPIER = "import torch\n\n\ndef upload(t, dev):\n    return t.to(dev, non_blocking=True)\n"
_BLOCKING = "import torch\n\n\ndef upload(t, dev):\n    return t.to(dev)\n"
_CALLER = "import torch\nfrom helpers import upload\n\n\ndef run(dev):\n    return upload(torch.zeros(3), dev)\n"


@pytest.fixture()
def project(tmp_path: Path) -> Path:
    work, _texts, _expected = _prepare(CASE, tmp_path)
    return work


@pytest.fixture(autouse=True)
def _new_run() -> None:
    caller_triage.forget()  # each test's files are new: nothing resolved in another is kept


def _decide(root: Path, relative: str) -> tuple[bool, dict[str, str]]:
    path = root / relative
    return calls_project_copier(path.read_text(), str(path), str(root))


@pytest.mark.parametrize("cache", [False, True])
def test_one_file_runs_equal_the_whole_project_run(project: Path, cache: bool) -> None:
    whole = _summary(_check(project, ".", cache=cache), project)
    # tests/test_copies.py reports only its own flow; nothing in pkg/builders.py, which it calls.
    assert {f[0] for f in whole} == {"pkg/steps.py", "tests/test_copies.py"}
    files = ("pkg/steps.py", "pkg/steps_ok.py", "pkg/copiers.py", "pkg/builders.py", "tests/test_steps.py")
    for _round in range(2 if cache else 1):  # cold, then warm
        for relative in (*files, "tests/test_copies.py"):
            alone = _summary(_check(project, relative, cache=cache), project)
            assert alone == [f for f in whole if f[0] == relative], relative


def test_the_same_findings_in_a_subprocess_with_workers(project: Path) -> None:
    # More than the in-process threshold of files, so that worker processes analyse them.
    for i in range(60):
        (project / "pkg" / f"filler_{i}.py").write_text("import torch\n\nX = 1\n")
    whole = _summary(_check(project, "."), project)
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pinlint",
            "check",
            ".",
            "--no-cache",
            "--select",
            "ALL",
            "--jobs",
            "2",
            "--output-format",
            "concise",
        ],
        cwd=project,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 1, done.stderr
    reported = sorted(line.split(" ")[0] for line in done.stdout.splitlines() if ": PIN" in line)
    assert reported == sorted(f"{f[0]}:{f[1]}:{f[2]}:" for f in whole)


def test_a_copier_gaining_its_copy_invalidates_the_cached_caller(tmp_path: Path) -> None:
    cache = ["--cache-dir", str(tmp_path / "cache")]
    project = tmp_path / "p"
    _tree(project, {"pyproject.toml": "[tool.pinlint]\n", "helpers.py": _BLOCKING, "main.py": _CALLER})
    assert _check(project, ".", *cache, cache=True) == []
    (project / "helpers.py").write_text(_COPIER)  # main.py is unchanged, and names no copy
    assert _where(_check(project, ".", *cache, cache=True), project) == [("main.py", 6)]
    assert _where(_check(project, "main.py", *cache, cache=True), project) == [("main.py", 6)]
    (project / "helpers.py").write_text(_BLOCKING)
    assert _check(project, ".", *cache, cache=True) == []


def test_a_copier_behind_a_wrapper_in_a_third_module_is_followed_and_recorded(tmp_path: Path) -> None:
    # main.py -> wrap.send (no copy, no torch) -> helpers.upload (the copy): the caller is kept,
    # and what its answer read (the wrapper's module, the copier's) invalidates it when changed.
    cache = ["--cache-dir", str(tmp_path / "cache")]
    project = tmp_path / "p"
    wrap = "from helpers import upload\n\n\ndef send(t, dev):\n    return upload(t, dev)\n"
    main = _CALLER.replace("from helpers import upload", "from wrap import send").replace("upload(", "send(")
    _tree(project, {"pyproject.toml": "[tool.pinlint]\n", "helpers.py": _BLOCKING, "wrap.py": wrap, "main.py": main})
    assert _check(project, ".", *cache, cache=True) == []
    (project / "helpers.py").write_text(_COPIER)
    for paths in (["main.py"], ["."]):
        assert _where(_check(project, *paths, *cache, cache=True), project) == [("main.py", 6)], paths
    (project / "wrap.py").write_text(wrap.replace("upload(t, dev)", "upload(t.pin_memory(), dev)"))
    assert _check(project, "main.py", *cache, cache=True) == []


def test_a_copier_module_appearing_invalidates_the_cached_caller(tmp_path: Path) -> None:
    cache = ["--cache-dir", str(tmp_path / "cache")]
    project = tmp_path / "p"
    _tree(
        project,
        {
            "pyproject.toml": "[tool.pinlint]\n",
            "pkg/__init__.py": "",
            "pkg/main.py": _CALLER.replace("from helpers", "from .helpers"),
        },
    )
    assert _check(project, ".", *cache, cache=True) == []
    (project / "pkg" / "helpers.py").write_text(_COPIER)
    assert _where(_check(project, "pkg/main.py", *cache, cache=True), project) == [("pkg/main.py", 6)]


def test_what_the_triage_reads_and_records(tmp_path: Path) -> None:
    _tree(
        tmp_path,
        {
            "pyproject.toml": "[tool.pinlint]\n",
            "helpers.py": _COPIER,
            "quiet.py": _BLOCKING,
            "main.py": "import torch\nimport numpy\nfrom quiet import upload as up\nfrom helpers import upload\n\n\n"
            "def run(dev):\n    up(torch.zeros(3), dev)\n    return upload(torch.zeros(3), dev)\n",
        },
    )
    found, read = _decide(tmp_path, "main.py")
    assert found
    # Read, with their contents' digests; where a package of the name would have won, absent.
    assert {path for path, digest in read.items() if digest} == {
        str(tmp_path / "quiet.py"),
        str(tmp_path / "helpers.py"),
    }
    assert {path for path, digest in read.items() if not digest} == {
        str(tmp_path / "quiet" / "__init__.py"),
        str(tmp_path / "helpers" / "__init__.py"),
    }


def test_an_imported_copier_that_is_never_called_keeps_the_file_out(tmp_path: Path) -> None:
    _tree(
        tmp_path,
        {
            "helpers.py": _COPIER,
            "main.py": "import torch\nfrom helpers import upload\n\nKNOWN = [upload]\n\n\ndef run(n):\n    return torch.zeros(n)\n",
        },
    )
    found, read = _decide(tmp_path, "main.py")
    assert not found
    assert str(tmp_path / "helpers.py") not in read  # the file's own text decides: never read


def test_a_class_whose_copying_method_is_never_called_keeps_the_file_out(tmp_path: Path) -> None:
    copier = "class Up:\n    def send(self, t, d):\n        return t.to(d, non_blocking=True)\n\n    def size(self):\n        return 1\n"
    caller = "import torch\nfrom helpers import Up\n\n\ndef run(d):\n    return Up().{call}\n"
    _tree(tmp_path, {"helpers.py": copier, "main.py": caller.format(call="size()")})
    assert not _decide(tmp_path, "main.py")[0]
    (tmp_path / "main.py").write_text(caller.format(call="send(torch.zeros(2), d)"))
    assert _decide(tmp_path, "main.py")[0]


@pytest.mark.parametrize(
    "imports",
    [
        "from pkg import helpers\n",  # a submodule, called as `helpers.upload(...)`
        "import pkg.helpers as helpers\n",
        "from pkg.api import *\nfrom pkg import helpers\n",
    ],
)
def test_module_spellings_the_triage_follows(tmp_path: Path, imports: str) -> None:
    _tree(
        tmp_path,
        {
            "pkg/__init__.py": "",
            "pkg/api.py": "",
            "pkg/helpers.py": _COPIER,
            "main.py": f"import torch\n{imports}\n\ndef run(dev):\n    return helpers.upload(torch.zeros(3), dev)\n",
        },
    )
    assert _decide(tmp_path, "main.py")[0]


def test_a_re_export_is_followed_a_few_links_deep(tmp_path: Path) -> None:
    files = {
        "pkg/__init__.py": "from pkg.a import upload\n",
        "pkg/a.py": "from pkg.b import upload\n",
        "pkg/b.py": "from pkg.c import upload\n",
        "pkg/c.py": _COPIER,
        "main.py": "import torch\nfrom pkg import upload\n\n\ndef run(dev):\n    upload(torch.zeros(3), dev)\n",
    }
    _tree(tmp_path, files)
    assert _decide(tmp_path, "main.py")[0]
    _tree(tmp_path, {"pkg/c.py": "from pkg.d import upload\n", "pkg/d.py": _COPIER})
    caller_triage.forget()
    assert not _decide(tmp_path, "main.py")[0]  # four links: past the bound the analysis follows


@pytest.mark.parametrize("relative", ["tests/main.py", "test_main.py", "pkg/main_test.py", "conftest.py"])
def test_a_test_file_is_not_a_caller(tmp_path: Path, relative: str) -> None:
    _tree(tmp_path, {"pyproject.toml": "[tool.pinlint]\n", "helpers.py": _COPIER, relative: _CALLER})
    assert is_test_file(str(tmp_path / relative), str(tmp_path))
    assert _decide(tmp_path, relative) == (False, {})
    assert _check(tmp_path, ".") == []


def test_a_library_import_is_never_read(tmp_path: Path) -> None:
    # A project module named like the standard library's is not what `import json` binds.
    _tree(
        tmp_path,
        {
            "json.py": _COPIER,
            "main.py": "import torch\nfrom json import upload\n\n\ndef run(d):\n    upload(torch.zeros(3), d)\n",
        },
    )
    assert _decide(tmp_path, "main.py") == (False, {})


def test_without_a_project_root_no_other_file_is_read(tmp_path: Path) -> None:
    _tree(tmp_path, {"helpers.py": _COPIER, "main.py": _CALLER})
    old = os.getcwd()
    os.chdir(tmp_path)
    try:
        from click.testing import CliRunner

        from pinlint.cli import main

        result = CliRunner().invoke(main, ["check", "-", "--no-cache", "--exit-zero"], input=_CALLER)
    finally:
        os.chdir(old)
    assert "PIN001" not in result.output


def test_a_one_file_run_of_the_callee_sees_what_its_caller_hands_it(tmp_path: Path) -> None:
    # The finding is the callee's (computed there from the caller's tensor); the caller never
    # writes non_blocking: a run on the callee alone must still read it, as a whole run does.
    ops = "import torch\n\n\ndef build(x, dev):\n    y = x * 2\n    return y.to(dev, non_blocking=True)\n"
    main = "import torch\n\nfrom pkg.ops import build\n\n\ndef run(dev):\n    return build(torch.ones(4), dev)\n"
    _tree(
        tmp_path, {"pyproject.toml": "[tool.pinlint]\n", "pkg/__init__.py": "", "pkg/ops.py": ops, "pkg/main.py": main}
    )
    whole = _where(_check(tmp_path, "."), tmp_path)
    assert whole == [("pkg/ops.py", 5)]
    for cache in (False, True, True):  # without the cache, then cold and warm
        assert _where(_check(tmp_path, "pkg/ops.py", cache=cache), tmp_path) == whole


@pytest.mark.parametrize(
    ("patch", "flagged"),
    [
        ("", True),
        ("import devs\n\nNAME = 'send'\nsetattr(devs.GPU, NAME, devs.CPU.send)\n", False),
        ("import devs\n\nsetattr(devs.GPU, 'send', devs.CPU.send)\n", False),
        ("import devs\n\nsetattr(devs.GPU, 'label', 'gpu')\n", True),  # another attribute
    ],
)
def test_a_method_an_imported_module_may_set_by_name_is_not_followed(tmp_path: Path, patch: str, flagged: bool) -> None:
    devs = (
        "class CPU:\n    def send(self, t):\n        return t\n\n\n"
        "class GPU:\n    def send(self, t):\n        return t.to('cuda', non_blocking=True)\n"
    )
    main = "import torch\n\nimport patches  # noqa: F401\nfrom devs import GPU\n\n\ndef run(n):\n    return GPU().send(torch.zeros(n))\n"
    _tree(
        tmp_path,
        {"pyproject.toml": "[tool.pinlint]\n", "devs.py": devs, "patches.py": patch or "X = 1\n", "main.py": main},
    )
    assert _where(_check(tmp_path, "."), tmp_path) == ([("main.py", 8)] if flagged else [])


def test_test_directories_are_those_below_the_root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = tmp_path / "tests" / "project"  # the project itself lives under a `tests` directory
    assert not is_test_file(str(root / "pkg" / "steps.py"), str(root))
    assert is_test_file(str(root / "pkg" / "testing" / "steps.py"), str(root))
    (root / "pkg").mkdir(parents=True)
    monkeypatch.chdir(root.parent)
    assert not is_test_file(os.path.join("project", "pkg", "steps.py"), str(root))  # relative to cwd
