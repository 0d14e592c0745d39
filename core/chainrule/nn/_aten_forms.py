"""The reference's top-level ATen forms of nn ops (``torch.kl_div``, ``torch.native_layer_norm``,
``torch.convolution``, ``torch.lstm_cell``, ...): thin adapters over the functional forms,
with the ATen argument orders, enums and extra outputs.

Note [reduction enum]
    The top-level losses take the reduction as the ATen enum ``int``: 1 is 'mean', 2 is
    'sum' and every other value 'none'. Their Python binding gives the argument no usable
    default, so a call that leaves it out gets 0 ('none'), not the schema's 'mean'
    (``torch.kl_div(x, y)`` has the input's shape). A string is a TypeError.
"""
import numpy as np

from .. import _factories
from .._grad_mode import no_grad as _no_grad
from .._ops.nn import conv_tbc as _conv_tbc, conv_transpose_nd, convolution_nd, linear as _linear
from .._tensor import Tensor as _Tensor
from . import _dropout, _embedding_bag, _grid, _loss, _norm, _pool, _sparse
from ._ctc import ctc_loss as _ctc_loss
from ._pad import pad as _pad


def _reduction(fn, reduction):
    """Note [reduction enum]: the functional forms' reduction name for an ATen enum."""
    if isinstance(reduction, bool) or not isinstance(reduction, int):
        raise TypeError(f"{fn}(): argument 'reduction' must be int, not "
                        f"{type(reduction).__name__}")
    return {1: "mean", 2: "sum"}.get(reduction, "none")


# --- losses ---------------------------------------------------------------------------------
def binary_cross_entropy_with_logits(input, target, weight=None, pos_weight=None, reduction=0):
    """``torch.binary_cross_entropy_with_logits`` (Note [reduction enum]).

    >>> import chainrule as cr
    >>> cr.binary_cross_entropy_with_logits(cr.zeros(2), cr.ones(2), None, None, 2).item()
    1.3862943649291992
    """
    name = _reduction("binary_cross_entropy_with_logits", reduction)
    return _loss.binary_cross_entropy_with_logits(input, target, weight, reduction=name,
                                                  pos_weight=pos_weight)


def kl_div(input, target, reduction=0, *, log_target=False):
    """``torch.kl_div`` (Note [reduction enum]).

    >>> import chainrule as cr
    >>> cr.kl_div(cr.zeros(2), cr.ones(2), 2).item()
    0.0
    """
    name = _reduction("kl_div", reduction)
    if not (input.is_floating_point() or input.is_complex()) or \
            not (target.is_floating_point() or target.is_complex()):
        raise RuntimeError("kl_div: Integral inputs not supported.")
    if name == "mean":       # (the functional form's warning about 'mean' is its own)
        return _loss.kl_div(input, target, reduction="none", log_target=log_target).mean()
    return _loss.kl_div(input, target, reduction=name, log_target=log_target)


def cosine_embedding_loss(input1, input2, target, margin=0.0, reduction=0):
    """``torch.cosine_embedding_loss`` (Note [reduction enum]).

    >>> import chainrule as cr
    >>> cr.cosine_embedding_loss(cr.ones(1, 2), cr.ones(1, 2), cr.ones(1)).tolist()
    [0.0]
    """
    name = _reduction("cosine_embedding_loss", reduction)
    return _loss.cosine_embedding_loss(input1, input2, target, margin, reduction=name)


def hinge_embedding_loss(input, target, margin=1.0, reduction=0):
    """``torch.hinge_embedding_loss`` (Note [reduction enum]).

    >>> import chainrule as cr
    >>> cr.hinge_embedding_loss(cr.tensor([0.5]), cr.tensor([-1.0])).tolist()
    [0.5]
    """
    name = _reduction("hinge_embedding_loss", reduction)
    return _loss.hinge_embedding_loss(input, target, margin, reduction=name)


