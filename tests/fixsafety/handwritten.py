"""Hand-written programs, one or more per kind of issue 12 (ids say the kind: b, h, i, d, a, r, e, p).

Each ``prog.py`` defines ``main(device)``; the harness passes ``"cpu"`` standing in for a GPU.
"""

from __future__ import annotations

from typing import Any

from tests.fixsafety.program import NOT_SAFE, SAFE, Program


def P(id: str, kind: str, expect: str, prog: str, **kw: Any) -> Program:
    files = {"prog.py": prog, **kw.pop("files", {})}
    return Program(id=id, kind=kind, expect=expect, files=files, **kw)


# Most programs use the configured helper ``pinhelp:is_pin_memory_available(device)``; the import
# is written by the fix unless the program has it.
IMPORT = "from pinhelp import is_pin_memory_available\n"

BINDING = [
    P(
        "b01_bound_on_some_paths",
        "binding",
        NOT_SAFE,
        """
        import torch

        def make(n, use):
            t = torch.zeros(n)
            if use is not None:
                dev = use
            else:
                return t
            return t.to(dev, non_blocking=True)

        def main(device):
            return make(3, None), make(3, device)
        """,
        note="dev unbound at the construction when use is None",
    ),
    P(
        "b02_bound_later",
        "binding",
        NOT_SAFE,
        """
        import torch

        def make(n, name):
            t = torch.arange(n)
            dev = name
            return t.to(dev, non_blocking=True)

        def main(device):
            return make(4, device)
        """,
    ),
    P(
        "b03_comprehension_target",
        "binding",
        NOT_SAFE,
        """
        import torch

        def make(devices):
            t = torch.tensor([1, 2, 3])
            return [t.to(d, non_blocking=True) for d in devices]

        def main(device):
            return make([device, device])
        """,
    ),
    P(
        "b04_for_target",
        "binding",
        NOT_SAFE,
        """
        import torch

        def make(devices):
            t = torch.ones(2)
            out = []
            for d in devices:
                out.append(t.to(d, non_blocking=True))
            return out

        def main(device):
            return make([device])
        """,
    ),
    P(
        "b05_match_target",
        "binding",
        NOT_SAFE,
        """
        import torch

        def make(spec):
            t = torch.ones(3)
            match spec:
                case {"device": dev}:
                    return t.to(dev, non_blocking=True)
            return None

        def main(device):
            return make({"device": device}), make({})
        """,
    ),
    P(
        "b06_walrus_target",
        "binding",
        NOT_SAFE,
        """
        import torch

        def pick(device):
            return device

        def make(device):
            t = torch.full((2,), 5)
            if (dev := pick(device)) is not None:
                return t.to(dev, non_blocking=True)
            return t

        def main(device):
            return make(device)
        """,
    ),
    P(
        "b07_with_target",
        "binding",
        NOT_SAFE,
        """
        import contextlib
        import torch

        @contextlib.contextmanager
        def on(device):
            yield device

        def make(device):
            t = torch.zeros(2)
            with on(device) as dev:
                return t.to(dev, non_blocking=True)

        def main(device):
            return make(device)
        """,
    ),
    P(
        "b08_attribute_under_guard",
        "binding",
        NOT_SAFE,
        """
        import torch

        def make(n, like):
            t = torch.zeros(n)
            if like is not None:
                return t.to(like.device, non_blocking=True)
            return t

        def main(device):
            return make(3, None), make(3, torch.zeros(1, device=device))
        """,
        note="like.device raises AttributeError when like is None",
    ),
    P(
        "b09_attribute_set_by_call",
        "binding",
        NOT_SAFE,
        """
        import torch

        class Runner:
            def setup(self, device):
                self.device = device

            def make(self, device):
                t = torch.zeros(3)
                self.setup(device)
                return t.to(self.device, non_blocking=True)

        def main(device):
            return Runner().make(device)
        """,
    ),
    P(
        "b10_rebound_between",
        "binding",
        NOT_SAFE,
        """
        import torch

        def make(n, device):
            dev = None
            t = torch.zeros(n)
            dev = device
            return t.to(dev, non_blocking=True)

        def main(device):
            return make(2, device)
        """,
    ),
    P(
        "b11_attribute_assigned_between",
        "binding",
        NOT_SAFE,
        """
        import torch

        class Cfg:
            device = None

        def make(cfg, device):
            t = torch.ones(3)
            cfg.device = device
            return t.to(cfg.device, non_blocking=True)

        def main(device):
            return make(Cfg(), device)
        """,
    ),
    P(
        "b12_module_level_bound_later",
        "binding",
        NOT_SAFE,
        """
        import os
        import torch

        HOST = torch.tensor([1, 2, 3])
        DEVICE = os.environ.get("FIXSAFETY_DEVICE", "cpu")
        ON_DEVICE = HOST.to(DEVICE, non_blocking=True)

        def main(device):
            return ON_DEVICE
        """,
    ),
    P(
        "b13_lambda_parameter",
        "binding",
        NOT_SAFE,
        """
        import torch

        def make():
            t = torch.tensor([4, 5])
            return lambda d: t.to(d, non_blocking=True)

        def main(device):
            return make()(device)
        """,
    ),
    P(
        "b14_nested_function_parameter",
        "binding",
        NOT_SAFE,
        """
        import torch

        def make():
            t = torch.arange(3)

            def send(dev):
                return t.to(dev, non_blocking=True)

            return send

        def main(device):
            return make()(device)
        """,
    ),
    P(
        "b15_bound_in_try",
        "binding",
        NOT_SAFE,
        """
        import torch

        def make(cfg):
            t = torch.zeros(2)
            try:
                dev = cfg["device"]
            except KeyError:
                return t
            return t.to(dev, non_blocking=True)

        def main(device):
            return make({}), make({"device": device})
        """,
    ),
    P(
        "b16_bound_both_branches",
        "binding",
        SAFE,
        """
        import torch

        def make(n, device, flag):
            if flag:
                dev = device
            else:
                dev = device
            t = torch.zeros(n)
            return t.to(dev, non_blocking=True)

        def main(device):
            return make(2, device, True), make(3, device, False)
        """,
        note="bound on every path before the construction: safe",
    ),
    P(
        "b17_fresh_in_for_body",
        "binding",
        SAFE,
        """
        import torch

        def make(devices):
            out = []
            for d in devices:
                out.append(torch.arange(3).to(d, non_blocking=True))
            return out

        def main(device):
            return make([device, device])
        """,
        note="construction inside the loop that binds d: safe",
    ),
    P(
        "b18_self_device_from_init",
        "binding",
        SAFE,
        """
        import torch

        class Model:
            def __init__(self, device):
                self.device = device

            def make(self, n):
                t = torch.zeros(n)
                return t.to(self.device, non_blocking=True)

        def main(device):
            return Model(device).make(3)
        """,
    ),
    P(
        "b19_device_deleted_between",
        "binding",
        NOT_SAFE,
        """
        import torch

        def make(device):
            dev = device
            t = torch.ones(2)
            other = dev
            del dev
            return t.to(other, non_blocking=True)

        def main(device):
            return make(device)
        """,
        note="other is bound after the construction",
    ),
    P(
        "b20_comprehension_construction",
        "binding",
        SAFE,
        """
        import torch

        def make(devices):
            return [torch.tensor([i, i]).to(d, non_blocking=True) for i, d in enumerate(devices)]

        def main(device):
            return make([device, device])
        """,
        note="construction inside the comprehension that binds d: safe",
    ),
]

