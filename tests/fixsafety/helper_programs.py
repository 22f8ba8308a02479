"""More programs of the helper kinds (issue 12 kinds 2, 3, 5): scope, imports, arguments.

Written for the general case rather than for one implementation: each ``note`` says what a wrong
fix would do.
"""

from __future__ import annotations

from tests.fixsafety.handwritten import P
from tests.fixsafety.program import NOT_SAFE, SAFE

HELPER_SCOPE_MORE = [
    P(
        "h16_comprehension_target_named_helper",
        "helper-scope",
        NOT_SAFE,
        """
        import torch

        def make(device):
            return [
                torch.tensor([1]).to(device, non_blocking=True)
                for is_pin_memory_available in range(2)
            ]

        def main(device):
            return make(device)
        """,
        note="the comprehension target shadows the helper inside the comprehension",
    ),
    P(
        "h17_enclosing_function_local",
        "helper-scope",
        NOT_SAFE,
        """
        import torch

        def outer(device):
            is_pin_memory_available = 0

            def make():
                return torch.tensor([1, 2]).to(device, non_blocking=True)

            return make(), is_pin_memory_available

        def main(device):
            return outer(device)
        """,
        note="a closure variable with the helper's name",
    ),
    P(
        "h18_global_rebind_in_function",
        "helper-scope",
        NOT_SAFE,
        """
        import torch
        from pinhelp import is_pin_memory_available

        def configure():
            global is_pin_memory_available
            is_pin_memory_available = False

        def make(device):
            return torch.tensor([1, 2]).to(device, non_blocking=True)

        def main(device):
            configure()
            return make(device)
        """,
        note="`global` rebinds the imported helper to a bool before make() runs",
    ),
    P(
        "h19_try_import_with_fallback_value",
        "helper-scope",
        NOT_SAFE,
        """
        import torch
        try:
            from pinhelp import is_pin_memory_available
        except ImportError:
            is_pin_memory_available = None

        def make(device):
            return torch.tensor([1, 2]).to(device, non_blocking=True)

        def main(device):
            return make(device)
        """,
        note="the name may be None: not provably the helper",
    ),
    P(
        "h20_class_attribute_not_visible_in_method",
        "helper-scope",
        SAFE,
        """
        import torch

        class Loader:
            is_pin_memory_available = staticmethod(lambda d: 1 / 0)

            def make(self, device):
                return torch.tensor([1, 2]).to(device, non_blocking=True)

        def main(device):
            return Loader().make(device)
        """,
        note="the class attribute is not in scope in the method: a module-level import is right",
    ),
    P(
        "h21_lambda_parameter_named_helper",
        "helper-scope",
        NOT_SAFE,
        """
        import torch

        make = lambda device, is_pin_memory_available=None: torch.tensor([1, 2]).to(
            device, non_blocking=True
        )

        def main(device):
            return make(device)
        """,
    ),
]

IMPORTS_MORE = [
    P(
        "i15_existing_from_import_after_use",
        "imports",
        SAFE,
        """
        import torch

        def make(device):
            return torch.tensor([1, 2]).to(device, non_blocking=True)

        WARM = make("cpu")

        from pinhelp import __name__ as helper_module

        def main(device):
            return make(device), WARM, helper_module
        """,
        note="joining the later `from pinhelp import` would bind the helper after WARM uses it",
    ),
    P(
        "i16_join_parenthesized_from_import",
        "imports",
        SAFE,
        """
        import torch
        from pinhelp import (
            __name__ as helper_module,
            os,
        )

        def make(device):
            return torch.tensor([1, 2]).to(device, non_blocking=True)

        def main(device):
            return make(device), helper_module, os.sep
        """,
    ),
    P(
        "i17_docstring_future_local_torch_only",
        "imports",
        SAFE,
        '''
        """Doc."""
        from __future__ import annotations

        def make(device):
            import torch
            return torch.tensor([1, 2]).to(device, non_blocking=True)

        def main(device):
            return make(device), __doc__
        ''',
    ),
    P(
        "i18_import_would_close_a_cycle",
        "imports",
        NOT_SAFE,
        """
        import torch

        def make(device):
            return torch.tensor([1, 2]).to(device, non_blocking=True)

        def main(device):
            return make(device)
        """,
        helper="",
        config="helpmod:is_pin_memory_available(device)",
        files={
            "helpmod.py": """
        import os

        import prog

        def is_pin_memory_available(device):
            return os.environ.get("FIXSAFETY_PIN") == "1"

        MAKE = prog.make
        """
        },
        note="helpmod imports prog at module level: importing it from prog closes a cycle",
    ),
]

