"""Every fact about the torch API that pinlint relies on, in one place: ``torch_api.<NAME>``.

The analyzer, the fixer and the runtime companion read these tables; nothing else in the code
base hard-codes a torch name. Read from PyTorch's sources
(``tensor_new.cpp``, ``TensorConversions.cpp`` and ``Copy.cu``). The tables live in three modules
by who reads them: ``host`` (host and device tensors: factories, methods, devices, dtypes),
``runtime`` (what the runtime companion intercepts), ``d2h`` (PIN004: what synchronises, reads
or only launches), and are all importable from here.
"""

from pinlint.torch_api.d2h import *  # noqa: F403
from pinlint.torch_api.host import *  # noqa: F403
from pinlint.torch_api.runtime import *  # noqa: F403