HELPER_SCOPE = [
    P(
        "h01_import_in_other_function",
        "helper-scope",
        SAFE,
        """
        import torch

        def other():
            from pinhelp import is_pin_memory_available
            return is_pin_memory_available("cpu")

        def make(device):
            return torch.tensor([1, 2]).to(device, non_blocking=True)

        def main(device):
            return make(device), other()
        """,
        note="the import in other() does not bind the name in make()",
    ),
    P(
        "h02_import_later_same_function",
        "helper-scope",
        NOT_SAFE,
        """
        import torch

        def make(device):
            t = torch.tensor([1, 2])
            from pinhelp import is_pin_memory_available
            ok = is_pin_memory_available(device)
            return t.to(device, non_blocking=True), ok

        def main(device):
            return make(device)
        """,
        note="the local import makes the name local: UnboundLocalError before it",
    ),
    P(
        "h03_type_checking_import",
        "helper-scope",
        SAFE,
        """
        from typing import TYPE_CHECKING

        import torch

        if TYPE_CHECKING:
            from pinhelp import is_pin_memory_available

        def make(device):
            return torch.tensor([1, 2]).to(device, non_blocking=True)

        def main(device):
            return make(device)
        """,
    ),
    P(
        "h04_name_in_docstring",
        "helper-scope",
        SAFE,
        '''
        """Pins with is_pin_memory_available from pinhelp."""
        import torch

        def make(device):
            """Calls is_pin_memory_available(device) when fixed."""
            return torch.tensor([3, 4]).to(device, non_blocking=True)

        def main(device):
            return make(device), __doc__
        ''',
    ),
    P(
        "h05_name_in_comment",
        "helper-scope",
        SAFE,
        """
        import torch
        # from pinhelp import is_pin_memory_available

        def make(device):
            return torch.tensor([3, 4]).to(device, non_blocking=True)

        def main(device):
            return make(device)
        """,
    ),
    P(
        "h06_parameter_named_helper",
        "helper-scope",
        NOT_SAFE,
        """
        import torch

        def make(device, is_pin_memory_available=False):
            t = torch.tensor([1, 2])
            return t.to(device, non_blocking=True), is_pin_memory_available

        def main(device):
            return make(device)
        """,
        note="the parameter shadows the helper: calling it raises TypeError",
    ),
    P(
        "h07_local_named_helper",
        "helper-scope",
        NOT_SAFE,
        """
        import torch

        def make(device, cfg):
            is_pin_memory_available = cfg.get("pin", False)
            t = torch.tensor([1, 2])
            return t.to(device, non_blocking=True), is_pin_memory_available

        def main(device):
            return make(device, {})
        """,
    ),
    P(
        "h08_alias_in_file",
        "helper-scope",
        SAFE,
        """
        import torch
        from pinhelp import is_pin_memory_available as pin_ok

        def make(device):
            return torch.tensor([1, 2]).to(device, non_blocking=True)

        def main(device):
            return make(device), pin_ok(device)
        """,
    ),
    P(
        "h09_method_named_helper",
        "helper-scope",
        SAFE,
        """
        import torch

        class Platform:
            def is_pin_memory_available(self):
                return False

            def make(self, device):
                return torch.tensor([1, 2]).to(device, non_blocking=True)

        def main(device):
            return Platform().make(device)
        """,
        note="a class-scope name is not visible in the method body",
    ),
    P(
        "h10_name_in_string_code",
        "helper-scope",
        SAFE,
        """
        import torch

        SNIPPET = "from pinhelp import is_pin_memory_available"

        def make(device):
            return torch.tensor([1, 2]).to(device, non_blocking=True)

        def main(device):
            return make(device), SNIPPET
        """,
    ),
    P(
        "h11_module_import_in_other_function",
        "helper-scope",
        SAFE,
        """
        import torch

        def probe():
            import pinhelp
            return pinhelp.is_pin_memory_available("cpu")

        def make(device):
            return torch.tensor([1, 2]).to(device, non_blocking=True)

        def main(device):
            return make(device), probe()
        """,
    ),
    P(
        "h12_module_attribute_in_file",
        "helper-scope",
        SAFE,
        """
        import torch
        import pinhelp

        def make(device):
            return torch.tensor([1, 2]).to(device, non_blocking=True)

        def main(device):
            return make(device), pinhelp.is_pin_memory_available(device)
        """,
    ),
    P(
        "h13_global_rebound_to_value",
        "helper-scope",
        NOT_SAFE,
        """
        import torch
        from pinhelp import is_pin_memory_available

        is_pin_memory_available = is_pin_memory_available("cpu")

        def make(device):
            return torch.tensor([1, 2]).to(device, non_blocking=True)

        def main(device):
            return make(device), is_pin_memory_available
        """,
        note="the module name is rebound to a bool after the import",
    ),
    P(
        "h14_import_in_if_false",
        "helper-scope",
        SAFE,
        """
        import sys
        import torch

        if sys.version_info < (3, 0):
            from pinhelp import is_pin_memory_available

        def make(device):
            return torch.tensor([1, 2]).to(device, non_blocking=True)

        def main(device):
            return make(device)
        """,
    ),
    P(
        "h15_global_statement_local_def",
        "helper-scope",
        NOT_SAFE,
        """
        import torch

        def make(device):
            def is_pin_memory_available(d):
                raise RuntimeError("not the helper")
            return torch.tensor([1, 2]).to(device, non_blocking=True), is_pin_memory_available

        def main(device):
            out, _ = make(device)
            return out
        """,
        note="a nested def with the helper's name shadows it",
    ),
]

