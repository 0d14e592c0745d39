"""AdaptiveLogSoftmaxWithLoss (Grave et al., "Efficient softmax approximation for
GPUs"): a head over the frequent classes plus one entry per cluster of rarer ones, each
cluster a smaller two-layer projection and its own softmax."""
import itertools
from collections import namedtuple

from ... import _factories
from ..._ops._common import FUNCTIONS as _FUNCTIONS
from .. import functional as F
from .container import ModuleList, Sequential
from .linear import Linear
from .module import Module

__all__ = ["AdaptiveLogSoftmaxWithLoss"]

_ASMoutput = namedtuple("_ASMoutput", ["output", "loss"])


def _check_cutoffs(cutoffs, n_classes):
    if len(cutoffs) == 0:
        raise ValueError("cutoffs should be a sequence of length larger than 0")
    if cutoffs != sorted(cutoffs) or min(cutoffs) <= 0 or max(cutoffs) > n_classes - 1 \
            or len(set(cutoffs)) != len(cutoffs) or any(int(c) != c for c in cutoffs):
        raise ValueError("cutoffs should be a sequence of unique, positive integers sorted in "
                         "an increasing order, where each value is between 1 and n_classes-1")


def _check_target(input, target):
    if target.dim() == 1:
        if input.size(0) != target.size(0):
            raise RuntimeError("Input and target should have the same size in the batch "
                               "dimension.")
        if input.dim() != 2:
            raise RuntimeError(f"1D target tensor expects 2D input tensors, but found inputs "
                               f"with size {input.size()}")
    elif target.dim() == 0:
        if input.dim() != 1:
            raise RuntimeError(f"0D target tensor expects 1D input tensors, but found inputs "
                               f"with size {input.size()}")
    else:
        raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")


class AdaptiveLogSoftmaxWithLoss(Module):
    """Log-probabilities of the targets (``output``) and their mean negative
    (``loss``): classes below ``cutoffs[0]`` are scored by the head; class c of
    cluster i by head(cluster i) + log_softmax(tail[i](x))[c - cutoffs[i]].

    >>> import chainrule as cr
    >>> asm = cr.nn.AdaptiveLogSoftmaxWithLoss(16, 10, cutoffs=[4, 7])
    >>> out = asm(cr.randn(5, 16), cr.tensor([0, 3, 5, 8, 9]))
    >>> out.output.shape, out.loss.shape, asm.log_prob(cr.randn(2, 16)).shape
    (chainrule.Size([5]), chainrule.Size([]), chainrule.Size([2, 10]))
    """

    def __init__(self, in_features, n_classes, cutoffs, div_value=4.0, head_bias=False,
                 device=None, dtype=None):
        super().__init__()
        cutoffs = list(cutoffs)
        _check_cutoffs(cutoffs, n_classes)
        self.in_features, self.n_classes = in_features, n_classes
        self.cutoffs = cutoffs + [n_classes]
        self.div_value, self.head_bias = div_value, head_bias
        self.shortlist_size = self.cutoffs[0]
        self.n_clusters = len(self.cutoffs) - 1
        self.head_size = self.shortlist_size + self.n_clusters
        self.head = Linear(in_features, self.head_size, bias=head_bias, dtype=dtype)
        self.tail = ModuleList()
        for i in range(self.n_clusters):
            hidden = int(in_features // (div_value ** (i + 1)))
            size = self.cutoffs[i + 1] - self.cutoffs[i]
            self.tail.append(Sequential(Linear(in_features, hidden, bias=False, dtype=dtype),
                                        Linear(hidden, size, bias=False, dtype=dtype)))

    def reset_parameters(self):
        """Reset the head's and every cluster's projections."""
        self.head.reset_parameters()
        for i2h, h2o in self.tail:
            i2h.reset_parameters()
            h2o.reset_parameters()

    def forward(self, input_, target_):
        _check_target(input_, target_)
        batched = target_.dim() > 0
        input = input_ if batched else input_.unsqueeze(0)
        target = target_ if batched else target_.unsqueeze(0)
        self._check_range(target)
        head_entry = target.clone()
        local = []
        for i, (low, high) in enumerate(itertools.pairwise(self.cutoffs)):
            rows = ((target >= low) & (target < high)).nonzero().reshape(-1)
            if rows.numel():
                head_entry[rows] = self.shortlist_size + i
                logprob = F.log_softmax(self.tail[i](input.index_select(0, rows)), dim=1)
                picked = logprob.gather(1, (target.index_select(0, rows) - low).unsqueeze(1))
                local.append((rows, picked.reshape(-1)))
        output = _factories.zeros(target.shape[0], dtype=input.dtype, device=input.device)
        for rows, picked in local:
            output = output.index_add(0, rows, picked)
        head_logprob = F.log_softmax(self.head(input), dim=1)
        output = output + head_logprob.gather(1, head_entry.unsqueeze(1)).reshape(-1)
        loss = (-output).mean()
        return _ASMoutput(output if batched else output.squeeze(0), loss)

    def _check_range(self, target):
        if target.numel() and (target.min().item() < 0 or
                               target.max().item() > self.n_classes - 1):
            raise RuntimeError(f"Target values should be in [0, {self.n_classes - 1}], but "
                               f"values in range [{target.min().item()}, "
                               f"{target.max().item()}] were found. ")

    def _full_log_prob(self, input, head_output):
        head_logprob = F.log_softmax(head_output, dim=1)
        parts = [head_logprob[:, :self.shortlist_size]]
        for i in range(self.n_clusters):
            cluster = F.log_softmax(self.tail[i](input), dim=1)
            parts.append(cluster + head_logprob[:, self.shortlist_size + i].unsqueeze(1))
        return _FUNCTIONS["cat"](parts, 1)

    def log_prob(self, input):
        """Log-probabilities of all ``n_classes`` classes, (N, n_classes)."""
        return self._full_log_prob(input, self.head(input))

    def predict(self, input):
        """The most probable class of each row (``log_prob(input).argmax(1)``)."""
        head_output = self.head(input)
        output = head_output.argmax(dim=1)
        outside = output >= self.shortlist_size
        if not outside.any():
            return output
        rows = outside.nonzero().reshape(-1)
        best = self._full_log_prob(input.index_select(0, rows),
                                   head_output.index_select(0, rows)).argmax(dim=1)
        output[rows] = best
        return output

