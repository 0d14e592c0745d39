"""``nn.utils.rnn``: batches of variable-length sequences for the recurrent layers.

Note [packed sequences]
    A PackedSequence stores a batch of sequences time step by time step: ``data``
    holds, for t = 0, 1, ..., the t-th element of every sequence longer than t
    (``batch_sizes[t]`` of them), the sequences ordered longest first. The recurrent
    layers run step t on the first ``batch_sizes[t]`` rows of their state, so each
    sequence stops at its own length and its final state is the state after its last
    element. ``sorted_indices`` maps the sorted order back to the caller's batch
    order (None when the caller's batch was sorted already); ``unsorted_indices`` is
    its inverse. Packing and padding are built from indexing, ``cat`` and ``stack``,
    so gradients flow through them.
"""
import collections

import numpy as np

from ... import _dtypes, _factories
from ..._ops import FUNCTIONS
from ..._tensor import Tensor

F = FUNCTIONS


class PackedSequence(collections.namedtuple(
        "PackedSequence_", ["data", "batch_sizes", "sorted_indices", "unsorted_indices"])):
    """A packed batch of variable-length sequences (Note [packed sequences]); made by
    ``pack_padded_sequence`` / ``pack_sequence``, accepted by RNN, LSTM and GRU.

    >>> import chainrule as cr
    >>> from chainrule.nn.utils.rnn import pack_sequence
    >>> pack_sequence([cr.tensor([1., 2.]), cr.tensor([3.])]).batch_sizes
    tensor([2, 1])
    """

    __slots__ = ()

    def __new__(cls, data, batch_sizes=None, sorted_indices=None, unsorted_indices=None):
        if unsorted_indices is None and sorted_indices is not None:
            unsorted_indices = invert_permutation(sorted_indices)
        return super().__new__(cls, data, batch_sizes, sorted_indices, unsorted_indices)

    def to(self, *args, **kwargs):
        """The same sequences with ``data`` converted by ``Tensor.to`` (indices follow
        its device)."""
        data = self.data.to(*args, **kwargs)
        if data is self.data:
            return self
        move = (lambda t: None if t is None else t.to(data.device))
        return type(self)(data, self.batch_sizes, move(self.sorted_indices),
                          move(self.unsorted_indices))

    def cuda(self, *args, **kwargs):
        return self.to(self.data.cuda(*args, **kwargs).device)

    def cpu(self):
        return self.to("cpu")

    def double(self):
        return self.to(dtype=_dtypes.float64)

    def float(self):
        return self.to(dtype=_dtypes.float32)

    def half(self):
        return self.to(dtype=_dtypes.float16)

    def long(self):
        return self.to(dtype=_dtypes.int64)

    @property
    def is_cuda(self):
        return self.data.is_cuda

    def is_pinned(self):
        return self.data.is_pinned()

    def __repr__(self):
        return (f"PackedSequence(data={self.data!r}, batch_sizes={self.batch_sizes!r}, "
                f"sorted_indices={self.sorted_indices!r}, "
                f"unsorted_indices={self.unsorted_indices!r})")


def invert_permutation(permutation):
    """The permutation that undoes ``permutation`` (None stays None).

    >>> import chainrule as cr
    >>> from chainrule.nn.utils.rnn import invert_permutation
    >>> invert_permutation(cr.tensor([2, 0, 1]))
    tensor([1, 2, 0])
    """
    if permutation is None:
        return None
    inverse = np.empty_like(permutation._data)
    inverse[permutation._data] = np.arange(permutation._data.size)
    return Tensor._wrap(inverse)


def _lengths_array(lengths):
    values = lengths._data if isinstance(lengths, Tensor) else np.asarray(lengths)
    return np.asarray(values, dtype=np.int64).reshape(-1)


def pack_padded_sequence(input, lengths, batch_first=False, enforce_sorted=True):
    """Pack a padded batch (T x B x *, or B x T x * with ``batch_first``) of sequences
    of the given ``lengths``; unsorted lengths need ``enforce_sorted=False``.

    >>> import chainrule as cr
    >>> from chainrule.nn.utils.rnn import pack_padded_sequence
    >>> padded = cr.tensor([[1., 2., 3.], [4., 5., 0.]])
    >>> pack_padded_sequence(padded, [3, 2], batch_first=True).data
    tensor([1., 4., 2., 5., 3.])
    """
    n = _lengths_array(lengths)
    if enforce_sorted:
        if np.any(n[:-1] < n[1:]):
            raise RuntimeError(
                "`lengths` array must be sorted in decreasing order when `enforce_sorted` is "
                "True. You can pass `enforce_sorted=False` to pack_padded_sequence and/or "
                "pack_sequence to sidestep this requirement if you do not need ONNX "
                "exportability.")
        sorted_indices = None
    else:
        order = np.argsort(-n, kind="stable")
        sorted_indices, n = Tensor._wrap(order.astype(np.int64)), n[order]
        input = F["index_select"](input, 0 if batch_first else 1, sorted_indices)
    if n.size and n.min() <= 0:
        raise RuntimeError("Length of all samples has to be greater than 0, but found an "
                           "element in 'lengths' that is <= 0")
    if batch_first:
        input = F["transpose"](input, 0, 1)
    if n.size and n[0] > input.shape[0]:
        raise RuntimeError(f"Expected sequence length to be at most {input.shape[0]}, but got "
                           f"{n[0]} for an element of 'lengths'")
    batch_sizes = (n[None, :] > np.arange(n[0] if n.size else 0)[:, None]).sum(1)
    data = F["cat"]([input[t, :bs] for t, bs in enumerate(batch_sizes)], 0)
    return PackedSequence(data, Tensor._wrap(batch_sizes.astype(np.int64)), sorted_indices)


