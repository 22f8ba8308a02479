"""Host and device tensors in the torch API: factories, methods, copies, devices, dtypes."""

from __future__ import annotations

#: ``torch.<name>(...)`` factories that accept ``pin_memory=`` and allocate on the host unless a
#: ``device=`` says otherwise.
PINNABLE_FACTORIES: frozenset[str] = frozenset(
    {
        "tensor",
        "zeros",
        "ones",
        "empty",
        "full",
        "arange",
        "linspace",
        "logspace",
        "randint",
        "rand",
        "randn",
        "randperm",
        "eye",
        "empty_strided",
        "scalar_tensor",
        "tril_indices",
        "triu_indices",
    }
)

#: Factories whose first positional argument is the size (a literal 0 means an empty tensor).
SIZED_FACTORIES: frozenset[str] = frozenset({"zeros", "ones", "empty", "full", "rand", "randn"})

#: ``torch.<name>_like(x, ...)`` factories: accept ``pin_memory=`` but allocate on ``x``'s device.
PINNABLE_LIKE_FACTORIES: frozenset[str] = frozenset(
    {"zeros_like", "ones_like", "empty_like", "full_like", "rand_like", "randn_like", "randint_like"}
)

#: ``x.new_<name>(...)`` methods: accept ``pin_memory=`` but allocate on ``x``'s device.
PINNABLE_NEW_METHODS: frozenset[str] = frozenset({"new_zeros", "new_ones", "new_empty", "new_full"})

#: Factories whose data argument is copied from Python data (or numpy) into a new host tensor,
#: and that have no ``pin_memory=``.
UNPINNABLE_DATA_FACTORIES: frozenset[str] = frozenset({"as_tensor", "asarray"})

#: ``torch.from_numpy`` / ``torch.frombuffer``: share the numpy/buffer memory, which is pageable;
#: ``torch.from_file``: maps (``shared=True``) or reads a file into pageable host memory.
MEMORY_SHARING_FACTORIES: frozenset[str] = frozenset({"from_numpy", "frombuffer", "from_file"})

#: Elementwise tensor methods (and torch functions) of one tensor: the result follows it and has
#: its shape.
UNARY_ELEMENTWISE: frozenset[str] = frozenset(
    {
        "cos",
        "sin",
        "tan",
        "exp",
        "exp2",
        "expm1",
        "log",
        "log2",
        "log10",
        "log1p",
        "sqrt",
        "rsqrt",
        "sigmoid",
        "tanh",
        "relu",
        "floor",
        "ceil",
        "round",
        "trunc",
        "frac",
        "sign",
        "reciprocal",
        "square",
        "logical_not",
        "bitwise_not",
    }
)
#: Elementwise operations of two operands (the other may be a scalar): the input's shape too.
BINARY_ELEMENTWISE: frozenset[str] = frozenset(
    {"pow", "remainder", "fmod", "floor_divide", "eq", "ne", "lt", "le", "gt", "ge"}
)
ELEMENTWISE_METHODS: frozenset[str] = UNARY_ELEMENTWISE | BINARY_ELEMENTWISE

#: ``torch.<name>(tensors, ...)``: a new tensor on the inputs' device, never pinned.
COMBINING_FUNCTIONS: frozenset[str] = frozenset(
    {
        "cat",
        "concat",
        "concatenate",
        "stack",
        "hstack",
        "vstack",
        "dstack",
        "where",
        "clamp",
        "abs",
        "neg",
        "add",
        "sub",
        "mul",
        "div",
        "cumsum",
        "flatten",
        "repeat_interleave",
        "roll",
        "flip",
        "sort",
        "argsort",
        *ELEMENTWISE_METHODS,
        "nonzero",
        "outer",
        "index_select",
        "diff",
        "masked_select",
        "matmul",
        "mm",
        "bmm",
    }
)

