"""Run pinlint over the review corpus (real PyTorch projects from PyPI) and record the results.

    python tests/robustness/corpus_report.py            # writes docs/corpus-results.md
    python tests/robustness/corpus_report.py --print    # only prints the JSON summary

The corpus is fetched (and cached) by ``benchmarks/corpus.py fetch --set review``. For each
project: ``pinlint check --output-format json --no-cache --extend-select PIN003 --exit-zero``
(no traceback, exit 0), then a copy of the tree gets ``--fix --unsafe-fixes`` with a configured
pin-memory helper: every rewritten file must parse, and a second run must find nothing fixable.
``tests/robustness/test_corpus.py`` asserts the same through ``run_corpus``.
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import warnings
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
CORPUS_SCRIPT = REPO / "benchmarks" / "corpus.py"
CORPUS_SET = "review"
HELPER_PYPROJECT = '[tool.pinlint]\npin-memory-helper = "myproj.utils:is_pin_memory_available(device)"\n'
CHECK_ARGS = ["--output-format", "json", "--no-cache", "--extend-select", "PIN003", "--exit-zero"]
CRASH_MARKERS = ("Traceback (most recent call last)", "internal error")


class FetchError(Exception):
    """The corpus could not be downloaded."""


def fetch(set_name: str = CORPUS_SET, root: Path | None = None) -> list[Path]:
    """The set's corpus directories (downloaded once); ``root``: where, if not the default."""
    where = ["--root", str(root)] if root is not None else []
    proc = subprocess.run(
        [sys.executable, str(CORPUS_SCRIPT), "fetch", "--set", set_name, *where],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=1800,
    )
    if proc.returncode != 0:
        raise FetchError(proc.stderr[-3000:])
    return [Path(line) for line in proc.stdout.splitlines() if line.strip()]


def pypi_reachable(timeout: float = 5.0) -> bool:
    import socket

    try:
        with socket.create_connection(("pypi.org", 443), timeout=timeout):
            return True
    except OSError:
        return False


def _pinlint(args: list[str], cwd: Path, timeout: float = 900) -> subprocess.CompletedProcess:
    env = {**os.environ, "PINLINT_NO_CACHE": "1"}
    env.pop("PINLINT_DEBUG", None)
    env.pop("PINLINT_OUTPUT_FORMAT", None)
    return subprocess.run(
        [sys.executable, "-m", "pinlint", *args], cwd=cwd, capture_output=True, text=True, timeout=timeout, env=env
    )


def _sizes(root: Path) -> tuple[int, int]:
    files = lines = 0
    for path in root.rglob("*.py"):
        data = path.read_bytes()
        files += 1
        lines += data.count(b"\n") + (1 if data and not data.endswith(b"\n") else 0)
    return files, lines


def _snapshot(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in root.rglob("*.py")}


def _lines_changed(old: bytes, new: bytes) -> int:
    """Lines of the new file that are not in the old one (changed or added)."""
    import difflib

    a, b = old.splitlines(), new.splitlines()
    matcher = difflib.SequenceMatcher(a=a, b=b, autojunk=False)
    return sum(j2 - j1 for tag, _i1, _i2, j1, j2 in matcher.get_opcodes() if tag != "equal")


def run_project(tree: Path, work: Path) -> dict:
    """Check, fix a copy, verify: the numbers and the problems of one project."""
    out: dict = {"name": tree.name, "problems": []}
    out["files"], out["lines"] = _sizes(tree)

    started = time.perf_counter()
    check = _pinlint(["check", tree.name, *CHECK_ARGS], cwd=tree.parent)
    out["check_seconds"] = round(time.perf_counter() - started, 1)
    out["check_exit"] = check.returncode
    for marker in CRASH_MARKERS:
        if marker in check.stderr:
            out["problems"].append(f"check: {marker!r} on stderr: {check.stderr[-2000:]}")
    if check.returncode != 0:
        out["problems"].append(f"check: exit {check.returncode}: {check.stderr[-1000:]}")
    findings = json.loads(check.stdout) if check.stdout.strip() else []
    out["findings"] = dict(sorted(Counter(f["code"] for f in findings).items()))
    out["files_with_findings"] = len({f["filename"] for f in findings})
    out["check_errors"] = [line for line in check.stderr.splitlines() if line.startswith("error:")]

    # Fix a copy, with a configured helper.
    project = work / tree.name
    shutil.copytree(tree, project / "src")
    (project / "pyproject.toml").write_text(HELPER_PYPROJECT)
    before = _snapshot(project / "src")
    started = time.perf_counter()
    fix = _pinlint(["check", "src", "--fix", "--unsafe-fixes", *CHECK_ARGS], cwd=project)
    out["fix_seconds"] = round(time.perf_counter() - started, 1)
    for marker in CRASH_MARKERS:
        if marker in fix.stderr:
            out["problems"].append(f"fix: {marker!r} on stderr: {fix.stderr[-2000:]}")
    if fix.returncode != 0:
        out["problems"].append(f"fix: exit {fix.returncode}: {fix.stderr[-1000:]}")
    after = _snapshot(project / "src")
    if set(after) != set(before):
        out["problems"].append(f"fix: files appeared or vanished: {sorted(set(after) ^ set(before))[:10]}")
    changed = [name for name in before if after.get(name) != before[name]]
    out["files_fixed"] = len(changed)
    out["fix_dropped"] = sum(1 for line in fix.stderr.splitlines() if "fix dropped" in line)
    unparsable = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for name in changed:
            try:
                ast.parse(after[name], filename=name)
            except SyntaxError as exc:
                unparsable.append(f"{name}:{exc.lineno}: {exc.msg}")
    if unparsable:
        out["problems"].append(f"fixed files that do not parse: {unparsable[:10]}")
    out["lines_changed"] = sum(_lines_changed(before[n], after[n]) for n in changed)

    again = _pinlint(["check", "src", "--unsafe-fixes", *CHECK_ARGS], cwd=project)
    for marker in CRASH_MARKERS:
        if marker in again.stderr:
            out["problems"].append(f"second run: {marker!r} on stderr: {again.stderr[-2000:]}")
    remaining = json.loads(again.stdout) if again.stdout.strip() else []
    out["remaining"] = dict(sorted(Counter(f["code"] for f in remaining).items()))
    fixable_left = [f for f in remaining if f.get("fix") and f["fix"].get("applicability") != "display-only"]
    out["fixable_left"] = len(fixable_left)
    # A fix that pinlint itself dropped (e.g. the result would not parse) stays fixable in name only;
    # anything beyond those is a fixer that did not converge.
    if len(fixable_left) > out["fix_dropped"]:
        where = [
            f"{Path(f['filename']).relative_to(project / 'src')}:{f['location']['row']} {f['code']}"
            for f in fixable_left[:10]
        ]
        out["problems"].append(
            f"second run: {len(fixable_left)} fixable findings left ({out['fix_dropped']} dropped): {where}"
        )
    shutil.rmtree(project, ignore_errors=True)
    return out


