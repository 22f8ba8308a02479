"""pinlint's speed benchmark: pinlint vs ruff vs semgrep on the same real-code corpus.

    python benchmarks/bench.py                       # default corpus (corpus.py's "bench" set)
    python benchmarks/bench.py --corpus DIR [DIR..]  # any directories of Python sources
    python benchmarks/bench.py --quick               # 3 rounds, 1 semgrep round, no report file

Times, interleaved round by round (the order rotates each round) after one untimed read of every
file so the page cache is warm for all tools alike:

- ``pinlint check --no-cache`` (cold) and ``pinlint check --cache-dir D`` with D primed (warm),
  both ``--output-format json --exit-zero``;
- ``ruff check --select E,F --no-cache --exit-zero``;
- ``semgrep scan --config benchmarks/pin001.semgrep.yml`` (a rule equivalent to PIN001);

and the startup cost: ``pinlint --version`` and ``pinlint check one_small_file.py`` (pre-commit).
Reports medians and the ratios against their targets (docs/performance.md), and checks that
pinlint's findings are identical cold vs warm and ``--jobs 1`` vs default (exit status 1 if not;
``--strict`` also fails on a missed target). Writes ``docs/performance.md`` unless ``--no-write``.

The ratios are the result; the absolute times are context (shared 2-core machines are noisy).
"""

from __future__ import annotations

import argparse
import datetime as _dt
import importlib
import json
import os
import platform
import re
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(HERE))
corpus_mod = importlib.import_module("corpus")  # benchmarks/corpus.py
sections = importlib.import_module("report_sections")  # benchmarks/report_sections.py

DEFAULT_PINLINT = "/work/main/.venv/bin/pinlint"


def resolve_pinlint(cmd: str | None) -> list[str]:
    """``--pinlint`` as argv; by default the installed console script, else ``python -m pinlint``
    from this checkout (through the repository's virtual environment when it has one)."""
    if cmd:
        return shlex.split(cmd)
    for cand in (Path(DEFAULT_PINLINT), REPO / ".venv" / "bin" / "pinlint"):
        if cand.exists():
            return [str(cand)]
    py = REPO / ".venv" / "bin" / "python"
    return ["env", f"PYTHONPATH={REPO}", str(py if py.exists() else sys.executable), "-m", "pinlint"]


TOOLS_BIN = HERE / ".tools" / "bin"
SEMGREP_RULE = HERE / "pin001.semgrep.yml"
# Kept as .txt so that linting this repository (pinlint, ruff) does not pick up its deliberate
# findings; the benchmark copies it to a scratch directory as one_file.py.
SMALL_FILE = HERE / "pin001_sample.py.txt"
DEFAULT_REPORT = REPO / "docs" / "performance.md"

# (label, how the value is computed, target, "<=" or ">=")
TARGETS = {
    "cold": ("pinlint cold / ruff", 1.0, "<="),
    "warm": ("pinlint warm / ruff", 0.25, "<="),
    "all_rules": ("pinlint --select PIN cold / ruff", 1.5, "<="),
    "semgrep": ("semgrep / pinlint cold (speed-up)", 20.0, ">="),
    "one_file": ("`pinlint check one_file.py` (s)", 0.3, "<="),
    "corpus_file": ("one file of the corpus, warm (s)", 0.3, "<="),
    "version": ("`pinlint --version` (s)", 0.15, "<="),
}


# --------------------------------------------------------------------------------------------
# helpers


@dataclass
class Tool:
    name: str
    argv: list[str]
    cwd: Path
    times: list[float] = field(default_factory=list)
    outputs: list[bytes] = field(default_factory=list)
    last_stderr: str = ""
    keep_output: bool = False
    ok_codes: tuple[int, ...] = (0,)

    def run(self) -> float:
        t0 = time.perf_counter()
        proc = subprocess.run(
            self.argv,
            check=False,
            cwd=self.cwd,
            env=_env(),
            stderr=subprocess.PIPE,
            stdout=subprocess.PIPE if self.keep_output else subprocess.DEVNULL,
        )
        dt = time.perf_counter() - t0
        if proc.returncode not in self.ok_codes:
            err = proc.stderr.decode(errors="replace")[-2000:]
            raise RuntimeError(f"{self.name}: exit {proc.returncode}: {shlex.join(self.argv)}\n{err}")
        self.times.append(dt)
        self.last_stderr = proc.stderr.decode(errors="replace")
        if self.keep_output:
            self.outputs.append(proc.stdout)
        return dt

    @property
    def median(self) -> float:
        return statistics.median(self.times)


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env.setdefault("SEMGREP_SEND_METRICS", "off")
    env["NO_COLOR"] = "1"
    env.pop("FORCE_COLOR", None)
    return env