IMPORTS = [
    P(
        "i01_string_looks_like_imports",
        "imports",
        SAFE,
        '''
        TEMPLATE = """
        import os
        import torch
        """
        import torch

        def make(device):
            return torch.tensor([1, 2]).to(device, non_blocking=True)

        def main(device):
            return make(device), TEMPLATE
        ''',
    ),
    P(
        "i02_use_before_import_block",
        "imports",
        SAFE,
        """
        import torch

        def make(device):
            return torch.tensor([1, 2]).to(device, non_blocking=True)

        WARM = make("cpu")

        import os

        def main(device):
            return make(device), WARM, os.sep
        """,
        note="module-level code calls the fixed function before the last import",
    ),
    P(
        "i03_future_import",
        "imports",
        SAFE,
        '''
        """Doc."""
        from __future__ import annotations

        import torch

        def make(device: str) -> torch.Tensor:
            return torch.tensor([1, 2]).to(device, non_blocking=True)

        def main(device):
            return make(device), __doc__
        ''',
    ),
    P(
        "i04_module_docstring_only",
        "imports",
        SAFE,
        '''
        """Module docstring that must stay the docstring."""
        import torch

        def make(device):
            return torch.tensor([1, 2]).to(device, non_blocking=True)

        def main(device):
            return make(device), __doc__
        ''',
    ),
    P(
        "i05_string_after_imports",
        "imports",
        SAFE,
        """
        import torch
        HELP = '''
        from somewhere import something
        '''

        def make(device):
            return torch.tensor([1, 2]).to(device, non_blocking=True)

        def main(device):
            return make(device), HELP
        """,
    ),
    P(
        "i06_parenthesized_import",
        "imports",
        SAFE,
        """
        from os import (
            path,
            sep,
        )
        import torch

        def make(device):
            return torch.tensor([1, 2]).to(device, non_blocking=True)

        def main(device):
            return make(device), sep, path.basename("a/b")
        """,
    ),
    P(
        "i07_semicolon_imports",
        "imports",
        SAFE,
        """
        import os; import torch

        def make(device):
            return torch.tensor([1, 2]).to(device, non_blocking=True)

        def main(device):
            return make(device), os.sep
        """,
    ),
    P(
        "i08_try_import_block",
        "imports",
        SAFE,
        """
        import torch
        try:
            import numpy as np
        except ImportError:
            np = None

        def make(device):
            return torch.tensor([1, 2]).to(device, non_blocking=True)

        def main(device):
            return make(device), np is not None
        """,
    ),
    P(
        "i09_join_existing_from_import",
        "imports",
        SAFE,
        """
        import torch
        from pinhelp import __name__ as helper_module

        def make(device):
            return torch.tensor([1, 2]).to(device, non_blocking=True)

        def main(device):
            return make(device), helper_module
        """,
    ),
    P(
        "i10_docstring_with_import_lines",
        "imports",
        SAFE,
        '''
        """Usage:

        import torch
        from prog import make
        """
        import torch

        def make(device):
            return torch.tensor([1, 2]).to(device, non_blocking=True)

        def main(device):
            return make(device), __doc__
        ''',
    ),
    P(
        "i11_shebang_and_comments",
        "imports",
        SAFE,
        """
        #!/usr/bin/env python
        # -*- coding: utf-8 -*-
        # A header comment.
        import torch

        def make(device):
            return torch.tensor([1, 2]).to(device, non_blocking=True)

        def main(device):
            return make(device)
        """,
    ),
    P(
        "i12_backslash_continued_import",
        "imports",
        SAFE,
        """
        import os, \\
            sys
        import torch

        def make(device):
            return torch.tensor([1, 2]).to(device, non_blocking=True)

        def main(device):
            return make(device), os.sep, sys.maxsize > 0
        """,
    ),
    P(
        "i13_no_imports_before_use",
        "imports",
        SAFE,
        """
        def make(device):
            import torch
            return torch.tensor([1, 2]).to(device, non_blocking=True)

        def main(device):
            return make(device)
        """,
    ),
    P(
        "i14_all_and_dunder",
        "imports",
        SAFE,
        '''
        """Doc."""

        __all__ = ["make"]
        __version__ = "1.0"

        import torch

        def make(device):
            return torch.tensor([1, 2]).to(device, non_blocking=True)

        def main(device):
            return make(device), __doc__, __all__
        ''',
    ),
]

