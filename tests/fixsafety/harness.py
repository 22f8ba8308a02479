"""The differential harness: run each program before and after ``pinlint check --fix``.

torch, numpy and pinlint's CLI are imported once here; every pinlint invocation and every program
run happens in a child forked from this process (a pool of fresh single-task workers), so a run
costs milliseconds and cannot leak state into the next one. pinlint is driven only through its
command line (``pinlint.cli.main`` through click's runner, or ``python -m pinlint`` with
``subprocess=True``), so the harness does not depend on pinlint's internals.
"""

from __future__ import annotations

import difflib
import json
import os
import pickle
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy.random  # noqa: F401 - imported once, before the forks (np.random is lazy)
import torch

from tests.fixsafety import execute, generated, handwritten, helper_programs
from tests.fixsafety.program import NOT_SAFE, SAFE, Program

RUN_TIMEOUT_S = 60

# Each child runs one tiny program: intra-op threads only contend with the other workers.
torch.set_num_threads(1)


def all_programs() -> list[Program]:
    return handwritten.PROGRAMS + helper_programs.PROGRAMS + generated.programs()


# -- work done in the children -------------------------------------------------------------------


def _pinlint_child(args: tuple[str, tuple[str, ...], bool]) -> dict[str, Any]:
    """Lint (json, no fix), then ``--fix`` (safe fixes only), in ``project``."""
    project, lint_paths, use_subprocess = args
    os.chdir(project)
    common = [*lint_paths, "--no-cache", "-j", "1", "--exit-zero", "--output-format", "json"]
    report = _pinlint([*common, "--unsafe-fixes"], use_subprocess)
    fixed = _pinlint([*common, "--fix"], use_subprocess)
    return {"report": report, "fix": fixed}


def _pinlint(args: list[str], use_subprocess: bool) -> dict[str, Any]:
    argv = ["check", *args]
    if use_subprocess:
        proc = subprocess.run([sys.executable, "-m", "pinlint", *argv], capture_output=True, text=True, check=False)
        code, out, err = proc.returncode, proc.stdout, proc.stderr
    else:
        from click.testing import CliRunner

        from pinlint import cli

        result = CliRunner().invoke(cli.main, argv, catch_exceptions=True)
        code, out = result.exit_code, result.stdout
        err = result.stderr if result.stderr_bytes is not None else ""
        if result.exception is not None and not isinstance(result.exception, SystemExit):
            err += f"\n{type(result.exception).__name__}: {result.exception}"
    try:
        findings = json.loads(out) if out.strip() else []
    except json.JSONDecodeError:
        findings = None
    return {"exit": code, "findings": findings, "stdout": out[-2000:], "stderr": err[-2000:]}


def _program_child(args: tuple[str, bool, bool]) -> dict[str, Any]:
    project, answer, pin_all = args
    return execute.run_program(project, answer, pin_all=pin_all)


def _warm_up() -> None:
    """One lint in this process, so the forked children inherit every module pinlint imports."""
    with tempfile.TemporaryDirectory(prefix="fixsafety-warm-") as d:
        Program("warm", "plain", SAFE, {"prog.py": handwritten.PROGRAMS[0].files["prog.py"]}).materialize(Path(d))
        cwd = os.getcwd()
        try:
            os.chdir(d)
            _pinlint([".", "--no-cache", "-j", "1", "--exit-zero", "--output-format", "json"], False)
        finally:
            os.chdir(cwd)