def _capture(argv: list[str], cwd: Path | None = None, timeout: float = 120) -> tuple[int, str]:
    try:
        p = subprocess.run(argv, check=False, cwd=cwd, capture_output=True, text=True, timeout=timeout, env=_env())
    except (OSError, subprocess.TimeoutExpired) as exc:
        return 127, str(exc)
    return p.returncode, (p.stdout + p.stderr).strip()


def _nproc() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not Linux
        return os.cpu_count() or 1


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def _mem_gib() -> str:
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                return f"{int(line.split()[1]) / 2**20:.0f} GiB"
    except OSError:
        pass
    return "unknown"


def _corpus_file(cwd: Path, rel: list[str]) -> str | None:
    """The corpus's largest file that makes a non_blocking copy (relative to ``cwd``)."""
    best: tuple[int, str] | None = None
    for top in rel:
        for path in sorted((cwd / top).rglob("*.py")):
            data = path.read_bytes()
            if b"non_blocking=True" in data and (best is None or len(data) > best[0]):
                best = (len(data), str(path.relative_to(cwd)))
    return best[1] if best else None


def warm_page_cache(files: list[Path]) -> float:
    t0 = time.perf_counter()
    for f in files:
        with open(f, "rb") as fh:
            while fh.read(1 << 20):
                pass
    return time.perf_counter() - t0


def normalized_findings(raw: bytes) -> list[str]:
    """pinlint's JSON findings, each as a canonical string, sorted."""
    data = json.loads(raw or b"[]")
    if isinstance(data, dict):  # tolerate a wrapper object
        data = data.get("diagnostics", data.get("results", []))
    return sorted(json.dumps(d, sort_keys=True) for d in data)


def _pinlint_python(pinlint_argv: list[str]) -> str | None:
    if "-m" in pinlint_argv:  # [env PYTHONPATH=..] PYTHON -m pinlint
        return pinlint_argv[pinlint_argv.index("-m") - 1]
    exe = shutil.which(pinlint_argv[0]) if pinlint_argv else None
    if exe:
        cand = Path(exe).parent / "python"
        if cand.exists():
            return str(cand)
    return None


def sample_markers(path: Path = SMALL_FILE) -> tuple[set[int], set[int]]:
    """Line numbers of the sample file marked ``# BAD`` and ``# OK``."""
    bad, ok = set(), set()
    for n, line in enumerate(path.read_text().splitlines(), 1):
        code, _, comment = line.partition("#")
        if code.strip():
            if comment.strip().startswith("BAD"):
                bad.add(n)
            elif comment.strip().startswith("OK"):
                ok.add(n)
    return bad, ok


def score_sample(found: set[int], path: Path = SMALL_FILE) -> dict[str, object]:
    bad, ok = sample_markers(path)
    return {
        "found": len(found & bad),
        "missed": len(bad - found),
        "false_positives": len(found & ok),
        "missed_lines": sorted(bad - found),
        "false_positive_lines": sorted(found & ok),
        "unmarked_lines": sorted(found - bad - ok),
    }


def semgrep_lines(semgrep: str, target: Path) -> set[int]:
    """Lines the semgrep rule reports in one file (used on the sample)."""
    proc = subprocess.run(
        [
            semgrep,
            "scan",
            "--metrics=off",
            "--disable-version-check",
            "-q",
            "--config",
            str(SEMGREP_RULE),
            "--json",
            "--no-git-ignore",
            "--project-root",
            str(target.parent),
            str(target),
        ],
        capture_output=True,
        text=True,
        env=_env(),
        check=True,
    )
    return {res["start"]["line"] for res in json.loads(proc.stdout)["results"]}


def copy_line(finding: dict) -> int:
    """The line of the non_blocking copy a pinlint finding is about.

    pinlint reports PIN001 at the construction (where the fix goes) and names the copy in its
    message ("... on line 22" / "... on the same line"); semgrep's taint rule reports the copy.
    Comparing the two needs the copy's line; without that phrase, the reported row is used."""
    row = int(finding.get("location", {}).get("row", 0))
    m = re.search(r"\bon line (\d+)", str(finding.get("message", "")))
    return int(m.group(1)) if m else row