DATA = [
    P(
        "d01_augmented_numpy",
        "data",
        NOT_SAFE,
        """
        import numpy as np
        import torch

        def make(device, ids):
            acc = 0
            acc += np.bincount(ids, minlength=4)
            return torch.tensor(acc).to(device, non_blocking=True)

        def main(device):
            return make(device, [0, 1, 1, 3])
        """,
    ),
    P(
        "d02_np_random",
        "data",
        NOT_SAFE,
        """
        import numpy as np
        import torch

        def make(device):
            return torch.tensor(np.random.rand(3)).to(device, non_blocking=True)

        def main(device):
            return make(device)
        """,
    ),
    P(
        "d03_astype",
        "data",
        NOT_SAFE,
        """
        import numpy as np
        import torch

        def make(device, vals):
            data = np.array(vals).astype(np.int64)
            return torch.tensor(data).to(device, non_blocking=True)

        def main(device):
            return make(device, [1, 2, 3])
        """,
    ),
    P(
        "d04_numpy_arithmetic",
        "data",
        NOT_SAFE,
        """
        import numpy as np
        import torch

        def make(device):
            data = np.ones(3) * 2
            return torch.tensor(data).to(device, non_blocking=True)

        def main(device):
            return make(device)
        """,
    ),
    P(
        "d05_tensor_in_dict",
        "data",
        NOT_SAFE,
        """
        import torch

        def make(device):
            batch = {"x": torch.ones(3)}
            return torch.tensor(batch["x"]).to(device, non_blocking=True)

        def main(device):
            return make(device)
        """,
    ),
    P(
        "d06_tuple_unpack_numpy",
        "data",
        NOT_SAFE,
        """
        import numpy as np
        import torch

        def make(device):
            a, b = np.zeros(2), np.ones(2)
            return torch.tensor(a).to(device, non_blocking=True), b.tolist()

        def main(device):
            return make(device)
        """,
    ),
    P(
        "d07_numpy_reassigned",
        "data",
        NOT_SAFE,
        """
        import numpy as np
        import torch

        def make(device):
            x = np.zeros(3)
            x = x + 1
            return torch.tensor(x).to(device, non_blocking=True)

        def main(device):
            return make(device)
        """,
    ),
    P(
        "d08_tensor_numpy_roundtrip",
        "data",
        NOT_SAFE,
        """
        import torch

        def make(device, t):
            return torch.tensor(t.numpy()).to(device, non_blocking=True)

        def main(device):
            return make(device, torch.arange(3))
        """,
    ),
    P(
        "d09_function_returns_numpy",
        "data",
        NOT_SAFE,
        """
        import numpy as np
        import torch

        def load():
            return np.arange(3)

        def make(device):
            return torch.tensor(load()).to(device, non_blocking=True)

        def main(device):
            return make(device)
        """,
    ),
    P(
        "d10_tensor_parameter",
        "data",
        NOT_SAFE,
        """
        import torch

        def make(device, t):
            return torch.tensor(t).to(device, non_blocking=True)

        def main(device):
            return make(device, torch.ones(2))
        """,
    ),
    P(
        "d11_plain_numpy_module",
        "data",
        NOT_SAFE,
        """
        import numpy
        import torch

        def make(device):
            return torch.tensor(numpy.random.randn(2)).to(device, non_blocking=True)

        def main(device):
            return make(device)
        """,
    ),
    P(
        "d12_concatenate",
        "data",
        NOT_SAFE,
        """
        import numpy as np
        import torch

        def make(device):
            data = np.concatenate([np.zeros(2), np.ones(2)])
            return torch.tensor(data).to(device, non_blocking=True)

        def main(device):
            return make(device)
        """,
    ),
    P(
        "d13_maybe_numpy_branch",
        "data",
        NOT_SAFE,
        """
        import numpy as np
        import torch

        def make(device, flag):
            arr = np.arange(3)
            data = arr.tolist() if flag else arr
            return torch.tensor(data).to(device, non_blocking=True)

        def main(device):
            return make(device, True), make(device, False)
        """,
    ),
    P(
        "d14_augmented_list_then_numpy",
        "data",
        NOT_SAFE,
        """
        import numpy as np
        import torch

        def make(device):
            acc = np.zeros(2)
            acc += 1
            return torch.tensor(acc).to(device, non_blocking=True)

        def main(device):
            return make(device)
        """,
    ),
    P(
        "d15_tensor_in_list_index",
        "data",
        NOT_SAFE,
        """
        import torch

        def make(device):
            items = [torch.ones(2), torch.zeros(2)]
            return torch.tensor(items[0]).to(device, non_blocking=True)

        def main(device):
            return make(device)
        """,
    ),
    P(
        "d16_tolist_is_python",
        "data",
        SAFE,
        """
        import numpy as np
        import torch

        def make(device):
            data = np.arange(3).tolist()
            return torch.tensor(data).to(device, non_blocking=True)

        def main(device):
            return make(device)
        """,
        note=".tolist() is Python data: safe",
    ),
    P(
        "d17_sum_of_arrays",
        "data",
        NOT_SAFE,
        """
        import numpy as np
        import torch

        def make(device):
            data = sum([np.ones(2), np.ones(2)])
            return torch.tensor(data).to(device, non_blocking=True)

        def main(device):
            return make(device)
        """,
    ),
    P(
        "d18_np_where",
        "data",
        NOT_SAFE,
        """
        import numpy as np
        import torch

        def make(device, vals):
            data = np.where(np.array(vals) > 1, 1, 0)
            return torch.tensor(data).to(device, non_blocking=True)

        def main(device):
            return make(device, [0, 2, 3])
        """,
    ),
    P(
        "d19_loop_that_runs_then_numpy",
        "data",
        NOT_SAFE,
        """
        import numpy as np
        import torch

        def make(device):
            data = [1, 2]
            outs = []
            for _ in range(3):
                outs.append(torch.tensor(data).to(device, non_blocking=True))
                data = np.zeros(2)
            return outs

        def main(device):
            return make(device)
        """,
        note="the loop surely runs: its first walk sees the list, the later ones the array",
    ),
    P(
        "d20_loop_that_runs_python_data",
        "data",
        SAFE,
        """
        import torch

        def make(device):
            data = [1, 2]
            outs = []
            for _ in range(3):
                outs.append(torch.tensor(data).to(device, non_blocking=True))
                data = [len(outs), 0]
            return outs

        def main(device):
            return make(device)
        """,
    ),
]

