"""nn.utils.rnn (Note [packed sequences]) and the recurrent layers on packed input: a
packed batch gives each sequence what running it alone gives."""
import numpy as np
import pytest

import chainrule as cr
from chainrule import nn
from chainrule.autograd import gradcheck
from chainrule.nn.utils.rnn import (PackedSequence, invert_permutation, pack_padded_sequence,
                                    pack_sequence, pad_packed_sequence, pad_sequence,
                                    unpack_sequence, unpad_sequence)

RNG = np.random.default_rng(0)
SEQS = [cr.tensor(RNG.standard_normal((n, 3))) for n in (4, 1, 3)]


def test_pack_and_pad_round_trip_in_the_callers_order():
    packed = pack_sequence(SEQS, enforce_sorted=False)
    assert packed.batch_sizes.tolist() == [3, 2, 2, 1]
    assert packed.sorted_indices.tolist() == [0, 2, 1]
    assert packed.unsorted_indices.tolist() == [0, 2, 1]
    padded, lengths = pad_packed_sequence(packed, batch_first=True, total_length=5)
    assert padded.shape == (3, 5, 3) and lengths.tolist() == [4, 1, 3]
    for got, want in zip(unpack_sequence(packed), SEQS):
        np.testing.assert_array_equal(got.numpy(), want.numpy())
    for got, want in zip(unpad_sequence(pad_sequence(SEQS), lengths), SEQS):
        np.testing.assert_array_equal(got.numpy(), want.numpy())


def test_pad_sequence_sides_and_packed_sequence_methods():
    left = pad_sequence([cr.tensor([1.0, 2.0]), cr.tensor([3.0])], True, -1.0, "left")
    assert left.tolist() == [[1.0, 2.0], [-1.0, 3.0]]
    packed = pack_sequence([cr.tensor([1.0, 2.0]), cr.tensor([3.0])])
    assert packed.sorted_indices is None and isinstance(packed, tuple)
    assert packed.double().data.dtype == cr.float64 and not packed.is_cuda
    assert repr(packed).startswith("PackedSequence(data=tensor([1., 3., 2.]), batch_sizes=")
    assert invert_permutation(cr.tensor([2, 0, 1])).tolist() == [1, 2, 0]


def test_errors():
    with pytest.raises(RuntimeError, match="must be sorted in decreasing order"):
        pack_sequence(SEQS)
    with pytest.raises(RuntimeError, match="greater than 0"):
        pack_padded_sequence(cr.ones(3, 2), cr.tensor([3, 0]))
    with pytest.raises(ValueError, match="total_length=2 and max sequence length being 4"):
        pad_packed_sequence(pack_sequence(SEQS, enforce_sorted=False), total_length=2)
    with pytest.raises(ValueError, match="padding_side"):
        pad_sequence(SEQS, padding_side="middle")


def test_gradients_flow_through_packing():
    x = cr.tensor(RNG.standard_normal((4, 3, 2)), requires_grad=True)

    def f(t):
        packed = pack_padded_sequence(t, [2, 4, 3], enforce_sorted=False)
        return pad_packed_sequence(packed, padding_value=0.5)[0]
    assert gradcheck(f, (x,))


@pytest.mark.parametrize("cls, kwargs", [(nn.LSTM, {"num_layers": 2, "bidirectional": True}),
                                         (nn.GRU, {"bidirectional": True}),
                                         (nn.RNN, {"num_layers": 2}),
                                         (nn.LSTM, {"proj_size": 2})])
def test_packed_batch_equals_each_sequence_alone(cls, kwargs):
    net = cls(3, 4, **kwargs).double()
    out, final = net(pack_sequence(SEQS, enforce_sorted=False))
    padded, lengths = pad_packed_sequence(out)
    for i, seq in enumerate(SEQS):
        alone_out, alone_final = net(seq)
        np.testing.assert_allclose(padded[:lengths[i], i].detach().numpy(),
                                   alone_out.detach().numpy(), atol=1e-12)
        finals = zip(final, alone_final) if cls is nn.LSTM else [(final, alone_final)]
        for batch_state, state in finals:
            np.testing.assert_allclose(batch_state[:, i].detach().numpy(),
                                       state.detach().numpy(), atol=1e-12)
    assert isinstance(out, PackedSequence)
