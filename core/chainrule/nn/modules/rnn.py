"""Recurrent layers: RNN, LSTM, GRU (stacked, bidirectional, batch_first, dropout
between layers, initial states) and their single-step cells, with torch's
parameter names and layouts (``weight_ih_l{k}[_reverse]``, gates stacked in torch's
order: LSTM i, f, g, o; GRU r, z, n).

Each layer projects the whole input sequence with one ``F.linear`` and then steps
through time with the hidden-to-hidden product, so the graph has one node per
step and gate op (the sequence length bounds the loop, not the graph depth of a
recursion). A PackedSequence input (Note [packed sequences] in nn/utils/rnn.py) runs
step t on the first ``batch_sizes[t]`` rows of the state only.
"""
import math

import numpy as np

from ... import _factories
from ..._ops import FUNCTIONS
from .. import functional as F
from .. import init
from ..parameter import Parameter
from ..utils.rnn import PackedSequence
from .module import Module

__all__ = ["RNNBase", "RNN", "LSTM", "GRU", "RNNCellBase", "RNNCell", "LSTMCell", "GRUCell"]

_GATES = {"RNN_TANH": 1, "RNN_RELU": 1, "LSTM": 4, "GRU": 3}


def _rnn_step(mode, x_proj, h, w_hh, b_hh):
    """One step of a plain RNN (x_proj: the input's projection with its bias)."""
    pre = x_proj + F.linear(h, w_hh, b_hh)
    return pre.tanh() if mode == "RNN_TANH" else pre.relu()


def _lstm_step(x_proj, state, w_hh, b_hh, w_hr=None):
    h, c = state
    gates = x_proj + F.linear(h, w_hh, b_hh)
    i, f, g, o = gates.chunk(4, -1)
    c = f.sigmoid() * c + i.sigmoid() * g.tanh()
    h = o.sigmoid() * c.tanh()
    if w_hr is not None:
        h = F.linear(h, w_hr)
    return h, c


def _gru_step(x_proj, h, w_hh, b_hh):
    x_r, x_z, x_n = x_proj.chunk(3, -1)
    h_r, h_z, h_n = F.linear(h, w_hh, b_hh).chunk(3, -1)
    r = (x_r + h_r).sigmoid()
    z = (x_z + h_z).sigmoid()
    n = (x_n + r * h_n).tanh()
    return (1 - z) * n + z * h


def _keep_finished_rows(new, state, active, lstm):
    """The state after a packed step: the ``active`` rows updated, the rest as they were
    (sequences that ended keep their final state; in reverse, those not yet begun keep
    the initial one)."""
    if lstm:
        return tuple(_keep_finished_rows(n, s, active, False) for n, s in zip(new, state))
    if state.shape[0] == active:
        return new
    return FUNCTIONS["cat"]([new, state[active:]], 0)


