"""Does a copy from a *pinned* host tensor still stage through pageable memory?

Pure functions on sizes and strides (no torch), so the model is unit-tested on its own.

Model, read from ``aten/src/ATen/native/cuda/Copy.cu`` (NOT yet
confirmed on a GPU: ``pinlint probe`` checks it against the profiler's memcpy kinds):

* ``copy_kernel_cuda`` memcpys straight from the source when the dtypes match and the
  TensorIterator is contiguous (``copy_requires_temporaries`` is false).
* Otherwise it builds ``src.expand_as(dst).contiguous()`` on the host. ``contiguous()`` returns the
  source itself when it already is contiguous (pinning kept); else it allocates a new, *pageable*
  tensor, and the DMA comes from pageable memory although ``src.is_pinned()`` is True.
* ``Tensor.to`` allocates its destination with the source's strides when the source is
  non-overlapping and dense (``_to_copy``), so a permuted-but-dense pinned source with the same
  dtype still copies directly.
"""

from __future__ import annotations

from collections.abc import Sequence


def is_contiguous(sizes: Sequence[int], strides: Sequence[int]) -> bool:
    """Row-major contiguity, ignoring dimensions of size 1 (as ``Tensor.is_contiguous``)."""
    expected = 1
    for size, stride in zip(reversed(sizes), reversed(strides)):
        if size == 0:
            return True
        if size != 1:
            if stride != expected:
                return False
            expected *= size
    return True


def is_non_overlapping_and_dense(sizes: Sequence[int], strides: Sequence[int]) -> bool:
    """True when some permutation of the dimensions is contiguous (no gaps, no overlap)."""
    if is_contiguous(sizes, strides):
        return True
    dims = sorted((stride, size) for size, stride in zip(sizes, strides) if size != 1)
    expected = 1
    for stride, size in dims:
        if stride != expected:
            return False
        expected *= size
    return True


def to_stages_through_pageable(
    sizes: Sequence[int], strides: Sequence[int], same_dtype: bool, preserve_format: bool = True
) -> bool:
    """``pinned_src.to(device, ...)``: does the DMA read a pageable temporary?

    ``preserve_format`` is False when ``memory_format=`` asks for a layout other than the source's
    own, which breaks the direct path unless the source is plainly contiguous.
    """
    if same_dtype and preserve_format and is_non_overlapping_and_dense(sizes, strides):
        return False
    return not is_contiguous(sizes, strides)


def copy_stages_through_pageable(
    src_sizes: Sequence[int],
    src_strides: Sequence[int],
    dst_sizes: Sequence[int],
    dst_strides: Sequence[int],
    same_dtype: bool,
) -> bool:
    """``dst.copy_(pinned_src, ...)``: does the DMA read a pageable temporary?"""
    same_shape = tuple(src_sizes) == tuple(dst_sizes)
    if (
        same_dtype
        and same_shape
        and tuple(src_strides) == tuple(dst_strides)
        and is_non_overlapping_and_dense(src_sizes, src_strides)
    ):
        return False  # TensorIterator is contiguous: direct memcpy from the pinned source
    # Temporaries: src.expand_as(dst).contiguous() is the source itself only when the expansion adds
    # nothing but size-1 dimensions (same element count: (N,) into (1, N) is no broadcast) and the
    # source is contiguous.
    return not (_numel(src_sizes) == _numel(dst_sizes) and is_contiguous(src_sizes, src_strides))


def _numel(sizes: Sequence[int]) -> int:
    n = 1
    for size in sizes:
        n *= size
    return n
