"""parametrizations.orthogonal: the parametrized weight is orthogonal for every map,
its gradient passes gradcheck, and registration keeps an unassignable map usable."""
import pytest

import chainrule as cr
from chainrule.nn.utils.parametrizations import orthogonal


def _module(shape):
    m = cr.nn.Module()
    m.weight = cr.nn.Parameter(cr.randn(*shape, dtype=cr.float64))
    return m


@pytest.mark.parametrize("shape", [(4, 4), (5, 2), (2, 5), (3, 4, 2)])
@pytest.mark.parametrize("orthogonal_map", ["matrix_exp", "cayley", "householder"])
@pytest.mark.parametrize("use_trivialization", [True, False])
def test_weight_is_orthogonal(shape, orthogonal_map, use_trivialization):
    m = orthogonal(_module(shape), orthogonal_map=orthogonal_map,
                   use_trivialization=use_trivialization)
    Q = m.weight
    gram = Q.mT @ Q if shape[-2] >= shape[-1] else Q @ Q.mT
    k = min(shape[-2:])
    assert cr.allclose(gram, cr.eye(k, dtype=cr.float64).expand_as(gram), atol=1e-10)


@pytest.mark.parametrize("orthogonal_map", ["matrix_exp", "cayley", "householder"])
def test_gradcheck_through_the_map(orthogonal_map):
    m = orthogonal(_module((4, 3)), orthogonal_map=orthogonal_map, use_trivialization=False)
    parametrization = m.parametrizations.weight[0]
    X = m.parametrizations.weight.original.detach().clone()
    # householder reads the signs as diag(X).int(): keep them away from its jumps
    X.diagonal().copy_(cr.tensor([1.5, -1.5, 2.5], dtype=cr.float64))
    X.requires_grad_()
    assert cr.autograd.gradcheck(parametrization, (X,))


def test_unassignable_map_registers_without_trivialization():
    m = orthogonal(_module((3, 3)), orthogonal_map="cayley", use_trivialization=False)
    with pytest.raises(NotImplementedError, match="use_trivialization=False"):
        with cr.no_grad():
            m.weight = cr.eye(3, dtype=cr.float64)