def margin_ranking_loss(input1, input2, target, margin=0.0, reduction=0):
    """``torch.margin_ranking_loss`` (Note [reduction enum]).

    >>> import chainrule as cr
    >>> cr.margin_ranking_loss(cr.tensor([1.0]), cr.tensor([2.0]), cr.tensor([1.0])).tolist()
    [1.0]
    """
    name = _reduction("margin_ranking_loss", reduction)
    return _loss.margin_ranking_loss(input1, input2, target, margin, reduction=name)


def poisson_nll_loss(input, target, log_input, full, eps, reduction):
    """``torch.poisson_nll_loss``: every argument required (Note [reduction enum]).

    >>> import chainrule as cr
    >>> cr.poisson_nll_loss(cr.zeros(2), cr.ones(2), True, False, 1e-8, 2).item()
    2.0
    """
    name = _reduction("poisson_nll_loss", reduction)
    return _loss.poisson_nll_loss(input, target, log_input, full, eps=eps, reduction=name)


def triplet_margin_loss(anchor, positive, negative, margin=1.0, p=2.0, eps=1e-6, swap=False,
                        reduction=0):
    """``torch.triplet_margin_loss`` (Note [reduction enum]).

    >>> import chainrule as cr
    >>> cr.triplet_margin_loss(cr.zeros(1, 2), cr.zeros(1, 2), cr.ones(1, 2), 2.0).shape
    chainrule.Size([1])
    """
    name = _reduction("triplet_margin_loss", reduction)
    return _loss.triplet_margin_loss(anchor, positive, negative, margin, p, eps, swap,
                                     reduction=name)


def ctc_loss(log_probs, targets, input_lengths, target_lengths, blank=0, reduction=0,
             zero_infinity=False):
    """``torch.ctc_loss`` (Note [reduction enum]; 'mean' divides each loss by its target
    length first, as the functional form does).

    >>> import chainrule as cr
    >>> lp = cr.full((2, 1, 2), 0.5).log()
    >>> [round(v, 4) for v in cr.ctc_loss(lp, cr.tensor([[1]]), [2], [1]).tolist()]
    [0.2877]
    """
    name = _reduction("ctc_loss", reduction)
    return _ctc_loss(log_probs, targets, input_lengths, target_lengths, blank, name,
                     zero_infinity)


# --- normalisation: the output and the saved statistics -------------------------------------
def _statistics(input, dims, eps, keepdim):
    """(mean, 1 / sqrt(biased var + eps)) of ``input`` over ``dims``, accumulated in
    float64 and given in the input's dtype, outside the graph (tensor ops, so on any
    device, meta included)."""
    with _no_grad():
        wide = input.detach().double()
        mean = wide.mean(dims, keepdim=keepdim)
        rstd = (wide.var(dims, correction=0, keepdim=keepdim) + eps).rsqrt()
        return mean.to(input.dtype), rstd.to(input.dtype)


def native_layer_norm(input, normalized_shape, weight, bias, eps):
    """``torch.native_layer_norm``: (output, mean, rstd), the statistics over the last
    ``len(normalized_shape)`` dims with those dims kept as 1 (not differentiable).

    >>> import chainrule as cr
    >>> out, mean, rstd = cr.native_layer_norm(cr.tensor([[1.0, 3.0]]), [2], None, None, 0.0)
    >>> out.tolist(), mean.tolist(), rstd.tolist()
    ([[-1.0, 1.0]], [[2.0]], [[1.0]])
    """
    out = _norm.layer_norm(input, normalized_shape, weight, bias, eps)
    dims = tuple(range(input.dim() - len(normalized_shape), input.dim()))
    return (out,) + _statistics(input, dims, eps, True)


