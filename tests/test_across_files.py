"""Provenance across the files of a project: what one file's analysis learns from another, where
the finding goes, and that the cache, one-file runs and the report formats agree with it.

The shapes themselves (flagged and OK twins) are the fixture ``fixtures/pin001_across_files``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from click.testing import CliRunner

from pinlint.analysis.project_modules import ModuleFiles
from pinlint.cli import main
from tests.test_fixtures import FIXTURES, _prepare

CASE = FIXTURES / "pin001_across_files"


def _check(work: Path, *args: str, cache: bool = False) -> list[dict]:
    old = os.getcwd()
    os.chdir(work)
    try:
        extra = [] if cache else ["--no-cache"]
        result = CliRunner().invoke(
            main, ["check", *args, *extra, "--select", "ALL", "--output-format", "json", "--exit-zero"]
        )
    finally:
        os.chdir(old)
    assert result.exit_code == 0, result.output
    return json.loads(result.output)


def _summary(diagnostics: list[dict], work: Path) -> list[tuple]:
    return sorted(
        (
            os.path.relpath(d["filename"], work),
            d["location"]["row"],
            d["location"]["column"],
            d["code"],
            d["message"],
            json.dumps(d["fix"], sort_keys=True),
        )
        for d in diagnostics
    )


@pytest.fixture()
def project(tmp_path: Path) -> Path:
    work, _texts, _expected = _prepare(CASE, tmp_path)
    return work


def test_the_finding_is_where_the_helper_builds_the_tensor(project: Path) -> None:
    found = _summary(_check(project, "."), project)
    where = {(f[0], f[1]) for f in found}
    assert ("pkg/helpers.py", 7) in where  # make_ids(), whose result serve.py copies
    assert ("pkg/impl.py", 5) in where  # through the re-export in pkg/__init__.py
    assert ("pkg/serve.py", 27) in where  # the argument helpers.upload() copies
    assert not any(f[0] == "pkg/other.py" for f in found)  # imported on one path of two


@pytest.mark.parametrize("cache", [False, True])
def test_one_file_runs_equal_the_whole_project_run(project: Path, cache: bool) -> None:
    whole = _summary(_check(project, ".", cache=cache), project)
    files = sorted({f[0] for f in whole} | {"pkg/other.py", "pkg/utils.py"})
    for _round in range(2 if cache else 1):  # cold, then warm
        for relative in files:
            alone = _summary(_check(project, relative, cache=cache), project)
            assert alone == [f for f in whole if f[0] == relative], relative


@pytest.mark.parametrize(
    "case", ["pin001_wrappers_across_files", "pin001_inherited_attributes", "pin001_inherited_methods"]
)
def test_one_file_runs_of_the_cross_file_shapes_equal_the_whole_run(tmp_path: Path, case: str) -> None:
    # The construction's file reports what another file's copy reaches (a base class's buffer:
    # its file names no `return`), and the caller's file what it hands two modules away.
    work, _texts, _expected = _prepare(FIXTURES / case, tmp_path)
    whole = _summary(_check(work, "."), work)
    assert whole
    for relative in sorted(p.relative_to(work).as_posix() for p in work.rglob("*.py")):
        assert _summary(_check(work, relative), work) == [f for f in whole if f[0] == relative], relative


def test_the_copy_in_another_file_is_a_related_location(project: Path) -> None:
    diagnostics = _check(project, ".")
    helper = next(d for d in diagnostics if d["filename"].endswith("helpers.py") and d["location"]["row"] == 7)
    (copy,) = helper["related"]
    assert copy["filename"] == str(project / "pkg" / "serve.py")
    assert copy["location"] == {"row": 13, "column": 5}
    assert "on line 13 of `pkg/serve.py` in `step()`" in helper["message"]
    caller = next(d for d in diagnostics if d["filename"].endswith("serve.py") and d["location"]["row"] == 27)
    assert [r["filename"] for r in caller["related"]] == [
        str(project / "pkg" / "helpers.py"),  # the copy, in the callee's file
        str(project / "pkg" / "serve.py"),  # the call handing the tensor over
    ]


def test_sarif_and_the_full_output_name_the_other_file(project: Path) -> None:
    os.chdir(project)
    sarif = json.loads(
        CliRunner().invoke(main, ["check", "pkg/helpers.py", "--no-cache", "--output-format", "sarif"]).output
    )
    result = next(
        r for r in sarif["runs"][0]["results"] if r["locations"][0]["physicalLocation"]["region"]["startLine"] == 7
    )
    assert result["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "pkg/helpers.py"
    related = result["relatedLocations"][0]["physicalLocation"]
    assert related["artifactLocation"]["uri"] == "pkg/serve.py"
    assert related["region"]["startLine"] == 13
    full = CliRunner().invoke(main, ["check", "pkg/helpers.py", "--no-cache", "--output-format", "full"]).output
    assert "note: the non_blocking copy is at pkg/serve.py:13:5" in full


def test_sarif_code_flows_follow_the_tensor_across_files(project: Path) -> None:
    import jsonschema

    from tests.report.test_report_formats import SARIF_SCHEMA

    os.chdir(project)
    sarif = json.loads(CliRunner().invoke(main, ["check", ".", "--no-cache", "--output-format", "sarif"]).output)
    schema = json.loads(SARIF_SCHEMA.read_text(encoding="utf-8"))
    validator = jsonschema.validators.validator_for(schema)(schema)
    validator.validate(sarif)
    flows = {}
    for result in sarif["runs"][0]["results"]:
        where = result["locations"][0]["physicalLocation"]
        key = (where["artifactLocation"]["uri"], where["region"]["startLine"])
        steps = result.get("codeFlows", [{"threadFlows": [{"locations": []}]}])[0]["threadFlows"][0]["locations"]
        flows[key] = [
            (
                s["location"]["physicalLocation"]["artifactLocation"]["uri"],
                s["location"]["physicalLocation"]["region"]["startLine"],
            )
            for s in steps
        ]
    # Built in the helper, copied by the caller.
    assert flows[("pkg/helpers.py", 7)] == [("pkg/helpers.py", 7), ("pkg/serve.py", 13)]
    # Built by the caller, handed to the helper, copied there.
    assert flows[("pkg/serve.py", 27)] == [("pkg/serve.py", 27), ("pkg/serve.py", 28), ("pkg/helpers.py", 27)]
    # Built and copied on one line: no flow to show.
    assert flows[("pkg/serve.py", 37)] == []


def test_a_changed_callee_invalidates_the_callers_cached_result(project: Path) -> None:
    before = {(f[0], f[1]) for f in _summary(_check(project, ".", cache=True), project)}
    assert ("pkg/serve.py", 27) in before
    helpers = project / "pkg" / "helpers.py"
    original = helpers.read_text()
    helpers.write_text(original.replace("return t.to(device, non_blocking=True)", "return t.to(device)"))
    after = {(f[0], f[1]) for f in _summary(_check(project, ".", cache=True), project)}
    assert ("pkg/serve.py", 27) not in after  # serve.py is unchanged: its cached result was not reused
    helpers.write_text(original)
    again = {(f[0], f[1]) for f in _summary(_check(project, ".", cache=True), project)}
    assert again == before


def test_a_changed_device_constant_invalidates_its_importers_cached_result(project: Path) -> None:
    """`from pkg.devices import HOST`: the copy to HOST is no copy only while HOST is the host."""
    lines = (project / "pkg" / "staging.py").read_text().splitlines()
    row = next(i for i, line in enumerate(lines, 1) if ".to(HOST, non_blocking=True)" in line)
    staging_rows = {f[1] for f in _summary(_check(project, ".", cache=True), project) if f[0] == "pkg/staging.py"}
    assert row not in staging_rows
    devices = project / "pkg" / "devices.py"
    original = devices.read_text()
    devices.write_text(original.replace('HOST = torch.device("cpu")', 'HOST = torch.device("cuda")'))
    for args in ((".",), ("pkg/staging.py",)):
        rows = {f[1] for f in _summary(_check(project, *args, cache=True), project) if f[0] == "pkg/staging.py"}
        assert row in rows, args  # staging.py is unchanged: its cached result was not reused
    devices.write_text(original)
    rows = {f[1] for f in _summary(_check(project, ".", cache=True), project) if f[0] == "pkg/staging.py"}
    assert rows == staging_rows


def test_a_changed_caller_updates_the_helpers_findings(project: Path) -> None:
    assert ("pkg/impl.py", 5) in {(f[0], f[1]) for f in _summary(_check(project, ".", cache=True), project)}
    serve = project / "pkg" / "serve.py"
    serve.write_text(serve.read_text().replace("make_offsets(len(xs)).to(device, non_blocking=True)", "pass"))
    for paths in (
        [
            ".",
        ],
        ["pkg/impl.py"],
    ):
        found = {(f[0], f[1]) for f in _summary(_check(project, *paths, cache=True), project)}
        assert ("pkg/impl.py", 5) not in found, paths  # impl.py is unchanged, its finding is gone


def test_a_run_on_the_copying_file_leaves_the_helper_alone(project: Path) -> None:
    before = (project / "pkg" / "helpers.py").read_text()
    os.chdir(project)
    CliRunner().invoke(main, ["check", "pkg/serve.py", "--no-cache", "--fix", "--unsafe-fixes"])
    assert (project / "pkg" / "helpers.py").read_text() == before


def test_fixing_the_helpers_file_alone_applies_the_foreign_fix(project: Path) -> None:
    os.chdir(project)
    result = subprocess.run(
        [sys.executable, "-m", "pinlint", "check", "pkg/helpers.py", "--no-cache", "--fix", "--unsafe-fixes"],
        capture_output=True,
        text=True,
        check=False,
    )
    text = (project / "pkg" / "helpers.py").read_text()
    assert "pin_memory=is_pin_memory_available(device)" in text, result.stdout + result.stderr
    # What is left is reported once, at its place in the fixed file: make_ids() has no device.
    assert "pkg/helpers.py:7:12: PIN001" in result.stdout.replace("\\", "/") or "helpers.py:7:12" in result.stdout


# ---------------------------------------------------------------------------- module resolution
def _tree(root: Path, files: dict[str, str]) -> None:
    for relative, text in files.items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))


def test_modules_resolve_absolute_relative_and_src_layouts(tmp_path: Path) -> None:
    _tree(
        tmp_path,
        {
            "src/app/__init__.py": "",
            "src/app/core/__init__.py": "",
            "src/app/core/run.py": "",
            "src/app/util.py": "",
            "src/app/pkgmod/__init__.py": "",
            "src/app/pkgmod.py": "",
        },
    )
    files = ModuleFiles(str(tmp_path), str(tmp_path / "src/app/core/run.py"))
    assert files.module_file(0, "app.util") == str(tmp_path / "src/app/util.py")
    assert files.module_file(2, "util") == str(tmp_path / "src/app/util.py")
    assert files.module_file(1, "") == str(tmp_path / "src/app/core/__init__.py")
    # A package wins over a module of the same name, as in Python.
    assert files.module_file(0, "app.pkgmod") == str(tmp_path / "src/app/pkgmod/__init__.py")
    assert files.module_file(0, "torch") is None  # not a project file (and nothing recorded for it)
    assert str(tmp_path / "src/torch.py") not in files.consulted
    assert files.module_file(9, "x") is None  # climbing out of the project
    # Where a found module was looked for first is recorded: a file created there would win.
    assert files.consulted[str(tmp_path / "src/app/util/__init__.py")] == ""  # a package would win


def test_no_project_root_means_no_other_file_is_read(tmp_path: Path) -> None:
    _tree(tmp_path, {"a.py": "", "b.py": ""})
    assert ModuleFiles(None, str(tmp_path / "a.py")).module_file(0, "b") is None


# ---------------------------------------------------------------------------- the fix-safety programs
def test_the_cross_file_fix_safety_programs_are_flagged(tmp_path: Path) -> None:
    """The differential harness checks that ``--fix`` leaves these programs alone; that is only
    worth something if pinlint flags them (where the tensor is built, in whichever file)."""
    from tests.fixsafety.helper_programs import CROSS_FILE

    expected = {
        "x01_helper_result_copied": {("helpers.py", 4)},
        "x02_argument_copied_by_helper": {("prog.py", 5)},
        "x03_only_the_copying_file_linted": set(),  # the finding is helpers.py's, not in the run
        "x04_only_the_building_file_linted": {("helpers.py", 4)},
    }
    assert sorted(expected) == sorted(p.id for p in CROSS_FILE)
    for program in CROSS_FILE:
        root = tmp_path / program.id
        program.materialize(root)
        found = _check(root, *program.lint_paths, "--unsafe-fixes")
        assert {(os.path.relpath(d["filename"], root), d["location"]["row"]) for d in found} == expected[program.id]
        assert all(d["fix"] is None or d["fix"]["applicability"] != "safe" for d in found), program.id


def test_a_warm_run_checks_dependencies_without_libcst(project: Path, tmp_path: Path) -> None:
    """Validating a cached result against the files it read is a stat or a hash, not a parse."""
    cache = tmp_path / "cache"
    base = [sys.executable, "-m", "pinlint", "check", "--cache-dir", str(cache), "--exit-zero", "-q"]
    subprocess.run([*base, "."], cwd=project, check=True, capture_output=True)
    code = (
        "import sys; from pinlint.__main__ import main\n"
        f"sys.argv = ['pinlint', 'check', '--cache-dir', {str(cache)!r}, '--exit-zero', '-q', 'pkg/serve.py']\n"
        "try:\n    main()\nexcept SystemExit:\n    pass\n"
        "print('libcst' in sys.modules)"
    )
    proc = subprocess.run([sys.executable, "-c", code], cwd=project, capture_output=True, text=True, check=True)
    assert proc.stdout.strip().splitlines()[-1] == "False", proc.stdout + proc.stderr


def test_stdin_with_a_filename_sees_the_importers_copies(project: Path) -> None:
    """An editor sends its buffer: the importers' findings land in that text, not the disk's."""
    os.chdir(project)
    buffer = "\n\n" + (project / "pkg" / "helpers.py").read_text()  # two lines added above
    result = CliRunner().invoke(
        main,
        ["check", "-", "--stdin-filename", "pkg/helpers.py", "--no-cache", "--output-format", "concise"],
        input=buffer,
    )
    rows = sorted(int(line.split(":")[1]) for line in result.output.splitlines() if ": PIN001" in line)
    assert rows == [9, 13], result.output  # make_ids and make_on, two rows down


def test_a_module_linked_from_outside_the_project_is_not_read(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    _tree(outside, {"helpers.py": "import torch\n\ndef make():\n    return torch.zeros(3)\n"})
    root = tmp_path / "proj"
    _tree(root, {"pyproject.toml": "", "prog.py": "from helpers import make\n"})
    (root / "helpers.py").symlink_to(outside / "helpers.py")
    files = ModuleFiles(str(root), str(root / "prog.py"))
    assert files.module_file(0, "helpers") is None


def test_a_run_on_a_package_directory_sees_importers_outside_it(tmp_path: Path) -> None:
    _tree(
        tmp_path,
        {
            "pyproject.toml": "[tool.pinlint]\n",
            "lib/__init__.py": "",
            "lib/helpers.py": "import torch\n\n\ndef make(n):\n    return torch.zeros(n)\n",
            "app.py": "from lib.helpers import make\n\n\ndef run(d):\n    return make(3).to(d, non_blocking=True)\n",
        },
    )
    for paths in (["."], ["lib"], ["lib/helpers.py"]):
        found = _check(tmp_path, *paths)
        assert [(os.path.relpath(d["filename"], tmp_path), d["location"]["row"]) for d in found] == [
            ("lib/helpers.py", 5)
        ], paths


def test_a_one_file_run_of_a_helper_returning_a_host_copy_sees_its_importer(tmp_path: Path) -> None:
    """Whether a file may be reported into is decided from the same construction names the
    analysis uses (``.cpu()`` included), so a one-file run matches the whole-project run."""
    _tree(
        tmp_path,
        {
            "pyproject.toml": "[tool.pinlint]\n",
            "lib/__init__.py": "",
            "lib/moves.py": "import torch\n\n\ndef host(t):\n    return t.detach().cpu()\n",
            "app.py": "from lib.moves import host\n\n\ndef run(t, d):\n    return host(t).to(d, non_blocking=True)\n",
        },
    )
    whole = [(os.path.relpath(d["filename"], tmp_path), d["location"]["row"]) for d in _check(tmp_path, ".")]
    assert whole == [("lib/moves.py", 5)]
    alone = [(os.path.relpath(d["filename"], tmp_path), d["location"]["row"]) for d in _check(tmp_path, "lib/moves.py")]
    assert alone == whole


@pytest.mark.parametrize(
    ("argument", "flagged"),
    [("indptr.to('cpu')", True), ("indptr", False), ("indptr.to('cpu').pin_memory()", True)],
    ids=["host", "unknown", "pinned"],
)
def test_a_helper_computing_on_its_arguments_is_replayed_on_the_callers(
    tmp_path: Path, argument: str, flagged: bool
) -> None:
    """A helper in another file (no torch function in it) returns arithmetic on its parameters: given a
    host tensor (pinned too: arithmetic makes a new pageable one), that result is pageable and is
    reported where the helper computes it; given an unknown, nothing. One-file runs of either
    file agree with the whole run."""
    _tree(
        tmp_path,
        {
            "pyproject.toml": "[tool.pinlint]\n",
            "lib/__init__.py": "",
            "lib/page.py": "import torch\n\n\ndef seq_lens(indptr: torch.Tensor, last, page_size=16):\n"
            "    return (indptr[1:] - indptr[:-1] - 1) * page_size + last\n",
            "app.py": "from lib.page import seq_lens\n\n\n"
            "def plan(indptr, buf):\n"
            f"    kv = seq_lens({argument}, 1)\n"
            "    buf.copy_(kv, non_blocking=True)\n",
        },
    )
    whole = [(os.path.relpath(d["filename"], tmp_path), d["location"]["row"], d["code"]) for d in _check(tmp_path, ".")]
    assert whole == ([("lib/page.py", 5, "PIN002")] if flagged else [])
    for one in ("lib/page.py", "app.py"):
        alone = [
            (os.path.relpath(d["filename"], tmp_path), d["location"]["row"], d["code"]) for d in _check(tmp_path, one)
        ]
        assert alone == [f for f in whole if f[0] == one], one


@pytest.mark.parametrize("star", ["from lib.io import *\n", "from lib.other import *\n", ""])
def test_a_star_import_is_no_function_name(tmp_path: Path, star: str) -> None:
    """``from m import *`` binds no name ``*``: a ``*(`` in the caller (a product, an unpacked
    argument) is no call of a function of that name, and the copier stays known. The copier's
    file need not import torch to copy a tensor."""
    _tree(
        tmp_path,
        {
            "pyproject.toml": "[tool.pinlint]\n",
            "lib/__init__.py": "",
            "lib/io.py": "def upload(t, d):\n    return t.to(d, non_blocking=True)\n",
            "lib/other.py": "def unrelated():\n    return 1\n",
            "app.py": (
                f"import torch\n{star}from lib.io import upload\n\n\n"
                "def run(d, n):\n    staged = torch.zeros(2 * (n + 1))\n    print(*(n, d))\n    return upload(staged, d)\n\n\n"
                "def ready(t, d):\n    return t.to(d, non_blocking=True)\n"
            ),
        },
    )
    found = [(os.path.relpath(d["filename"], tmp_path), d["location"]["row"]) for d in _check(tmp_path, ".")]
    assert found == [("app.py", 7 if star else 6)]


_MAKE = "import torch\n\n\ndef make():\n    return torch.zeros(3)\n"
_COPY_MAKE = "from helpers import make\n\n\ndef run(dev):\n    make().to(dev, non_blocking=True){noqa}\n"


def _where(found: list[dict], root: Path) -> list[tuple[str, int]]:
    return [(os.path.relpath(d["filename"], root), d["location"]["row"]) for d in found]


def test_a_noqa_on_the_copy_in_the_importer_suppresses_the_finding_in_the_helper(tmp_path: Path) -> None:
    _tree(tmp_path, {"pyproject.toml": "[tool.pinlint]\n", "helpers.py": _MAKE, "main.py": _COPY_MAKE.format(noqa="")})
    assert _where(_check(tmp_path, "."), tmp_path) == [("helpers.py", 5)]
    (tmp_path / "main.py").write_text(_COPY_MAKE.format(noqa="  # noqa: PIN001"))
    for paths in (["."], ["helpers.py"]):
        assert _check(tmp_path, *paths) == [], paths


@pytest.mark.parametrize(
    "after",
    [
        "from fast import make\n",  # imported over the def
        "make, other = make, None\n",  # a tuple target
        "import os\nif os.environ.get('PIN'):\n    make = lambda: None\n",  # under a module-level `if`
        "class make:\n    pass\n",  # a class of that name
    ],
)
def test_a_function_rebound_in_its_module_is_not_followed(tmp_path: Path, after: str) -> None:
    _tree(
        tmp_path,
        {
            "pyproject.toml": "[tool.pinlint]\n",
            "helpers.py": _MAKE + "\n\n" + after,
            "fast.py": "import torch\n\n\ndef make():\n    return torch.zeros(3, pin_memory=True)\n",
            "main.py": _COPY_MAKE.format(noqa=""),
        },
    )
    assert _check(tmp_path, ".") == []


def test_a_module_function_replaced_by_the_importer_is_not_followed(tmp_path: Path) -> None:
    main = "import helpers\n\nhelpers.make = lambda: None\n\n\ndef run(dev):\n    helpers.make().to(dev, non_blocking=True)\n"
    _tree(tmp_path, {"pyproject.toml": "[tool.pinlint]\n", "helpers.py": _MAKE, "main.py": main})
    assert _check(tmp_path, ".") == []


def test_an_imported_copier_called_with_non_blocking_false_copies_nothing(tmp_path: Path) -> None:
    helpers = "def upload(t, dev, nb=True):\n    return t.to(dev, non_blocking=nb)\n"
    main = (
        "import torch\nfrom helpers import upload\n\n\n"
        "def run(dev):\n    upload(torch.zeros(3), dev, nb=False)\n    upload(torch.ones(3), dev)\n\n\n"
        "def warm(t, d):\n    return t.to(d, non_blocking=True)\n"
    )
    _tree(tmp_path, {"pyproject.toml": "[tool.pinlint]\n", "helpers.py": helpers, "main.py": main})
    assert _where(_check(tmp_path, "."), tmp_path) == [("main.py", 7)]


def test_the_cache_sees_a_module_appear_and_a_package_change(tmp_path: Path) -> None:
    cache = ["--cache-dir", str(tmp_path / "cache")]
    project = tmp_path / "p"
    _tree(project, {"pyproject.toml": "[tool.pinlint]\n", "main.py": "import torch\n" + _COPY_MAKE.format(noqa="")})
    assert _check(project, ".", *cache, cache=True) == []
    (project / "helpers.py").write_text(_MAKE)  # the import now finds a project module
    assert _where(_check(project, ".", *cache, cache=True), project) == [("helpers.py", 5)]
    # `from helpers import make` in pkg/main.py: pkg/helpers.py once pkg is no package.
    _tree(
        project,
        {
            "pkg/__init__.py": "",
            "pkg/helpers.py": "import torch\n\n\ndef make():\n    return torch.zeros(3, pin_memory=True)\n",
            "pkg/main.py": _COPY_MAKE.format(noqa=""),
        },
    )
    (project / "main.py").unlink()
    assert _where(_check(project, ".", *cache, cache=True), project) == [("helpers.py", 5)]
    (project / "pkg" / "__init__.py").unlink()
    assert _check(project, ".", *cache, cache=True) == []
    (project / "pkg" / "__init__.py").write_text("")
    assert _where(_check(project, ".", *cache, cache=True), project) == [("helpers.py", 5)]


@pytest.mark.parametrize(
    "rebinding",
    [
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    pass\nelse:\n    make = lambda: None\n",
        "from fast import *\n",  # may rebind `make`
    ],
)
def test_an_import_the_importer_rebinds_is_not_followed(tmp_path: Path, rebinding: str) -> None:
    main = "from helpers import make\n" + rebinding + "\n\ndef run(dev):\n    make().to(dev, non_blocking=True)\n"
    fast = "import torch\n\n\ndef make():\n    return torch.zeros(3, pin_memory=True)\n"
    _tree(tmp_path, {"pyproject.toml": "[tool.pinlint]\n", "helpers.py": _MAKE, "fast.py": fast, "main.py": main})
    assert _check(tmp_path, ".") == []


def test_a_noqa_on_the_imported_copiers_copy_suppresses_the_callers_finding(tmp_path: Path) -> None:
    helpers = "def upload(t, dev):\n    return t.to(dev, non_blocking=True){noqa}\n"
    main = (
        "import torch\nfrom helpers import upload\n\n\ndef run(dev):\n    upload(torch.zeros(3), dev)\n\n\n"
        "def warm(t, d):\n    return t.to(d, non_blocking=True)\n"
    )
    files = {"pyproject.toml": "[tool.pinlint]\n", "helpers.py": helpers.format(noqa=""), "main.py": main}
    _tree(tmp_path, files)
    assert _where(_check(tmp_path, "."), tmp_path) == [("main.py", 6)]
    (tmp_path / "helpers.py").write_text(helpers.format(noqa="  # noqa: PIN001"))
    for paths in (["."], ["main.py"]):
        assert _check(tmp_path, *paths) == [], paths


def test_a_file_with_only_foreign_findings_reports_its_syntax_error(tmp_path: Path) -> None:
    broken = _MAKE + "\n\ndef broken(:\n    pass\n"
    _tree(tmp_path, {"pyproject.toml": "[tool.pinlint]\n", "helpers.py": broken, "main.py": _COPY_MAKE.format(noqa="")})
    for paths in (["."], ["helpers.py"]):
        found = sorted(
            (os.path.relpath(d["filename"], tmp_path), d["location"]["row"], d["code"])
            for d in _check(tmp_path, *paths)
        )
        assert found == [("helpers.py", 5, "PIN001"), ("helpers.py", 8, "PIN000")], paths


@pytest.mark.parametrize(
    "main",
    [
        # an import in a docstring is text; the real `make` comes from `fast`
        '"""Usage:\n\nfrom helpers import make\n"""\n\nfrom fast import *\n\n\ndef run(dev):\n    make().to(dev, non_blocking=True)\n',
        # a function's own import of `helpers` binds only its local: the global is `fast`
        "import fast as helpers\n\n\ndef run(dev):\n    helpers.make().to(dev, non_blocking=True)\n\n\n"
        "def later():\n    import helpers\n\n    return helpers\n",
        # a `with ... as` target rebinds the imported name
        "import contextlib\n\nimport fast\nfrom helpers import make\n\nwith contextlib.nullcontext(fast.make) as make:\n"
        "    pass\n\n\ndef run(dev):\n    make().to(dev, non_blocking=True)\n",
        # a module this file imports replaces `helpers.make` first
        "import patch  # noqa: F401\nimport helpers\n\n\ndef run(dev):\n    helpers.make().to(dev, non_blocking=True)\n",
    ],
)
def test_what_the_import_scan_must_not_follow(tmp_path: Path, main: str) -> None:
    fast = "import torch\n\n\ndef make():\n    return torch.zeros(3, pin_memory=True)\n"
    patch = "import fast\nimport helpers\n\nhelpers.make = fast.make\n"
    files = {"pyproject.toml": "[tool.pinlint]\n", "helpers.py": _MAKE, "fast.py": fast, "patch.py": patch}
    _tree(tmp_path, {**files, "main.py": main})
    assert _check(tmp_path, ".") == []
    # The control: the same project with a plain importer is flagged.
    (tmp_path / "main.py").write_text(_COPY_MAKE.format(noqa=""))
    assert _where(_check(tmp_path, "."), tmp_path) == [("helpers.py", 5)]


@pytest.mark.parametrize(
    ("config", "helper", "importer"),
    [
        ("[tool.pinlint]\n", "ns/helpers.py", "main.py"),  # a namespace directory, imported from the root
        ("[tool.pinlint]\n", "helpers.py", ".tools/main.py"),  # a dot-directory discovery walks
        ('[tool.pinlint]\nexclude = ["scripts/*.py"]\n', "helpers.py", "scripts/main.py"),  # excluded by a glob
        ("[tool.pinlint]\n", "helpers.py", "sub/main.py"),  # a nested project (sub/pyproject.toml)
    ],
)
def test_a_one_file_run_finds_what_the_whole_run_finds(tmp_path: Path, config: str, helper: str, importer: str) -> None:
    module = helper[: -len(".py")].replace("/", ".")
    files = {
        "pyproject.toml": config,
        helper: _MAKE,
        importer: f"from {module} import make\n\n\ndef run(dev):\n    make().to(dev, non_blocking=True)\n",
    }
    if importer.startswith("sub/"):
        files["sub/pyproject.toml"] = "[tool.pinlint]\n"
    _tree(tmp_path, files)
    whole = [d for d in _check(tmp_path, ".") if os.path.relpath(d["filename"], tmp_path) == helper]
    alone = _check(tmp_path, helper)
    assert _summary(alone, tmp_path) == _summary(whole, tmp_path)
    expected = [] if importer.startswith(("scripts/", "sub/")) else [(helper, 5)]
    assert _where(alone, tmp_path) == expected


@pytest.mark.parametrize(
    ("main", "extra"),
    [
        # a triple quote in a comment or a one-line string opens no string
        (
            '# a """ in a comment\nQUOTE = \'"""\'\nfrom helpers import make\n\n\n'
            "def run(dev):\n    make().to(dev, non_blocking=True)\n",
            {},
        ),
        # a comment after `;` names the function: no rebinding
        (
            "import os; import sys  # make sure\nfrom helpers import make\n\n\n"
            "def run(dev):\n    make().to(dev, non_blocking=True)\n",
            {},
        ),
        # a `for make in` line inside the module's docstring is text
        (
            '"""Example:\n\nfor make in makers:\n    pass\n"""\nfrom helpers import make\n\n\n'
            "def run(dev):\n    make().to(dev, non_blocking=True)\n",
            {},
        ),
        # an imported module storing another object's `make` attribute patches nothing
        (
            "import config  # noqa: F401\nfrom helpers import make\n\n\n"
            "def run(dev):\n    make().to(dev, non_blocking=True)\n",
            {"config.py": "def configure(opts):\n    opts.make = 'fast'\n"},
        ),
    ],
)
def test_what_the_import_scan_must_still_follow(tmp_path: Path, main: str, extra: dict[str, str]) -> None:
    _tree(tmp_path, {"pyproject.toml": "[tool.pinlint]\n", "helpers.py": _MAKE, "main.py": main, **extra})
    assert _where(_check(tmp_path, "."), tmp_path) == [("helpers.py", 5)]


def test_a_package_importing_its_own_submodule_still_re_exports_it(tmp_path: Path) -> None:
    _tree(
        tmp_path,
        {
            "pyproject.toml": "[tool.pinlint]\n",
            "pkg/__init__.py": "from . import helpers\n",
            "pkg/helpers.py": _MAKE,
            "main.py": "from pkg import helpers\n\n\ndef run(dev):\n    helpers.make().to(dev, non_blocking=True)\n",
        },
    )
    assert _where(_check(tmp_path, "."), tmp_path) == [("pkg/helpers.py", 5)]