class RNNBase(Module):
    """The machinery shared by RNN, LSTM and GRU (torch's RNNBase)."""

    def __init__(self, mode, input_size, hidden_size, num_layers=1, bias=True,
                 batch_first=False, dropout=0.0, bidirectional=False, proj_size=0,
                 device=None, dtype=None):
        super().__init__()
        self._check_args(mode, hidden_size, num_layers, dropout, proj_size)
        self.mode, self.input_size, self.hidden_size = mode, input_size, hidden_size
        self.num_layers, self.bias, self.batch_first = num_layers, bias, batch_first
        self.dropout, self.bidirectional = float(dropout), bidirectional
        self.proj_size = proj_size
        directions = 2 if bidirectional else 1
        real_hidden = proj_size if proj_size > 0 else hidden_size
        self._flat_weights_names = []
        for layer in range(num_layers):
            layer_input = input_size if layer == 0 else real_hidden * directions
            for direction in range(directions):
                self._add_layer(layer, direction, layer_input, real_hidden, dtype)
        self.reset_parameters()

    @staticmethod
    def _check_args(mode, hidden_size, num_layers, dropout, proj_size):
        if not 0 <= dropout <= 1 or isinstance(dropout, bool):
            raise ValueError("dropout should be a number in range [0, 1] representing the "
                             "probability of an element being zeroed")
        if hidden_size <= 0:
            raise ValueError("hidden_size must be greater than zero")
        if num_layers <= 0:
            raise ValueError("num_layers must be greater than zero")
        if proj_size < 0:
            raise ValueError("proj_size should be a positive integer or zero to disable "
                             "projections")
        if proj_size >= hidden_size and proj_size:
            raise ValueError("proj_size has to be smaller than hidden_size")
        if proj_size and mode != "LSTM":
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")

    def _add_layer(self, layer, direction, layer_input, real_hidden, dtype):
        suffix = f"_l{layer}" + ("_reverse" if direction == 1 else "")
        gate_size = _GATES[self.mode] * self.hidden_size
        shapes = [("weight_ih", (gate_size, layer_input)), ("weight_hh", (gate_size, real_hidden))]
        if self.bias:
            shapes += [("bias_ih", (gate_size,)), ("bias_hh", (gate_size,))]
        if self.proj_size > 0:
            shapes.append(("weight_hr", (self.proj_size, self.hidden_size)))
        for name, shape in shapes:
            setattr(self, name + suffix, Parameter(_factories.empty(*shape, dtype=dtype)))
            self._flat_weights_names.append(name + suffix)

    def reset_parameters(self):
        """Every weight and bias U(-1/sqrt(hidden_size), 1/sqrt(hidden_size))."""
        bound = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for weight in self.parameters():
            init.uniform_(weight, -bound, bound)

    @property
    def _flat_weights(self):
        return [getattr(self, name) for name in self._flat_weights_names]

    @property
    def all_weights(self):
        """Per layer and direction, the list of its weights (torch's order)."""
        per = 4 if self.bias else 2
        per += 1 if self.proj_size > 0 else 0
        flat = self._flat_weights
        return [flat[i:i + per] for i in range(0, len(flat), per)]

    def flatten_parameters(self):
        """Nothing to do here (torch packs cuDNN weights)."""

    def extra_repr(self):
        s = f"{self.input_size}, {self.hidden_size}"
        if self.proj_size != 0:
            s += f", proj_size={self.proj_size}"
        if self.num_layers != 1:
            s += f", num_layers={self.num_layers}"
        if self.bias is not True:
            s += f", bias={self.bias}"
        if self.batch_first is not False:
            s += f", batch_first={self.batch_first}"
        if self.dropout != 0:
            s += f", dropout={self.dropout}"
        if self.bidirectional is not False:
            s += f", bidirectional={self.bidirectional}"
        return s

    # -- forward -----------------------------------------------------------------------
    def _weights(self, layer, direction):
        suffix = f"_l{layer}" + ("_reverse" if direction == 1 else "")
        get = lambda name: getattr(self, name + suffix, None)   # noqa: E731
        return get("weight_ih"), get("weight_hh"), get("bias_ih"), get("bias_hh"), get("weight_hr")

    def _check_input(self, input):
        if input.dim() not in (2, 3):
            raise ValueError(f"{type(self).__name__}: Expected input to be 2D or 3D, got "
                             f"{input.dim()}D tensor instead")
        if input.shape[-1] != self.input_size:
            raise RuntimeError(f"input.size(-1) must be equal to input_size. Expected "
                               f"{self.input_size}, got {input.shape[-1]}")

    def _state_shape(self, batch, size):
        return (self.num_layers * (2 if self.bidirectional else 1), batch, size)

    def _check_hidden(self, hx, expected, message="Expected hidden size {}, got {}"):
        if tuple(hx.shape) != expected:
            raise RuntimeError(message.format(expected, list(hx.shape)))

    def _run_direction(self, seq, state, layer, direction):
        """Run one layer in one direction over ``seq`` (L, N, H_in); returns the
        outputs (a list of L tensors) and the final state."""
        w_ih, w_hh, b_ih, b_hh, w_hr = self._weights(layer, direction)
        projected = F.linear(seq, w_ih, b_ih).unbind(0)
        steps = range(len(projected) - 1, -1, -1) if direction == 1 else range(len(projected))
        outputs = [None] * len(projected)
        for t in steps:
            state = self._cell(projected[t], state, w_hh, b_hh, w_hr)
            outputs[t] = state[0] if self.mode == "LSTM" else state
        return outputs, state

    def _cell(self, x_proj, state, w_hh, b_hh, w_hr):
        if self.mode == "LSTM":
            return _lstm_step(x_proj, state, w_hh, b_hh, w_hr)
        if self.mode == "GRU":
            return _gru_step(x_proj, state, w_hh, b_hh)
        return _rnn_step(self.mode, x_proj, state, w_hh, b_hh)

    def _run(self, seq, states):
        """All layers over ``seq`` (L, N, H_in); ``states``: per layer and direction the
        initial state. Returns (output, final states)."""
        directions = 2 if self.bidirectional else 1
        finals = []
        for layer in range(self.num_layers):
            outs = []
            for direction in range(directions):
                k = layer * directions + direction
                out, final = self._run_direction(seq, states[k], layer, direction)
                outs.append(FUNCTIONS["stack"](out))
                finals.append(final)
            seq = outs[0] if directions == 1 else FUNCTIONS["cat"](outs, -1)
            if self.dropout and self.training and layer < self.num_layers - 1:
                seq = F.dropout(seq, self.dropout, True)
        return seq, finals

    def _run_direction_packed(self, data, sizes, state, layer, direction):
        """One layer in one direction over packed ``data`` (Note [packed sequences]):
        step t updates the first ``sizes[t]`` rows of the state, the others keep theirs."""
        w_ih, w_hh, b_ih, b_hh, w_hr = self._weights(layer, direction)
        projected = F.linear(data, w_ih, b_ih)
        offsets = np.concatenate([[0], np.cumsum(sizes)])
        steps = range(len(sizes) - 1, -1, -1) if direction == 1 else range(len(sizes))
        outputs = [None] * len(sizes)
        for t in steps:
            bs = int(sizes[t])
            rows = tuple(s[:bs] for s in state) if self.mode == "LSTM" else state[:bs]
            new = self._cell(projected[int(offsets[t]):int(offsets[t + 1])], rows, w_hh, b_hh,
                             w_hr)
            outputs[t] = new[0] if self.mode == "LSTM" else new
            state = _keep_finished_rows(new, state, bs, self.mode == "LSTM")
        return FUNCTIONS["cat"](outputs, 0), state

    def _run_packed(self, data, sizes, states):
        """``_run`` for packed input: (output data, final states per layer/direction)."""
        directions = 2 if self.bidirectional else 1
        finals = []
        for layer in range(self.num_layers):
            outs = []
            for direction in range(directions):
                out, final = self._run_direction_packed(
                    data, sizes, states[layer * directions + direction], layer, direction)
                outs.append(out)
                finals.append(final)
            data = outs[0] if directions == 1 else FUNCTIONS["cat"](outs, -1)
            if self.dropout and self.training and layer < self.num_layers - 1:
                data = F.dropout(data, self.dropout, True)
        return data, finals

    def _forward_packed(self, packed, hx):
        """RNN/GRU/LSTM over a PackedSequence: (PackedSequence output, final states in
        the caller's batch order)."""
        data, sizes = packed.data, packed.batch_sizes._data
        batch, lstm = int(sizes[0]), self.mode == "LSTM"
        h_shape = self._state_shape(batch, (self.proj_size or self.hidden_size) if lstm
                                    else self.hidden_size)
        c_shape = self._state_shape(batch, self.hidden_size)
        if hx is None:
            hx = _factories.zeros(*h_shape, dtype=data.dtype)
            hx = (hx, _factories.zeros(*c_shape, dtype=data.dtype)) if lstm else hx
        else:
            order = packed.sorted_indices
            permute = (lambda h: h if order is None else h.index_select(1, order))
            hx = tuple(permute(h) for h in hx) if lstm else permute(hx)
            for h, shape in zip(hx if lstm else (hx,), (h_shape, c_shape)):
                self._check_hidden(h, shape)
        states = list(zip(hx[0].unbind(0), hx[1].unbind(0))) if lstm else hx.unbind(0)
        out, finals = self._run_packed(data, sizes, states)
        unsort = (lambda h: h if packed.unsorted_indices is None
                  else h.index_select(1, packed.unsorted_indices))
        output = PackedSequence(out, packed.batch_sizes, packed.sorted_indices,
                                packed.unsorted_indices)
        if lstm:
            return output, tuple(unsort(FUNCTIONS["stack"]([f[i] for f in finals]))
                                 for i in (0, 1))
        return output, unsort(FUNCTIONS["stack"](finals))

    def _sequence_first(self, input):
        """(input as (L, N, H_in), whether it was batched)."""
        self._check_input(input)
        batched = input.dim() == 3
        if not batched:
            input = input.unsqueeze(1)
        elif self.batch_first:
            input = input.transpose(0, 1)
        return input, batched

    def _finish(self, output, batched):
        if not batched:
            return output.squeeze(1)
        return output.transpose(0, 1) if self.batch_first else output