def native_batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps):
    """``torch.native_batch_norm``: (output, save_mean, save_invstd); in training the batch's
    per-channel mean and 1 / sqrt(var + eps) (and the running statistics updated in
    place), in evaluation two empty tensors.

    >>> import chainrule as cr
    >>> out, mean, invstd = cr.native_batch_norm(cr.tensor([[1.0], [3.0]]), None, None, None,
    ...                                          None, True, 0.1, 0.0)
    >>> out.tolist(), mean.tolist(), invstd.tolist()
    ([[-1.0], [1.0]], [2.0], [1.0])
    """
    out = _norm.batch_norm(input, running_mean, running_var, weight, bias, training, momentum,
                           eps)
    if not training:
        empty = _factories.empty(0, dtype=input.dtype, device=input.device)
        return out, empty, empty.clone()
    dims = (0,) + tuple(range(2, input.dim()))
    return (out,) + _statistics(input, dims, eps, False)


def native_group_norm(input, weight, bias, N, C, HxW, group, eps):
    """``torch.native_group_norm``: (output, mean, rstd), the statistics shaped (N, group)
    and differentiable like the reference's.

    >>> import chainrule as cr
    >>> out, mean, rstd = cr.native_group_norm(cr.tensor([[[1.0, 3.0]]]), None, None, 1, 1, 2,
    ...                                        1, 0.0)
    >>> out.tolist(), mean.tolist(), rstd.tolist()
    ([[[-1.0, 1.0]]], [[2.0]], [[1.0]])
    """
    out = _norm.group_norm(input, group, weight, bias, eps)
    grouped = input.reshape(N, group, -1)
    rstd = (grouped.var(-1, correction=0) + eps).rsqrt()
    return out, grouped.mean(-1), rstd


def _no_dense_cpu_kernel(name):
    """The reference has no dense CPU kernel for ``name`` (sparse or CUDA only): calling
    it raises its NotImplementedError, and so does chainrule."""
    raise NotImplementedError(
        f"Could not run 'aten::{name}' with arguments from the 'CPU' backend. This could "
        "be because the operator doesn't exist for this backend, or was omitted during the "
        "selective/custom build process (if using custom build).")


def native_norm(input, p=2, dim=None, keepdim=False, dtype=None):
    """``torch.native_norm`` exists for sparse tensors only (Note on _no_dense_cpu_kernel).

    >>> import chainrule as cr
    >>> cr.native_norm(cr.ones(2))
    Traceback (most recent call last):
    NotImplementedError: Could not run 'aten::native_norm' with arguments from the 'CPU' backend...
    """
    _no_dense_cpu_kernel("native_norm")


def norm_except_dim(v, pow=2, dim=0):
    """``torch.norm_except_dim`` (weight_norm's norm): the ``pow``-norm over every dim but
    ``dim``, shaped to broadcast against ``v``; ``dim=-1`` is the norm of all of ``v``.

    >>> import chainrule as cr
    >>> cr.norm_except_dim(cr.tensor([[3.0, 4.0], [0.0, 1.0]])).tolist()
    [[5.0], [1.0]]
    """
    if dim == -1:
        return v.norm(pow)
    last = v.dim() - 1
    if dim == 0:
        flat = v.contiguous().view(v.shape[0], -1).norm(pow, 1)
        return flat.view((v.shape[0],) + (1,) * last)
    if dim == last:
        flat = v.contiguous().view(-1, v.shape[last]).norm(pow, 0)
        return flat.view((1,) * last + (v.shape[last],))
    return norm_except_dim(v.transpose(0, dim), pow, 0).transpose(0, dim)