#: Of those, the ones whose result follows their *first* (data) input; the other arguments are
#: sizes, counts or dims (``repeat_interleave(host, unknown_repeats)`` is still a host tensor).
DATA_FIRST_FUNCTIONS: frozenset[str] = frozenset(
    {"cumsum", "flatten", "repeat_interleave", "roll", "flip", "sort", "argsort", "clamp", "abs", "neg"}
    | UNARY_ELEMENTWISE
    | {"nonzero", "index_select", "diff", "masked_select"}
)

#: Of those, the ones whose result is never 0-dimensional (``cat`` and ``stack`` refuse 0-d inputs
#: or add a dimension; ``outer`` and ``nonzero`` make a matrix; ``flatten`` at least one dim).
NON_SCALAR_RESULT_FUNCTIONS: frozenset[str] = frozenset(
    {"cat", "concat", "concatenate", "stack", "hstack", "vstack", "dstack", "outer", "nonzero", "flatten"}
)

#: Of those, the ones that refuse inputs on different devices, 0-dimensional CPU tensors
#: included (unlike elementwise operators): if one input is a host tensor and the call returns,
#: every input was on the host, and so is the new tensor.
SAME_DEVICE_FUNCTIONS: frozenset[str] = frozenset(
    {"cat", "concat", "concatenate", "stack", "hstack", "vstack", "dstack"}
)

#: ``torch.nn.functional`` functions treated like ``DATA_FIRST_FUNCTIONS`` (``F.pad(host, ...)``).
FUNCTIONAL_DATA_FIRST: frozenset[str] = frozenset({"pad"})

#: Library functions outside torch that return host tensors in pageable memory (or a dict of
#: them): their results cannot be pinned where they are made. Dotted names as imported.
HOST_LIBRARY_FUNCTIONS: frozenset[str] = frozenset({"safetensors.torch.load_file", "safetensors.torch.load"})
#: Those that take the device to load onto: (position, keyword). Their result is a host tensor
#: only when that argument is absent or the literal ``"cpu"`` (``load_file(path, device="cuda")``
#: loads onto the GPU).
HOST_LIBRARY_DEVICE_ARGUMENT: dict[str, tuple[int, str]] = {"safetensors.torch.load_file": (1, "device")}

#: Library functions that rearrange a tensor (their first argument) on its own device: a view of
#: it or a new tensor, so of pageable memory they give pageable memory; of pinned memory, who
#: knows (a view stays pinned, a copy is pageable).
DEVICE_KEEPING_LIBRARY_FUNCTIONS: frozenset[str] = frozenset({"einops.rearrange", "einops.repeat", "einops.reduce"})

#: Library functions that open a file of tensors and return a handle (``safe_open(path,
#: framework="pt", device="cpu")``, also as a context manager, whose ``__enter__`` returns the
#: handle). With the torch framework and the host device (the default), ``get_tensor(name)``
#: and ``get_slice(name)[...]`` read pageable host tensors. (framework position and keyword,
#: device position and keyword.)
HOST_FILE_HANDLES: dict[str, tuple[tuple[int, str], tuple[int, str]]] = {
    "safetensors.safe_open": ((1, "framework"), (2, "device")),
    "safetensors.torch.safe_open": ((1, "framework"), (2, "device")),
}
#: The base class whose ``__call__`` runs ``forward`` with the call's arguments (after its
#: forward pre-hooks), and whose ``__init__`` sets none of a subclass's attributes.
MODULE_CLASS = "torch.nn.Module"

