"""segment_reduce (_ops/segments.py): every reduction with and without ``initial``, empty
segments, offsets, per-row lengths, gradients and errors. (Against torch:
tests/test_parity_aten_surface.py.)"""
import math

import numpy as np
import pytest

import chainrule as cr

DATA = [1.0, 3.0, 3.0, 2.0, 5.0, 0.0]
LENGTHS = cr.tensor([3, 0, 2, 1])


@pytest.mark.parametrize("reduce, initial, expected", [
    ("sum", None, [7.0, 0.0, 7.0, 0.0]), ("sum", 2.0, [9.0, 2.0, 9.0, 2.0]),
    ("mean", 2.0, [3.0, 2.0, 4.5, 2.0]), ("max", None, [3.0, -math.inf, 5.0, 0.0]),
    ("max", 2.0, [3.0, 2.0, 5.0, 2.0]), ("min", None, [1.0, math.inf, 2.0, 0.0]),
    ("prod", 2.0, [18.0, 2.0, 20.0, 0.0])])
def test_reductions(reduce, initial, expected):
    out = cr.segment_reduce(cr.tensor(DATA), reduce, lengths=LENGTHS, initial=initial)
    assert out.tolist() == expected


def test_mean_of_an_empty_segment_is_nan_and_offsets_equal_lengths():
    out = cr.segment_reduce(cr.tensor(DATA), "mean", offsets=cr.tensor([0, 3, 3, 5, 6]))
    assert math.isnan(out[1].item()) and out[2].item() == 3.5


def test_gradients_and_ties():
    x = cr.tensor(DATA, requires_grad=True)
    cr.segment_reduce(x, "max", lengths=LENGTHS).backward(cr.tensor([1.0, 10.0, 100.0, 1e3]))
    assert x.grad.tolist() == [0.0, 0.5, 0.5, 0.0, 100.0, 1000.0]
    y = cr.tensor(np.random.default_rng(0).standard_normal((2, 6, 3)), requires_grad=True)
    for reduce in ("sum", "mean", "prod"):
        assert cr.autograd.gradcheck(
            lambda v: cr.segment_reduce(v, reduce, lengths=cr.tensor([[2, 4], [3, 3]]), axis=1,
                                        initial=0.5), (y,))


def test_per_row_lengths_keep_trailing_dims():
    out = cr.segment_reduce(cr.arange(12.0).reshape(2, 6), "sum",
                            lengths=cr.tensor([[2, 4], [3, 3]]), axis=1)
    assert out.tolist() == [[1.0, 14.0], [21.0, 30.0]]
    out = cr.segment_reduce(cr.arange(12.0).reshape(2, 6).t(), "max",
                            lengths=cr.tensor([4, 2]))
    assert out.tolist() == [[3.0, 9.0], [5.0, 11.0]]


@pytest.mark.parametrize("kwargs, message", [
    ({"lengths": cr.tensor([1])}, "sum to data.size"), ({}, "Either lengths or offsets"),
    ({"indices": cr.tensor([0])}, "indices based reduction is not supported"),
    ({"lengths": cr.tensor([3, -1])}, "segment_length >= 0")])
def test_errors(kwargs, message):
    with pytest.raises(RuntimeError, match=message):
        cr.segment_reduce(cr.ones(2), "sum", **kwargs)