# --- SyncBatchNorm's kernels -------------------------------------------------------------------
def batch_norm_update_stats(input, running_mean, running_var, momentum):
    """``torch.batch_norm_update_stats``: the per-channel (mean, biased variance) of
    ``input``, and the running statistics updated in place (with the unbiased variance).

    >>> import chainrule as cr
    >>> rm, rv = cr.zeros(1), cr.ones(1)
    >>> [t.tolist() for t in cr.batch_norm_update_stats(cr.tensor([[1.0], [3.0]]), rm, rv, 0.5)]
    [[2.0], [1.0]]
    >>> rm.tolist(), rv.tolist()
    ([1.0], [1.5])
    """
    dims = [0] + list(range(2, input.dim()))
    mean, var = input.mean(dims), input.var(dims, correction=0)
    count = input.numel() // input.shape[1]
    _norm._update_running(running_mean, mean.detach(), momentum)
    _norm._update_running(running_var, var.detach() * (count / max(count - 1, 1)), momentum)
    return mean, var


def _cuda_only(name, params):
    def kernel(*args, **kwargs):
        _no_dense_cpu_kernel(name)
    kernel.__name__ = kernel.__qualname__ = name
    kernel.__doc__ = (f"``torch.{name}({params})``: SyncBatchNorm's CUDA kernel; the "
                      f"reference has none for the CPU, which is all chainrule runs it on, "
                      f"and raises NotImplementedError.\n\n    >>> import chainrule as cr\n"
                      f"    >>> cr.{name}(cr.ones(2, 1))\n    Traceback (most recent call "
                      f"last):\n    NotImplementedError: Could not run 'aten::{name}' with "
                      f"arguments from the 'CPU' backend...\n")
    return kernel


_SYNC_BATCH_NORM_KERNELS = {
    "batch_norm_stats": "input, eps",
    "batch_norm_elemt": "input, weight, bias, mean, invstd, eps",
    "batch_norm_gather_stats": "input, mean, invstd, running_mean, running_var, momentum, "
                               "eps, count",
    "batch_norm_gather_stats_with_counts": "input, mean, invstd, running_mean, running_var, "
                                           "momentum, eps, counts",
    "batch_norm_backward_reduce": "grad_out, input, mean, invstd, weight, input_g, weight_g, "
                                  "bias_g",
    "batch_norm_backward_elemt": "grad_out, input, mean, invstd, weight, sum_dy, "
                                 "sum_dy_xmu, count",
}


# --- dropout ----------------------------------------------------------------------------------
def native_dropout(input, p, train):
    """``torch.native_dropout``: (output, keep-mask as bool); ``train=None`` trains.

    >>> import chainrule as cr
    >>> out, mask = cr.native_dropout(cr.ones(3), 0.5, False)
    >>> out.tolist(), mask.tolist()
    ([1.0, 1.0, 1.0], [True, True, True])
    """
    if train is False:
        return input.clone(), _factories.ones(input.shape, dtype=_bool_dtype())
    _dropout._check_p(p)
    keep = _Tensor._wrap(_dropout._noise(input, p, False))
    scale = 0.0 if p == 1 else 1.0 / (1.0 - p)
    return input * keep * scale, keep.bool()


def _bool_dtype():
    from .. import _dtypes
    return _dtypes.bool_


def dropout_(input, p, train):
    """``torch.dropout_``: :func:`dropout` in place.

    >>> import chainrule as cr
    >>> x = cr.ones(2); cr.dropout_(x, 0.5, False) is x
    True
    """
    return _dropout._apply(input, p, train, True)


def alpha_dropout_(input, p, train):
    """``torch.alpha_dropout_``: alpha dropout in place.

    >>> import chainrule as cr
    >>> x = cr.ones(2); cr.alpha_dropout_(x, 0.5, False) is x
    True
    """
    return _dropout._apply(input, p, train, True, alpha=True)


def feature_dropout(input, p, train):
    """``torch.feature_dropout``: whole channels (dim 1) dropped.

    >>> import chainrule as cr
    >>> cr.feature_dropout(cr.ones(1, 2), 0.5, False).tolist()
    [[1.0, 1.0]]
    """
    return _dropout._apply(input, p, train, False, feature=True)


