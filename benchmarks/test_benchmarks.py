"""Tests of the benchmark tooling (not collected by the project's default ``pytest`` run, whose
testpaths is ``tests/``): ``python -m pytest benchmarks/test_benchmarks.py``.

The semgrep/ruff tests need ``benchmarks/.tools`` (see benchmarks/README.md) and skip without it.
"""

from __future__ import annotations

import importlib
import io
import json
import os
import stat
import sys
import tarfile
import textwrap
import zipfile
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

bench = importlib.import_module("bench")
corpus = importlib.import_module("corpus")

SEMGREP = HERE / ".tools" / "bin" / "semgrep"
RUFF = HERE / ".tools" / "bin" / "ruff"


# ---- corpus.py


def _wheel(path: Path, members: dict[str, str]) -> Path:
    with zipfile.ZipFile(path, "w") as zf:
        for name, text in members.items():
            zf.writestr(name, text)
    return path


def _sdist(path: Path, members: dict[str, str]) -> Path:
    with tarfile.open(path, "w:gz") as tf:
        for name, text in members.items():
            data = text.encode()
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tf.addfile(info, io.BytesIO(data))
    return path


def test_extract_wheel_keeps_only_py_files(tmp_path):
    whl = _wheel(
        tmp_path / "demo-1.0-py3-none-any.whl",
        {
            "demo/__init__.py": "x = 1\n",
            "demo/sub/mod.py": "import torch\n",
            "demo/data.json": "{}",
            "demo-1.0.dist-info/METADATA": "Name: demo",
            "../evil.py": "boom",
            "/abs.py": "boom",
        },
    )
    dest = corpus.extract(whl, tmp_path / "demo-1.0")
    got = sorted(p.relative_to(dest).as_posix() for p in dest.rglob("*") if p.is_file())
    assert got == ["demo/__init__.py", "demo/sub/mod.py"]
    assert not (tmp_path / "evil.py").exists()
    assert stat.S_IMODE(dest.stat().st_mode) == 0o755
    assert not list(tmp_path.glob("*.tmp"))


def test_extract_sdist_strips_the_top_level_directory(tmp_path):
    sd = _sdist(
        tmp_path / "demo-2.0.tar.gz",
        {
            "demo-2.0/setup.py": "setup()\n",
            "demo-2.0/demo/a.py": "a = 1\n",
            "demo-2.0/README.md": "hi",
        },
    )
    dest = corpus.extract(sd, tmp_path / "demo-2.0")
    assert sorted(p.relative_to(dest).as_posix() for p in dest.rglob("*.py")) == ["demo/a.py", "setup.py"]


def test_find_archive_matches_name_version_and_kind(tmp_path):
    dl = tmp_path / "dl"
    dl.mkdir()
    (dl / "vllm-0.33.0-cp38-abi3-manylinux_2_28_x86_64.whl").touch()
    (dl / "vllm-0.32.0-cp38-abi3-manylinux_2_28_x86_64.whl").touch()
    (dl / "deepspeed-0.19.8.tar.gz").touch()
    (dl / "torch_pinlint-0.1.0-py3-none-any.whl").touch()
    assert corpus._find_archive(dl, corpus.Package("vllm", "0.33.0")).name.startswith("vllm-0.33.0-")
    assert corpus._find_archive(dl, corpus.Package("deepspeed", "0.19.8", "sdist")).name == "deepspeed-0.19.8.tar.gz"
    assert corpus._find_archive(dl, corpus.Package("deepspeed", "0.19.8")) is None  # wants a wheel
    assert corpus._find_archive(dl, corpus.Package("torch-pinlint", "0.1.0")) is not None
    assert corpus._find_archive(dl, corpus.Package("vllm", "0.31.0")) is None


