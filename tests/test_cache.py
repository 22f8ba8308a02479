"""The result cache: hits are exact, stale or corrupt entries are never trusted."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from pinlint.cli import main

HOT = "import torch\n\n\ndef f(d):\n    return torch.zeros(4).to(d, non_blocking=True)\n"
DEV = "import torch\n\n\ndef g(d):\n    return torch.tensor([1, 2], device=d)\n"


def run(*args: str) -> list[dict[str, object]]:
    result = CliRunner().invoke(main, ["check", ".", "--output-format", "json", *args], catch_exceptions=False)
    return json.loads(result.stdout)


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "pyproject.toml").write_text("[tool.pinlint]\n")
    (tmp_path / "hot.py").write_text(HOT)
    (tmp_path / "dev.py").write_text(DEV)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _cache_files(project: Path) -> list[Path]:
    """The result caches (one per analysis settings), not the kept diagnostics."""
    return sorted(p for p in (project / ".pinlint_cache").rglob("*.cache") if p.name != "diagnostics.cache")


def _fix_texts(diagnostics: list[dict[str, object]]) -> list[str]:
    return [e["content"] for d in diagnostics if d["fix"] for e in d["fix"]["edits"]]  # type: ignore[index, union-attr]


def test_kept_diagnostics_follow_everything_they_are_made_from(project: Path) -> None:
    # First run: nothing kept yet. Second: the kept diagnostics, the same as a fresh build.
    assert run() == run("--no-cache")
    assert list((project / ".pinlint_cache").rglob("diagnostics.cache"))
    assert run() == run("--no-cache")
    # The project's idiom changes in another file: the fix must change with it, kept or not.
    (project / "platform_utils.py").write_text("def is_pin_memory_available(device):\n    return True\n")
    fresh = run("--no-cache")
    assert any("platform_utils" in t for t in _fix_texts(fresh))
    assert run() == fresh
    # The configuration changes (a configured helper): a new fingerprint, nothing reused.
    (project / "pyproject.toml").write_text('[tool.pinlint]\npin-memory-helper = "mypkg.mem:pin_ok(device)"\n')
    (project / "platform_utils.py").unlink()
    fresh = run("--no-cache")
    assert any("pin_ok" in t for t in _fix_texts(fresh))
    assert run() == fresh


def test_forged_kept_diagnostics_are_not_trusted(project: Path) -> None:
    expected = run("--no-cache")
    run()
    (kept,) = (project / ".pinlint_cache").rglob("diagnostics.cache")
    payload = {"fingerprint": "x", "entries": {"hot.py": ["d", []]}}
    kept.write_bytes(b"PINLINT-DIAGNOSTICS-1\n" + b"0" * 64 + b"\n" + json.dumps(payload).encode())
    assert run() == expected  # unsigned: ignored, and rebuilt


def test_corrupt_cache_is_ignored(project: Path) -> None:
    expected = run("--no-cache")
    assert run() == expected
    (cache,) = _cache_files(project)
    data = cache.read_bytes()
    cache.write_bytes(data[: len(data) // 2])  # truncated, as by a crash mid-write
    assert run() == expected
    cache.write_bytes(b"PINLINT-CACHE-1\n" + b"0" * 32 + b"garbage")  # wrong checksum
    assert run() == expected
    cache.write_bytes(b"not a cache at all")
    assert run() == expected


def test_settings_that_change_results_change_the_key(project: Path) -> None:
    assert [d["code"] for d in run()] == ["PIN001"]
    assert sorted(d["code"] for d in run("--extend-select", "PIN003")) == ["PIN001", "PIN003"]
    assert len(_cache_files(project)) == 2
    assert [d["code"] for d in run()] == ["PIN001"]


def test_an_edit_that_keeps_the_size_is_rechecked(project: Path) -> None:
    import os

    assert len(run()) == 1
    info = (project / "hot.py").stat()
    # Same length, new content that no longer has a finding: the size matches the cached entry,
    # so the bytes are hashed and compared, and the stale result is not served.
    (project / "hot.py").write_text(HOT.replace("torch.zeros(4)", "somefunc_(4)  "))
    assert (project / "hot.py").stat().st_size == info.st_size
    os.utime(project / "hot.py", ns=(info.st_atime_ns, info.st_mtime_ns + 1_000))
    assert run() == []


def test_a_warm_run_starts_no_workers(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """With this run's cache on disk the files will be hits: starting workers (each importing
    libcst) would only take CPU from the run."""
    from pinlint import runner

    started: list[int] = []
    real = runner.WorkerPool

    def counting(jobs: int) -> runner.WorkerPool:
        started.append(jobs)
        return real(jobs)

    monkeypatch.setattr(runner, "WorkerPool", counting)
    cold = run("-j", "2")
    assert started == [2]  # no cache yet: the workers start while files are discovered
    assert run("-j", "2") == cold
    assert started == [2]  # warm: none started


def test_analyses_are_decoded_only_when_asked_for(tmp_path: Path) -> None:
    """A one-file run asks every project file whether it reports elsewhere: that is answered
    from the stored data, without decoding it; a changed file has no answer; an analysis of a
    shape this version does not write is dropped when it is looked up, the others kept."""
    from pinlint.cache import Cache
    from pinlint.core.results import AnalysisSettings, FileAnalysis, FileResult, ForeignFinding

    settings = AnalysisSettings(rules=("PIN001",))
    files = {name: tmp_path / f"{name}.py" for name in ("plain", "reporting", "broken")}
    for path in files.values():
        path.write_text("x = 1\n")
    finding = _a_finding()
    cache = Cache(tmp_path / "cache", settings)
    for name, path in files.items():
        info = path.stat()
        foreign = [ForeignFinding(str(tmp_path / "other.py"), "d", finding)] if name == "reporting" else []
        cache.store(
            FileResult(
                path=str(path),
                analysis=FileAnalysis(foreign=foreign),
                size=info.st_size,
                mtime_ns=info.st_mtime_ns,
                digest="",
                triaged_in=True,
            )
        )
    cache.save()

    cache = Cache(tmp_path / "cache", settings)
    cache._raw[str(files["broken"])] = {"not": "an analysis"}  # (as another version would write)
    assert cache.reports_elsewhere(files["plain"]) is False
    assert cache.reports_elsewhere(files["reporting"]) is True
    assert set(cache._raw) == {str(p) for p in files.values()}  # nothing decoded to answer
    hit = cache.lookup(files["reporting"])
    assert hit is not None and hit.analysis is not None and len(hit.analysis.foreign) == 1
    assert cache.lookup(files["broken"]) is None and str(files["broken"]) not in cache.entries
    files["plain"].write_text("x = 22\n")  # another size: changed
    assert cache.reports_elsewhere(files["plain"]) is None


def test_a_module_created_below_a_missing_directory_invalidates_the_entry(tmp_path: Path) -> None:
    """Most places an analysis records as absent lie below directories that do not exist (a
    ``src/`` of a flat layout): the cache asks the directory once, and sees the module once
    it is created there, and a file that a directory stands where it was."""
    from pinlint.cache import Cache
    from pinlint.core.results import AnalysisSettings, FileAnalysis, FileResult

    settings = AnalysisSettings(rules=("PIN001",))
    main = tmp_path / "main.py"
    main.write_text("x = 1\n")
    places = [tmp_path / "src" / "lib" / "helpers.py", tmp_path / "lib" / "helpers.py", tmp_path / "other.py"]
    cache = Cache(tmp_path / "cache", settings)
    info = main.stat()
    depends_on = [(str(p), "") for p in places]
    analysis = FileAnalysis(depends_on=depends_on)
    cache.store(FileResult(str(main), analysis, size=info.st_size, mtime_ns=info.st_mtime_ns, digest="d"))
    cache.save()
    assert Cache(tmp_path / "cache", settings).lookup(main) is not None  # all still absent
    (tmp_path / "other.py").mkdir()  # a directory where the module was looked for: not a module
    assert Cache(tmp_path / "cache", settings).lookup(main) is not None
    (tmp_path / "src" / "lib").mkdir(parents=True)  # the directories alone change nothing
    assert Cache(tmp_path / "cache", settings).lookup(main) is not None
    (tmp_path / "src" / "lib" / "helpers.py").write_text("def make():\n    pass\n")
    assert Cache(tmp_path / "cache", settings).lookup(main) is None
    (tmp_path / "src" / "lib" / "helpers.py").unlink()
    (tmp_path / "lib").write_text("")  # a file where a directory would be: still absent below it
    assert Cache(tmp_path / "cache", settings).lookup(main) is not None


def _a_finding():  # type: ignore[no-untyped-def]
    """A real finding (of `HOT`), to store as another file's."""
    from pinlint.core.results import AnalysisSettings
    from pinlint.lint import analyze_text

    [finding] = analyze_text(HOT, AnalysisSettings(rules=("PIN001",))).findings
    return finding