def feature_dropout_(input, p, train):
    """``torch.feature_dropout_``: :func:`feature_dropout` in place.

    >>> import chainrule as cr
    >>> x = cr.ones(1, 2); cr.feature_dropout_(x, 0.5, False) is x
    True
    """
    return _dropout._apply(input, p, train, True, feature=True)


def feature_alpha_dropout_(input, p, train):
    """``torch.feature_alpha_dropout_``: feature alpha dropout in place.

    >>> import chainrule as cr
    >>> x = cr.ones(1, 2); cr.feature_alpha_dropout_(x, 0.5, False) is x
    True
    """
    return _dropout._apply(input, p, train, True, feature=True, alpha=True)


# --- convolution, padding, pooling, sampling ---------------------------------------------------
def convolution(input, weight, bias, stride, padding, dilation, transposed, output_padding,
                groups):
    """``torch.convolution``: the N-d (transposed) convolution behind conv1d/2d/3d and
    conv_transpose*, N from the weight's rank.

    >>> import chainrule as cr
    >>> cr.convolution(cr.ones(1, 1, 3), cr.ones(1, 1, 2), None, [1], [0], [1], False, [0],
    ...                1).tolist()
    [[[2.0, 2.0]]]
    """
    nd = weight.dim() - 2
    if transposed:
        return conv_transpose_nd("convolution", nd, input, weight, bias, stride, padding,
                                 output_padding, groups, dilation)
    return convolution_nd("convolution", nd, input, weight, bias, stride, padding, dilation,
                          groups)


def conv_tbc(input, weight, bias, pad=0):
    """``torch.conv_tbc``: a 1-d convolution of (time, batch, channels) input with a
    (kernel width, in channels, out channels) weight.

    >>> import chainrule as cr
    >>> cr.conv_tbc(cr.ones(3, 1, 1), cr.ones(2, 1, 1), cr.zeros(1)).flatten().tolist()
    [2.0, 2.0]
    """
    return _conv_tbc(input, weight, bias, pad)


def constant_pad_nd(input, pad, value=0):
    """``torch.constant_pad_nd``: :func:`pad` with a constant (negative pads crop).

    >>> import chainrule as cr
    >>> cr.constant_pad_nd(cr.ones(2), [1, 0], 5.0).tolist()
    [5.0, 1.0, 1.0]
    """
    return _pad(input, list(pad), "constant", value)


def adaptive_max_pool1d(input, output_size):
    """``torch.adaptive_max_pool1d``: (values, indices).

    >>> import chainrule as cr
    >>> [t.tolist() for t in cr.adaptive_max_pool1d(cr.tensor([[1.0, 3.0, 2.0, 0.0]]), [2])]
    [[[3.0, 2.0]], [[1, 2]]]
    """
    return _pool.adaptive_max_pool1d(input, output_size, return_indices=True)


def max_pool1d_with_indices(input, kernel_size, stride=(), padding=0, dilation=1,
                            ceil_mode=False):
    """``torch.max_pool1d_with_indices``: (values, indices); an empty stride is the kernel.

    >>> import chainrule as cr
    >>> [t.tolist() for t in cr.max_pool1d_with_indices(cr.tensor([[1.0, 3.0, 2.0, 0.0]]), 2)]
    [[[3.0, 2.0]], [[1, 2]]]
    """
    return _pool.max_pool1d(input, kernel_size, _empty_is_none(stride), padding, dilation,
                            ceil_mode, return_indices=True)


def _empty_is_none(value):
    return None if isinstance(value, (list, tuple)) and not value else value


def _grid_sampler_nd(name, rank, input, grid, interpolation_mode, padding_mode,
                     align_corners):
    if input.dim() != rank:
        raise RuntimeError(f"{name}(): expected {rank}D input and grid with same number of "
                           f"dimensions, but got input with sizes {list(input.shape)} and "
                           f"grid with sizes {list(grid.shape)}")
    return _grid.grid_sampler(input, grid, interpolation_mode, padding_mode, align_corners)