def pad_packed_sequence(sequence, batch_first=False, padding_value=0.0, total_length=None):
    """Unpack to a padded batch: ``(padded, lengths)``, the batch in the order it had
    before packing.

    >>> import chainrule as cr
    >>> from chainrule.nn.utils.rnn import pack_sequence, pad_packed_sequence
    >>> padded, lengths = pad_packed_sequence(pack_sequence([cr.tensor([1., 2.]), cr.tensor([3.])]))
    >>> padded.tolist(), lengths.tolist()
    ([[1.0, 3.0], [2.0, 0.0]], [2, 1])
    """
    data, sizes = sequence.data, sequence.batch_sizes._data
    steps, batch = len(sizes), int(sizes[0]) if len(sizes) else 0
    if total_length is not None:
        if total_length < steps:
            raise ValueError(f"Expected total_length to be at least the length of the longest "
                             f"sequence in input, but got total_length={total_length} and max "
                             f"sequence length being {steps}")
    rows, offset = [], 0
    for bs in sizes:
        chunk = data[offset:offset + bs]
        if bs < batch:
            chunk = F["cat"]([chunk, _padding(data, batch - bs, padding_value)], 0)
        rows.append(chunk)
        offset += bs
    for _ in range((total_length or steps) - steps):
        rows.append(_padding(data, batch, padding_value))
    padded = F["stack"](rows, 0)
    lengths = (sizes[None, :] > np.arange(batch)[:, None]).sum(1).astype(np.int64)
    if sequence.unsorted_indices is not None:
        padded = F["index_select"](padded, 1, sequence.unsorted_indices)
        lengths = lengths[sequence.unsorted_indices._data]
    return (F["transpose"](padded, 0, 1) if batch_first else padded), Tensor._wrap(lengths)


def _padding(like, rows, value):
    return _factories.full((rows,) + tuple(like.shape[1:]), value, dtype=like.dtype,
                           device=like.device)


def pad_sequence(sequences, batch_first=False, padding_value=0.0, padding_side="right"):
    """Stack sequences of different lengths (L_i x *) into one padded tensor
    (L_max x B x *, or B x L_max x * with ``batch_first``), padded on the right or left.

    >>> import chainrule as cr
    >>> from chainrule.nn.utils.rnn import pad_sequence
    >>> pad_sequence([cr.tensor([1., 2.]), cr.tensor([3.])], batch_first=True).tolist()
    [[1.0, 2.0], [3.0, 0.0]]
    """
    if padding_side not in ("left", "right"):
        raise ValueError(f"Expected padding_side to be one of left or right, but got "
                         f"{padding_side}.")
    if isinstance(sequences, Tensor):
        sequences = sequences.unbind(0)
    longest = max(s.shape[0] for s in sequences)
    padded = []
    for s in sequences:
        extra = longest - s.shape[0]
        if extra:
            pad = _padding(s, extra, padding_value)
            s = F["cat"]([s, pad] if padding_side == "right" else [pad, s], 0)
        padded.append(s)
    return F["stack"](padded, 0 if batch_first else 1)


def pack_sequence(sequences, enforce_sorted=True):
    """Pack a list of sequences (L_i x *) directly.

    >>> import chainrule as cr
    >>> from chainrule.nn.utils.rnn import pack_sequence
    >>> pack_sequence([cr.tensor([1.]), cr.tensor([2., 3.])], enforce_sorted=False).data
    tensor([2., 1., 3.])
    """
    lengths = [s.shape[0] for s in sequences]
    return pack_padded_sequence(pad_sequence(sequences), lengths, enforce_sorted=enforce_sorted)


def unpad_sequence(padded_sequences, lengths, batch_first=False):
    """The list of sequences a padded batch holds, each cut to its length.

    >>> import chainrule as cr
    >>> from chainrule.nn.utils.rnn import unpad_sequence
    >>> [s.tolist() for s in unpad_sequence(cr.tensor([[1., 2.], [3., 0.]]), cr.tensor([2, 1]), True)]
    [[1.0, 2.0], [3.0]]
    """
    if not batch_first:
        padded_sequences = F["transpose"](padded_sequences, 0, 1)
    return [padded_sequences[i, :n] for i, n in enumerate(_lengths_array(lengths))]


def unpack_sequence(packed_sequences):
    """The list of sequences a PackedSequence holds, in the order they were packed from.

    >>> import chainrule as cr
    >>> from chainrule.nn.utils.rnn import pack_sequence, unpack_sequence
    >>> [s.tolist() for s in unpack_sequence(pack_sequence([cr.tensor([1.]), cr.tensor([2., 3.])], False))]
    [[1.0], [2.0, 3.0]]
    """
    padded, lengths = pad_packed_sequence(packed_sequences, batch_first=True)
    return unpad_sequence(padded, lengths, batch_first=True)
