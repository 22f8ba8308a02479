"""``pinlint trace`` and ``pinlint probe``: click commands, registered by the main CLI.

No torch import at module level: the main CLI imports this module to register the commands.

trace exit status (the program's own status is never lost):
  1  at least one violation was found (whatever the program's status; stderr says it);
  2  usage error: bad options, no command after ``--``, script or module not found;
  otherwise the program's own exit status: 0 when it succeeded (and, with no violation, the run is
     clean), N when it called ``sys.exit(N)``, 1 when it raised (as ``python`` does).
  Every run ends with a ``pinlint trace: program exited with status N`` line on stderr.
"""

from __future__ import annotations

import contextlib
import importlib.util
import os
import runpy
import subprocess
import sys
import traceback
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import click

from pinlint.runtime.model import PageableNonBlockingCopy
from pinlint.runtime.profiling import ProfileTarget
from pinlint.runtime.report import Report

EXIT_VIOLATIONS = 1
EXIT_USAGE = 2


@dataclass(frozen=True)
class Program:
    """What to run: a script path, a module name (``-m``) or code (``-c``), and its argv."""

    kind: str  # "path" | "module" | "code"
    target: str
    argv: tuple[str, ...]


def parse_program(command: Sequence[str]) -> Program:
    """``python script.py ARGS`` / ``python -m mod ARGS`` / ``python -c CODE ARGS`` (the leading
    ``python`` is optional and may be any python executable)."""
    words = list(command)
    if words and os.path.basename(words[0]).lower().startswith("python") and not words[0].endswith(".py"):
        words = words[1:]
    if not words:
        raise click.UsageError("nothing to run: give a command after --, e.g. pinlint trace -- python script.py")
    first = words[0]
    if first == "-m":
        if len(words) < 2:
            raise click.UsageError("-m needs a module name")
        return Program("module", words[1], (words[1], *words[2:]))
    if first == "-c":
        if len(words) < 2:
            raise click.UsageError("-c needs code")
        return Program("code", words[1], ("-c", *words[2:]))
    if first.startswith("-"):
        raise click.UsageError(f"unsupported python option {first!r}: use `python script.py`, `-m module` or `-c code`")
    if not os.path.isfile(first):
        raise click.UsageError(f"no such script: {first}")
    return Program("path", first, tuple(words))


@contextlib.contextmanager
def _program_environment(program: Program) -> Iterator[None]:
    """sys.argv and sys.path as ``python`` would set them; restored afterwards."""
    saved_argv, saved_path = sys.argv[:], sys.path[:]
    sys.argv = list(program.argv)
    if program.kind == "path":
        sys.path.insert(0, os.path.dirname(os.path.abspath(program.target)))
    else:
        sys.path.insert(0, os.getcwd())
    try:
        yield
    finally:
        sys.argv, sys.path[:] = saved_argv, saved_path


def _run(program: Program) -> None:
    if program.kind == "path":
        runpy.run_path(program.target, run_name="__main__")
    elif program.kind == "module":
        runpy.run_module(program.target, run_name="__main__", alter_sys=True)
    else:
        code = compile(program.target, "<string>", "exec")
        exec(code, {"__name__": "__main__", "__builtins__": __builtins__})  # noqa: S102 - the user's -c code


#: What a CPU-only torch says when a program reaches for CUDA: the run needs ``--simulate-cuda``.
_NO_CUDA_ERRORS = (
    "Torch not compiled with CUDA enabled",
    "Found no NVIDIA driver",
    "No CUDA GPUs are available",
)


@dataclass
class RunResult:
    report: Report
    status: int
    #: The program died because this machine has no CUDA (see _NO_CUDA_ERRORS).
    needed_cuda: bool = False


def run_program(program: Program, strict: bool, simulate: str | None, threads: str = "all") -> tuple[Report, int]:
    """Run the program under a watch. Returns the report and the program's exit status."""
    result = run_program_result(program, strict, simulate, threads)
    return result.report, result.status


def run_program_result(
    program: Program,
    strict: bool,
    simulate: str | None,
    threads: str = "all",
    report: Report | None = None,
) -> RunResult:
    """``report``: record into this one (``trace --profile`` passes one with a recorder)."""
    from pinlint.runtime.watch import watch

    w = watch(strict=strict, simulate=simulate, threads=threads, report=report)  # type: ignore[arg-type]
    status = 0
    needed_cuda = False
    with _program_environment(program):
        if program.kind == "module":
            try:
                found = importlib.util.find_spec(program.target) is not None
            except (ImportError, ValueError):
                found = False
            if not found:
                raise click.UsageError(f"no module named {program.target}")
        try:
            with w:
                _run(program)
        except SystemExit as exc:
            status = _exit_status(exc.code)
        except PageableNonBlockingCopy:
            status = 1  # strict mode stopped the program; the report says where
        except BaseException as exc:  # noqa: BLE001 - the program's own failure, reported like python does
            traceback.print_exc()
            status = 1
            needed_cuda = any(m in str(exc) for m in _NO_CUDA_ERRORS)
    assert w.report is not None
    return RunResult(w.report, status, needed_cuda)


