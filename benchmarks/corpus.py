"""Real-code corpora for pinlint's benchmark and precision review.

Downloads pinned releases of large PyTorch projects from PyPI (``pip download --no-deps``),
keeps the archives in ``benchmarks/.corpus/dl/`` and extracts only their ``*.py`` files to
``benchmarks/.corpus/<name>-<version>/``. Both steps are cached: a corpus directory that exists
is complete (extraction goes to a temporary directory that is renamed into place at the end).

    python benchmarks/corpus.py fetch [--set bench|review|all] [--root DIR]   # prints the dirs
    python benchmarks/corpus.py stats [--set ...]                             # files/lines/bytes

From Python (tests, other scripts)::

    sys.path.insert(0, "benchmarks"); import corpus
    dirs = corpus.fetch("bench")          # -> [Path, ...], downloads only what is missing
    corpus.stats(dirs)                    # -> {"files": ..., "lines": ..., "bytes": ...}

The corpus root also gets a ``pyproject.toml`` with empty ``[tool.ruff]`` and ``[tool.pinlint]``
tables so that config discovery of ruff/pinlint stops there and the repository's own settings
(e.g. ``extend-exclude = ["tests"]``) never apply to third-party code, and an empty
``.semgrepignore`` so that semgrep does not silently skip ``tests/`` directories.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import zipfile
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
DEFAULT_ROOT = HERE / ".corpus"


@dataclass(frozen=True)
class Package:
    name: str
    version: str
    # "wheel" (any binary wheel pip picks for this machine; we only keep its .py files) or "sdist".
    kind: str = "wheel"

    @property
    def dirname(self) -> str:
        return f"{self.name}-{self.version}"


# Pinned. Bump deliberately (and re-run the benchmark) -- results in docs/performance.md name these.
SETS: dict[str, list[Package]] = {
    # The speed-benchmark corpus: ~7,950 files, ~3.1M lines.
    # vllm: the sdist needs a full build environment (torch) just for `pip download`'s metadata
    # step, so we take the wheel (336 MB download, cached) and keep only its .py sources.
    "bench": [
        Package("sglang", "0.5.23"),
        Package("vllm", "0.33.0"),
    ],
    # The release before the SGLang change pinlint is named after: its 11 pageable copies and 3
    # blocking device constructions, as they were (tests/robustness/test_seed_release.py).
    "seed": [
        Package("sglang", "0.5.18"),
    ],
    # "Real code" the team reviews pinlint's precision on.
    "review": [
        Package("transformers", "5.24.0"),
        Package("accelerate", "1.15.0"),
        Package("deepspeed", "0.19.8", "sdist"),  # no wheel on PyPI
        Package("lightning", "2.6.6"),
        Package("torchtune", "0.6.1"),
    ],
}

ROOT_PYPROJECT = """\
# Written by benchmarks/corpus.py. Stops ruff's and pinlint's config discovery here, so the
# repository's own [tool.ruff] / [tool.pinlint] settings never apply to these third-party sources.
[tool.ruff]