def grid_sampler_2d(input, grid, interpolation_mode, padding_mode, align_corners):
    """``torch.grid_sampler_2d``: :func:`grid_sampler` of a 4-D input.

    >>> import chainrule as cr
    >>> cr.grid_sampler_2d(cr.ones(1, 1, 2, 2), cr.zeros(1, 1, 1, 2), 0, 0, False).tolist()
    [[[[1.0]]]]
    """
    return _grid_sampler_nd("grid_sampler_2d", 4, input, grid, interpolation_mode,
                            padding_mode, align_corners)


def grid_sampler_3d(input, grid, interpolation_mode, padding_mode, align_corners):
    """``torch.grid_sampler_3d``: :func:`grid_sampler` of a 5-D input.

    >>> import chainrule as cr
    >>> cr.grid_sampler_3d(cr.ones(1, 1, 2, 2, 2), cr.zeros(1, 1, 1, 1, 3), 0, 0,
    ...                    False).tolist()
    [[[[[1.0]]]]]
    """
    return _grid_sampler_nd("grid_sampler_3d", 5, input, grid, interpolation_mode,
                            padding_mode, align_corners)


# --- embeddings ----------------------------------------------------------------------------------
def embedding_renorm_(input, indices, max_norm, norm_type):
    """``torch.embedding_renorm_``: the rows of ``input`` that ``indices`` name and whose
    ``norm_type``-norm exceeds ``max_norm`` scaled down to it, in place, untracked.

    >>> import chainrule as cr
    >>> w = cr.tensor([[3.0, 4.0], [0.3, 0.4]])
    >>> cr.embedding_renorm_(w, cr.tensor([0, 1]), 1.0, 2.0) is w, round(w[0, 0].item(), 4)
    (True, 0.6)
    """
    _sparse._renorm_(input, indices._data.astype(np.int64), max_norm, norm_type)
    return input


_BAG_MODES = ("sum", "mean", "max")


def embedding_bag(weight, indices, offsets, scale_grad_by_freq=False, mode=0, sparse=False,
                  per_sample_weights=None, include_last_offset=False, padding_idx=None):
    """``torch.embedding_bag``: (output, offset2bag, bag_size, max_indices) with the mode
    as an enum (0 sum, 1 mean, 2 max). The last three are the reference's bookkeeping:
    each lookup's bag (empty for a plain sum: no per-sample weights nor padding index,
    a float32 or narrower weight, the reference's fast path), each bag's size (zeros for
    a sum) and, for max, each output element's row (else the bag sizes again).

    >>> import chainrule as cr
    >>> w = cr.arange(12.0).reshape(6, 2)
    >>> out, *_ = cr.embedding_bag(w, cr.tensor([1, 2, 4, 5]), cr.tensor([0, 2]), False, 0)
    >>> out.tolist()
    [[6.0, 8.0], [18.0, 20.0]]
    """
    name = _BAG_MODES[mode]
    out = _embedding_bag.embedding_bag(indices, weight, offsets, None, 2, scale_grad_by_freq,
                                       name, sparse, per_sample_weights, include_last_offset,
                                       padding_idx)
    plain = per_sample_weights is None and padding_idx is None and weight.dtype.itemsize <= 4
    return (out,) + _bag_bookkeeping(weight, indices, offsets, name, include_last_offset,
                                     not plain)


def _bag_bookkeeping(weight, indices, offsets, mode, include_last_offset, filled):
    flat = indices._data.reshape(-1).astype(np.int64)
    if indices.dim() == 2:
        starts = np.arange(0, flat.size, max(indices.shape[1], 1))[:indices.shape[0]]
    else:
        starts = offsets._data.astype(np.int64)[:-1 if include_last_offset else None]
    bag_ids = _embedding_bag._bag_ids(starts, flat.size)
    sizes = np.bincount(bag_ids, minlength=starts.size).astype(np.int64)
    if mode == "sum":
        ids = bag_ids if filled else np.zeros(0, np.int64)
        return _int64(ids), _int64(np.zeros_like(sizes)), _int64(np.zeros_like(sizes))
    if mode == "mean":
        return _int64(bag_ids), _int64(sizes), _int64(sizes)
    return _int64(bag_ids), _int64(sizes), _int64(_bag_argmax(weight._data, flat, bag_ids,
                                                              starts.size))


