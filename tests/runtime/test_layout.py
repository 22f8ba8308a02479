"""The pinned-but-staged model (layout.py): pure functions, cross-checked against torch's own
contiguity on real CPU tensors."""

from __future__ import annotations

import pytest

from pinlint.runtime import layout

torch = pytest.importorskip("torch")


def _tensors() -> list[object]:
    base = torch.ones(4, 6)
    return [
        base,
        base.t(),
        base[:, ::2],
        base[1:3],
        base[:, 1:3],
        torch.ones(1, 5),
        torch.ones(5, 1).t(),
        torch.ones(2, 3, 4).permute(2, 0, 1),
        torch.ones(3).expand(4, 3),
        torch.ones(0, 3),
        torch.ones(()),
    ]


@pytest.mark.parametrize("t", _tensors(), ids=lambda t: f"{tuple(t.shape)}/{t.stride()}")
def test_contiguity_matches_torch(t) -> None:
    from torch._prims_common import is_non_overlapping_and_dense_or_false

    assert layout.is_contiguous(t.shape, t.stride()) == t.is_contiguous()
    assert layout.is_non_overlapping_and_dense(t.shape, t.stride()) == is_non_overlapping_and_dense_or_false(t)


@pytest.mark.parametrize(
    ("sizes", "strides", "same_dtype", "preserve", "staged"),
    [
        ((4, 6), (6, 1), True, True, False),  # contiguous
        ((4, 6), (6, 1), False, True, False),  # dtype change, contiguous: .contiguous() is self
        ((6, 4), (1, 6), True, True, False),  # transposed, same dtype: dst gets the same strides
        ((6, 4), (1, 6), False, True, True),  # transposed + dtype change: pageable temporary
        ((4, 3), (6, 2), True, True, True),  # every other column: not dense
        ((6, 4), (1, 6), True, False, True),  # memory_format asks for another layout
        ((4, 3), (0, 1), True, True, True),  # expanded (stride 0)
    ],
)
def test_to_model(sizes, strides, same_dtype: bool, preserve: bool, staged: bool) -> None:
    assert layout.to_stages_through_pageable(sizes, strides, same_dtype, preserve) is staged


@pytest.mark.parametrize(
    ("src", "dst", "same_dtype", "staged"),
    [
        (((4, 6), (6, 1)), ((4, 6), (6, 1)), True, False),
        (((4, 6), (6, 1)), ((4, 6), (6, 1)), False, False),  # temporaries, but src is contiguous
        (((4,), (1,)), ((3, 4), (4, 1)), True, True),  # broadcast: expand_as is not contiguous
        (((6, 4), (1, 6)), ((6, 4), (4, 1)), True, True),  # different strides, src not contiguous
        (((6, 4), (1, 6)), ((6, 4), (1, 6)), True, False),  # same permuted strides: direct
    ],
)
def test_copy_model(src, dst, same_dtype: bool, staged: bool) -> None:
    assert layout.copy_stages_through_pageable(src[0], src[1], dst[0], dst[1], same_dtype) is staged


def test_size_one_dimensions_are_not_a_broadcast() -> None:
    # (1, N).copy_(pinned (N,)): expand_as only adds a size-1 dimension; the pinned source is used.
    assert not layout.copy_stages_through_pageable((8,), (1,), (1, 8), (8, 1), True)
    assert not layout.copy_stages_through_pageable((8,), (1,), (1, 8), (8, 1), False)
    # A real broadcast still stages: (8,) into (4, 8).
    assert layout.copy_stages_through_pageable((8,), (1,), (4, 8), (8, 1), True)
