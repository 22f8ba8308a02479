"""Generated programs: factories x sinks x flows x (no write | a write after the copy | late device).

Every combination of factory and sink yields one program whose fix must be safe, one where the
source is written after the copy (a race once pinned), and every other pair one where the device
name is bound only after the construction.
"""

from __future__ import annotations

import itertools
import textwrap

from tests.fixsafety.program import NOT_SAFE, SAFE, Program

FACTORIES = [
    ("tensor", "torch.tensor([1, 2, 3])"),
    ("tensorcomp", "torch.tensor([i * 2 for i in range(3)])"),
    ("zeros", "torch.zeros(3)"),
    ("ones", "torch.ones(3, dtype=torch.int64)"),
    ("arange", "torch.arange(3)"),
    ("full", "torch.full((3,), 7)"),
    ("randint", "torch.randint(0, 10, (3,))"),
    ("tensorlen", "torch.tensor([float(len(s)) for s in ('a', 'bb', 'ccc')])"),
]

# A sink turns a host expression into the "device" value. ``{src}`` is the host expression.
SINKS = [
    ("to", "{src}.to({dev}, non_blocking=True)"),
    ("tokw", "{src}.to(device={dev}, non_blocking=True)"),
    ("cuda", "{src}.cuda(non_blocking=True)"),
    ("copy", "torch.zeros(3, device={dev}).copy_({src}, non_blocking=True)"),
]

FLOWS = ("chain", "local", "attr", "loop")

# Writes to the host source after the copy; each changes the content (or bumps the version).
WRITES = [
    ("iadd", "{x} += 1"),
    ("setitem", "{x}[0] = 5"),
    ("fill", "{x}.fill_(9)"),
    ("numpy", "{x}.numpy()[1] = 4"),
]


def _body(flow: str, factory: str, sink: str, dev: str, post: str, late: bool) -> str:
    """The source of ``prog.py`` for one combination."""
    prelude = "dev = device\n" if dev == "dev" and not late else ""
    bind_late = "dev = device\n" if late else ""
    if flow == "chain":
        expr = sink.format(src=factory, dev=dev)
        fn = f"def make(device):\n{_ind(prelude)}{_ind(bind_late)}    return {expr}\n"
    elif flow == "local":
        expr = sink.format(src="x", dev=dev)
        lines = f"{prelude}x = {factory}\n{bind_late}out = {expr}\n{post.format(x='x')}\nreturn out"
        fn = f"def make(device):\n{_ind(lines)}"
    elif flow == "attr":
        expr = sink.format(src="self.x", dev=dev)
        lines = f"{prelude}self.x = {factory}\n{bind_late}out = {expr}\n{post.format(x='self.x')}\nreturn out"
        fn = (
            "class Holder:\n"
            f"    def make(self, device):\n{_ind(lines, 8)}\n"
            "def make(device):\n    return Holder().make(device)\n"
        )
    else:  # loop: a fresh tensor per iteration (fine), written after its copy (a race)
        expr = sink.format(src="x", dev=dev)
        lines = (
            f"{prelude}outs = []\nfor i in range(2):\n"
            f"    x = {factory}\n{_ind(bind_late)}    outs.append({expr})\n"
            f"{_ind(post.format(x='x'))}\nreturn outs"
        )
        fn = f"def make(device):\n{_ind(lines)}"
    return f"import torch\n\n\n{fn}\n\ndef main(device):\n    return make(device)\n"


def _ind(text: str, n: int = 4) -> str:
    return textwrap.indent(text, " " * n) if text else ""


def programs() -> list[Program]:
    out: list[Program] = []
    for i, ((fname, factory), (sname, sink)) in enumerate(itertools.product(FACTORIES, SINKS)):
        dev = "dev" if i % 2 else "device"
        flow = FLOWS[i % len(FLOWS)]
        out.append(
            Program(
                id=f"g_ok_{fname}_{sname}_{flow}_{dev}",
                kind="plain",
                expect=SAFE,
                files={"prog.py": _body(flow, factory, sink, dev, "", late=False)},
                note="generated: no write after the copy",
            )
        )
        # Races need a name to write through: no chain flow.
        rflow = ("local", "attr", "loop")[i % 3]
        wname, write = WRITES[i % len(WRITES)]
        if sname == "copy" and rflow == "loop" and wname == "numpy":
            wname, write = WRITES[0]
        out.append(
            Program(
                id=f"g_race_{fname}_{sname}_{rflow}_{wname}",
                kind="race",
                expect=NOT_SAFE,
                files={"prog.py": _body(rflow, factory, sink, dev, write, late=False)},
                note="generated: the source is written after the copy",
            )
        )
        if i % 2 == 0 and sname != "cuda":
            lflow = ("local", "attr", "loop")[(i // 2) % 3]
            out.append(
                Program(
                    id=f"g_late_{fname}_{sname}_{lflow}",
                    kind="binding",
                    expect=NOT_SAFE,
                    files={"prog.py": _body(lflow, factory, sink, "dev", "", late=True)},
                    note="generated: the device name is bound after the construction",
                )
            )
    return out