class RNN(RNNBase):
    """Elman RNN: ``h_t = tanh(x_t W_ih^T + b_ih + h_{t-1} W_hh^T + b_hh)`` (or relu).
    Returns (output, h_n).

    >>> import chainrule as cr
    >>> rnn = cr.nn.RNN(4, 8, num_layers=2, batch_first=True)
    >>> out, h = rnn(cr.randn(3, 5, 4))
    >>> rnn, out.shape, h.shape
    (RNN(4, 8, num_layers=2, batch_first=True), chainrule.Size([3, 5, 8]), chainrule.Size([2, 3, 8]))
    """

    def __init__(self, *args, **kwargs):
        nonlinearity = kwargs.pop("nonlinearity", "tanh")
        if len(args) > 3:
            nonlinearity, args = args[3], args[:3] + args[4:]
        if nonlinearity not in ("tanh", "relu"):
            raise ValueError(f"Unknown nonlinearity '{nonlinearity}'. Select from 'tanh' or "
                             "'relu'.")
        self.nonlinearity = nonlinearity
        super().__init__("RNN_TANH" if nonlinearity == "tanh" else "RNN_RELU", *args, **kwargs)

    def forward(self, input, hx=None):
        if isinstance(input, PackedSequence):
            return self._forward_packed(input, hx)
        seq, batched = self._sequence_first(input)
        shape = self._state_shape(seq.shape[1], self.hidden_size)
        if hx is None:
            hx = _factories.zeros(*shape, dtype=input.dtype, device=input.device)
        else:
            hx = hx if batched else hx.unsqueeze(1)
            self._check_hidden(hx, shape)
        output, finals = self._run(seq, hx.unbind(0))
        h_n = FUNCTIONS["stack"](finals)
        return self._finish(output, batched), (h_n if batched else h_n.squeeze(1))