def _map(fn: Any, jobs: list[Any], workers: int) -> list[Any]:
    """``fn`` over ``jobs``, each in a child forked from this process, ``workers`` at a time.

    A hand-rolled scheduler rather than ``multiprocessing.Pool(maxtasksperchild=1)``, whose worker
    handler polls every 0.1 s and would dominate runs that take a few milliseconds.
    """
    results: list[Any] = [None] * len(jobs)
    running: dict[int, tuple[int, int, float]] = {}  # pid -> (job index, read fd, start)
    chunks: dict[int, list[bytes]] = {}
    todo = list(range(len(jobs)))[::-1]
    while todo or running:
        while todo and len(running) < workers:
            i = todo.pop()
            r, w = os.pipe()
            sys.stdout.flush()
            pid = os.fork()
            if pid == 0:  # the child: run, send the pickled result, exit without cleanup
                code = 0
                try:
                    os.close(r)
                    try:
                        payload = pickle.dumps(fn(jobs[i]))
                    except BaseException as e:  # noqa: BLE001 - reported, not raised
                        payload = pickle.dumps({"exception": f"harness: {type(e).__name__}: {e}"})
                    with os.fdopen(w, "wb") as f:
                        f.write(payload)
                except BaseException:  # noqa: BLE001
                    code = 1
                os._exit(code)
            os.close(w)
            os.set_blocking(r, False)
            running[pid] = (i, r, time.monotonic())
            chunks[pid] = []
        # Drain the pipes (a child blocks on a full pipe until it is read), then reap.
        ready, _, _ = select.select([fd for _, fd, _ in running.values()], [], [], 0.05)
        for pid, (i, fd, started) in list(running.items()):
            if fd in ready:
                while True:
                    try:
                        data = os.read(fd, 1 << 16)
                    except BlockingIOError:
                        break
                    if not data:
                        break
                    chunks[pid].append(data)
            done, _status = os.waitpid(pid, os.WNOHANG)
            timed_out = time.monotonic() - started > RUN_TIMEOUT_S
            if done == 0 and not timed_out:
                continue
            if timed_out and done == 0:
                os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
            while True:
                try:
                    data = os.read(fd, 1 << 16)
                except BlockingIOError:
                    break
                if not data:
                    break
                chunks[pid].append(data)
            os.close(fd)
            blob = b"".join(chunks.pop(pid))
            del running[pid]
            try:
                results[i] = pickle.loads(blob)
            except Exception:  # noqa: BLE001 - a child that died or timed out
                why = "timed out" if timed_out else "died without a result"
                results[i] = {"exception": f"harness: the child {why}: {jobs[i]}"}
    return results


# -- comparing ------------------------------------------------------------------------------------


@dataclass
class Outcome:
    program: Program
    findings: list[tuple[str, str]] = field(default_factory=list)  # (code, applicability)
    pinlint_error: str = ""
    changed: list[str] = field(default_factory=list)
    diff: str = ""
    runs: dict[str, dict[str, Any]] = field(default_factory=dict)  # "before/False", ...
    problems: list[str] = field(default_factory=list)  # what a safe fix broke
    bad_program: str = ""  # the program itself misbehaves before any fix
    expectation: str = ""  # "", "declined", "unexpected fix"
    pinned_races: list[str] | None = None

    @property
    def fixed(self) -> bool:
        return bool(self.changed)

    @property
    def same(self) -> bool:
        return not any(p.startswith(("behaviour", "file")) for p in self.problems)

    @property
    def raced(self) -> bool:
        return any(p.startswith("race") for p in self.problems)

    @property
    def verdict(self) -> str:
        if self.bad_program:
            return "BAD-PROGRAM"
        if self.pinlint_error:
            return "PINLINT-ERROR"
        if not self.same:
            return "BREAKS"
        if self.raced:
            return "RACE"
        if self.expectation:
            return self.expectation.upper().replace(" ", "-")
        return "ok"

    @property
    def failed(self) -> bool:
        return self.verdict != "ok"


def _snapshot(root: Path) -> dict[str, str]:
    """Relative path -> content, or ``-> target`` for links (so replacing a link shows)."""
    files: dict[str, str] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            path = Path(dirpath) / name
            rel = str(path.relative_to(root))
            if path.is_symlink():
                files[rel] = f"-> {os.readlink(path)}"
            elif path.is_file() and "pinlint_cache" not in rel and "__pycache__" not in rel:
                files[rel] = path.read_text(errors="replace")
    return files