HELPER_ARGS_MORE = [
    P(
        "a12_required_keyword_only_device",
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
        config="",
        files={
            "pinhelp3.py": """
        import os

        import torch

        def is_pin_memory_available(*, device):
            torch.device(device)
            return os.environ.get("FIXSAFETY_PIN") == "1"
        """
        },
    ),
    P(
        "a13_platform_method_takes_device",
        "helper-args",
        SAFE,
        """
        import torch
        from platforms import current_platform

        def make(device):
            return torch.tensor([1, 2]).to(device, non_blocking=True)

        def main(device):
            return make(device), current_platform.is_pin_memory_available(device)
        """,
        helper="",
        config="",
        files={
            "platforms.py": """
        import os

        import torch

        class Platform:
            def is_pin_memory_available(self, device):
                torch.device(device)
                return os.environ.get("FIXSAFETY_PIN") == "1"

        current_platform = Platform()
        """
        },
    ),
    P(
        "a14_definition_beats_config",
        "helper-args",
        SAFE,
        """
        import torch

        def make(device):
            return torch.tensor([1, 2]).to(device, non_blocking=True)

        def main(device):
            return make(device)
        """,
        config="pinhelp:is_pin_memory_available()",
        note="config says (); the definition in the project takes the device",
    ),
    P(
        "a15_varargs_only_helper",
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
        config="",
        files={
            "pinhelp4.py": """
        import os

        def is_pin_memory_available(*args):
            assert not args
            return os.environ.get("FIXSAFETY_PIN") == "1"
        """
        },
    ),
    P(
        "a16_two_required_in_project_definition",
        "helper-args",
        NOT_SAFE,
        """
        import torch

        def make(device):
            return torch.tensor([1, 2]).to(device, non_blocking=True)

        def main(device):
            return make(device)
        """,
        helper="",
        config="",
        files={
            "pinhelp5.py": """
        import os

        def is_pin_memory_available(device, strict):
            return os.environ.get("FIXSAFETY_PIN") == "1"
        """
        },
    ),
]

# Across files: a helper of another module builds the tensor a copy here receives, or copies the
# tensor this module builds. The finding is where the tensor is built; such a tensor is returned
# or handed over, so a write after the now-asynchronous copy cannot be ruled out: never safe.
_HELPERS_MODULE = """
        import torch

        def make_ids(n):
            return torch.arange(n)

        def upload(t, device):
            return t.to(device, non_blocking=True)
        """
CROSS_FILE = [
    P(
        f"x{i:02d}_{name}",
        "edge",
        NOT_SAFE,
        prog,
        files={"helpers.py": _HELPERS_MODULE},
        lint_paths=paths,
        note=note,
    )
    for i, (name, prog, paths, note) in enumerate(
        [
            (
                "helper_result_copied",
                """
        from helpers import make_ids

        def main(device):
            ids = make_ids(4)
            out = ids.to(device, non_blocking=True)
            ids.add_(1)
            return out
        """,
                (".",),
                "pinning the helper's tensor would race with the write after the copy",
            ),
            (
                "argument_copied_by_helper",
                """
        import torch
        from helpers import upload

        def main(device):
            lens = torch.tensor([1, 2, 3])
            out = upload(lens, device)
            lens.mul_(2)
            return out

        def unused(device):
            return torch.ones(1).to(device, non_blocking=False)
        """,
                (".",),
                "the caller writes the tensor after the helper's copy",
            ),
            (
                "only_the_copying_file_linted",
                """
        from helpers import make_ids

        def main(device):
            return make_ids(3).to(device, non_blocking=True)
        """,
                ("prog.py",),
                "the finding is the helper's file, which is not in the run: it must not be edited",
            ),
            (
                "only_the_building_file_linted",
                """
        import helpers

        def main(device):
            t = helpers.make_ids(5)
            out = t.cuda(non_blocking=True) if device.startswith("cuda") else t.to(device, non_blocking=True)
            t.zero_()
            return out
        """,
                ("helpers.py",),
                "a run on the helper's file sees the importer's copy, and the write after it",
            ),
        ],
        1,
    )
]

