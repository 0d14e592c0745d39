"""Random numbers for device tensors drawn on the device (Note [random numbers on a
device] in chainrule/_random.py): dropout's masks, bernoulli, the *_like factories and
the in-place samplers come from the Philox kernels, reproducible from
``chainrule.manual_seed`` / ``chainrule.cuda.manual_seed`` or a ``Generator("cuda")``,
and no random values cross from the host."""
import numpy as np
import pytest

import chainrule as cr
import chainrule.nn.functional as F
from chainrule import _backends

from host_copies import counted_copies
from runtime_support import needs_device

pytestmark = needs_device


def _ones(*shape, grad=False):
    return cr.ones(*shape, device="cuda", dtype=cr.float64, requires_grad=grad)


def test_dropout_mask_is_the_philox_bernoulli_of_the_device_generator():
    x = _ones(64, 33)
    cr.cuda.manual_seed(5)
    with counted_copies() as copies:
        y = F.dropout(x, 0.25)
    assert copies.to_host == 0 and copies.to_device == 0
    cr.cuda.manual_seed(5)
    mask = _backends.BACKENDS["cuda"].random("bernoulli", (64, 33), np.dtype(np.float64),
                                             cr.device("cuda", 0), 0.75, 0.0)
    np.testing.assert_array_equal(y.cpu().numpy(), mask.get() / 0.75)
    assert 0.65 < mask.get().mean() < 0.85


@pytest.mark.parametrize("seed_fn", [cr.manual_seed, cr.cuda.manual_seed],
                         ids=["manual_seed", "cuda.manual_seed"])
@pytest.mark.parametrize("name, kwargs", [
    ("dropout", {"p": 0.4}), ("alpha_dropout", {"p": 0.3, "training": True}),
    ("dropout2d", {"p": 0.5}), ("feature_alpha_dropout", {"p": 0.3, "training": True}),
    ("rrelu", {"training": True})])
def test_dropouts_are_reproducible_and_their_gradient_is_the_mask(seed_fn, name, kwargs):
    x = cr.full((2, 3, 4, 4), -1.5, device="cuda", dtype=cr.float64, requires_grad=True)
    seed_fn(11)
    a = getattr(F, name)(x, **kwargs)
    seed_fn(11)
    b = getattr(F, name)(x * 1, **kwargs)
    assert a.device.type == "cuda" and cr.equal(a, b)
    assert not cr.equal(a, getattr(F, name)(x, **kwargs))          # the next draw differs
    a.sum().backward()
    assert x.grad.device.type == "cuda"


def test_feature_dropout_drops_whole_channels():
    y = F.dropout2d(_ones(4, 8, 3, 3), 0.5).cpu().numpy()
    per_channel = y.reshape(4, 8, 9)
    assert np.all(per_channel == per_channel[:, :, :1])
    assert set(np.unique(per_channel)) <= {0.0, 2.0}


def test_bernoulli_and_samplers_draw_on_the_device():
    p = cr.full((1000,), 0.3, device="cuda", dtype=cr.float64)
    with counted_copies() as copies:
        draws = [cr.bernoulli(p), _ones(1000).bernoulli_(0.3), cr.rand_like(p),
                 cr.randn_like(p), cr.randint_like(p, 3, 7), _ones(1000).uniform_(2, 3),
                 _ones(1000).normal_(1, 2), _ones(1000).exponential_(2.0),
                 _ones(1000).random_(0, 5), _ones(1000).geometric_(0.5),
                 _ones(1000).cauchy_(), _ones(1000).log_normal_(),
                 cr.normal(p, 1.0), cr.rand(1000, device="cuda"),
                 cr.randperm(1000, device="cuda"),
                 cr.normal(2.0, 0.5, size=(1000,), device="cuda")]
    assert copies.to_host == 0 and copies.to_device == 0
    assert all(t.device.type == "cuda" for t in draws)
    host = [t.cpu().numpy() for t in draws]
    assert 0.2 < host[0].mean() < 0.4 and 0.2 < host[1].mean() < 0.4
    assert set(np.unique(host[0])) <= {0.0, 1.0}
    assert 0 <= host[2].min() and host[2].max() < 1 and abs(host[3].mean()) < 0.2
    assert set(np.unique(host[4])) <= {3.0, 4.0, 5.0, 6.0}
    assert 2 <= host[5].min() and host[5].max() < 3 and abs(host[6].mean() - 1) < 0.3
    assert host[7].min() >= 0 and abs(host[7].mean() - 0.5) < 0.1
    assert set(np.unique(host[8])) <= set(range(5)) and host[9].min() >= 1
    assert host[11].min() > 0
    assert sorted(host[14].tolist()) == list(range(1000)) and abs(host[15].mean() - 2) < 0.1


def test_a_cuda_generator_has_its_own_reproducible_state():
    g = cr.Generator("cuda").manual_seed(3)
    first = cr.rand(5, device="cuda", generator=g)
    state = g.get_state()
    assert state.dtype == cr.uint8 and state.numel() == 16
    second = cr.rand(5, device="cuda", generator=g)
    g.set_state(state)
    assert cr.equal(second, cr.rand(5, device="cuda", generator=g))
    g.manual_seed(3)
    assert cr.equal(first, cr.rand(5, device="cuda", generator=g))
    x = _ones(100)
    g.manual_seed(9)
    a = x.bernoulli(0.5, generator=g)
    g.manual_seed(9)
    assert cr.equal(a, x.bernoulli(0.5, generator=g))


def test_a_generator_of_another_device_is_the_references_error():
    with pytest.raises(RuntimeError, match="Expected a 'cuda' device type for generator but "
                                          "found 'cpu'"):
        cr.rand(3, device="cuda", generator=cr.Generator())
    with pytest.raises(RuntimeError, match="found 'cpu'"):
        _ones(3).uniform_(generator=cr.Generator())


def test_parameter_initialisers_fill_on_the_device():
    w = cr.empty(200, 30, device="cuda", dtype=cr.float64)
    with counted_copies() as copies:
        cr.nn.init.trunc_normal_(w, a=-1.0, b=1.0)
        bounded = float(w.abs().max()) <= 1.0
        cr.nn.init.kaiming_uniform_(w)
        cr.nn.init.constant_(w, 2.5)
    assert copies.to_host == 0 and copies.to_device == 0
    assert bounded and cr.equal(w, cr.full((200, 30), 2.5, device="cuda", dtype=cr.float64))


def test_multinomial_draws_on_the_device():
    w = cr.tensor([[0.0, 1.0, 3.0, 0.0], [2.0, 0.0, 0.0, 2.0]], device="cuda")
    with counted_copies() as copies:
        drawn = cr.multinomial(w, 4000, replacement=True)
        distinct = cr.multinomial(w, 2)
    assert copies.to_host == 0 and copies.to_device == 0
    counts = [np.bincount(row, minlength=4) for row in drawn.cpu().numpy()]
    assert counts[0][0] == counts[0][3] == counts[1][1] == counts[1][2] == 0
    assert 0.7 < counts[0][2] / 4000 < 0.8 and 0.45 < counts[1][0] / 4000 < 0.55
    assert [sorted(r) for r in distinct.cpu().numpy().tolist()] == [[1, 2], [0, 3]]