def test_fetch_one_is_cached_and_writes_root_files(tmp_path, monkeypatch):
    pkg = corpus.Package("demo", "1.0")
    dl = tmp_path / "dl"
    dl.mkdir()
    _wheel(dl / "demo-1.0-py3-none-any.whl", {"demo/x.py": "x = 1\n"})

    def no_pip(*a, **k):  # the archive is there: pip must not run
        raise AssertionError("pip called")

    monkeypatch.setattr(corpus.subprocess, "run", no_pip)
    d = corpus.fetch_one(pkg, tmp_path)
    assert d == tmp_path / "demo-1.0" and (d / "demo" / "x.py").exists()
    assert corpus.fetch_one(pkg, tmp_path) == d
    assert "[tool.pinlint]" in (tmp_path / "pyproject.toml").read_text()
    assert "[tool.ruff]" in (tmp_path / "pyproject.toml").read_text()
    assert (tmp_path / ".semgrepignore").exists()


def test_project_holds_only_the_sets_sources(tmp_path):
    a, b, other = tmp_path / "a-1.0", tmp_path / "b-2.0", tmp_path / "other-3.0"
    for d in (a, b, other):
        (d / "pkg").mkdir(parents=True)
        (d / "pkg" / "m.py").write_text(f"name = {d.name!r}\n")
    (a / "pkg" / "notes.txt").write_text("not python\n")
    root = corpus.project("demo", [a, b], tmp_path)
    assert root == tmp_path / ".projects" / "demo"
    assert sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file()) == [
        ".complete",
        ".semgrepignore",
        "a-1.0/pkg/m.py",
        "b-2.0/pkg/m.py",
        "pyproject.toml",
    ]
    assert (root / "b-2.0" / "pkg" / "m.py").read_text() == "name = 'b-2.0'\n"
    assert "[tool.pinlint]" in (root / "pyproject.toml").read_text()
    # Reused while no corpus changed; rebuilt when one did.
    (root / "a-1.0" / "pkg" / "m.py").unlink()
    assert corpus.project("demo", [a, b], tmp_path) == root and not (root / "a-1.0" / "pkg" / "m.py").exists()
    (a / "pkg" / "new.py").write_text("x = 1\n")
    os.utime(a, ns=(a.stat().st_atime_ns, (root / ".complete").stat().st_mtime_ns + 1))
    corpus.project("demo", [a, b], tmp_path)
    assert (root / "a-1.0" / "pkg" / "m.py").exists() and (root / "a-1.0" / "pkg" / "new.py").exists()


def test_stats_counts_files_lines_bytes(tmp_path):
    (tmp_path / "a.py").write_text("a\nb\n")
    (tmp_path / "b.py").write_text("c")  # no trailing newline: still a line
    (tmp_path / "c.txt").write_text("ignored\n")
    assert corpus.stats([tmp_path]) == {"files": 2, "lines": 3, "bytes": 5}


def test_sets_are_pinned():
    for pkgs in corpus.SETS.values():
        for p in pkgs:
            assert p.version[0].isdigit() and p.kind in ("wheel", "sdist")
    assert {p.name for p in corpus.SETS["bench"]} == {"sglang", "vllm"}


# ---- bench.py helpers


def test_sample_markers():
    bad, ok = bench.sample_markers()
    assert len(bad) == 10 and len(ok) == 10 and not bad & ok
    text = bench.SMALL_FILE.read_text().splitlines()
    assert all("BAD" in text[n - 1] for n in bad)


def test_copy_line_reads_the_copy_from_pinlint_messages():
    f = {"location": {"row": 21}, "message": "`torch.empty(...)` ... reaches `.to(...)` on line 22: ..."}
    assert bench.copy_line(f) == 22
    assert bench.copy_line({"location": {"row": 9}, "message": "... on the same line: ..."}) == 9


def test_normalized_findings_ignores_order():
    a = [{"code": "PIN001", "location": {"row": 2}}, {"code": "PIN002", "location": {"row": 1}}]
    assert bench.normalized_findings(json.dumps(a).encode()) == bench.normalized_findings(json.dumps(a[::-1]).encode())
    assert bench.normalized_findings(b"") == []


def test_resolve_pinlint_explicit_command():
    assert bench.resolve_pinlint("python -m pinlint") == ["python", "-m", "pinlint"]
    assert bench._pinlint_python(["env", "PYTHONPATH=x", "/py", "-m", "pinlint"]) == "/py"


# ---- the semgrep rule