HELPER_ARGS = [
    P(
        "a01_noarg_helper_called_in_file",
        "helper-args",
        SAFE,
        """
        import torch
        from pinhelp import is_pin_memory_available

        def make(device):
            return torch.tensor([1, 2]).to(device, non_blocking=True)

        def main(device):
            return make(device), is_pin_memory_available()
        """,
        helper="noarg",
        config="",
        note="the file calls it with no argument",
    ),
    P(
        "a02_noarg_helper_project_definition",
        "helper-args",
        SAFE,
        """
        import torch

        def make(device):
            return torch.tensor([1, 2]).to(device, non_blocking=True)

        def main(device):
            return make(device)
        """,
        helper="noarg",
        config="",
        note="the project defines it with no parameter",
    ),
    P(
        "a03_kwonly_helper_called_by_keyword",
        "helper-args",
        SAFE,
        """
        import torch
        from pinhelp import is_pin_memory_available

        def make(device):
            return torch.tensor([1, 2]).to(device, non_blocking=True)

        def main(device):
            return make(device), is_pin_memory_available(device=device)
        """,
        helper="kwonly",
        config="",
    ),
    P(
        "a04_kwonly_helper_project_definition",
        "helper-args",
        SAFE,
        """
        import torch

        def make(device):
            return torch.tensor([1, 2]).to(device, non_blocking=True)

        def main(device):
            return make(device)
        """,
        helper="kwonly",
        config="",
    ),
    P(
        "a05_current_platform_method",
        "helper-args",
        SAFE,
        """
        import torch
        from platforms import current_platform

        def make(device):
            return torch.tensor([1, 2]).to(device, non_blocking=True)

        def main(device):
            return make(device), current_platform.is_pin_memory_available()
        """,
        helper="",
        config="",
        files={
            "platforms.py": """
        import os

        class Platform:
            def is_pin_memory_available(self):
                return os.environ.get("FIXSAFETY_PIN") == "1"

        current_platform = Platform()
        """
        },
        note="vLLM/SGLang style: current_platform.is_pin_memory_available()",
    ),
    P(
        "a06_evidence_beats_config",
        "helper-args",
        SAFE,
        """
        import torch
        from pinhelp import is_pin_memory_available

        def make(device):
            return torch.tensor([1, 2]).to(device, non_blocking=True)

        def main(device):
            return make(device), is_pin_memory_available()
        """,
        helper="noarg",
        note="config says (device); the file and definition say ()",
    ),
    P(
        "a07_device_default_helper",
        "helper-args",
        SAFE,
        """
        import torch
        from pinhelp import is_pin_memory_available

        def make(device):
            return torch.tensor([1, 2]).to(device, non_blocking=True)

        def main(device):
            return make(device), is_pin_memory_available(device)
        """,
        helper="device_default",
        config="",
    ),
    P(
        "a08_vllm_named_stub_takes_device",
        "helper-args",
        SAFE,
        """
        import torch
        from vllm.utils import is_pin_memory_available

        def make(device):
            return torch.tensor([1, 2]).to(device, non_blocking=True)

        def main(device):
            return make(device), is_pin_memory_available(device)
        """,
        helper="",
        config="",
        files={
            "vllm/__init__.py": "",
            "vllm/utils.py": """
        import os

        import torch

        def is_pin_memory_available(device):
            torch.device(device)
            return os.environ.get("FIXSAFETY_PIN") == "1"
        """,
        },
        note="the file calls it with a device whatever a table says about vllm",
    ),
    P(
        "a09_helper_needs_two_args",
        "helper-args",
        NOT_SAFE,
        """
        import torch
        from pinhelp2 import is_pin_memory_available

        def make(device):
            return torch.tensor([1, 2]).to(device, non_blocking=True)

        def main(device):
            return make(device), is_pin_memory_available(device, True)
        """,
        helper="",
        config="",
        files={
            "pinhelp2.py": """
        import os

        def is_pin_memory_available(device, strict):
            return os.environ.get("FIXSAFETY_PIN") == "1"
        """
        },
    ),
    P(
        "a10_noarg_vllm_stub_configured",
        "helper-args",
        SAFE,
        """
        import torch

        def make(device):
            return torch.tensor([1, 2]).to(device, non_blocking=True)

        def main(device):
            return make(device)
        """,
        helper="",
        config="vllm.utils:is_pin_memory_available()",
        files={
            "vllm/__init__.py": "",
            "vllm/utils.py": """
        import os

        def is_pin_memory_available():
            return os.environ.get("FIXSAFETY_PIN") == "1"
        """,
        },
    ),
    P(
        "a11_noarg_project_def_cuda",
        "helper-args",
        SAFE,
        """
        import torch

        def make():
            return torch.ones(3).cuda(non_blocking=True)

        def main(device):
            return make()
        """,
        helper="noarg",
        config="",
    ),
]