def test_results_of_other_code_of_the_same_version_are_not_read(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from pinlint import cache

    assert [d["code"] for d in run()] == ["PIN001"]
    # The same version, other code (an edited editable install): the cached result says there
    # is nothing in hot.py; the run must analyse it again rather than trust that.
    (entry,) = _cache_files(project)
    monkeypatch.setattr(cache, "_IDENTITY", [cache.code_identity() + "-edited"])
    assert _cache_files(project) == [entry]
    assert [d["code"] for d in run()] == ["PIN001"]
    assert len(_cache_files(project)) == 2  # its own cache file, beside the other code's


def test_the_code_identity_follows_the_package_files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import os

    from pinlint import cache

    first = cache.code_identity()
    monkeypatch.setattr(cache, "_IDENTITY", [])
    assert cache.code_identity() == first  # the same files: the same identity
    rule = Path(cache.__file__).parent / "rules" / "PIN001.toml"
    info = rule.stat()
    monkeypatch.setattr(cache, "_IDENTITY", [])
    try:
        os.utime(rule, ns=(info.st_atime_ns, info.st_mtime_ns + 1_000_000))
        assert cache.code_identity() != first
    finally:
        os.utime(rule, ns=(info.st_atime_ns, info.st_mtime_ns))


def test_a_package_file_that_cannot_be_read_does_not_stop_the_run(monkeypatch: pytest.MonkeyPatch) -> None:
    from pinlint import cache

    real_stat = Path.stat

    def stat(self: Path, *args: object, **kwargs: object) -> object:
        if self.name == "PIN001.toml":
            raise PermissionError(13, "Permission denied", str(self))
        return real_stat(self, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(cache, "_IDENTITY", [])
    monkeypatch.setattr(Path, "stat", stat)
    assert cache.code_identity().startswith(cache.__version__ + "+")


def test_reads_of_an_analysis_kept_raw_survive_a_save(project: Path) -> None:
    """An analysis's reads of other files are indexes into the cache file's shared table: one
    never decoded in a run that saves (a run on another file) is written back against the new
    table, and still invalidates its file when what it read changes."""
    (project / "helpers.py").write_text("import torch\n\n\ndef make(n):\n    return torch.arange(n)\n")
    (project / "loop.py").write_text(
        "from helpers import make\n\n\ndef step(d):\n    return make(4).to(d, non_blocking=True)\n"
    )
    assert run() == run("--no-cache")
    (project / "hot.py").write_text(HOT + "\n\ndef h(d):\n    return torch.ones(2).to(d, non_blocking=True)\n")
    # A run on hot.py alone analyses it and saves: loop.py's analysis is never decoded.
    CliRunner().invoke(main, ["check", "hot.py", "--output-format", "json"], catch_exceptions=False)
    (project / "helpers.py").write_text("import torch\n\n\ndef make(n):\n    return torch.arange(n, pin_memory=True)\n")
    fresh = run("--no-cache")
    assert not any(d["filename"].endswith("helpers.py") for d in fresh)  # type: ignore[union-attr]
    assert run() == fresh


def test_a_raw_analysis_is_reindexed_in_the_new_table(tmp_path: Path) -> None:
    from pinlint.cache import _decode_entries, _encode_entries
    from pinlint.core.results import FileAnalysis, FileResult

    other = str(tmp_path / "other.py")
    fresh = FileResult(path="a.py", analysis=FileAnalysis(depends_on=[(other, "d1")]), size=1, mtime_ns=1, digest="x")
    kept = FileResult(path="b.py", analysis=None, size=1, mtime_ns=1, digest="y")
    old_table = [("/elsewhere.py", ""), (other, "d2")]
    raw = {"b.py": {"depends_on": [1]}}
    data = _encode_entries({"a.py": fresh, "b.py": kept}, "k", raw, old_table)
    assert data["reads"] == [[other, "d1"], [other, "d2"]]
    assert data["entries"]["b.py"][4] == {"depends_on": [1]}  # (other, "d2"), now at index 1
    assert data["entries"]["a.py"][4]["depends_on"] == [0]
    reads: list[tuple[str, str]] = []
    raw_back: dict[str, object] = {}
    _decode_entries(json.loads(json.dumps(data)), "k", raw_back, reads)
    assert [reads[i] for i in raw_back["b.py"]["depends_on"]] == [(other, "d2")]  # type: ignore[index]
