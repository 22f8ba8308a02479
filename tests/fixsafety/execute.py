"""Run one program in the current (forked) process and describe what it did, as plain data."""

from __future__ import annotations

import contextlib
import importlib
import io
import json
import os
import sys
import warnings
from typing import Any

import numpy as np
import torch

from tests.fixsafety import standin as standin_mod

#: The environment variable the programs' helpers read: "1" answers True, anything else False.
ANSWER_ENV = "FIXSAFETY_PIN"
#: The device every program's ``main`` receives (a parameter, so pinlint cannot prove it is host).
DEVICE = "cpu"


def describe(value: Any, depth: int = 0) -> Any:
    """A comparable description of a value; pinnedness is left out (it is what the fix changes)."""
    if depth > 20:
        return "<deep>"
    if isinstance(value, torch.Tensor):
        t = value.detach()
        return {
            "tensor": t.tolist(),
            "dtype": str(t.dtype),
            "shape": list(t.shape),
            "requires_grad": value.requires_grad,
            "is_leaf": value.is_leaf,
        }
    if isinstance(value, np.ndarray):
        return {"ndarray": value.tolist(), "dtype": str(value.dtype)}
    if isinstance(value, (list, tuple)):
        return [type(value).__name__, [describe(v, depth + 1) for v in value]]
    if isinstance(value, dict):
        return {"dict": [[repr(k), describe(v, depth + 1)] for k, v in value.items()]}
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    return repr(value)


def run_program(project_dir: str, answer: bool, pin_all: bool = False) -> dict[str, Any]:
    """Import ``prog`` from ``project_dir`` and call ``main(DEVICE)``; never raises."""
    os.chdir(project_dir)
    sys.path.insert(0, project_dir)
    os.environ[ANSWER_ENV] = "1" if answer else "0"
    torch.manual_seed(0)
    np.random.seed(0)
    warnings.simplefilter("ignore")
    standin = standin_mod.install(project_dir, pin_all)
    out = io.StringIO()
    result: dict[str, Any] = {}
    try:
        with contextlib.redirect_stdout(out):
            prog = importlib.import_module("prog")
            result["return"] = json.loads(json.dumps(describe(prog.main(DEVICE))).replace(project_dir, "<project>"))
    except BaseException as e:  # noqa: BLE001 - the exception is the observable
        result["exception"] = f"{type(e).__name__}: {e}"
    standin.synchronize("the end of the program")
    text = out.getvalue()
    result["stdout"] = text
    # Paths differ between the before and after copies; what they name does not.
    for key in ("stdout", "exception"):
        if key in result:
            result[key] = result[key].replace(project_dir, "<project>")
    result["races"] = standin.races
    result["async_copies"] = standin.async_copies
    return result