def _exit_status(code: object) -> int:
    if code is None:
        return 0
    if isinstance(code, int):
        return code
    print(code, file=sys.stderr)
    return 1


def _render_full(report: Report) -> str:
    from pinlint.core.paths import display_path

    cwd = os.getcwd()
    lines = []
    for v, count in report.grouped():
        d = v.to_diagnostic()
        path = display_path(d.filename, cwd) if not d.filename.startswith("<") else d.filename
        times = f" (x{count})" if count > 1 else ""
        lines.append(f"{path}:{d.location.row}:{d.location.column}: {d.code} {d.message}{times}")
        if v.copy_site is not None and v.copy_site != v.location:
            lines.append(f"    copy at {display_path(v.copy_site.filename, cwd)}:{v.copy_site.row}")
    lines.append(closing_line(report))
    return "\n".join(lines)


def closing_line(report: Report) -> str:
    """The verdict. "All checks passed" only when copies were seen and none was a blind spot."""
    mode = "simulated CUDA" if report.simulated else "real devices"
    n = len(report.violations)
    transfers = f"{report.total} H2D transfer{'s' if report.total != 1 else ''}"
    if report.d2h_total:
        transfers += f" and {report.d2h_total} non_blocking D2H cop{'ies' if report.d2h_total != 1 else 'y'}"
    if n:
        return f"Found {n} violation{'s' if n != 1 else ''} in {transfers} ({mode})."
    blind = sum(report.unclassified.values())
    if blind:
        return (
            f"No violation in {transfers} ({mode}), but {blind} torch copy call(s) could not be classified: "
            "this run proves nothing about them."
        )
    if report.total == 0 and report.d2h_total == 0:
        return f"No H2D transfer observed ({mode}): nothing was checked."
    return f"All checks passed: {transfers} observed ({mode})."


#: ``pinlint check``'s formats; ``full`` keeps the runtime's own layout (with the copy sites).
TRACE_FORMATS = ("full", "concise", "json", "json-lines", "github", "sarif", "gitlab", "junit")


def render_report(report: Report, fmt: str, root: str | None = None) -> str:
    """Runtime findings through the formatters ``pinlint check`` uses (pinlint/report/)."""
    if fmt == "full":
        return _render_full(report)
    import importlib
    from pathlib import Path

    from pinlint import __version__
    from pinlint.report import ReportContext

    diagnostics = report.diagnostics()
    base = Path(root or os.getcwd())
    if fmt == "concise":
        from pinlint.report.human import render_concise

        return render_concise(diagnostics, base)
    ctx = ReportContext(root=base, version=__version__, selected_codes=("PIN001", "PIN002"))
    module = importlib.import_module(f"pinlint.report.{'json_format' if fmt == 'json' else fmt.replace('-', '_')}")
    return str(module.render(diagnostics, ctx)).rstrip("\n")


@click.command("trace", context_settings={"ignore_unknown_options": True, "allow_interspersed_args": False})
@click.option("--strict", is_flag=True, help="Stop the program at the first violation.")
@click.option(
    "--simulate-cuda",
    is_flag=True,
    help="Run CUDA-targeted code on a CPU-only machine (FakeTensorMode; values are not computed).",
)
@click.option("--output-format", type=click.Choice(TRACE_FORMATS), default="full", show_default=True)
@click.option(
    "--threads",
    type=click.Choice(["all", "current"]),
    default="all",
    show_default=True,
    help="all: also watch threads the program starts; current: only the main thread.",
)
@click.option(
    "--profile",
    "profile_path",
    type=click.Path(dir_okay=False),
    default=None,
    help="Add how many times each host construction and H2D copy ran, per source position, to "
    "this profile file (created when missing); `pinlint check --profile` ranks findings with it.",
)
@click.argument("command", nargs=-1, type=click.UNPROCESSED)
def trace_command(
    strict: bool,
    simulate_cuda: bool,
    output_format: str,
    threads: str,
    command: tuple[str, ...],
    profile_path: str | None = None,
) -> None:
    """Run a Python program under pinlint.runtime.watch and report its non_blocking H2D copies from
    pageable memory: pinlint trace [OPTIONS] -- python script.py ARGS (or -- python -m module ARGS)."""
    program = parse_program(command)
    try:
        from pinlint.runtime._deps import require_torch

        require_torch()
    except ImportError as exc:
        raise click.UsageError(str(exc)) from exc
    simulate = "fake" if simulate_cuda else None
    target = _profile_target(profile_path)
    given = Report(profile=target.recorder) if target is not None else None
    if output_format == "full":
        result = run_program_result(program, strict, simulate, threads, given)
    else:
        # stdout carries only the report: the program's prints go to stderr.
        with contextlib.redirect_stdout(sys.stderr):
            result = run_program_result(program, strict, simulate, threads, given)
    report, status = result.report, result.status
    text = render_report(report, output_format)
    if text:
        click.echo(text)
    click.echo(f"pinlint trace: {report.observed()}", err=True)
    if report.unclassified:
        click.echo(
            "pinlint trace: warning: some torch copies went through entry points the watch cannot classify; "
            "check them with `pinlint probe --run` on a GPU",
            err=True,
        )
    if result.needed_cuda and not simulate_cuda:
        click.echo(
            "pinlint trace: hint: the program needs CUDA and this machine has none; rerun with --simulate-cuda",
            err=True,
        )
    elif report.total == 0 and report.d2h_total == 0:
        hint = "" if simulate_cuda else " (on a machine without CUDA, add --simulate-cuda)"
        click.echo(f"pinlint trace: warning: no H2D transfer was observed{hint}", err=True)
    click.echo(f"pinlint trace: program exited with status {status}", err=True)
    sys.stdout.flush()
    if target is not None and not _write_profile(target):
        click.get_current_context().exit(EXIT_USAGE)
    click.get_current_context().exit(EXIT_VIOLATIONS if report.violations else status)