_COPY = """
        import torch

        def make(device):
            t = torch.tensor([1, 2, 3])
            return t.to(device, non_blocking=True)

        def main(device):
            return make(device)
        """

#: The helper found in the project (nothing configured): where it is defined or imported must
#: make the inserted name that function, bound when the construction runs.
HELPER_SOURCES = [
    P(
        "h30_helper_defined_only_with_cuda",
        "helper-scope",
        NOT_SAFE,
        _COPY,
        helper="",
        config="",
        files={
            "helpers.py": """
        import torch

        if torch.cuda.is_available():
            def is_pin_memory_available(device=None):
                return True
        """
        },
        note="the import fails where the condition is false (no accelerator)",
    ),
    P(
        "h31_helper_decorated",
        "helper-args",
        NOT_SAFE,
        _COPY,
        helper="",
        config="",
        files={
            "helpers.py": """
        import functools

        import torch

        def noargs(fn):
            @functools.wraps(fn)
            def wrapper():
                return fn()
            return wrapper

        @noargs
        def is_pin_memory_available(device=None):
            return torch.cuda.is_available()
        """
        },
        note="the decorator's wrapper takes no device: a call with one raises TypeError",
    ),
    P(
        "h32_helper_rebound_in_its_module",
        "helper-scope",
        NOT_SAFE,
        _COPY,
        helper="",
        config="",
        files={
            "helpers.py": """
        import torch

        def is_pin_memory_available(device=None):
            return torch.cuda.is_available()

        is_pin_memory_available = bool(torch.cuda.is_available())
        """
        },
        note="what the import gets is a bool, not the function",
    ),
    P(
        "h33_star_import_rebinds_the_helper",
        "imports",
        NOT_SAFE,
        """
        import torch
        from pinhelp import is_pin_memory_available
        from flags import *

        def make(device):
            t = torch.tensor([1, 2, 3])
            return t.to(device, non_blocking=True)

        def main(device):
            return make(device), is_pin_memory_available
        """,
        config="",
        files={"flags.py": "is_pin_memory_available = False\n"},
        note="after the star import the name is a bool: calling it raises TypeError",
    ),
    P(
        "h34_import_closes_a_cycle_two_hops_away",
        "imports",
        NOT_SAFE,
        """
        import torch

        CONST = 3

        def make(device):
            t = torch.tensor([1, 2, 3])
            return t.to(device, non_blocking=True)

        def main(device):
            return make(device), CONST
        """,
        helper="",
        config="",
        files={
            "helpers.py": """
        import torch

        from middle import LIMIT

        def is_pin_memory_available(device=None):
            return torch.cuda.is_available() and LIMIT > 0
        """,
            "middle.py": "from prog import CONST\n\nLIMIT = CONST + 1\n",
        },
        note="prog -> helpers -> middle -> prog: the new import at the top of prog fails (CONST is not bound yet)",
    ),
    P(
        "h35_helper_imported_below_module_code",
        "imports",
        SAFE,
        """
        import torch

        def make(device):
            t = torch.tensor([1, 2, 3])
            return t.to(device, non_blocking=True)

        FIRST = make("cpu")

        from pinhelp import is_pin_memory_available

        def main(device):
            return make(device), FIRST, callable(is_pin_memory_available)
        """,
        config="",
        note="module code calls make() before the import below it runs: the fix must import at the top",
    ),
    P(
        "h37_helper_only_in_a_script",
        "imports",
        NOT_SAFE,
        _COPY,
        helper="",
        config="",
        files={
            "bench.py": """
        import torch

        def is_pin_memory_available(device=None):
            return torch.cuda.is_available()

        print("benchmark started")
        """
        },
        note="importing the script runs it: the program prints a line it did not print before",
    ),
    P(
        "h38_helper_behind_a_cache",
        "imports",
        SAFE,
        _COPY,
        helper="",
        config="",
        files={
            "helpers.py": """
        import functools

        import torch

        @functools.lru_cache(maxsize=None)
        def is_pin_memory_available(device=None):
            return torch.cuda.is_available()
        """
        },
        note="a cache keeps the helper's signature: the fix imports and calls it",
    ),
    P(
        "h36_device_is_a_property",
        "helper-args",
        NOT_SAFE,
        """
        import torch

        class Runner:
            @property
            def device(self):
                return self._device

            def step(self, device):
                t = torch.zeros(3)
                self._device = device
                return t.to(self.device, non_blocking=True)

        def main(device):
            return Runner().step(device)
        """,
        note="the property reads state set after the construction: reading it there raises AttributeError",
    ),
]


