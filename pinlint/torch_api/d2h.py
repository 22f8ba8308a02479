"""PIN004: what synchronises, reads or only launches around a device-to-host copy."""

from __future__ import annotations

from pinlint.torch_api.host import (
    CAST_METHODS,
    COMBINING_FUNCTIONS,
    MEMORY_SHARING_FACTORIES,
    NEW_TENSOR_METHODS,
    PINNABLE_FACTORIES,
    PINNABLE_LIKE_FACTORIES,
    UNPINNABLE_DATA_FACTORIES,
    VIEW_METHODS,
)

#: Builtins that never convert, read or call into their arguments' data.
D2H_INERT_BUILTINS = frozenset(
    {
        "len",
        "isinstance",
        "issubclass",
        "type",
        "id",
        "hasattr",
        "callable",
        "enumerate",
        "zip",
        "reversed",
        "iter",
        "dict",
        "set",
        "frozenset",
        "super",
        "object",
    }
)
#: Builtins that convert or read their arguments: they synchronise when given a device tensor
#: (``int(t)``, ``print(t)``) and read a host tensor's data (PIN004's reads).
D2H_READING_BUILTINS = frozenset(
    {
        "print",
        "str",
        "repr",
        "format",
        "int",
        "float",
        "bool",
        "complex",
        "sorted",
        "min",
        "max",
        "sum",
        "any",
        "all",
        "abs",
        "round",
        "range",
        "divmod",
        "pow",
    }
)
#: Builtins that only take views of a tensor's rows (``list(t)`` is ``t.unbind()``): no data read,
#: and no synchronisation for a device tensor either.
D2H_VIEW_BUILTINS = frozenset({"list", "tuple"})
#: Host-tensor methods that read the data into Python. ``.numpy()`` is not one: it returns a view
#: of the same memory (vLLM's ``async_copy_to_np`` reads it after an event), as iteration does.
D2H_READING_METHODS = frozenset({"tolist", "item", "__bool__", "__int__", "__float__", "__index__"})
#: Tensor math computed from the data (reductions, elementwise, products, in-place arithmetic):
#: on a host tensor it reads the data; on a device tensor it launches a kernel without waiting.
_DATA_MATH = frozenset(
    {
        "sum",
        "mean",
        "prod",
        "argmax",
        "argmin",
        "softmax",
        "log_softmax",
        "exp",
        "log",
        "sqrt",
        "pow",
        "matmul",
        "mm",
        "bmm",
        "add_",
        "sub_",
        "mul_",
        "div_",
    }
)
#: Host-tensor methods that compute from the tensor's data at once: on a pending device-to-host
#: destination, a host read (the CPU kernel reads memory the copy may not have written yet). Not
#: among them: views, casts (``.float()`` of a float tensor is the tensor itself), writes
#: (``.fill_()``), copies to a device (ordered after the copy on the stream), metadata.
D2H_HOST_COMPUTING_METHODS = (
    (NEW_TENSOR_METHODS - CAST_METHODS - {"flatten"})
    | _DATA_MATH
    | frozenset(
        {
            "cumprod",
            "sort",
            "topk",
            "max",
            "min",
            "any",
            "all",
            "eq",
            "ne",
            "lt",
            "le",
            "gt",
            "ge",
            "nonzero",
            "unique",
            "norm",
        }
    )
)
#: ``torch.<name>()`` functions that compute from their tensor arguments' data (on the host: reads).
D2H_HOST_COMPUTING_FUNCTIONS = COMBINING_FUNCTIONS - {"flatten"}
#: numpy functions that copy their argument's data (``np.asarray`` makes a view: not a read).
D2H_NUMPY_COPIES = frozenset({"array", "concatenate", "stack", "cumsum", "repeat"})
#: Methods that only enqueue work or bookkeeping on a stream: they never block the host
#: (``event.record()``, ``t.record_stream(s)``, ``s.wait_event(e)``: GPU-side waits).
D2H_STREAM_SIDE_METHODS = frozenset({"record", "record_stream", "record_event", "wait_stream", "wait_event"})
#: Tensor methods that launch device work (or make views) and return without waiting.
D2H_LAUNCH_METHODS = (
    VIEW_METHODS
    | NEW_TENSOR_METHODS
    | _DATA_MATH
    | frozenset(
        {
            "transpose",
            "permute",
            "t",
            "zero_",
            "fill_",
            "masked_fill_",
            "index_copy_",
            "index_fill_",
            "scatter_",
            "scatter",
            "to",
            "copy_",
            "cuda",
        }
    )
) - {"item", "tolist", "numpy", "cpu"}
#: ``torch.cuda.<name>()`` (and other ``torch.<module>.<name>``) calls that do not block the host.
D2H_NON_BLOCKING_TORCH_CALLS = frozenset(
    {
        "current_stream",
        "default_stream",
        "Event",
        "Stream",
        "stream",
        "is_available",
        "device_count",
        "current_device",
        "get_device_name",
        "get_device_properties",
        "range_push",
        "range_pop",
        "mark",
        "set_stream",
        "device",
        "is_initialized",
        "record_function",
    }
)
#: ``torch.<name>()`` functions that launch work or allocate without waiting (data-dependent ones,
#: such as ``nonzero`` or one-argument ``where``, synchronise).
D2H_NON_BLOCKING_TORCH_FUNCTIONS = (
    PINNABLE_FACTORIES
    | PINNABLE_LIKE_FACTORIES
    | MEMORY_SHARING_FACTORIES
    | COMBINING_FUNCTIONS
    | UNPINNABLE_DATA_FACTORIES
)