def _profile_target(path: str | None) -> ProfileTarget | None:
    """The profile to append to, validated before the program runs (a bad file exits 2 now,
    not after a long benchmark)."""
    if path is None:
        return None
    from pinlint.profile import ProfileError

    try:
        return ProfileTarget(path)
    except ProfileError as exc:
        click.echo(f"pinlint trace: error: {exc}", err=True)
        click.get_current_context().exit(EXIT_USAGE)
    return None  # pragma: no cover - exit() raises


def _write_profile(target: ProfileTarget) -> bool:
    from pinlint.profile import ProfileError

    try:
        merged = target.write()
    except (ProfileError, OSError) as exc:
        click.echo(f"pinlint trace: error: cannot write the profile {target.path}: {exc}", err=True)
        return False
    click.echo(
        f"pinlint trace: profile: {target.written} site(s) recorded; {target.path} now sums "
        f"{merged.runs} run{'s' if merged.runs != 1 else ''} ({len(merged.entries())} site(s))",
        err=True,
    )
    return True


@click.command("probe")
@click.option(
    "--run",
    "run_spec",
    metavar="PKG.MOD:FN",
    help="Check that every H2D memcpy of FN() is from pinned memory.",
)
@click.option(
    "--json",
    "json_path",
    type=click.Path(dir_okay=False),
    help="Write the results as JSON (chrome traces beside it).",
)
@click.option("--quick", is_flag=True, help="Fewer sizes and repetitions.")
def probe_command(run_spec: str | None, json_path: str | None, quick: bool) -> None:
    """On a CUDA machine, prove that pageable non_blocking copies block and pinned ones do not, by
    host timing and the profiler's memcpy kinds. Exit 0 pass, 1 fail, 2 usage, 3 skipped (no CUDA)."""
    # `-m` puts the current directory first on sys.path, so a checkout's torch.py would be
    # imported and run. Only --run (which runs the user's code by request) keeps it there.
    if run_spec:
        argv = [sys.executable, "-m", "pinlint.runtime.gpu_check"]
    elif sys.version_info >= (3, 11):
        argv = [sys.executable, "-P", "-m", "pinlint.runtime.gpu_check"]
    else:  # pragma: no cover - no -P before 3.11: drop the cwd entry by hand
        argv = [
            sys.executable,
            "-c",
            "import runpy, sys; del sys.path[0]; "
            "runpy.run_module('pinlint.runtime.gpu_check', run_name='__main__', alter_sys=True)",
        ]
    if run_spec:
        argv += ["--run", run_spec]
    if json_path:
        argv += ["--json", json_path]
    if quick:
        argv.append("--quick")
    # A child process: its CUDA context, profiler and any driver-level failure stay out of ours.
    env = dict(os.environ)
    package_root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    env["PYTHONPATH"] = os.pathsep.join(p for p in (package_root, env.get("PYTHONPATH", "")) if p)
    click.get_current_context().exit(subprocess.call(argv, env=env))


@click.group("pinlint-runtime")
def _main() -> None:
    """pinlint's runtime commands (normally reached as `pinlint trace` and `pinlint probe`)."""


_main.add_command(trace_command)
_main.add_command(probe_command)

if __name__ == "__main__":
    _main()