def _write_after_copy(write: str) -> str:
    return f"""
        import torch

        def make(device):
            x = torch.zeros(4)
            y = x.to(device, non_blocking=True)
            {write}
            return y, x

        def main(device):
            return make(device)
        """


#: Writes after the copy through a view, the storage, or an in-place function: once the source
#: is pinned, each races the asynchronous copy.
RACES_MORE = [
    P(f"r{30 + i}_{name}", "race", NOT_SAFE, _write_after_copy(write), note=f"`{write}` writes the copied tensor")
    for i, (name, write) in enumerate(
        [
            ("transpose_view", "x.T[0] = 9"),
            ("data_view", "x.data.fill_(9)"),
            ("flatten_view", "x.flatten()[0] = 9"),
            ("split_views", "a, b = x.split(2); a.fill_(1)"),
            ("torch_in_place", "torch.fill_(x, 9)"),
            ("init_in_place", "torch.nn.init.ones_(x)"),
            ("setitem_call", "x.__setitem__(0, 9)"),
            ("row_iteration", "[row.fill_(1) for row in x.view(2, 2)]"),
        ]
    )
]

DATA_MORE = [
    P(
        "d30_builtin_shadowed_at_module_level",
        "data",
        NOT_SAFE,
        """
        import numpy as np
        import torch

        len = np.asarray

        def make(device, xs):
            t = torch.tensor(len(xs))
            return t.to(device, non_blocking=True)

        def main(device):
            return make(device, [1, 2, 3])
        """,
        note="`len` is numpy's asarray here: pinning numpy data through torch.tensor raises",
    ),
    P(
        "d31_loop_carried_numpy_data",
        "data",
        NOT_SAFE,
        """
        import numpy as np
        import torch

        def make(device, arr):
            data = [1, 2]
            out = []
            for i in range(2):
                if i:
                    t = torch.tensor(data)
                    out.append(t.to(device, non_blocking=True))
                data = arr
            return out

        def main(device):
            return make(device, np.arange(3))
        """,
        note="Python data on the first iteration, the numpy array on the one that builds the tensor",
    ),
    P(
        "d32_loop_data_stays_python",
        "data",
        SAFE,
        """
        import torch

        def make(device, n):
            data = [1, 2]
            out = []
            for i in range(n):
                t = torch.tensor(data)
                out.append(t.to(device, non_blocking=True))
                data = data + [i]
            return out

        def main(device):
            return make(device, 3)
        """,
        note="every iteration's data is a list: the fix is safe",
    ),
]

#: A numpy view taken before the copy shares the tensor's memory: a write through it after the
#: copy races it once the tensor is pinned.
RACES_NUMPY = [
    P(
        "r40_numpy_view_before_copy",
        "race",
        NOT_SAFE,
        """
        import torch

        def make(device):
            x = torch.zeros(4)
            n = x.numpy()
            y = x.to(device, non_blocking=True)
            n[0] = 9
            return y, x

        def main(device):
            return make(device)
        """,
        note="`n` is `x`'s memory: `n[0] = 9` writes it after the copy",
    ),
]

PROGRAMS = (
    HELPER_SCOPE_MORE
    + IMPORTS_MORE
    + HELPER_ARGS_MORE
    + CROSS_FILE
    + HELPER_SOURCES
    + RACES_MORE
    + RACES_NUMPY
    + DATA_MORE
)