def _bag_argmax(table, flat, bag_ids, bags):
    """For each bag and column, the row (of ``table``) that holds the bag's maximum."""
    out = np.full((bags, table.shape[1]), -1, np.int64)
    for bag in range(bags):
        rows = flat[bag_ids == bag]
        if rows.size:
            out[bag] = rows[np.argmax(table[rows], axis=0)]
    return out


def _int64(array):
    return _Tensor._wrap(np.asarray(array, dtype=np.int64))


# --- recurrent cells -------------------------------------------------------------------------
def rnn_tanh_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None):
    """``torch.rnn_tanh_cell``: ``tanh(input @ w_ih.T + b_ih + hx @ w_hh.T + b_hh)``.

    >>> import chainrule as cr
    >>> cr.rnn_tanh_cell(cr.zeros(1, 2), cr.zeros(1, 3), cr.ones(3, 2), cr.ones(3, 3)).tolist()
    [[0.0, 0.0, 0.0]]
    """
    from .modules.rnn import _rnn_step
    return _rnn_step("RNN_TANH", _linear(input, w_ih, b_ih), hx, w_hh, b_hh)


def rnn_relu_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None):
    """``torch.rnn_relu_cell``: ``relu(input @ w_ih.T + b_ih + hx @ w_hh.T + b_hh)``.

    >>> import chainrule as cr
    >>> cr.rnn_relu_cell(cr.ones(1, 2), cr.zeros(1, 3), cr.ones(3, 2), cr.ones(3, 3)).tolist()
    [[2.0, 2.0, 2.0]]
    """
    from .modules.rnn import _rnn_step
    return _rnn_step("RNN_RELU", _linear(input, w_ih, b_ih), hx, w_hh, b_hh)


def lstm_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None):
    """``torch.lstm_cell``: one LSTM step from ``hx = (h, c)``; returns (h', c').

    >>> import chainrule as cr
    >>> h, c = cr.lstm_cell(cr.zeros(1, 2), [cr.zeros(1, 3)] * 2, cr.ones(12, 2),
    ...                     cr.ones(12, 3))
    >>> h.tolist(), c.tolist()
    ([[0.0, 0.0, 0.0]], [[0.0, 0.0, 0.0]])
    """
    from .modules.rnn import _lstm_step
    return _lstm_step(_linear(input, w_ih, b_ih), tuple(hx), w_hh, b_hh)


def gru_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None):
    """``torch.gru_cell``: one GRU step (gates r, z, n).

    >>> import chainrule as cr
    >>> cr.gru_cell(cr.zeros(1, 2), cr.zeros(1, 3), cr.ones(9, 2), cr.ones(9, 3)).tolist()
    [[0.0, 0.0, 0.0]]
    """
    from .modules.rnn import _gru_step
    return _gru_step(_linear(input, w_ih, b_ih), hx, w_hh, b_hh)


TOP_LEVEL = {name: _cuda_only(name, params) for name, params in _SYNC_BATCH_NORM_KERNELS.items()}
TOP_LEVEL.update({name: globals()[name] for name in (
    "binary_cross_entropy_with_logits", "kl_div", "cosine_embedding_loss",
    "hinge_embedding_loss", "margin_ranking_loss", "poisson_nll_loss", "triplet_margin_loss",
    "ctc_loss", "native_layer_norm", "native_batch_norm", "native_group_norm", "native_norm",
    "norm_except_dim", "native_dropout", "dropout_", "alpha_dropout_", "feature_dropout",
    "feature_dropout_", "feature_alpha_dropout_", "convolution", "conv_tbc",
    "constant_pad_nd", "adaptive_max_pool1d", "max_pool1d_with_indices", "grid_sampler_2d",
    "grid_sampler_3d", "embedding_renorm_", "embedding_bag", "rnn_tanh_cell",
    "rnn_relu_cell", "lstm_cell", "gru_cell", "batch_norm_update_stats")})