#: Data loaders whose batches are new host tensors in pageable memory unless ``pin_memory=`` is
#: true: the default collate function stacks each batch into new tensors (``torch.stack``), and
#: only the pin thread that ``pin_memory=True`` starts copies them into pinned memory.
HOST_BATCH_LOADERS: frozenset[str] = frozenset(
    {"torch.utils.data.DataLoader", "torch.utils.data.dataloader.DataLoader"}
)
#: Datasets over tensors given to them: a batch is stacked on the device those tensors are on.
TENSOR_DATASETS: frozenset[str] = frozenset(
    {"torch.utils.data.TensorDataset", "torch.utils.data.dataset.TensorDataset"}
)
#: Their parameters, in order, up to ``pin_memory``: a positional argument past the dataset may
#: be any of these.
LOADER_PARAMETERS: tuple[str, ...] = (
    "dataset",
    "batch_size",
    "shuffle",
    "sampler",
    "batch_sampler",
    "num_workers",
    "collate_fn",
    "pin_memory",
)
#: Library iterators that give the items of the iterables they wrap, unchanged: of the first
#: positional argument (a progress bar, a slice), or of every one (a chain).
PASS_THROUGH_ITERATORS: dict[str, str] = {
    "tqdm.tqdm": "first",
    "tqdm.auto.tqdm": "first",
    "tqdm.notebook.tqdm": "first",
    "tqdm.std.tqdm": "first",
    "tqdm.rich.tqdm": "first",
    "itertools.islice": "first",
    "itertools.chain": "all",
}
#: The collate function a data loader uses when given none: naming it changes nothing.
DEFAULT_COLLATE_FUNCTIONS: frozenset[str] = frozenset(
    {
        "torch.utils.data.default_collate",
        "torch.utils.data.dataloader.default_collate",
        "torch.utils.data._utils.collate.default_collate",
    }
)
#: Loader attributes whose assignment changes what later iterations give (``loader.pin_memory =
#: True`` pins them; ``loader.collate_fn = f`` builds them another way).
LOADER_BATCH_ATTRIBUTES: frozenset[str] = frozenset({"pin_memory", "collate_fn"})
#: The framework names that make such a handle read torch tensors (others give numpy arrays...).
TORCH_FRAMEWORK_NAMES: frozenset[str] = frozenset({"pt", "torch", "pytorch"})
#: A handle's methods that read a tensor, and the one that reads a slice object whose
#: subscript reads the tensor.
HANDLE_TENSOR_METHODS: frozenset[str] = frozenset({"get_tensor"})
HANDLE_SLICE_METHODS: frozenset[str] = frozenset({"get_slice"})

#: Decorators (as spelled, with or without their module) that return what the decorated
#: function returns: a call's summary sees through them. Any other decorator may replace the
#: result (a wrapper that pins it, a context manager), so the call is unknown.
TRANSPARENT_DECORATORS: frozenset[str] = frozenset(
    {
        "staticmethod",
        "classmethod",
        "functools.cache",
        "functools.lru_cache",
        "functools.wraps",
        "cache",
        "lru_cache",
        "torch.no_grad",
        "torch.inference_mode",
        "torch.enable_grad",
        "no_grad",
        "inference_mode",
        # Run the function eagerly, as written (the compiler skips it).
        "torch.compiler.disable",
        "torch._dynamo.disable",
    }
)

#: Tensor methods that return a *new* tensor on the same device, never pinned.
#: Casts (``.float()``, ``.type(...)``): a new tensor of another dtype, or the tensor itself.
CAST_METHODS: frozenset[str] = frozenset(
    {
        "int",
        "long",
        "float",
        "double",
        "half",
        "bfloat16",
        "bool",
        "short",
        "char",
        "byte",
    }
)
#: Methods that return the tensor itself or a view of it where they can (``flatten`` of a
#: contiguous tensor), and a new tensor otherwise: pinned in, perhaps pinned out.
MAYBE_SAME_MEMORY_METHODS: frozenset[str] = frozenset({"flatten"})
NEW_TENSOR_METHODS: frozenset[str] = CAST_METHODS | frozenset(
    {
        "clone",
        "cumsum",
        "flatten",
        "repeat",
        "repeat_interleave",
        "masked_fill",
        "add",
        "sub",
        "mul",
        "div",
        "neg",
        "abs",
        "clamp",
        "index_select",
        "gather",
        "roll",
        "flip",
        "argsort",
        # Elementwise math, reductions and selections: always a new tensor on the receiver's
        # device (never the receiver itself).
        *ELEMENTWISE_METHODS,
        "sum",
        "mean",
        "prod",
        "cumprod",
        "diff",
        "nonzero",
        "masked_select",
        "argmax",
        "argmin",
        "outer",
        "matmul",
        "mm",
        "bmm",
    }
)