RACE = [
    P(
        "r00a_list_item_written_after_loop_copy",
        "race",
        NOT_SAFE,
        """
        import torch

        def make(device):
            bufs = [torch.zeros(2) for _ in range(2)]
            outs = []
            for b in bufs:
                outs.append(b.to(device, non_blocking=True))
            bufs[0].add_(1)
            return outs
        def main(device):
            return make(device)
        """,
        note="the copy reads items of a list it built; a write through the list follows it",
    ),
    P(
        "r00b_appended_item_written_after_loop_copy",
        "race",
        NOT_SAFE,
        """
        import torch

        def make(device, rows):
            bufs = []
            for row in rows:
                bufs.append(torch.tensor(row))
            outs = [t.to(device, non_blocking=True) for t in bufs]
            for t in bufs:
                t.zero_()
            return outs
        def main(device):
            return make(device, [[1, 2], [3, 4]])
        """,
    ),
    P(
        "r01_iadd_after_copy",
        "race",
        NOT_SAFE,
        """
        import torch

        def make(device):
            x = torch.zeros(3)
            y = x.to(device, non_blocking=True)
            x += 1
            return y, x
        def main(device):
            return make(device)
        """,
    ),
    P(
        "r02_index_set_after_copy",
        "race",
        NOT_SAFE,
        """
        import torch

        def make(device):
            x = torch.tensor([1, 2, 3])
            y = x.to(device, non_blocking=True)
            x[0] = 9
            return y
        def main(device):
            return make(device)
        """,
    ),
    P(
        "r03_copy_into_source",
        "race",
        NOT_SAFE,
        """
        import torch

        def make(device, other):
            x = torch.empty(3)
            x.fill_(1)
            y = x.to(device, non_blocking=True)
            x.copy_(other)
            return y
        def main(device):
            return make(device, torch.full((3,), 4.0))
        """,
    ),
    P(
        "r04_zero_after_copy",
        "race",
        NOT_SAFE,
        """
        import torch

        def make(device):
            x = torch.ones(4)
            y = x.to(device, non_blocking=True)
            x.zero_()
            return y
        def main(device):
            return make(device)
        """,
    ),
    P(
        "r05_numpy_view_write",
        "race",
        NOT_SAFE,
        """
        import torch

        def make(device):
            x = torch.arange(4)
            y = x.to(device, non_blocking=True)
            view = x.numpy()
            view[1] = 100
            return y
        def main(device):
            return make(device)
        """,
    ),
    P(
        "r06_buffer_refilled_in_loop",
        "race",
        NOT_SAFE,
        """
        import torch

        def make(device, rows):
            buf = torch.zeros(2, dtype=torch.int64)
            out = []
            for row in rows:
                buf[0] = row[0]
                buf[1] = row[1]
                out.append(buf.to(device, non_blocking=True))
            return out
        def main(device):
            return make(device, [(1, 2), (3, 4)])
        """,
    ),
    P(
        "r07_view_written",
        "race",
        NOT_SAFE,
        """
        import torch

        def make(device):
            x = torch.zeros(4)
            y = x.to(device, non_blocking=True)
            x[1:].fill_(3)
            return y
        def main(device):
            return make(device)
        """,
    ),
    P(
        "r08_written_by_callee",
        "race",
        NOT_SAFE,
        """
        import torch

        def bump(t):
            t.add_(1)

        def make(device):
            x = torch.zeros(2)
            y = x.to(device, non_blocking=True)
            bump(x)
            return y
        def main(device):
            return make(device)
        """,
    ),
    P(
        "r09_self_buffer_refilled_elsewhere",
        "race",
        NOT_SAFE,
        """
        import torch

        class Stager:
            def __init__(self, device):
                self.device = device
                self.buf = torch.zeros(3)

            def send(self):
                return self.buf.to(self.device, non_blocking=True)

            def refill(self, v):
                self.buf.fill_(v)

        def main(device):
            s = Stager(device)
            a = s.send()
            s.refill(5)
            b = s.send()
            return a, b
        """,
    ),
    P(
        "r10_returned_and_written_by_caller",
        "race",
        NOT_SAFE,
        """
        import torch

        def make(device):
            x = torch.zeros(3)
            return x, x.to(device, non_blocking=True)

        def main(device):
            x, y = make(device)
            x += 7
            return y
        """,
    ),
    P(
        "r11_view_alias_written",
        "race",
        NOT_SAFE,
        """
        import torch

        def make(device):
            x = torch.zeros(2, 2)
            flat = x.view(-1)
            y = x.to(device, non_blocking=True)
            flat.mul_(0).add_(2)
            return y
        def main(device):
            return make(device)
        """,
    ),
    P(
        "r12_copy_sink_then_write",
        "race",
        NOT_SAFE,
        """
        import torch

        def make(device):
            src = torch.ones(3)
            dst = torch.empty(3, device=device)
            dst.copy_(src, non_blocking=True)
            src[2] = 0
            return dst
        def main(device):
            return make(device)
        """,
    ),
    P(
        "r13_cuda_then_write",
        "race",
        NOT_SAFE,
        """
        import torch

        def make():
            x = torch.ones(3)
            y = x.cuda(non_blocking=True)
            x.sub_(1)
            return y
        def main(device):
            return make()
        """,
    ),
    P(
        "r14_write_in_later_iteration_of_list",
        "race",
        NOT_SAFE,
        """
        import torch

        def make(device):
            bufs = [torch.zeros(2) for _ in range(2)]
            out = [b.to(device, non_blocking=True) for b in bufs]
            bufs[0] += 1
            return out
        def main(device):
            return make(device)
        """,
    ),
    # OK twins: the same shapes without a write after the copy; the fix is safe.
    P(
        "r20_ok_fresh_each_iteration",
        "race",
        SAFE,
        """
        import torch

        def make(device, rows):
            out = []
            for row in rows:
                # Python data (a comprehension), fresh each iteration: pinning it is safe.
                buf = torch.tensor([v for v in row])
                out.append(buf.to(device, non_blocking=True))
            return out
        def main(device):
            return make(device, [[1, 2], [3, 4]])
        """,
    ),
    P(
        "r21_ok_write_before_copy",
        "race",
        SAFE,
        """
        import torch

        def make(device):
            x = torch.zeros(3)
            x += 1
            x[0] = 5
            return x.to(device, non_blocking=True)
        def main(device):
            return make(device)
        """,
    ),
    P(
        "r30_closure_defined_before_birth_writes",
        "race",
        NOT_SAFE,
        """
        import torch

        def make(device):
            def bump():
                x.add_(1)  # the closure writes the tensor bound below
            x = torch.zeros(3)
            out = x.to(device, non_blocking=True)
            bump()
            return out
        def main(device):
            return make(device)
        """,
    ),
    P(
        "r31_attribute_written_by_another_method",
        "race",
        NOT_SAFE,
        """
        import torch

        class Stager:
            def __init__(self):
                self.buf = torch.zeros(3)

            def send(self, device):
                return self.buf.to(device, non_blocking=True)

            def refill(self):
                self.buf[0] = 7

        def main(device):
            s = Stager()
            out = s.send(device)
            s.refill()
            return out
        """,
    ),
    P(
        "r32_ok_attribute_pinned_in_init_copied_in_method",
        "race",
        SAFE,
        """
        import torch

        class Stager:
            def __init__(self, device):
                self.device = device
                self.buf = torch.tensor([1, 2, 3])

            def send(self):
                return self.buf.to(self.device, non_blocking=True)

        def main(device):
            return Stager(device).send()
        """,
    ),
    P(
        "r22_ok_write_to_result",
        "race",
        SAFE,
        """
        import torch

        def make(device):
            x = torch.zeros(3)
            y = x.to(device, non_blocking=True)
            y += 1
            return y
        def main(device):
            return make(device)
        """,
    ),
    P(
        "r23_ok_rebind_not_inplace",
        "race",
        SAFE,
        """
        import torch

        def make(device):
            x = torch.zeros(3)
            y = x.to(device, non_blocking=True)
            x = x + 1
            return y, x
        def main(device):
            return make(device)
        """,
    ),
    P(
        "r24_ok_fresh_filled_then_copied",
        "race",
        SAFE,
        """
        import torch

        def make(device, n):
            out = []
            for i in range(n):
                t = torch.zeros(2)
                t[0] = i
                out.append(t.to(device, non_blocking=True))
            return out
        def main(device):
            return make(device, 3)
        """,
    ),
    P(
        "r25_ok_write_to_clone",
        "race",
        SAFE,
        """
        import torch

        def make(device):
            x = torch.ones(3)
            y = x.to(device, non_blocking=True)
            z = x.clone()
            z += 1
            return y, z
        def main(device):
            return make(device)
        """,
    ),
    P(
        "r26_ok_read_after_copy",
        "race",
        SAFE,
        """
        import torch

        def make(device):
            x = torch.arange(4)
            y = x.to(device, non_blocking=True)
            total = int(x.sum())
            return y, total
        def main(device):
            return make(device)
        """,
    ),
]