def _comparable(run: dict[str, Any]) -> dict[str, Any]:
    return {k: run.get(k) for k in ("return", "exception", "stdout")}


def _show(run: dict[str, Any]) -> str:
    if "exception" in run:
        return f"raises {run['exception']}"
    text = json.dumps(run.get("return"))
    if run.get("stdout"):
        text += f" (stdout {run['stdout']!r})"
    return text if len(text) < 300 else text[:300] + "..."


def _assess(outcome: Outcome, before: dict[str, str], after: dict[str, str]) -> None:
    prog = outcome.program
    for answer in ("False", "True"):
        b = outcome.runs[f"before/{answer}"]
        if "exception" in b or b.get("races"):
            outcome.bad_program = f"helper={answer}: {_show(b)} races={b.get('races')}"
    if not outcome.fixed:
        if prog.expect == SAFE:
            outcome.expectation = "declined"
        return
    if prog.expect == NOT_SAFE:
        outcome.expectation = "unexpected fix"
    for answer in ("False", "True"):
        b, a = outcome.runs[f"before/{answer}"], outcome.runs[f"after/{answer}"]
        if _comparable(b) != _comparable(a):
            outcome.problems.append(f"behaviour (helper={answer}): {_show(b)} -> {_show(a)}")
        new = [r for r in a.get("races", []) if r not in b.get("races", [])]
        if new:
            outcome.problems.append(f"race (helper={answer}): {'; '.join(new)}")
    for rel, text in before.items():
        if text.startswith("-> ") and after.get(rel) != text:
            outcome.problems.append(f"file: the link {rel} {text} became {after.get(rel, 'gone')!r}")
    for rel, text in after.items():
        if not text.startswith("-> ") and text != before.get(rel) and _imports_pinlint(text):
            outcome.problems.append(f"file: {rel} now imports pinlint")


def _imports_pinlint(text: str) -> bool:
    return any(line.strip().startswith(("import pinlint", "from pinlint")) for line in text.splitlines())


def _findings(report: dict[str, Any]) -> list[tuple[str, str]]:
    out = []
    for f in report.get("findings") or []:
        fix = f.get("fix")
        out.append((f.get("code", "?"), fix["applicability"] if fix else "none"))
    return out


def run(
    programs: Iterable[Program] | None = None,
    *,
    workers: int | None = None,
    use_subprocess: bool = False,
    check_pinned: bool = True,
    keep: Path | None = None,
) -> list[Outcome]:
    """Run the harness; ``keep`` keeps the project copies there (before/ and after/ per program)."""
    progs = list(all_programs() if programs is None else programs)
    workers = workers or max(1, min(os.cpu_count() or 1, 4))
    tmp = Path(tempfile.mkdtemp(prefix="fixsafety-")) if keep is None else keep
    try:
        outcomes = [Outcome(p) for p in progs]
        dirs = []
        for p in progs:
            before, after = tmp / p.id / "before", tmp / p.id / "after"
            p.materialize(before)
            shutil.copytree(before, after, symlinks=True)
            dirs.append((before, after))
        snaps_before = [_snapshot(b) for b, _ in dirs]
        if not use_subprocess:
            _warm_up()

        lint = _map(
            _pinlint_child,
            [(str(a), p.lint_paths, use_subprocess) for p, (_, a) in zip(progs, dirs)],
            workers,
        )
        for o, res, (_b, a), sb in zip(outcomes, lint, dirs, snaps_before):
            if "exception" in res:
                o.pinlint_error = res["exception"]
                continue
            o.findings = _findings(res["report"])
            for step in ("report", "fix"):
                r = res[step]
                if r["exit"] not in (0, 1) or r["findings"] is None:
                    o.pinlint_error = f"{step}: exit {r['exit']}: {r['stderr'].strip()[-300:]}"
            sa = _snapshot(a)
            o.changed = sorted(k for k in set(sb) | set(sa) if sb.get(k) != sa.get(k))
            o.diff = "".join(
                "".join(difflib.unified_diff(sb.get(k, "").splitlines(True), sa.get(k, "").splitlines(True), k, k))
                for k in o.changed
            )

        jobs, where = [], []
        for i, (o, (b, a)) in enumerate(zip(outcomes, dirs)):
            for answer in (False, True):
                jobs.append((str(b), answer, False))
                where.append((i, f"before/{answer}"))
                if o.fixed:
                    jobs.append((str(a), answer, False))
                    where.append((i, f"after/{answer}"))
            if check_pinned and o.program.kind == "race":
                jobs.append((str(b), False, True))
                where.append((i, "pinned"))
        for (i, key), res in zip(where, _map(_program_child, jobs, workers)):
            if key == "pinned":
                outcomes[i].pinned_races = res.get("races", [])
            else:
                outcomes[i].runs[key] = res
        for o, (_b, a), sb in zip(outcomes, dirs, snaps_before):
            _assess(o, sb, _snapshot(a) if o.fixed else sb)
        return outcomes
    finally:
        if keep is None:
            shutil.rmtree(tmp, ignore_errors=True)