class GRU(RNNBase):
    """Gated recurrent unit (gates r, z, n). Returns (output, h_n).

    >>> import chainrule as cr
    >>> gru = cr.nn.GRU(4, 8, bidirectional=True)
    >>> out, h = gru(cr.randn(5, 3, 4))
    >>> out.shape, h.shape
    (chainrule.Size([5, 3, 16]), chainrule.Size([2, 3, 8]))
    """

    def __init__(self, *args, **kwargs):
        super().__init__("GRU", *args, **kwargs)

    forward = RNN.forward


class LSTM(RNNBase):
    """Long short-term memory (gates i, f, g, o; optional projection ``proj_size``).
    Returns (output, (h_n, c_n)).

    >>> import chainrule as cr
    >>> lstm = cr.nn.LSTM(4, 8, num_layers=2)
    >>> out, (h, c) = lstm(cr.randn(5, 3, 4))
    >>> out.shape, h.shape, c.shape
    (chainrule.Size([5, 3, 8]), chainrule.Size([2, 3, 8]), chainrule.Size([2, 3, 8]))
    """

    def __init__(self, *args, **kwargs):
        super().__init__("LSTM", *args, **kwargs)

    def forward(self, input, hx=None):
        if isinstance(input, PackedSequence):
            return self._forward_packed(input, hx)
        seq, batched = self._sequence_first(input)
        batch = seq.shape[1]
        h_shape = self._state_shape(batch, self.proj_size or self.hidden_size)
        c_shape = self._state_shape(batch, self.hidden_size)
        if hx is None:
            h0 = _factories.zeros(*h_shape, dtype=input.dtype, device=input.device)
            c0 = _factories.zeros(*c_shape, dtype=input.dtype, device=input.device)
        else:
            h0, c0 = hx if batched else (hx[0].unsqueeze(1), hx[1].unsqueeze(1))
            self._check_hidden(h0, h_shape)
            self._check_hidden(c0, c_shape, "Expected hidden[1] size {}, got {}")
        output, finals = self._run(seq, list(zip(h0.unbind(0), c0.unbind(0))))
        h_n = FUNCTIONS["stack"]([h for h, _ in finals])
        c_n = FUNCTIONS["stack"]([c for _, c in finals])
        if not batched:
            h_n, c_n = h_n.squeeze(1), c_n.squeeze(1)
        return self._finish(output, batched), (h_n, c_n)