[tool.pinlint]
"""

ROOT_SEMGREPIGNORE = """\
# Written by benchmarks/corpus.py. Present (and empty) so that semgrep does not fall back to its
# default ignore list, which skips tests/ directories; the other tools scan them.
"""


def packages(set_name: str) -> list[Package]:
    if set_name == "all":
        return [p for s in SETS.values() for p in s]
    try:
        return list(SETS[set_name])
    except KeyError:
        raise SystemExit(f"unknown corpus set {set_name!r}; choose from {', '.join([*SETS, 'all'])}") from None


def _norm(name: str) -> str:
    return re.sub(r"[-_.]+", "_", name).lower()


def _find_archive(dl: Path, pkg: Package) -> Path | None:
    want = f"{_norm(pkg.name)}-{pkg.version}"
    for p in sorted(dl.iterdir()) if dl.is_dir() else []:
        stem = p.name
        if pkg.kind == "sdist" and not stem.endswith((".tar.gz", ".zip")):
            continue
        if pkg.kind == "wheel" and not stem.endswith(".whl"):
            continue
        base = _norm(stem.split("-", 1)[0]) + "-" + stem.split("-", 2)[1].removesuffix(".tar.gz").removesuffix(".zip")
        if base == want:
            return p
    return None


def download(pkg: Package, root: Path = DEFAULT_ROOT, quiet: bool = True) -> Path:
    """The archive of ``pkg`` in ``root/dl``, downloaded with pip if not there yet."""
    dl = root / "dl"
    dl.mkdir(parents=True, exist_ok=True)
    found = _find_archive(dl, pkg)
    if found:
        return found
    binary = ["--only-binary", ":all:"] if pkg.kind == "wheel" else ["--no-binary", ":all:"]
    cmd = [
        sys.executable,
        "-m",
        "pip",
        "download",
        "--no-deps",
        *binary,
        "--disable-pip-version-check",
        "-d",
        str(dl),
        f"{pkg.name}=={pkg.version}",
    ]
    if quiet:
        cmd.insert(4, "-q")
    print(f"corpus: downloading {pkg.name}=={pkg.version} ({pkg.kind})", file=sys.stderr)
    subprocess.run(cmd, check=True, stdout=sys.stderr if not quiet else subprocess.DEVNULL)
    found = _find_archive(dl, pkg)
    if not found:
        raise RuntimeError(f"pip download of {pkg.name}=={pkg.version} left no matching archive in {dl}")
    return found


def _safe_rel(name: str, strip_top: bool) -> str | None:
    parts = [p for p in name.replace("\\", "/").split("/") if p not in ("", ".")]
    if strip_top:
        parts = parts[1:]
    if not parts or ".." in parts or name.startswith("/"):
        return None
    return "/".join(parts)


def extract(archive: Path, dest: Path) -> Path:
    """Extract only the ``*.py`` members of ``archive`` to ``dest`` (atomically; no-op if present)."""
    if dest.is_dir():
        return dest
    tmp = Path(tempfile.mkdtemp(prefix=dest.name + ".", suffix=".tmp", dir=dest.parent))
    try:
        if archive.name.endswith((".whl", ".zip")):
            strip = archive.name.endswith(".zip")  # sdist zips have a top-level dir; wheels don't
            with zipfile.ZipFile(archive) as zf:
                for info in zf.infolist():
                    rel = _safe_rel(info.filename, strip)
                    if info.is_dir() or not rel or not rel.endswith(".py"):
                        continue
                    out = tmp / rel
                    out.parent.mkdir(parents=True, exist_ok=True)
                    with zf.open(info) as src, open(out, "wb") as dst:
                        shutil.copyfileobj(src, dst)
        else:
            with tarfile.open(archive) as tf:
                for m in tf:
                    rel = _safe_rel(m.name, True)
                    if not m.isfile() or not rel or not rel.endswith(".py"):
                        continue
                    out = tmp / rel
                    out.parent.mkdir(parents=True, exist_ok=True)
                    src = tf.extractfile(m)
                    assert src is not None
                    with src, open(out, "wb") as dst:
                        shutil.copyfileobj(src, dst)
        os.chmod(tmp, 0o755)  # mkdtemp makes it 0700
        os.rename(tmp, dest)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return dest


def _write_root_files(root: Path) -> None:
    for name, text in (("pyproject.toml", ROOT_PYPROJECT), (".semgrepignore", ROOT_SEMGREPIGNORE)):
        p = root / name
        if not p.exists() or p.read_text() != text:
            p.write_text(text)


def fetch_one(pkg: Package, root: Path = DEFAULT_ROOT, quiet: bool = True) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    _write_root_files(root)
    dest = root / pkg.dirname
    if dest.is_dir():
        return dest
    return extract(download(pkg, root, quiet), dest)


def fetch(set_name: str = "bench", root: Path = DEFAULT_ROOT, quiet: bool = True) -> list[Path]:
    """Download (if needed) and extract every package of ``set_name``; return their directories."""
    return [fetch_one(p, root, quiet) for p in packages(set_name)]


def project(set_name: str, dirs: list[Path], root: Path = DEFAULT_ROOT) -> Path:
    """A project root holding just ``dirs`` (hard links, else copies), as a repository of that
    set's code would: pinlint learns its project (helpers, importers) from everything under the
    root, so the corpora of other sets beside them must not be part of the benchmark's project.
    Built once; rebuilt when a corpus directory is newer than it."""
    dest = root / ".projects" / set_name  # a dot folder: runs over the corpus root skip it
    stamp = dest / ".complete"
    if stamp.exists() and all(stamp.stat().st_mtime_ns >= d.stat().st_mtime_ns for d in dirs):
        return dest
    shutil.rmtree(dest, ignore_errors=True)
    dest.mkdir(parents=True)
    _write_root_files(dest)
    for d in dirs:
        for source in py_files([d]):
            target = dest / d.name / source.relative_to(d)
            target.parent.mkdir(parents=True, exist_ok=True)
            try:
                os.link(source, target)  # shares the page cache with the originals
            except OSError:
                shutil.copy2(source, target)
    stamp.touch()
    return dest


def py_files(dirs: list[Path]) -> list[Path]:
    out: list[Path] = []
    for d in dirs:
        out.extend(sorted(Path(d).rglob("*.py")))
    return out


def stats(dirs: list[Path]) -> dict[str, int]:
    """File, line and byte counts of the ``*.py`` files under ``dirs``."""
    files = lines = size = 0
    for f in py_files(dirs):
        data = f.read_bytes()
        files += 1
        size += len(data)
        lines += data.count(b"\n") + (1 if data and not data.endswith(b"\n") else 0)
    return {"files": files, "lines": lines, "bytes": size}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="corpus.py", description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    for name, help_ in (
        ("fetch", "download + extract; print the corpus directories"),
        ("stats", "download + extract; print per-package file/line/byte counts as JSON"),
    ):
        p = sub.add_parser(name, help=help_)
        p.add_argument("--set", default="bench", choices=[*SETS, "all"])
        p.add_argument("--root", type=Path, default=DEFAULT_ROOT, help=f"default: {DEFAULT_ROOT}")
        p.add_argument("-v", "--verbose", action="store_true", help="show pip's output")
    args = ap.parse_args(argv)
    dirs = fetch(args.set, args.root.resolve(), quiet=not args.verbose)
    if args.cmd == "fetch":
        for d in dirs:
            print(d)
    else:
        per = {d.name: stats([d]) for d in dirs}
        total = stats(dirs)
        print(json.dumps({"packages": per, "total": total}, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