EDGE = [
    P(
        "e01_dtype_variable_not_device",
        "edge",
        NOT_SAFE,
        """
        import torch

        def make():
            dt = torch.float16
            return torch.tensor([1, 2]).to(dt, non_blocking=True)

        def main(device):
            return make()
        """,
        note="a dtype cast, not a copy: the helper would get a dtype",
    ),
    P(
        "e02_dtype_literal_not_device",
        "edge",
        NOT_SAFE,
        """
        import torch

        def main(device):
            return torch.tensor([1, 2]).to(torch.float16, non_blocking=True)
        """,
    ),
    P(
        "e03_dtype_positional_non_blocking",
        "edge",
        NOT_SAFE,
        """
        import torch

        def main(device):
            return torch.tensor([1, 2]).to(torch.float16, True)
        """,
    ),
    P(
        "e04_requires_grad_pin003",
        "edge",
        NOT_SAFE,
        """
        import torch

        def main(device):
            w = torch.tensor([1.0, 2.0], device=device, requires_grad=True)
            (w * 2).sum().backward()
            return w.is_leaf, w.grad
        """,
        extra_config='extend-select = ["PIN003"]',
        note="PIN003's fix makes a leaf a non-leaf: .grad is lost",
    ),
    P(
        "e05_requires_grad_pin001",
        "edge",
        SAFE,
        """
        import torch

        def main(device):
            w = torch.tensor([1.0, 2.0], requires_grad=True).to(device, non_blocking=True)
            return w.is_leaf, w.requires_grad
        """,
    ),
    P(
        "e06_copy_into_pinned_staging",
        "edge",
        NOT_SAFE,
        """
        import torch
        from pinhelp import is_pin_memory_available

        def make(device):
            staging = torch.empty(3, pin_memory=is_pin_memory_available(device))
            staging.copy_(torch.tensor([1.0, 2.0, 3.0]), non_blocking=True)
            return staging.to(device, non_blocking=True)

        def main(device):
            return make(device)
        """,
        note="copy_ into a pinned host buffer is host-to-host: nothing to fix",
    ),
    P(
        "e07_set_default_device_in_comment",
        "edge",
        SAFE,
        """
        import torch

        # Do not call torch.set_default_device here: it would move every factory.
        def make(device):
            return torch.tensor([1, 2]).to(device, non_blocking=True)

        def main(device):
            return make(device)
        """,
    ),
    P(
        "e08_symlinked_file",
        "edge",
        SAFE,
        """
        from hot import make

        def main(device):
            return make(device)
        """,
        files={
            "src/hot_impl.py": """
        import torch

        def make(device):
            return torch.tensor([1, 2]).to(device, non_blocking=True)
        """
        },
        symlinks={"hot.py": "src/hot_impl.py"},
        lint_paths=("hot.py",),
        note="--fix on the link must write through to the target and keep the link",
    ),
    P(
        "e09_set_default_device_in_string",
        "edge",
        SAFE,
        """
        import torch

        NOTE = "never torch.set_default_device in workers"

        def make(device):
            return torch.zeros(2).to(device, non_blocking=True)

        def main(device):
            return make(device), NOTE
        """,
    ),
    P(
        "e10_noqa",
        "edge",
        NOT_SAFE,
        """
        import torch

        def main(device):
            return torch.tensor([1, 2]).to(device, non_blocking=True)  # noqa: PIN001
        """,
    ),
    P(
        "e11_device_dtype_positional",
        "edge",
        SAFE,
        """
        import torch

        def main(device):
            return torch.tensor([1, 2]).to(device, torch.float32, True)
        """,
    ),
    P(
        "e12_non_blocking_variable",
        "edge",
        SAFE,
        """
        import torch

        def main(device):
            nb = True
            return torch.tensor([1, 2]).to(device, non_blocking=nb)
        """,
    ),
    P(
        "e13_other_tensor_as_target",
        "edge",
        NOT_SAFE,
        """
        import torch

        def make(like):
            return torch.tensor([1, 2]).to(like, non_blocking=True)

        def main(device):
            return make(torch.zeros(1, device=device))
        """,
        note="helper(tensor) is not helper(device); a fix passing like.device is fine too",
    ),
    P(
        "e14_host_literal_target",
        "edge",
        NOT_SAFE,
        """
        import torch

        def main(device):
            return torch.tensor([1, 2]).to("cpu", non_blocking=True)
        """,
    ),
    P(
        "e15_symlinked_dir_member",
        "edge",
        SAFE,
        """
        from pkg.hot import make

        def main(device):
            return make(device)
        """,
        files={
            "real_pkg/__init__.py": "",
            "real_pkg/hot.py": """
        import torch

        def make(device):
            return torch.zeros(3).to(device, non_blocking=True)
        """,
        },
        symlinks={"pkg": "real_pkg"},
        lint_paths=("pkg/hot.py",),
    ),
    P(
        "e16_pin002_numpy_stage_untouched",
        "edge",
        NOT_SAFE,
        """
        import numpy as np
        import torch

        def main(device):
            return torch.from_numpy(np.arange(3)).to(device, non_blocking=True)
        """,
    ),
    P(
        "e17_write_under_a_module_flag",
        "edge",
        NOT_SAFE,
        """
        import torch

        DEBUG = False

        def make(device):
            t = torch.tensor([1, 2])
            out = t.to(device, non_blocking=True)
            if DEBUG:
                t[0] = 9
            return out

        def main(device):
            return make(device)
        """,
        note="the write never runs as the file states DEBUG, but a patched DEBUG would race",
    ),
    P(
        "e18_pinned_under_a_module_flag",
        "edge",
        SAFE,
        """
        import torch

        STAGE = True

        def make(device):
            t = torch.tensor([1, 2])
            if not STAGE:
                t = t * 2
            u = torch.tensor([3, 4])
            return u.to(device, non_blocking=True), t

        def main(device):
            return make(device)
        """,
        note="the flag decides nothing about `u`: its fix stays safe",
    ),
]