class RNNCellBase(Module):
    """The parameters shared by the cells: weight_ih, weight_hh, bias_ih, bias_hh."""

    def __init__(self, input_size, hidden_size, bias, num_chunks, device=None, dtype=None):
        super().__init__()
        self.input_size, self.hidden_size, self.bias = input_size, hidden_size, bias
        self.weight_ih = Parameter(_factories.empty(num_chunks * hidden_size, input_size, dtype=dtype))
        self.weight_hh = Parameter(_factories.empty(num_chunks * hidden_size, hidden_size, dtype=dtype))
        if bias:
            self.bias_ih = Parameter(_factories.empty(num_chunks * hidden_size, dtype=dtype))
            self.bias_hh = Parameter(_factories.empty(num_chunks * hidden_size, dtype=dtype))
        else:
            self.register_parameter("bias_ih", None)
            self.register_parameter("bias_hh", None)
        self.reset_parameters()

    reset_parameters = RNNBase.reset_parameters

    def extra_repr(self):
        s = f"{self.input_size}, {self.hidden_size}"
        if self.bias is not True:
            s += f", bias={self.bias}"
        if getattr(self, "nonlinearity", "tanh") != "tanh":
            s += f", nonlinearity={self.nonlinearity}"
        return s

    def _prepare(self, input, hx, zeros_like_h=True):
        if input.dim() not in (1, 2):
            raise ValueError(f"{type(self).__name__}: Expected input to be 1D or 2D, got "
                             f"{input.dim()}D instead")
        batched = input.dim() == 2
        if not batched:
            input = input.unsqueeze(0)
        if hx is None:
            hx = _factories.zeros(input.shape[0], self.hidden_size, dtype=input.dtype)
        elif not batched:
            hx = hx.unsqueeze(0)
        return input, hx, batched


class RNNCell(RNNCellBase):
    """One step of an Elman RNN.

    >>> import chainrule as cr
    >>> cr.nn.RNNCell(4, 8)(cr.randn(3, 4)).shape
    chainrule.Size([3, 8])
    """

    def __init__(self, input_size, hidden_size, bias=True, nonlinearity="tanh", device=None,
                 dtype=None):
        super().__init__(input_size, hidden_size, bias, 1, dtype=dtype)
        self.nonlinearity = nonlinearity

    def forward(self, input, hx=None):
        input, hx, batched = self._prepare(input, hx)
        mode = "RNN_TANH" if self.nonlinearity == "tanh" else "RNN_RELU"
        h = _rnn_step(mode, F.linear(input, self.weight_ih, self.bias_ih), hx, self.weight_hh,
                      self.bias_hh)
        return h if batched else h.squeeze(0)


