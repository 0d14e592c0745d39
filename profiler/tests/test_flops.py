"""FLOPs estimates of the matmul family and conv2d."""
import pytest

from chainrule_profiler._flops import flops_of


@pytest.mark.parametrize("op, shapes, out, expected", [
    ("mm", [[2, 3], [3, 4]], [2, 4], 48),
    ("bmm", [[5, 2, 3], [5, 3, 4]], [5, 2, 4], 240),
    ("matmul", [[3], [3]], [], 6),
    ("mv", [[2, 3], [3]], [2], 12),
    ("dot", [[7], [7]], [], 14),
    ("linear", [[8, 3], [4, 3], [4]], [8, 4], 192),
    ("convolution", [[1, 3, 8, 8], [4, 3, 3, 3], [4]], [1, 4, 8, 8], 2 * 256 * 27),
    ("mul", [[2, 3], [2, 3]], [2, 3], 6),
    ("exp", [[2, 3]], [2, 3], None),
])
def test_flops(op, shapes, out, expected):
    assert flops_of(op, shapes, out) == expected