#: Tensor methods that may return a view of (or ``self``) the same storage: pinnedness is kept,
#: so the value's origin is the receiver's origin.
VIEW_METHODS: frozenset[str] = frozenset(
    {
        "view",
        "reshape",
        "unsqueeze",
        "squeeze",
        "narrow",
        "detach",
        "contiguous",
        "expand",
        "view_as",
        "reshape_as",
        "select",
        "unflatten",
        "as_strided",
    }
)

#: Methods that return a view of the same memory with its dimensions reordered (not contiguous
#: in general: ``.to()`` of it first gathers it into a new contiguous tensor).
TRANSPOSING_METHODS: frozenset[str] = frozenset({"t", "transpose", "permute", "swapaxes", "swapdims", "movedim"})

#: Attributes that are views of the tensor's own memory: a write through them writes the tensor.
VIEW_ATTRIBUTES: frozenset[str] = frozenset({"T", "mT", "H", "mH", "real", "imag", "data"})

#: Methods whose result may share the tensor's memory (views, or tuples of them) beyond
#: ``VIEW_METHODS``, or expose it (the storage): writes through them race an asynchronous copy.
ALIASING_METHODS: frozenset[str] = frozenset(
    {
        "split",
        "chunk",
        "unbind",
        "tensor_split",
        "hsplit",
        "vsplit",
        "dsplit",
        "flatten",
        "ravel",
        "t",
        "transpose",
        "permute",
        "swapaxes",
        "swapdims",
        "movedim",
        "diagonal",
        "unfold",
        "untyped_storage",
        "storage",
        "__setitem__",
    }
)

#: Methods and functions that produce a host tensor in pageable memory from any tensor.
TO_HOST_METHODS: frozenset[str] = frozenset({"cpu"})

#: Tensor methods whose result is Python data (safe to pass to ``torch.tensor(..., pin_memory=)``).
PYTHON_DATA_METHODS: frozenset[str] = frozenset({"tolist", "item"})

#: Tensor methods that return Python numbers or tuples of them (``numel()``, ``size(i)``): data that
#: ``torch.tensor(..., pin_memory=...)`` accepts.
PYTHON_NUMBER_METHODS: frozenset[str] = frozenset(
    {"numel", "nelement", "size", "dim", "ndimension", "element_size", "stride", "get_device"}
)

#: Attributes that hold a tuple of Python ints on tensors and arrays alike (``x.shape[0]``).
PYTHON_NUMBER_ATTRIBUTES: frozenset[str] = frozenset({"shape"})

#: Tensor attributes an ``if`` tests to branch on where a tensor lives (the interpreter then
#: forgets what it knew of that tensor).
DEVICE_TEST_ATTRIBUTES: frozenset[str] = frozenset({"is_cpu", "is_cuda", "device", "is_pinned", "is_meta"})
#: Of those, the one that is a method (``t.is_pinned()``), not a property like ``t.is_cuda``:
#: read without the call it is a bound method, always true.
PIN_TEST_METHOD = "is_pinned"

#: Builtins that return Python data.
PYTHON_DATA_BUILTINS: frozenset[str] = frozenset({"len", "list", "tuple", "range", "int", "float", "bool", "sorted"})

#: Buffers whose memory Python allocates (pageable): what ``torch.frombuffer`` of them shares.
#: A buffer of unknown origin may be anything (``(c_uint8 * n).from_address(pinned_ptr)``).
PYTHON_BUFFERS: frozenset[str] = frozenset({"array.array"})
PYTHON_BUFFER_BUILTINS: frozenset[str] = frozenset({"bytes", "bytearray"})

#: Methods that copy host data to a device: ``x.to(...)``, ``x.cuda(...)``; and ``dst.copy_(src)``.
TO_METHOD = "to"
CUDA_METHOD = "cuda"
COPY_METHOD = "copy_"
PIN_METHOD = "pin_memory"