class LSTMCell(RNNCellBase):
    """One step of an LSTM; returns (h, c).

    >>> import chainrule as cr
    >>> h, c = cr.nn.LSTMCell(4, 8)(cr.randn(3, 4)); h.shape
    chainrule.Size([3, 8])
    """

    def __init__(self, input_size, hidden_size, bias=True, device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, 4, dtype=dtype)

    def forward(self, input, hx=None):
        batched = input.dim() == 2
        if hx is None:
            zeros = _factories.zeros(*(input.shape[:-1] + (self.hidden_size,)), dtype=input.dtype)
            hx = (zeros, zeros)
        x, h0, _ = self._prepare(input, hx[0])
        c0 = hx[1] if batched else hx[1].unsqueeze(0)
        h, c = _lstm_step(F.linear(x, self.weight_ih, self.bias_ih), (h0, c0), self.weight_hh,
                          self.bias_hh)
        return (h, c) if batched else (h.squeeze(0), c.squeeze(0))


class GRUCell(RNNCellBase):
    """One step of a GRU.

    >>> import chainrule as cr
    >>> cr.nn.GRUCell(4, 8)(cr.randn(3, 4)).shape
    chainrule.Size([3, 8])
    """

    def __init__(self, input_size, hidden_size, bias=True, device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, 3, dtype=dtype)

    def forward(self, input, hx=None):
        input, hx, batched = self._prepare(input, hx)
        h = _gru_step(F.linear(input, self.weight_ih, self.bias_ih), hx, self.weight_hh,
                      self.bias_hh)
        return h if batched else h.squeeze(0)


# --- the functional kernels (torch.rnn_tanh, torch.lstm, ...) over flat parameter lists ------
class _FlatParameters:
    """What RNNBase's runs read (mode, layers, directions, dropout, training, weights),
    with the weights taken from a flat list in the kernels' order: per layer, per
    direction, w_ih, w_hh, then b_ih, b_hh when there are biases, then w_hr for a
    projected LSTM."""
    _run, _run_direction, _cell = RNNBase._run, RNNBase._run_direction, RNNBase._cell
    _run_packed, _run_direction_packed = RNNBase._run_packed, RNNBase._run_direction_packed

    def __init__(self, mode, params, has_biases, num_layers, dropout, train, bidirectional):
        self.mode, self.num_layers, self.bidirectional = mode, num_layers, bidirectional
        self.dropout, self.training = dropout, train
        groups = num_layers * (2 if bidirectional else 1)
        self._per = len(params) // groups
        self._params, self._has_biases = list(params), has_biases

    def _weights(self, layer, direction):
        k = layer * (2 if self.bidirectional else 1) + direction
        group = self._params[k * self._per:(k + 1) * self._per]
        biases = group[2:4] if self._has_biases else [None, None]
        w_hr = group[-1] if self._per in (3, 5) else None
        return group[0], group[1], biases[0], biases[1], w_hr


def _initial_states(hx, lstm):
    return list(zip(hx[0].unbind(0), hx[1].unbind(0))) if lstm else hx.unbind(0)


def _final_states(finals, lstm):
    if lstm:
        return tuple(FUNCTIONS["stack"]([f[i] for f in finals]) for i in (0, 1))
    return (FUNCTIONS["stack"](finals),)


def run_flat(mode, input, hx, params, has_biases, num_layers, dropout, train, bidirectional,
             batch_first=False, batch_sizes=None):
    """The reference's functional RNN kernels: (output, h_n) or, for LSTM, (output, h_n,
    c_n); ``batch_sizes`` given: ``input`` is a packed sequence's data."""
    net = _FlatParameters(mode, params, has_biases, num_layers, dropout, train, bidirectional)
    lstm = mode == "LSTM"
    states = _initial_states(hx, lstm)
    if batch_sizes is not None:
        output, finals = net._run_packed(input, batch_sizes._data, states)
        return (output,) + _final_states(finals, lstm)
    seq = input.transpose(0, 1) if batch_first else input
    output, finals = net._run(seq, states)
    return (output.transpose(0, 1) if batch_first else output,) + _final_states(finals, lstm)