PLAIN = [
    P(
        "p40_in_place_chain",
        "plain",
        SAFE,
        """
        import torch

        def make(n, device):
            mask = torch.zeros((n, n)).masked_fill_(torch.ones((n, n), dtype=torch.bool).tril(), 1)
            return mask.to(device, non_blocking=True)

        def main(device):
            return make(3, device)
        """,
        note="an in-place method returns the tensor itself: pinned at birth, still pinned at the copy",
    ),
    P(
        "r41_stored_in_callers_dict_written_after_copy",
        "race",
        NOT_SAFE,
        """
        import torch

        def stage(d, device):
            t = torch.zeros(3)
            d["x"] = t
            return t.to(device, non_blocking=True)

        def main(device):
            d = {}
            out = stage(d, device)
            d["x"].fill_(5)
            return out, d["x"]
        """,
        note="the dict keeps a reference: the caller's write after the copy races once t is pinned",
    ),
    P(
        "r40_in_place_alias_written_after_copy",
        "race",
        NOT_SAFE,
        """
        import torch

        def make(device):
            x = torch.zeros(3)
            y = x.add_(1)
            out = y.to(device, non_blocking=True)
            x.fill_(7)
            return out, x

        def main(device):
            return make(device)
        """,
        note="y is x (add_ returns it): the write to x after the copy races once x is pinned",
    ),
    P(
        "p01_chained_literal",
        "plain",
        SAFE,
        """
        import torch

        def main(device):
            return torch.tensor([1, 2, 3]).to(device, non_blocking=True)
        """,
    ),
    P(
        "p02_local_name",
        "plain",
        SAFE,
        """
        import torch

        def main(device):
            lens = torch.tensor([len(s) for s in ["a", "bb"]], dtype=torch.int64)
            return lens.to(device, non_blocking=True)
        """,
    ),
    P(
        "p03_self_attribute",
        "plain",
        SAFE,
        """
        import torch

        class Batch:
            def prepare(self, rows, device):
                self.lens_cpu = torch.tensor([len(r) for r in rows])
                self.lens = self.lens_cpu.to(device, non_blocking=True)
                return self.lens

        def main(device):
            return Batch().prepare([[1], [1, 2]], device)
        """,
    ),
    P(
        "p04_branches",
        "plain",
        SAFE,
        """
        import torch

        def make(n, device, flag):
            if flag:
                ids = torch.arange(n)
            else:
                ids = torch.zeros(n, dtype=torch.int64, pin_memory=False)
            return ids.to(device, non_blocking=True)

        def main(device):
            return make(3, device, True), make(3, device, False)
        """,
    ),
    P(
        "p05_len_data",
        "plain",
        SAFE,
        """
        import torch

        def main(device):
            items = [1, 2, 3]
            return torch.tensor(len(items)).to(device, non_blocking=True)
        """,
    ),
    P(
        "p06_tolist_data",
        "plain",
        SAFE,
        """
        import torch

        def main(device):
            src = torch.arange(3)
            return torch.tensor(src.tolist()).to(device, non_blocking=True)
        """,
    ),
    P(
        "p07_cuda",
        "plain",
        SAFE,
        """
        import torch

        def main(device):
            return torch.ones(3).cuda(non_blocking=True)
        """,
    ),
    P(
        "p08_copy_into_device",
        "plain",
        SAFE,
        """
        import torch

        def main(device):
            dst = torch.empty(3, device=device)
            dst.copy_(torch.tensor([1.0, 2.0, 3.0]), non_blocking=True)
            return dst
        """,
    ),
    P(
        "p09_device_keyword",
        "plain",
        SAFE,
        """
        import torch

        def main(device):
            return torch.full((2,), 3).to(device=device, non_blocking=True)
        """,
    ),
    P(
        "p10_helper_already_imported",
        "plain",
        SAFE,
        """
        import torch
        from pinhelp import is_pin_memory_available

        def main(device):
            staging_ok = is_pin_memory_available(device)
            return torch.zeros(2).to(device, non_blocking=True), staging_ok
        """,
    ),
    P(
        "p11_multiline_call",
        "plain",
        SAFE,
        """
        import torch

        def main(device):
            return torch.tensor(
                [1, 2, 3],
                dtype=torch.int32,
            ).to(device, non_blocking=True)
        """,
    ),
    P(
        "p12_conditional_expression",
        "plain",
        SAFE,
        """
        import torch

        def make(n, device, flag):
            ids = torch.ones(n) if flag else torch.full((n,), 7)
            return ids.to(device, non_blocking=True)

        def main(device):
            return make(2, device, True), make(2, device, False)
        """,
    ),
    P(
        "p13_view_of_source",
        "plain",
        SAFE,
        """
        import torch

        def main(device):
            base = torch.arange(6)
            return base[1:].view(-1).to(device, non_blocking=True)
        """,
    ),
    P(
        "p14_new_zeros",
        "plain",
        SAFE,
        """
        import torch

        def main(device):
            proto = torch.ones(2)
            return proto.new_zeros(3).to(device, non_blocking=True)
        """,
    ),
    P(
        "p15_zeros_like",
        "plain",
        SAFE,
        """
        import torch

        def main(device):
            proto = torch.ones(2)
            return torch.zeros_like(proto).to(device, non_blocking=True)
        """,
    ),
    P(
        "p16_linspace",
        "plain",
        SAFE,
        """
        import torch

        def main(device):
            return torch.linspace(0, 1, 5).to(device, non_blocking=True)
        """,
    ),
    P(
        "p17_eye",
        "plain",
        SAFE,
        """
        import torch

        def main(device):
            return torch.eye(2).to(device, non_blocking=True)
        """,
    ),
    P(
        "p18_import_alias",
        "plain",
        SAFE,
        """
        import torch as T

        def main(device):
            return T.tensor([5, 6]).to(device, non_blocking=True)
        """,
    ),
    P(
        "p19_from_import_factory",
        "plain",
        SAFE,
        """
        from torch import tensor

        def main(device):
            return tensor([5, 6]).to(device, non_blocking=True)
        """,
    ),
    P(
        "p20_method_chain_in_class",
        "plain",
        SAFE,
        """
        import torch

        class Sched:
            def __init__(self, device):
                self.device = device

            def step(self, reqs):
                seq = torch.tensor([r * 2 for r in reqs], dtype=torch.int32)
                return seq.to(self.device, non_blocking=True)

        def main(device):
            return Sched(device).step([1, 2, 3])
        """,
    ),
]

PROGRAMS: list[Program] = BINDING + HELPER_SCOPE + IMPORTS + DATA + HELPER_ARGS + RACE + EDGE + PLAIN