# -- reporting ------------------------------------------------------------------------------------


def table(outcomes: list[Outcome], verbose: bool = False) -> str:
    rows = [("program", "kind", "expect", "findings", "fixed", "same", "race", "verdict")]
    for o in outcomes:
        fs = ",".join(f"{c}:{a}" for c, a in o.findings) or "-"
        rows.append(
            (
                o.program.id,
                o.program.kind,
                "safe" if o.program.expect == SAFE else "not-safe",
                fs if len(fs) < 40 else fs[:37] + "...",
                "yes" if o.fixed else "no",
                "-" if not o.fixed else ("yes" if o.same else "NO"),
                "-" if not o.fixed else ("YES" if o.raced else "no"),
                o.verdict,
            )
        )
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    lines = ["  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in rows]
    lines.insert(1, "  ".join("-" * w for w in widths))
    for o in outcomes:
        if o.failed or verbose:
            details = o.problems + ([o.bad_program] if o.bad_program else [])
            details += [o.pinlint_error] if o.pinlint_error else []
            if o.failed or details:
                lines.append(f"\n{o.program.id} [{o.verdict}] {o.program.note}")
                lines += [f"    {d}" for d in details]
            if verbose and o.diff:
                lines += ["    " + line for line in o.diff.splitlines()]
    return "\n".join(lines)


def summary(outcomes: list[Outcome], seconds: float | None = None) -> str:
    by_kind: dict[str, int] = {}
    for o in outcomes:
        by_kind[o.program.kind] = by_kind.get(o.program.kind, 0) + 1
    fixed = [o for o in outcomes if o.fixed]
    expect_safe = [o for o in outcomes if o.program.expect == SAFE]
    n_safe = sum(1 for o in fixed if o.program.expect == SAFE)
    n_unexpected = sum(1 for o in outcomes if o.expectation == "unexpected fix")
    lines = [
        f"programs: {len(outcomes)} ({', '.join(f'{k} {n}' for k, n in by_kind.items())})",
        f"safe fixes applied: {len(fixed)} programs ({n_safe} of {len(expect_safe)} expected)",
        f"safe fixes that change behaviour: {sum(1 for o in fixed if not o.same)}",
        f"safe fixes that race: {sum(1 for o in fixed if o.raced)}",
        f"expected-safe fixes declined: {sum(1 for o in outcomes if o.verdict == 'DECLINED')}",
        f"fixes applied where none should be: {n_unexpected}",
        f"bad programs: {sum(1 for o in outcomes if o.bad_program)}",
        f"pinlint errors: {sum(1 for o in outcomes if o.pinlint_error)}",
    ]
    if seconds is not None:
        lines.append(f"time: {seconds:.1f} s")
    return "\n".join(lines)


def timed_run(**kw: Any) -> tuple[list[Outcome], float]:
    start = time.perf_counter()
    outcomes = run(**kw)
    return outcomes, time.perf_counter() - start