@pytest.mark.skipif(not SEMGREP.exists(), reason="benchmarks/.tools has no semgrep (see benchmarks/README.md)")
def test_semgrep_rule_finds_every_bad_case_and_no_ok_case(tmp_path):
    target = tmp_path / "one_file.py"
    target.write_text(bench.SMALL_FILE.read_text())
    score = bench.score_sample(bench.semgrep_lines(str(SEMGREP), target))
    assert score["missed_lines"] == [] and score["false_positive_lines"] == [], score
    assert score["found"] == 10


# ---- end to end, with a stand-in for pinlint


FAKE_PINLINT = textwrap.dedent("""\
    import json, os, pathlib, sys
    a = sys.argv[1:]
    if a == ["--version"]:
        print("pinlint 0.0.0 (stand-in)"); sys.exit(0)
    paths, cache, i = [], None, 1
    while i < len(a):
        if a[i] in ("--cache-dir", "--output-format", "--jobs"):
            cache = a[i + 1] if a[i] == "--cache-dir" else cache
            i += 2
        elif a[i].startswith("-"):
            i += 1
        else:
            paths.append(a[i]); i += 1
    out = []
    for p in map(pathlib.Path, paths):
        for f in [p] if p.is_file() else sorted(p.rglob("*.py")):
            for n, line in enumerate(f.read_text().splitlines(), 1):
                if "non_blocking=True" in line and "torch.zeros(" in line:
                    out.append({"code": "PIN001", "filename": str(f.resolve()), "message": "m",
                                "location": {"row": n, "column": 1}})
    if cache:
        os.makedirs(cache, exist_ok=True); pathlib.Path(cache, "c").write_text("x")
    print(json.dumps(out[::-1] if "--jobs" in a else out))
""")


@pytest.mark.skipif(not RUFF.exists(), reason="benchmarks/.tools has no ruff (see benchmarks/README.md)")
def test_bench_end_to_end_with_a_stand_in_pinlint(tmp_path):
    src = tmp_path / "corp" / "proj-1.0"
    src.mkdir(parents=True)
    (src / "m.py").write_text("import torch\n\nx = torch.zeros(3).to('cuda', non_blocking=True)\n")
    fake = tmp_path / "fake_pinlint.py"
    fake.write_text(FAKE_PINLINT)
    out_json, out_md = tmp_path / "r.json", tmp_path / "perf.md"
    rc = bench.main(
        [
            "--corpus",
            str(src),
            "--pinlint",
            f"{sys.executable} {fake}",
            "--rounds",
            "2",
            "--semgrep-rounds",
            "0",
            "--startup-runs",
            "1",
            "--json",
            str(out_json),
            "--output",
            str(out_md),
        ]
    )
    assert rc == 0
    r = json.loads(out_json.read_text())
    assert r["correctness"]["warm == cold"] and r["correctness"]["--jobs 1 == default"]
    assert r["correctness"]["findings"] == 1
    assert len(r["times"]["pinlint_cold"]) == 2 and len(r["times"]["ruff"]) == 2
    assert r["ratios"]["cold"] > 0 and r["verdicts"]["semgrep"] == "n/a"
    md = out_md.read_text()
    assert "## Targets" in md and "proj-1.0" in md and f"{bench._nproc()} cores" in md


# ---- report_sections.py (bench.py and shapes.py share docs/performance.md)


def test_a_section_is_replaced_or_added_before_reproduce_and_the_rest_kept() -> None:
    sections = importlib.import_module("report_sections")
    doc = "# Performance\n\n## Targets\n\nt\n\n## Reproduce\n\nr\n"
    added = sections.with_section(doc, "## Shapes", "## Shapes\n\nold table\n")
    assert added == "# Performance\n\n## Targets\n\nt\n\n## Shapes\n\nold table\n\n## Reproduce\n\nr\n"
    replaced = sections.with_section(added, "## Shapes", "## Shapes\n\nnew table")
    assert replaced == added.replace("old table", "new table")
    assert sections.section(replaced, "## Shapes") == "## Shapes\n\nnew table\n\n"
    assert sections.section(doc, "## Shapes") is None