def snapshot_pinlint(pinlint_argv: list[str], dest: Path) -> list[str]:
    """Copy the pinlint package that ``pinlint_argv`` runs (plus the rule catalog, laid out as in
    the wheel) to ``dest`` and return a command that runs the copy: a run measures one version of
    the code even while the working tree is being edited (an editable install follows edits)."""
    py = _pinlint_python(pinlint_argv) or sys.executable
    rc, out = _capture([py, "-c", "import os, pinlint; print(os.path.dirname(os.path.abspath(pinlint.__file__)))"])
    if rc != 0:
        raise SystemExit(f"--snapshot: cannot import pinlint with {py}: {out}")
    src = Path(out.splitlines()[-1])
    shutil.copytree(src, dest / "pinlint", ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    rules = src.parent / "rules"
    if not (dest / "pinlint" / "_rules").exists() and rules.is_dir():
        shutil.copytree(rules, dest / "pinlint" / "_rules")
    # Byte-compiled, as pip does on install: otherwise every run (PYTHONDONTWRITEBYTECODE set, or
    # a read-only copy) would also time compiling pinlint's sources.
    subprocess.run([py, "-m", "compileall", "-q", str(dest / "pinlint")], check=False, capture_output=True)
    return ["env", f"PYTHONPATH={dest}", py, "-m", "pinlint"]


def _git_describe() -> str | None:
    rc, head = _capture(["git", "-C", str(REPO), "rev-parse", "--short", "HEAD"])
    if rc != 0:
        return None
    rc, dirty = _capture(["git", "-C", str(REPO), "status", "--porcelain", "--", "pinlint", "rules"])
    return head + (" + uncommitted changes in pinlint/ or rules/" if rc == 0 and dirty else "")


def _fmt_s(x: float | None) -> str:
    return "–" if x is None else (f"{x:.3f} s" if x < 10 else f"{x:.1f} s")


# --------------------------------------------------------------------------------------------
# the benchmark


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--corpus", nargs="+", type=Path, help="directories to scan (default: corpus.py --set)")
    ap.add_argument("--set", default="bench", choices=[*corpus_mod.SETS, "all"], help="default corpus set")
    ap.add_argument(
        "--pinlint", help=f"pinlint command (default: {DEFAULT_PINLINT}, else `python -m pinlint` from this checkout)"
    )
    ap.add_argument(
        "--snapshot",
        action="store_true",
        help="run a copy of pinlint's package taken at the start (immune to concurrent edits)",
    )
    ap.add_argument("--ruff", default=str(TOOLS_BIN / "ruff"))
    ap.add_argument("--semgrep", default=str(TOOLS_BIN / "semgrep"))
    ap.add_argument("--rounds", type=int, default=5, help="interleaved rounds for pinlint and ruff (default 5)")
    ap.add_argument("--semgrep-rounds", type=int, default=3, help="rounds that include semgrep (default 3; 0 = skip)")
    ap.add_argument("--startup-runs", type=int, default=11, help="runs of each startup measurement (default 11)")
    ap.add_argument("--quick", action="store_true", help="3 rounds, 1 semgrep round, 5 startup runs, --no-write")
    ap.add_argument("--no-pinlint", action="store_true", help="time only ruff and semgrep")
    ap.add_argument("--output", type=Path, default=DEFAULT_REPORT, help=f"report file (default {DEFAULT_REPORT})")
    ap.add_argument("--no-write", action="store_true", help="print only; do not write the report file")
    ap.add_argument("--json", type=Path, help="also write the raw measurements as JSON here")
    ap.add_argument("--strict", action="store_true", help="exit 2 if a target is missed")
    args = ap.parse_args(argv)
    if args.quick:
        args.rounds, args.semgrep_rounds, args.startup_runs, args.no_write = 3, min(args.semgrep_rounds, 1), 5, True

    # ---- corpus
    if args.corpus:
        dirs = [d.resolve() for d in args.corpus]
    else:
        # The set as a project of its own: the other sets' corpora beside it are not under its root.
        fetched = corpus_mod.fetch(args.set)
        own = corpus_mod.project(args.set, fetched)
        dirs = [own / d.name for d in fetched]
    for d in dirs:
        if not d.is_dir():
            ap.error(f"not a directory: {d}")
    cwd = Path(os.path.commonpath([str(d.parent) for d in dirs]))
    rel = [os.path.relpath(d, cwd) for d in dirs]
    files = corpus_mod.py_files(dirs)
    per_dir = {d.name: corpus_mod.stats([d]) for d in dirs}
    total = corpus_mod.stats(dirs)
    print(
        f"corpus: {', '.join(rel)} under {cwd}: {total['files']:,} files, {total['lines']:,} lines, "
        f"{total['bytes'] / 1e6:.0f} MB",
        flush=True,
    )
    load_start = os.getloadavg()[0]
    warm_read = warm_page_cache(files)
    print(f"untimed warm-up read of the corpus: {warm_read:.2f} s", flush=True)

    nproc = _nproc()
    versions: dict[str, str] = {}
    notes: list[str] = []

    # ---- tools
    pinlint_argv = resolve_pinlint(args.pinlint)
    tmp = Path(tempfile.mkdtemp(prefix="pinlint-bench-"))
    if args.snapshot and not args.no_pinlint:
        pinlint_argv = snapshot_pinlint(pinlint_argv, tmp / "snapshot")
        notes.append("pinlint ran from a snapshot of its package taken at the start of the run (`--snapshot`).")
    desc = _git_describe()
    if desc:
        versions["repository (git HEAD)"] = desc
    pinlint_ok = False
    if not args.no_pinlint:
        rc, out = _capture([*pinlint_argv, "--version"])
        pinlint_ok = rc == 0
        last = out.splitlines()[-1] if out else str(rc)
        versions["pinlint"] = last if pinlint_ok else f"unavailable ({last})"
        if not pinlint_ok:
            notes.append(
                f"pinlint could not be run (`{shlex.join(pinlint_argv)} --version`: exit {rc}); its rows are missing."
            )
            print(f"pinlint unavailable: {out[-300:]}", flush=True)
        py = _pinlint_python(pinlint_argv)
        if py:
            code = "import importlib.metadata as m, sys; print(sys.version.split()[0], m.version('libcst'))"
            rc2, out2 = _capture([py, "-c", code])
            if rc2 == 0:
                pyv, cstv = out2.split()
                versions["python (pinlint's)"] = pyv
                versions["libcst"] = cstv
    rc, out = _capture([args.ruff, "--version"])
    if rc != 0:
        raise SystemExit(
            f"ruff not runnable ({args.ruff}); install it: python3 -m venv benchmarks/.tools && "
            "benchmarks/.tools/bin/pip install ruff semgrep"
        )
    versions["ruff"] = out.split()[-1]
    use_semgrep = args.semgrep_rounds > 0
    if use_semgrep:
        rc, out = _capture([args.semgrep, "--version", "--disable-version-check"])
        if rc != 0:
            notes.append(f"semgrep could not be run ({args.semgrep}); its rows are missing.")
            use_semgrep = False
        else:
            versions["semgrep"] = out.splitlines()[-1]

    cache_dir = tmp / "pinlint-cache"
    common = ["--output-format", "json", "--exit-zero"]
    # pinlint's own per-phase timings (stderr) for the report, when this pinlint has the flag
    timings = []
    if pinlint_ok and "--timings" in _capture([*pinlint_argv, "check", "--help"])[1]:
        timings = ["--timings"]
    tools: dict[str, Tool] = {}
    if pinlint_ok:
        tools["pinlint_cold"] = Tool(
            "pinlint cold", [*pinlint_argv, "check", *rel, "--no-cache", *common, *timings], cwd, keep_output=True
        )
        tools["pinlint_all"] = Tool(
            "pinlint all", [*pinlint_argv, "check", *rel, "--select", "PIN", "--no-cache", *common, *timings], cwd
        )
        tools["pinlint_warm"] = Tool(
            "pinlint warm",
            [*pinlint_argv, "check", *rel, "--cache-dir", str(cache_dir), *common, *timings],
            cwd,
            keep_output=True,
        )
    tools["ruff"] = Tool(
        "ruff", [args.ruff, "check", "--select", "E,F", "--no-cache", "--exit-zero", "--quiet", *rel], cwd
    )
    semgrep_json = tmp / "semgrep.json"
    if use_semgrep:
        # --project-root . + the corpus root's empty .semgrepignore: do not skip tests/ (semgrep's
        # default ignore list would); --no-git-ignore: the corpus lives in a git-ignored folder.
        tools["semgrep"] = Tool(
            "semgrep",
            [
                args.semgrep,
                "scan",
                "--metrics=off",
                "--disable-version-check",
                "-q",
                "--config",
                str(SEMGREP_RULE),
                "--json",
                "--output",
                str(semgrep_json),
                "--no-git-ignore",
                "--project-root",
                ".",
                "--max-target-bytes=0",
                "--jobs",
                str(nproc),
                *rel,
            ],
            cwd,
        )

    # ---- prime pinlint's cache (untimed) and check it is used
    if pinlint_ok:
        print("priming pinlint's cache (untimed) ...", flush=True)
        t0 = time.perf_counter()
        subprocess.run(
            tools["pinlint_warm"].argv,
            cwd=cwd,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            check=True,
            env=_env(),
        )
        prime_s = time.perf_counter() - t0
        if not cache_dir.exists() or not any(cache_dir.iterdir()):
            notes.append(f"pinlint wrote nothing to --cache-dir {cache_dir}: the warm numbers may not be warm.")
    else:
        prime_s = None

    # ---- interleaved rounds
    names = list(tools)
    for r in range(args.rounds):
        k = r % len(names)
        order = names[k:] + names[:k]
        line = []
        for n in order:
            if n == "semgrep" and r >= args.semgrep_rounds:
                continue
            dt = tools[n].run()
            line.append(f"{n} {dt:.2f}s")
        print(f"round {r + 1}/{args.rounds}: " + ", ".join(line), flush=True)

    # ---- correctness: identical findings cold vs warm, --jobs 1 vs default
    correctness: dict[str, object] = {}
    failed = False
    pinlint_counts: dict[str, int] = {}
    pinlint_pin001: set[tuple[str, int]] = set()
    if pinlint_ok:
        ref = normalized_findings(tools["pinlint_cold"].outputs[0])
        cold_same = all(normalized_findings(o) == ref for o in tools["pinlint_cold"].outputs)
        warm_same = all(normalized_findings(o) == ref for o in tools["pinlint_warm"].outputs)
        print("pinlint --jobs 1 --no-cache (untimed correctness run) ...", flush=True)
        j1 = Tool(
            "pinlint jobs1", [*pinlint_argv, "check", *rel, "--no-cache", "--jobs", "1", *common], cwd, keep_output=True
        )
        j1.run()
        j1_same = normalized_findings(j1.outputs[0]) == ref
        correctness = {
            "findings": len(ref),
            "cold runs identical": cold_same,
            "warm == cold": warm_same,
            "--jobs 1 == default": j1_same,
            "jobs1_seconds": j1.times[0],
        }
        failed = not (cold_same and warm_same and j1_same)
        if failed:  # say what differs (first few), against the first cold run
            diffs = []
            for label, outs in (
                ("cold", tools["pinlint_cold"].outputs),
                ("warm", tools["pinlint_warm"].outputs),
                ("jobs1", j1.outputs),
            ):
                for i, o in enumerate(outs):
                    got = normalized_findings(o)
                    if got != ref:
                        diffs.append(
                            {
                                "run": f"{label}[{i}]",
                                "missing": sorted(set(ref) - set(got))[:5],
                                "extra": sorted(set(got) - set(ref))[:5],
                                "count": len(got),
                            }
                        )
            correctness["differences"] = diffs
            for d in diffs:
                print(
                    f"  differs: {d['run']}: {d['count']} findings vs {len(ref)}; "
                    f"missing {d['missing'][:2]}, extra {d['extra'][:2]}",
                    file=sys.stderr,
                )
        for s in ref:
            d = json.loads(s)
            code = str(d.get("code"))
            pinlint_counts[code] = pinlint_counts.get(code, 0) + 1
            if code == "PIN001":
                fn = str(d.get("filename", ""))
                fn = os.path.relpath(fn, cwd) if os.path.isabs(fn) else fn
                pinlint_pin001.add((fn, copy_line(d)))

    semgrep_found: set[tuple[str, int]] = set()
    semgrep_scanned = None
    if use_semgrep and semgrep_json.exists():
        sj = json.loads(semgrep_json.read_text())
        semgrep_found = {(r["path"], r["start"]["line"]) for r in sj.get("results", [])}
        semgrep_scanned = len(sj.get("paths", {}).get("scanned", []))
        if sj.get("errors"):
            notes.append(f"semgrep reported {len(sj['errors'])} errors (files it could not fully analyse).")

    small_dir = tmp / "precommit"
    small_dir.mkdir()
    small = small_dir / "one_file.py"
    shutil.copyfile(SMALL_FILE, small)

    # ---- the sample file (rule sanity, untimed)
    sample: dict[str, object] = {}
    bad, ok = sample_markers()
    sample["bad"], sample["ok"] = len(bad), len(ok)
    if use_semgrep:
        sample["semgrep"] = score_sample(semgrep_lines(args.semgrep, small))
    if pinlint_ok:
        # a copy in a directory without configuration (the repository's own would apply otherwise)
        proc = subprocess.run(
            [*pinlint_argv, "check", "one_file.py", "--no-cache", *common],
            check=False,
            cwd=small_dir,
            capture_output=True,
            env=_env(),
        )
        try:
            found = {copy_line(d) for d in json.loads(proc.stdout or b"[]") if d.get("code") == "PIN001"}
            sample["pinlint"] = score_sample(found)
        except (ValueError, KeyError, TypeError) as exc:
            notes.append(f"could not read pinlint's findings on the sample: {exc}")
    for tool in ("semgrep", "pinlint"):
        if tool in sample:
            v = sample[tool]
            print(
                f"sample: {tool}: found {v['found']}/{len(bad)}, missed lines {v['missed_lines']}, "
                f"false positives {v['false_positive_lines']}",
                flush=True,
            )

    # ---- startup
    startup: dict[str, float] = {}
    st_tools: dict[str, Tool] = {}
    py = _pinlint_python(pinlint_argv) or sys.executable
    st_tools["python -c pass"] = Tool("python", [py, "-c", "pass"], small_dir)
    if pinlint_ok:
        st_tools["pinlint --version"] = Tool("version", [*pinlint_argv, "--version"], small_dir)
        st_tools["pinlint check one_file.py"] = Tool(
            "one file", [*pinlint_argv, "check", "one_file.py", "--no-cache", "--exit-zero"], small_dir
        )
    corpus_file = _corpus_file(cwd, rel)
    if pinlint_ok and corpus_file is not None:
        # The pre-commit case on a large project: one file, the project's cache primed by the
        # warm runs above (its importers are looked through, as a whole-project run would).
        st_tools["pinlint check CORPUS_FILE (warm)"] = Tool(
            "corpus file", [*pinlint_argv, "check", corpus_file, "--cache-dir", str(cache_dir), "--exit-zero"], cwd
        )
    st_tools["ruff check one_file.py"] = Tool(
        "ruff one",
        [args.ruff, "check", "--select", "E,F", "--no-cache", "--exit-zero", "--quiet", "one_file.py"],
        small_dir,
    )
    print("startup runs ...", flush=True)
    for _ in range(args.startup_runs):
        for t in st_tools.values():
            t.run()
    startup = {k: t.median for k, t in st_tools.items()}

    # ---- results
    med = {k: t.median for k, t in tools.items() if t.times}
    ratios: dict[str, float | None] = {
        "cold": None,
        "warm": None,
        "all_rules": None,
        "semgrep": None,
        "one_file": startup.get("pinlint check one_file.py"),
        "version": startup.get("pinlint --version"),
        "corpus_file": startup.get("pinlint check CORPUS_FILE (warm)"),
    }
    if pinlint_ok:
        ratios["cold"] = med["pinlint_cold"] / med["ruff"]
        ratios["warm"] = med["pinlint_warm"] / med["ruff"]
        ratios["all_rules"] = med["pinlint_all"] / med["ruff"]
        if "semgrep" in med:
            ratios["semgrep"] = med["semgrep"] / med["pinlint_cold"]

    def verdict(key: str) -> str:
        v = ratios[key]
        if v is None:
            return "n/a"
        _, target, op = TARGETS[key]
        return "PASS" if (v <= target if op == "<=" else v >= target) else "MISS"

    print()
    print(f"medians ({args.rounds} rounds; semgrep {min(args.semgrep_rounds, args.rounds)}):")
    for k, v in med.items():
        print(f"  {tools[k].name:<14} {v:8.2f} s   (all: {', '.join(f'{x:.2f}' for x in tools[k].times)})")
    if pinlint_ok and "semgrep" in med:
        print(f"  pinlint/semgrep = {med['pinlint_cold'] / med['semgrep']:.3f}")
    print(f"startup (median of {args.startup_runs}):")
    for k, v in startup.items():
        print(f"  {k:<28} {v:.3f} s")
    print("targets:")
    for key, (label, target, op) in TARGETS.items():
        v = ratios[key]
        vs = "n/a" if v is None else (f"{v:.3f}" if key in ("one_file", "version", "corpus_file") else f"{v:.2f}×")
        print(f"  {label:<40} {vs:>9}   target {op} {target:g}   {verdict(key)}")
    if correctness:
        print(
            "correctness: "
            + ", ".join(f"{k}: {v}" for k, v in correctness.items() if k not in ("jobs1_seconds", "differences"))
        )
    for n in notes:
        print("note:", n)

    result = {
        "date": _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "load": {"start": load_start, "end": os.getloadavg()[0]},
        "machine": {"nproc": nproc, "cpu": _cpu_model(), "memory": _mem_gib(), "os": platform.platform()},
        "corpus": {
            "root": str(cwd),
            "dirs": rel,
            "per_dir": per_dir,
            "total": total,
            "set": None if args.corpus else args.set,
            "packages": None if args.corpus else [p.__dict__ for p in corpus_mod.packages(args.set)],
        },
        "versions": versions,
        "pinlint_command": shlex.join(pinlint_argv),
        "rounds": args.rounds,
        "semgrep_rounds": min(args.semgrep_rounds, args.rounds) if use_semgrep else 0,
        "times": {k: t.times for k, t in tools.items()},
        "medians": med,
        "startup_runs": args.startup_runs,
        "startup": startup,
        "corpus_file": corpus_file,
        "ratios": ratios,
        "verdicts": {k: verdict(k) for k in TARGETS},
        "correctness": correctness,
        "pinlint_findings_by_code": pinlint_counts,
        "semgrep_findings": len(semgrep_found),
        "semgrep_files_scanned": semgrep_scanned,
        "pin001_vs_semgrep": None
        if not (pinlint_ok and use_semgrep)
        else {
            "both": len(pinlint_pin001 & semgrep_found),
            "pinlint_only": len(pinlint_pin001 - semgrep_found),
            "semgrep_only": len(semgrep_found - pinlint_pin001),
            "pinlint_only_at": [f"{f}:{n}" for f, n in sorted(pinlint_pin001 - semgrep_found)],
            "semgrep_only_at": [f"{f}:{n}" for f, n in sorted(semgrep_found - pinlint_pin001)],
        },
        "pinlint_timings": {
            k: tools[k].last_stderr.strip() for k in ("pinlint_cold", "pinlint_warm") if k in tools and timings
        },
        "sample": sample,
        "prime_seconds": prime_s,
        "warm_read_seconds": warm_read,
        "notes": notes,
        "command": shlex.join(["benchmarks/bench.py", *(sys.argv[1:] if argv is None else argv)]),
    }
    if args.json:
        args.json.write_text(json.dumps(result, indent=2, default=str) + "\n")
    if not args.no_write:
        args.output.parent.mkdir(parents=True, exist_ok=True)
        text = render_markdown(result)
        # The Shapes section is shapes.py's: kept as it was.
        old = args.output.read_text(encoding="utf-8") if args.output.exists() else ""
        shapes = sections.section(old, "## Shapes")
        if shapes is not None:
            text = sections.with_section(text, "## Shapes", shapes)
        args.output.write_text(text)
        print(f"wrote {args.output}")
    shutil.rmtree(tmp, ignore_errors=True)
    if failed:
        print("FAIL: pinlint's findings differ between runs (see correctness)", file=sys.stderr)
        return 1
    if args.strict and any(v == "MISS" for v in result["verdicts"].values()):
        return 2
    return 0


# --------------------------------------------------------------------------------------------
# report


def render_markdown(r: dict) -> str:
    med = r["medians"]
    lines: list[str] = []
    add = lines.append
    add("# Performance")
    add("")
    add(
        "Generated by `python benchmarks/bench.py` (see [benchmarks/README.md](../benchmarks/README.md)); "
        "do not edit by hand. The ratios are the result: the absolute times are context, measured on a "
        "small shared machine."
    )
    add("")
    add(
        f"Measured {r['date']} on {r['machine']['nproc']} cores (`nproc`), {r['machine']['cpu']}, "
        f"{r['machine']['memory']} RAM, {r['machine']['os']}; 1-minute load average "
        f"{r['load']['start']:.2f} at the start, {r['load']['end']:.2f} at the end (other work on the machine "
        "adds noise: compare the runs within a round)."
    )
    add("")
    add("## Targets")
    add("")
    add("| what | measured | target | |")
    add("| --- | ---: | ---: | --- |")
    for key, (label, target, op) in TARGETS.items():
        v = r["ratios"][key]
        vs = "–" if v is None else (f"{v:.3f} s" if key in ("one_file", "version", "corpus_file") else f"{v:.2f}×")
        ts = f"{op} {target:g} s" if key in ("one_file", "version", "corpus_file") else f"{op} {target:g}×"
        add(f"| {label} | {vs} | {ts.replace('<=', '≤').replace('>=', '≥')} | {r['verdicts'][key]} |")
    add("")
    c = r["corpus"]
    t = c["total"]
    add("## Corpus")
    add("")
    if c["packages"]:
        add(
            f"Corpus set `{c['set']}` of `benchmarks/corpus.py` (PyPI releases, `pip download --no-deps`; "
            "only the `*.py` files are extracted, to `benchmarks/.corpus/<name>-<version>/`):"
        )
    else:
        add(f"Directories given with `--corpus`, under `{c['root']}`:")
    add("")
    add("| source | files | lines | MB |")
    add("| --- | ---: | ---: | ---: |")
    kinds = {f"{p['name']}-{p['version']}": p["kind"] for p in (c["packages"] or [])}
    for name, s in c["per_dir"].items():
        label = f"{name} ({kinds[name]})" if name in kinds else name
        add(f"| {label} | {s['files']:,} | {s['lines']:,} | {s['bytes'] / 1e6:.1f} |")
    add(f"| **total** | **{t['files']:,}** | **{t['lines']:,}** | **{t['bytes'] / 1e6:.1f}** |")
    add("")
    add("## Tools")
    add("")
    for k, v in r["versions"].items():
        add(f"- {k}: {v}")
    add(f"- pinlint was run as `{r['pinlint_command']}`")
    add("")
    add("## Whole-corpus runs")
    add("")
    add(
        f"Median of {r['rounds']} interleaved rounds (semgrep: {r['semgrep_rounds']}); the order of the tools "
        "rotates each round; one untimed read of every file first "
        f"({r['warm_read_seconds']:.2f} s) so the page cache is warm for all tools alike."
    )
    add("")
    add("| run | command | median | all runs |")
    add("| --- | --- | ---: | --- |")
    cmds = {
        "pinlint_cold": "`pinlint check CORPUS --no-cache --output-format json --exit-zero`",
        "pinlint_warm": "`pinlint check CORPUS --cache-dir D --output-format json --exit-zero` "
        "(D primed by one untimed run)",
        "pinlint_all": "`pinlint check CORPUS --select PIN --no-cache --output-format json --exit-zero` (every rule)",
        "ruff": "`ruff check --select E,F --no-cache --exit-zero CORPUS`",
        "semgrep": f"`semgrep scan --config benchmarks/pin001.semgrep.yml --jobs {r['machine']['nproc']} "
        "--no-git-ignore --project-root . --max-target-bytes=0 CORPUS`",
    }
    names = {
        "pinlint_cold": "pinlint (cold)",
        "pinlint_all": "pinlint --select PIN (cold)",
        "pinlint_warm": "pinlint (warm)",
        "ruff": "ruff",
        "semgrep": "semgrep",
    }
    for k, ts in r["times"].items():
        if ts:
            add(f"| {names[k]} | {cmds[k]} | {_fmt_s(med[k])} | {', '.join(f'{x:.2f}' for x in ts)} |")
    add("")
    if "pinlint_cold" in med:
        add(
            f"pinlint/ruff: cold {med['pinlint_cold'] / med['ruff']:.2f}×, "
            f"warm {med['pinlint_warm'] / med['ruff']:.2f}×, "
            f"every rule (`--select PIN`) cold {med['pinlint_all'] / med['ruff']:.2f}×"
            + (
                f"; pinlint/semgrep: {med['pinlint_cold'] / med['semgrep']:.3f} "
                f"(semgrep takes {med['semgrep'] / med['pinlint_cold']:.1f}× as long)"
                if "semgrep" in med
                else ""
            )
            + "."
        )
        add("")
    if r.get("pinlint_timings"):
        add("pinlint's own phase timings (`--timings`, last round):")
        add("")
        for k, v in r["pinlint_timings"].items():
            add(f"{names[k]}:")
            add("")
            add("```")
            add(v)
            add("```")
            add("")
    add("## Startup (the pre-commit case)")
    add("")
    add(
        f"Median of {r['startup_runs']} runs each, interleaved, in a directory without configuration; "
        "`one_file.py` is `benchmarks/pin001_sample.py.txt` (the semgrep rule's sample, below), "
        "checked with `--no-cache`. `CORPUS_FILE` is the corpus's largest file that makes a non_blocking "
        f"copy ({r.get('corpus_file') or 'none found'}), checked with the warm runs' `--cache-dir`: "
        "a pre-commit run on a large project."
    )
    add("")
    add("| command | median |")
    add("| --- | ---: |")
    for k, v in r["startup"].items():
        add(f"| `{k}` | {v:.3f} s |")
    add("")
    add("## Correctness")
    add("")
    if r["correctness"]:
        cor = r["correctness"]
        add(
            f"pinlint's findings (JSON, sorted) on the corpus: {cor['findings']} "
            f"({', '.join(f'{k} {v}' for k, v in sorted(r['pinlint_findings_by_code'].items())) or 'none'})."
        )
        add("")
        add(f"- identical in every cold run: {'yes' if cor['cold runs identical'] else '**NO**'}")
        add(f"- warm (cached) identical to cold: {'yes' if cor['warm == cold'] else '**NO**'}")
        add(
            f"- `--jobs 1` identical to the default jobs: {'yes' if cor['--jobs 1 == default'] else '**NO**'} "
            f"(`--jobs 1 --no-cache` took {cor['jobs1_seconds']:.2f} s)"
        )
    else:
        add("pinlint was not run.")
    add("")
    add("## The semgrep rule")
    add("")
    add(
        "`benchmarks/pin001.semgrep.yml` is a taint-mode rule equivalent to PIN001 (a pinnable torch factory "
        "without `pin_memory=` flowing to a `non_blocking=True` `.to()`/`.cuda()`/`copy_()`; details in the "
        "file)."
    )
    add("")
    sm = r.get("sample")
    if sm:
        add(f"On `benchmarks/pin001_sample.py.txt` ({sm['bad']} lines marked `# BAD`, {sm['ok']} marked `# OK`):")
        add("")
        add("| tool | found | missed | false positives |")
        add("| --- | ---: | ---: | ---: |")
        for tool in ("semgrep", "pinlint"):
            if tool in sm:
                v = sm[tool]
                add(
                    f"| {tool}{' (PIN001)' if tool == 'pinlint' else ''} | {v['found']} | {v['missed']} "
                    f"| {v['false_positives']} |"
                )
        add("")
    if r["semgrep_findings"] is not None and r["semgrep_rounds"]:
        text = (
            f"On the corpus it scanned {r['semgrep_files_scanned']:,} files and reported "
            f"{r['semgrep_findings']} findings."
        )
        p = r.get("pin001_vs_semgrep")
        if p:
            text += (
                f" Against pinlint's PIN001 (same file and line of the copy): {p['both']} both, "
                f"{p['pinlint_only']} pinlint only, {p['semgrep_only']} semgrep only."
            )
        add(text)
        add("")
        for key, who in (("pinlint_only_at", "pinlint only"), ("semgrep_only_at", "semgrep only")):
            at = (p or {}).get(key) or []
            if at:
                add(f"{who} (the copy's line; for precision review):")
                add("")
                add("\n".join(f"- `{x}`" for x in at[:20]) + (f"\n- ... {len(at) - 20} more" if len(at) > 20 else ""))
                add("")
    if r["notes"]:
        add("## Notes")
        add("")
        for n in r["notes"]:
            add(f"- {n}")
        add("")
    add("## Reproduce")
    add("")
    add(f"This report: `python3 {r['command']}`. From scratch:")
    add("")
    add("```sh")
    add("python3 -m venv benchmarks/.tools && benchmarks/.tools/bin/pip install ruff semgrep")
    add("python3 benchmarks/corpus.py fetch --set bench   # cached in benchmarks/.corpus/")
    add("python3 benchmarks/bench.py")
    add("```")
    add("")
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
