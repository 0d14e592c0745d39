"""Parity tier for ``nn.utils.parametrizations.orthogonal`` against PyTorch (skips
without torch): every ``orthogonal_map`` with and without the trivialization, square,
tall, wide and batched weights; the parametrized weight, the gradient w.r.t. the
unconstrained tensor, assignment and errors must agree."""
import numpy as np
import pytest

torch = pytest.importorskip("torch")

import chainrule as cr  # noqa: E402

MAPS = ["matrix_exp", "cayley", "householder"]
SHAPES = [(4, 4), (5, 3), (3, 5), (2, 4, 3)]


def _module(lib, shape):
    m = lib.nn.Module()
    # full rank (sin of an arithmetic sequence gives rank 2, whose null-space columns
    # each LAPACK completes its own way)
    values = np.sin(np.arange(np.prod(shape)) ** 1.5 * 1.3 + 0.2).reshape(shape) / 2
    m.weight = lib.nn.Parameter(lib.tensor(values, dtype=lib.float64))
    return m


def _copy_state(source, target):
    target.load_state_dict({k: cr.tensor(v.detach().numpy().copy())
                            for k, v in source.state_dict().items()})


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("use_trivialization", [True, False])
@pytest.mark.parametrize("orthogonal_map", MAPS)
def test_weight_and_gradient_match(orthogonal_map, use_trivialization, shape):
    orth = [lib.nn.utils.parametrizations.orthogonal(
        _module(lib, shape), orthogonal_map=orthogonal_map,
        use_trivialization=use_trivialization) for lib in (torch, cr)]
    assert list(orth[1].state_dict()) == list(orth[0].state_dict())
    _copy_state(orth[0], orth[1])    # a non-square base is completed at random
    weights = [m.weight for m in orth]
    np.testing.assert_allclose(weights[1].detach().numpy(), weights[0].detach().numpy(),
                               rtol=1e-9, atol=1e-10)
    probe = np.cos(np.arange(np.prod(shape))).reshape(shape)
    for lib, w in zip((torch, cr), weights):
        (w * lib.tensor(probe)).sum().backward()
    grads = [m.parametrizations.weight.original.grad.numpy() for m in orth]
    np.testing.assert_allclose(grads[1], grads[0], rtol=1e-8, atol=1e-10)


@pytest.mark.parametrize("orthogonal_map", MAPS)
def test_square_initial_value_is_deterministic(orthogonal_map):
    weights = [lib.nn.utils.parametrizations.orthogonal(
        _module(lib, (4, 4)), orthogonal_map=orthogonal_map).weight for lib in (torch, cr)]
    np.testing.assert_allclose(weights[1].detach().numpy(), weights[0].detach().numpy(),
                               rtol=1e-9, atol=1e-10)


@pytest.mark.parametrize("orthogonal_map", MAPS)
@pytest.mark.parametrize("use_trivialization", [True, False])
def test_assignment(orthogonal_map, use_trivialization):
    def outcome(lib):
        m = lib.nn.utils.parametrizations.orthogonal(
            _module(lib, (3, 3)), orthogonal_map=orthogonal_map,
            use_trivialization=use_trivialization)
        q = lib.tensor([[0.0, 1.0, 0.0], [0.0, 0.0, -1.0], [1.0, 0.0, 0.0]], dtype=lib.float64)
        try:
            with lib.no_grad():
                m.weight = q
        except Exception as e:  # noqa: BLE001 - compared below
            return type(e).__name__, str(e)
        return m.weight.detach().numpy().round(10).tolist()
    assert outcome(cr) == outcome(torch)


@pytest.mark.parametrize("kwargs", [dict(name="bias"), dict(orthogonal_map="qr"),
                                    dict(name="vector")])
def test_errors_match(kwargs):
    def message(lib):
        m = _module(lib, (3, 3))
        m.vector = lib.nn.Parameter(lib.ones(3))
        with pytest.raises(ValueError) as info:
            lib.nn.utils.parametrizations.orthogonal(m, **kwargs)
        return str(info.value).replace("chainrule", "torch")
    assert message(cr) == message(torch)


def test_complex_householder_refused():
    for lib in (torch, cr):
        m = lib.nn.Module()
        m.weight = lib.nn.Parameter(lib.ones(3, 2, dtype=lib.complex128))
        with pytest.raises(ValueError, match="does not support complex"):
            lib.nn.utils.parametrizations.orthogonal(m, orthogonal_map="householder")