# --- the recurrent kernels ---------------------------------------------------------------------
# Two overloads each, told apart as the reference's parser does: (input, hx, params,
# has_biases, num_layers, dropout, train, bidirectional, batch_first) and, for packed
# sequences, (data, batch_sizes, hx, params, has_biases, num_layers, dropout, train,
# bidirectional). LSTM's hx is a list (h, c), the others' a tensor.
def _recurrent(mode, args, kwargs):
    from .modules.rnn import run_flat
    lstm = mode == "LSTM"
    packed = not isinstance(args[1], (list, tuple)) if lstm else \
        not isinstance(args[2], (list, tuple))
    if packed:
        data, batch_sizes, hx, params, *rest = args
        return run_flat(mode, data, hx, params, *rest, batch_sizes=batch_sizes, **kwargs)
    input, hx, params, *rest = args
    return run_flat(mode, input, hx, params, *rest, **kwargs)


def rnn_tanh(*args, **kwargs):
    """``torch.rnn_tanh``: a stacked tanh RNN over a flat parameter list; (output, h_n).

    >>> import chainrule as cr
    >>> out, h = cr.rnn_tanh(cr.zeros(5, 1, 2), cr.zeros(1, 1, 3),
    ...                      [cr.ones(3, 2), cr.ones(3, 3)], False, 1, 0.0, False, False, False)
    >>> out.shape, h.tolist()
    (chainrule.Size([5, 1, 3]), [[[0.0, 0.0, 0.0]]])
    """
    return _recurrent("RNN_TANH", args, kwargs)


def rnn_relu(*args, **kwargs):
    """``torch.rnn_relu``: a stacked ReLU RNN over a flat parameter list; (output, h_n).

    >>> import chainrule as cr
    >>> out, h = cr.rnn_relu(cr.ones(2, 1, 1), cr.zeros(1, 1, 1), [cr.ones(1, 1), cr.ones(1, 1)],
    ...                      False, 1, 0.0, False, False, False)
    >>> out.flatten().tolist()
    [1.0, 2.0]
    """
    return _recurrent("RNN_RELU", args, kwargs)


def lstm(*args, **kwargs):
    """``torch.lstm``: a stacked LSTM over a flat parameter list; (output, h_n, c_n).

    >>> import chainrule as cr
    >>> out, h, c = cr.lstm(cr.zeros(5, 1, 2), [cr.zeros(1, 1, 3)] * 2,
    ...                     [cr.ones(12, 2), cr.ones(12, 3)], False, 1, 0.0, False, False, False)
    >>> out.shape, c.shape
    (chainrule.Size([5, 1, 3]), chainrule.Size([1, 1, 3]))
    """
    return _recurrent("LSTM", args, kwargs)


def gru(*args, **kwargs):
    """``torch.gru``: a stacked GRU over a flat parameter list; (output, h_n).

    >>> import chainrule as cr
    >>> out, h = cr.gru(cr.zeros(5, 1, 2), cr.zeros(1, 1, 3), [cr.ones(9, 2), cr.ones(9, 3)],
    ...                 False, 1, 0.0, False, False, False)
    >>> h.tolist()
    [[[0.0, 0.0, 0.0]]]
    """
    return _recurrent("GRU", args, kwargs)


TOP_LEVEL.update(rnn_tanh=rnn_tanh, rnn_relu=rnn_relu, lstm=lstm, gru=gru)