#: ``torch.<dtype>`` attribute names: a ``.to(torch.float16)`` is a dtype cast, not a copy.
DTYPES: frozenset[str] = frozenset(
    {
        "float",
        "float32",
        "float64",
        "double",
        "float16",
        "half",
        "bfloat16",
        "int",
        "int8",
        "int16",
        "int32",
        "int64",
        "long",
        "short",
        "uint8",
        "uint16",
        "uint32",
        "uint64",
        "bool",
        "complex64",
        "complex128",
        "cfloat",
        "cdouble",
        "float8_e4m3fn",
        "float8_e5m2",
        "float8_e4m3fnuz",
        "float8_e5m2fnuz",
        "qint8",
        "quint8",
        "qint32",
    }
)

#: torch functions that return a dtype (``x.to(torch.get_default_dtype(), non_blocking=True)``
#: is a cast, not a copy).
DTYPE_FUNCTIONS: frozenset[str] = frozenset({"get_default_dtype", "promote_types", "result_type"})

#: Tensor methods that make the receiver use other memory (``t.set_(other)``), and the
#: attribute whose assignment does (``t.data = other``): what was known of its memory is void.
STORAGE_REPLACING_METHODS: frozenset[str] = frozenset({"set_"})
#: Functions that swap two tensors' memory in place (``torch.utils.swap_tensors(a, b)``).
MEMORY_SWAPPING_FUNCTIONS: frozenset[str] = frozenset({"utils.swap_tensors"})
#: In-place methods (PyTorch's trailing ``_``) return the tensor itself, in the same memory:
#: ``torch.zeros(n).masked_fill_(m, 1)`` is the tensor ``torch.zeros`` made. Not these: ``copy_``
#: (its own rule), ``set_`` (other memory), ``share_memory_`` (moves the data to new shared
#: memory), and those that make the tensor strided or may move its data.
IN_PLACE_NOT_SELF: frozenset[str] = frozenset(
    {
        "copy_",
        "set_",
        "share_memory_",
        "t_",
        "transpose_",
        "swapdims_",
        "swapaxes_",
        "as_strided_",
        "resize_",
        "resize_as_",
        "squeeze_",
        "unsqueeze_",
    }
)
#: ``share_memory_()`` moves a host tensor's data to new shared memory, which is not pinned.
SHARED_MEMORY_METHOD = "share_memory_"
STORAGE_ATTRIBUTES: frozenset[str] = frozenset({"data"})

#: Device strings that are the host (copies to them are not H2D).
HOST_DEVICE_PREFIXES: tuple[str, ...] = ("cpu",)

#: Device strings that name an accelerator. A string literal target outside this list (for example
#: ``"meta"``) is not an H2D copy; a non-literal target is assumed to be one.
ACCELERATOR_DEVICE_PREFIXES: tuple[str, ...] = ("cuda", "xpu", "npu", "hpu", "mps", "mlu", "musa", "privateuseone")

#: The pinned-memory guard the fixer inserts, and what is known about well-known definitions of it.
#: It is *not* a torch API: each project defines its own.
PIN_HELPER_NAME = "is_pin_memory_available"
#: module prefix -> whether that project's helper takes the device as an argument.
KNOWN_HELPER_ARITY: dict[str, bool] = {"sglang": True, "vllm": False}

#: numpy module names: a call into them returns a numpy array (not pinnable through torch.tensor).
NUMPY_MODULES: frozenset[str] = frozenset({"numpy"})
NUMPY_ARRAY_FUNCTIONS: frozenset[str] = frozenset(
    {
        "array",
        "asarray",
        "ascontiguousarray",
        "zeros",
        "ones",
        "empty",
        "full",
        "arange",
        "concatenate",
        "stack",
        "frombuffer",
        "fromiter",
        "cumsum",
        "repeat",
        "linspace",
    }
)

#: Runtime-companion view of the same facts: names looked up on the ``torch`` module.
RUNTIME_PINNABLE_FACTORIES: frozenset[str] = PINNABLE_FACTORIES | PINNABLE_LIKE_FACTORIES
RUNTIME_UNPINNABLE_FACTORIES: frozenset[str] = (
    UNPINNABLE_DATA_FACTORIES | MEMORY_SHARING_FACTORIES | frozenset({"cat", "stack", "concat", "concatenate"})
)