def run_corpus(work: Path, trees: list[Path] | None = None) -> dict:
    trees = trees if trees is not None else fetch()
    started = time.perf_counter()
    projects = [run_project(tree, work) for tree in trees]
    total_findings: Counter[str] = Counter()
    for p in projects:
        total_findings.update(p["findings"])
    return {
        "projects": projects,
        "files": sum(p["files"] for p in projects),
        "lines": sum(p["lines"] for p in projects),
        "findings": dict(sorted(total_findings.items())),
        "files_fixed": sum(p["files_fixed"] for p in projects),
        "problems": [f"{p['name']}: {problem}" for p in projects for problem in p["problems"]],
        "seconds": round(time.perf_counter() - started, 1),
    }


def render(summary: dict) -> str:
    from pinlint import __version__

    def codes(counts: dict) -> str:
        return ", ".join(f"{code} {n}" for code, n in counts.items()) or "none"

    lines = [
        "# pinlint on real code: corpus results",
        "",
        f"Generated by `python tests/robustness/corpus_report.py` (pinlint {__version__}, Python "
        f"{sys.version.split()[0]}); the same run is asserted by `pytest -m corpus tests/robustness/test_corpus.py`.",
        "",
        "Corpus: the `review` set of `benchmarks/corpus.py` (the `*.py` files of pinned PyPI releases).",
        "Check: `pinlint check <project> --output-format json --no-cache --extend-select PIN003 --exit-zero`.",
        'Fix: a copy of each tree with `pin-memory-helper = "myproj.utils:is_pin_memory_available(device)"`, '
        "`--fix --unsafe-fixes`; every rewritten file is parsed with `ast.parse`, and a second run must find "
        "nothing fixable.",
        "",
        "| project | files | lines | findings | files with findings | check s | files fixed | lines changed | fixes dropped | left after fix | problems |",
        "|---|---:|---:|---|---:|---:|---:|---:|---:|---|---:|",
    ]
    for p in summary["projects"]:
        lines.append(
            f"| {p['name']} | {p['files']:,} | {p['lines']:,} | {codes(p['findings'])} | {p['files_with_findings']} | "
            f"{p['check_seconds']} | {p['files_fixed']} | {p['lines_changed']} | {p['fix_dropped']} | "
            f"{codes(p['remaining'])} | {len(p['problems'])} |"
        )
    lines += [
        f"| **total** | **{summary['files']:,}** | **{summary['lines']:,}** | {codes(summary['findings'])} | | | "
        f"{summary['files_fixed']} | | | | {len(summary['problems'])} |",
        "",
        f"Whole run (check, fix, re-check of every project): {summary['seconds']} s.",
        "",
    ]
    errors = [(p["name"], e) for p in summary["projects"] for e in p["check_errors"]]
    lines.append(f"Files pinlint reported as not checkable: {len(errors)}.")
    for name, error in errors[:20]:
        lines.append(f"- {name}: `{error}`")
    lines.append("")
    lines.append(
        "Problems (tracebacks, wrong exit codes, unparsable fixes, fixes that did not converge): "
        f"{len(summary['problems'])}."
    )
    for problem in summary["problems"]:
        lines.append(f"- {problem[:500]}")
    lines.append("")
    return "\n".join(lines)


#: Everything from this line on in the page is written by hand (rule-by-rule verdicts) and kept
#: when the page is regenerated.
HAND_WRITTEN = "<!-- Written by hand from here on: kept by tests/robustness/corpus_report.py. -->"


def hand_written(page: Path) -> str:
    """The hand-written tail of an existing page (from ``HAND_WRITTEN`` on), or ""."""
    try:
        text = page.read_text()
    except OSError:
        return ""
    start = text.find(HAND_WRITTEN)
    return "" if start < 0 else "\n" + text[start:]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--print", action="store_true", help="print the JSON summary instead of writing the docs page")
    ap.add_argument("--out", type=Path, default=REPO / "docs" / "corpus-results.md")
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="pinlint-corpus-") as tmp:
        summary = run_corpus(Path(tmp))
    if args.print:
        print(json.dumps(summary, indent=2))
    else:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(render(summary) + hand_written(args.out))
        print(
            f"wrote {args.out}: {summary['files']} files, {summary['lines']} lines, {summary['findings']}, "
            f"{len(summary['problems'])} problems",
            file=sys.stderr,
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
