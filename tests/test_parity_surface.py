"""Parity tier for the torch.* names of _ops/torch_surface.py and the Householder
functions of _ops/linalg_householder.py against PyTorch (skips without torch): values,
gradients, output structure and errors."""
import warnings

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import chainrule as cr  # noqa: E402

RNG = np.random.default_rng(0)


def both(array, requires_grad=False):
    return (cr.tensor(array, requires_grad=requires_grad),
            torch.tensor(array, requires_grad=requires_grad))


def same(ours, theirs, rtol=1e-12, atol=1e-13):
    if isinstance(theirs, (tuple, list)):
        assert len(ours) == len(theirs)
        for o, t in zip(ours, theirs):
            same(o, t, rtol, atol)
        return
    assert tuple(ours.shape) == tuple(theirs.shape)
    np.testing.assert_allclose(ours.detach().resolve_conj().numpy(),
                               theirs.detach().resolve_conj().numpy(), rtol=rtol, atol=atol)


COPIES = [("view_copy", ((6, 4),)), ("permute_copy", ((2, 0, 1),)), ("select_copy", (1, 2)),
          ("slice_copy", (1, 1, 3)), ("split_copy", (2, 1)), ("unbind_copy", (2,)),
          ("unfold_copy", (2, 2, 1)), ("diagonal_copy", (0, 1, 2)), ("expand_copy", ((2, 2, 3, 4),)),
          ("squeeze_copy", ()), ("transpose_copy", (0, 2)), ("unsqueeze_copy", (1,)),
          ("detach_copy", ()), ("alias_copy", ()), ("split_with_sizes_copy", ([1, 3], 2)),
          ("as_strided_copy", ((2, 2), (1, 2)))]


@pytest.mark.parametrize("name, args", COPIES, ids=[c[0] for c in COPIES])
def test_copy_variants(name, args):
    ours_x, theirs_x = both(RNG.standard_normal((2, 3, 4)))
    ours, theirs = getattr(cr, name)(ours_x, *args), getattr(torch, name)(theirs_x, *args)
    same(ours, theirs)
    for t in (ours if isinstance(ours, list) else [ours]):
        assert t._base is None and not np.shares_memory(t.numpy(), ours_x.numpy())


def test_copy_variants_are_differentiable_and_t_copy():
    ours_x, theirs_x = both(RNG.standard_normal((3, 2)), requires_grad=True)
    cr.t_copy(ours_x).mul(cr.tensor([[1.0, 2.0, 3.0]])).sum().backward()
    torch.t_copy(theirs_x).mul(torch.tensor([[1.0, 2.0, 3.0]])).sum().backward()
    same(ours_x.grad, theirs_x.grad)


def test_adjoint_and_constants():
    z = RNG.standard_normal((2, 3)) + 1j * RNG.standard_normal((2, 3))
    same(cr.adjoint(cr.tensor(z)), torch.adjoint(torch.tensor(z)))
    for name in ("e", "pi", "inf", "nan", "newaxis"):
        ours, theirs = getattr(cr, name), getattr(torch, name)
        assert ours is theirs or ours == theirs or (ours != ours and theirs != theirs)


@pytest.mark.parametrize("kwargs", [{}, {"dx": 0.5}, {"x": True}, {"dim": 0}])
def test_trapz_and_cumulative_trapezoid(kwargs):
    y = RNG.standard_normal((4, 5))
    (ours_y, theirs_y) = both(y, requires_grad=True)
    kw_ours, kw_theirs = dict(kwargs), dict(kwargs)
    if kwargs.get("x"):
        xs = np.cumsum(RNG.uniform(0.1, 1, 5))
        kw_ours["x"], kw_theirs["x"] = cr.tensor(xs), torch.tensor(xs)
    for name in ("trapz", "cumulative_trapezoid"):
        if name == "trapz" and "dx" in kwargs:
            ours, theirs = cr.trapz(ours_y, dx=0.5), torch.trapz(theirs_y, dx=0.5)
        else:
            ours = getattr(cr, name)(ours_y, **kw_ours)
            theirs = getattr(torch, name)(theirs_y, **kw_theirs)
        same(ours, theirs)
        ours.sum().backward()
        theirs.sum().backward()
        same(ours_y.grad, theirs_y.grad)


@pytest.mark.parametrize("accumulate", [False, True])
def test_put(accumulate):
    ours_x, theirs_x = both(RNG.standard_normal((3, 4)), requires_grad=True)
    ours_s, theirs_s = both(RNG.standard_normal(3), requires_grad=True)
    index = np.array([0, -1, 5]) if not accumulate else np.array([0, -1, 0])
    ours = cr.put(ours_x, cr.tensor(index), ours_s, accumulate)
    theirs = torch.put(theirs_x, torch.tensor(index), theirs_s, accumulate)
    same(ours, theirs)
    (ours * ours).sum().backward()
    (theirs * theirs).sum().backward()
    same(ours_x.grad, theirs_x.grad)
    same(ours_s.grad, theirs_s.grad)
    ours_inplace = ours_x.detach().clone().put_(cr.tensor(index), ours_s.detach(), accumulate)
    same(ours_inplace, theirs_x.detach().clone().put_(torch.tensor(index), theirs_s.detach(),
                                                      accumulate))
    with pytest.raises(RuntimeError, match="Expected a long tensor for index, but got Int"):
        cr.put(ours_x, cr.tensor(index, dtype=cr.int32), ours_s)


@pytest.mark.parametrize("reduce", ["prod", "mean", "amax", "amin"])
@pytest.mark.parametrize("include_self", [True, False])
def test_index_reduce(reduce, include_self):
    base, source = RNG.standard_normal((4, 3)), RNG.standard_normal((5, 3))
    index = np.array([0, 2, 0, 3, 2])
    ours_b, theirs_b = both(base, requires_grad=True)
    ours_s, theirs_s = both(source, requires_grad=True)
    ours = ours_b.index_reduce(0, cr.tensor(index), ours_s, reduce, include_self=include_self)
    theirs = theirs_b.index_reduce(0, torch.tensor(index), theirs_s, reduce,
                                   include_self=include_self)
    same(ours, theirs)
    ours.sum().backward()
    theirs.sum().backward()
    same(ours_b.grad, theirs_b.grad)
    same(ours_s.grad, theirs_s.grad)


@pytest.mark.parametrize("name, shapes", [("addmm", ((2, 3), (2, 4), (4, 3))),
                                          ("addmv", ((2,), (2, 3), (3,))),
                                          ("addr", ((2, 3), (2,), (3,))),
                                          ("baddbmm", ((2, 2, 3), (2, 2, 4), (2, 4, 3))),
                                          ("addbmm", ((2, 3), (5, 2, 4), (5, 4, 3)))])
def test_inplace_products(name, shapes):
    arrays = [RNG.standard_normal(s) for s in shapes]
    ours = cr.tensor(arrays[0])
    theirs = torch.tensor(arrays[0])
    getattr(ours, name + "_")(*[cr.tensor(a) for a in arrays[1:]], beta=0.5, alpha=2.0)
    getattr(theirs, name + "_")(*[torch.tensor(a) for a in arrays[1:]], beta=0.5, alpha=2.0)
    same(ours, theirs)
    assert ours._version == 1


def test_prelu_and_hardshrink_methods():
    ours_x, theirs_x = both(RNG.standard_normal((2, 3)))
    same(ours_x.prelu(cr.tensor(np.array([0.2]))), theirs_x.prelu(torch.tensor([0.2], dtype=torch.float64)))
    same(ours_x.hardshrink(0.3), theirs_x.hardshrink(0.3))
    same(cr.prelu(ours_x, cr.tensor(np.array([0.2]))), torch.prelu(theirs_x, torch.tensor([0.2], dtype=torch.float64)))


def test_lu_lu_unpack_lu_solve():
    A = RNG.standard_normal((2, 4, 4))
    ours_A, theirs_A = both(A)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        LU, pivots, info = cr.lu(ours_A, get_infos=True)
    assert "torch.lu is deprecated" in str(caught[0].message)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t_LU, t_pivots, t_info = torch.lu(theirs_A, get_infos=True)
    same(LU, t_LU)
    assert pivots.tolist() == t_pivots.tolist() and info.tolist() == t_info.tolist()
    ours_LU, theirs_LU = both(LU.numpy(), requires_grad=True)
    ours, theirs = cr.lu_unpack(ours_LU, pivots), torch.lu_unpack(theirs_LU, t_pivots)
    assert type(ours).__name__ == type(theirs).__name__ == "lu_unpack"
    same(list(ours), list(theirs))
    (ours.L.sum() + (ours.U ** 2).sum()).backward()
    (theirs.L.sum() + (theirs.U ** 2).sum()).backward()
    same(ours_LU.grad, theirs_LU.grad)
    rect = RNG.standard_normal((5, 3))
    ours_r, theirs_r = cr.linalg.lu_factor(cr.tensor(rect)), torch.linalg.lu_factor(torch.tensor(rect))
    same(list(cr.lu_unpack(*ours_r)), list(torch.lu_unpack(*theirs_r)))
    packed = cr.lu_unpack(*ours_r, unpack_data=False)
    assert packed.L.shape == torch.lu_unpack(*theirs_r, unpack_data=False).L.shape
    b = RNG.standard_normal((2, 4, 2))
    same(cr.lu_solve(cr.tensor(b), LU, pivots), torch.lu_solve(torch.tensor(b), t_LU, t_pivots))


@pytest.mark.parametrize("dtype", [np.float64, np.complex128])
def test_householder_functions(dtype):
    A = RNG.standard_normal((2, 5, 3)).astype(dtype)
    if dtype == np.complex128:
        A = A + 1j * RNG.standard_normal((2, 5, 3))
    (a, tau), (t_a, t_tau) = cr.geqrf(cr.tensor(A)), torch.geqrf(torch.tensor(A))
    assert type(cr.geqrf(cr.tensor(A))).__name__ == "geqrf"
    same(a, t_a, atol=1e-12)
    same(tau, t_tau, atol=1e-12)
    ours_a, theirs_a = both(t_a.numpy(), requires_grad=True)
    ours_tau, theirs_tau = both(t_tau.numpy(), requires_grad=True)
    ours = cr.linalg.householder_product(ours_a, ours_tau)
    theirs = torch.linalg.householder_product(theirs_a, theirs_tau)
    same(ours, theirs, atol=1e-12)
    C = RNG.standard_normal((2, 5, 2)).astype(dtype)
    outs = [ours.abs().sum()]
    touts = [theirs.abs().sum()]
    for left, transpose in [(True, False), (True, True)]:
        outs.append(cr.ormqr(ours_a, ours_tau, cr.tensor(C), left, transpose).abs().sum())
        touts.append(torch.ormqr(theirs_a, theirs_tau, torch.tensor(C), left, transpose).abs().sum())
    D = RNG.standard_normal((2, 2, 5)).astype(dtype)
    for transpose in (False, True):
        outs.append(cr.ormqr(ours_a, ours_tau, cr.tensor(D), False, transpose).abs().sum())
        touts.append(torch.ormqr(theirs_a, theirs_tau, torch.tensor(D), False, transpose).abs().sum())
    same(outs, touts, atol=1e-12)
    sum(outs).backward()
    sum(touts).backward()
    same(ours_a.grad, theirs_a.grad, rtol=1e-10, atol=1e-10)
    same(ours_tau.grad, theirs_tau.grad, rtol=1e-10, atol=1e-10)
    same(cr.orgqr(ours_a, ours_tau), torch.orgqr(theirs_a, theirs_tau), atol=1e-12)


def test_householder_errors_are_the_references():
    cases = [((3,), (1,)), ((2, 3), (1,)), ((3, 2), (3,)), ((2, 3, 2), (3, 1))]
    for a_shape, tau_shape in cases:
        with pytest.raises(RuntimeError) as theirs:
            torch.linalg.householder_product(torch.zeros(a_shape), torch.zeros(tau_shape))
        with pytest.raises(RuntimeError) as ours:
            cr.linalg.householder_product(cr.zeros(a_shape), cr.zeros(tau_shape))
        assert str(ours.value) == str(theirs.value)


def test_dlpack_between_the_libraries():
    ours = cr.from_dlpack(torch.arange(4.0))
    assert ours.tolist() == [0.0, 1.0, 2.0, 3.0]
    theirs = torch.from_dlpack(cr.tensor([1.0, 2.0]))
    assert theirs.tolist() == [1.0, 2.0]
    assert cr.from_dlpack(torch.utils.dlpack.to_dlpack(torch.arange(2))).tolist() == [0, 1]
    assert torch.utils.dlpack.from_dlpack(cr.to_dlpack(cr.arange(2))).tolist() == [0, 1]


def test_asarray_and_frombuffer_like_the_reference():
    for obj in ([1, 2.0], 3, np.arange(3, dtype=np.int16)):
        ours, theirs = cr.asarray(obj), torch.asarray(obj)
        assert str(ours.dtype).split(".")[1] == str(theirs.dtype).split(".")[1]
        assert ours.tolist() == theirs.tolist()
    buffer = bytearray(range(8))
    assert cr.frombuffer(buffer, dtype=cr.int16, offset=2).tolist() == \
        torch.frombuffer(buffer, dtype=torch.int16, offset=2).tolist()


@pytest.mark.parametrize("complex_", [False, True])
def test_ldl_factor_and_solve(complex_):
    M = RNG.standard_normal((3, 6, 6)) + (1j * RNG.standard_normal((3, 6, 6)) if complex_ else 0)
    M[..., range(6), range(6)] *= 1e-2
    A = M + np.swapaxes(M, -1, -2)
    ours, theirs = cr.linalg.ldl_factor_ex(cr.tensor(A)), torch.linalg.ldl_factor_ex(torch.tensor(A))
    assert type(ours).__name__ == type(theirs).__name__
    assert ours.pivots.tolist() == theirs.pivots.tolist() and ours.info.tolist() == theirs.info.tolist()
    same(ours.LD, theirs.LD, atol=1e-12)
    B = RNG.standard_normal((3, 6, 2)).astype(A.dtype)
    same(cr.linalg.ldl_solve(ours.LD, ours.pivots, cr.tensor(B)),
         torch.linalg.ldl_solve(theirs.LD, theirs.pivots, torch.tensor(B)), rtol=1e-9, atol=1e-10)
    assert type(cr.linalg.ldl_factor(cr.tensor(A))).__name__ == "linalg_ldl_factor"


GRADIENT_CASES = [{}, {"spacing": 0.5}, {"spacing": [0.5, 2.0]}, {"dim": 1, "edge_order": 2},
                  {"spacing": 2.0, "edge_order": 2}, {"coordinates": (1,), "dim": 1},
                  {"coordinates": (0, 1), "edge_order": 2}]


@pytest.mark.parametrize("case", GRADIENT_CASES)
def test_gradient(case):
    y = RNG.standard_normal((4, 5))
    kw_ours, kw_theirs = dict(case), dict(case)
    if "coordinates" in case:
        grids = [np.cumsum(RNG.uniform(0.1, 1, y.shape[d])) for d in case["coordinates"]]
        for kw in (kw_ours, kw_theirs):
            del kw["coordinates"]
        kw_ours["spacing"] = tuple(cr.tensor(g) for g in grids)
        kw_theirs["spacing"] = tuple(torch.tensor(g) for g in grids)
    ours_y, theirs_y = both(y, requires_grad=True)
    ours, theirs = cr.gradient(ours_y, **kw_ours), torch.gradient(theirs_y, **kw_theirs)
    same(list(ours), list(theirs))
    sum((o * o).sum() for o in ours).backward()
    sum((t * t).sum() for t in theirs).backward()
    same(ours_y.grad, theirs_y.grad)
    same(cr.gradient(cr.tensor([1, 4, 9, 16]))[0], torch.gradient(torch.tensor([1, 4, 9, 16]))[0])


@pytest.mark.parametrize("kwargs", [{"bins": 4}, {"bins": [2, 3, 5], "density": True},
                                    {"bins": 3, "range": [-1.0, 1.0, -2.0, 2.0, 0.0, 1.0]}])
def test_histogramdd(kwargs):
    x = RNG.standard_normal((300, 3))
    w = RNG.uniform(size=300)
    ours = cr.histogramdd(cr.tensor(x), weight=cr.tensor(w), **kwargs)
    theirs = torch.histogramdd(torch.tensor(x), weight=torch.tensor(w), **kwargs)
    assert type(ours).__name__ == type(theirs).__name__ == "histogramdd"
    same(ours.hist, theirs.hist)
    same(list(ours.bin_edges), list(theirs.bin_edges))
    edges = [np.array(RNG.uniform(-2, 0, 1).tolist() + [0.0, 2.0]) for _ in range(3)]
    same(cr.histogramdd(cr.tensor(x), bins=[cr.tensor(e) for e in edges]).hist,
         torch.histogramdd(torch.tensor(x), bins=[torch.tensor(e) for e in edges]).hist)
    with pytest.raises(RuntimeError, match="should have the same dtype, but got input with dtype "
                                           "double and bins for dimension 0 with dtype float"):
        cr.histogramdd(cr.tensor(x), bins=[cr.tensor([0.0, 1.0])] * 3)


def test_resize_like_the_reference():
    ours, theirs = cr.arange(12.0).view(3, 4).t(), torch.arange(12.0).view(3, 4).t()
    ours.resize_(2, 3)
    theirs.resize_(2, 3)
    same(ours, theirs)
    assert ours.is_contiguous() and theirs.is_contiguous()
    ours.resize_as_(cr.zeros(4))
    theirs.resize_as_(torch.zeros(4))
    same(ours, theirs)


@pytest.mark.parametrize("name", ["uint16", "uint32", "uint64"])
def test_limited_unsigned_dtypes_like_the_reference(name):
    ours, theirs = getattr(cr, name), getattr(torch, name)
    assert (ours.itemsize, ours.is_signed, ours.is_floating_point) == \
        (theirs.itemsize, theirs.is_signed, theirs.is_floating_point)
    for other in ("int32", "uint8", "int64"):
        with pytest.raises(RuntimeError) as theirs_error:
            torch.promote_types(theirs, getattr(torch, other))
        with pytest.raises(RuntimeError) as ours_error:
            cr.promote_types(ours, getattr(cr, other))
        assert str(ours_error.value) == str(theirs_error.value)
    assert str(cr.tensor([1, 2], dtype=ours)).replace("chainrule", "torch") == \
        str(torch.tensor([1, 2], dtype=theirs))


_SUBTRACTIONS = ["b - True", "True - b", "b - b", "lib.sub(b, b)", "b - 1", "1 - b", "b - 1.5",
                 "i - True", "True - i", "i - b", "b - i", "f - b", "b - f",
                 "lib.rsub(b, True)", "b.sub(True)", "b.clone().sub_(b)", "i.clone().sub_(True)",
                 "lib.sub(b, b, alpha=2)", "b - lib.tensor(True)", "lib.sub(i, i, alpha=True)",
                 "lib.add(i, i, alpha=1.5)", "lib.add(b, b, alpha=True)", "i - 1", "f - i"]


@pytest.mark.parametrize("statement", _SUBTRACTIONS)
def test_subtraction_with_bools_as_the_reference(statement):
    def run(lib):
        names = {"lib": lib, "b": lib.tensor([True, False]), "i": lib.tensor([1, 2]),
                 "f": lib.tensor([1.5, 2.5])}
        try:
            return eval(statement, names).tolist()
        except RuntimeError as error:
            return str(error)
    assert run(cr) == run(torch)


_FOREACH = ["lib._foreach_add(a, b, alpha=2)", "lib._foreach_mul(a, [2., 3.])",
            "lib._foreach_sub(a, lib.tensor(1.))", "lib._foreach_maximum(a, 1.5)",
            "lib._foreach_pow(2., a)", "lib._foreach_addcdiv(a, b, b, lib.tensor([0.5, 2.]))",
            "lib._foreach_lerp(a, b, 0.25)", "lib._foreach_norm(a, 1)", "lib._foreach_sqrt(a)",
            "lib._foreach_mul_(a, 0.5)", "lib._foreach_addcmul_(a, b, b, value=0.1)",
            "lib._foreach_add(a, [1.])", "lib._foreach_add(a, [lib.ones(2)])",
            "lib._foreach_mul_([lib.tensor([1, 2])], 0.5)"]


@pytest.mark.parametrize("statement", _FOREACH)
def test_foreach_as_the_reference(statement):
    def run(lib):
        names = {"lib": lib, "a": [lib.ones(2), lib.full((3,), 2.)],
                 "b": [lib.full((2,), 3.), lib.ones(3)]}
        try:
            return [t.tolist() for t in eval(statement, names)]
        except RuntimeError as error:
            return str(error)
    assert run(cr) == run(torch)


@pytest.mark.parametrize("ours, theirs", [("chainrule", "torch"), ("chainrule.Tensor", "torch.Tensor"),
                                          ("chainrule.nn.functional", "torch.nn.functional"),
                                          ("chainrule.linalg", "torch.linalg"),
                                          ("chainrule.special", "torch.special"),
                                          ("chainrule.fft", "torch.fft"),
                                          ("chainrule.func", "torch.func"),
                                          ("chainrule.autograd.forward_ad",
                                           "torch.autograd.forward_ad"),
                                          ("chainrule.autograd.functional",
                                           "torch.autograd.functional"),
                                          ("chainrule.autograd.graph", "torch.autograd.graph"),
                                          ("chainrule.nn.init", "torch.nn.init")])
def test_no_public_name_the_reference_lacks(ours, theirs):
    # a name torch lacks is one a torch program cannot reach, and one that hides a typo
    # (``x.cat(...)``, ``cr.view(...)``) that would fail on torch
    import importlib
    import chainrule.nn.functional  # noqa: F401
    import torch.func  # noqa: F401

    def resolve(path):
        head, _, attr = path.rpartition(".")
        if attr == "Tensor":
            return getattr(importlib.import_module(head), attr)
        return importlib.import_module(path)
    a, b = resolve(ours), resolve(theirs)
    own = {n for n in dir(a) if not n.startswith("_") and n != "TOP_LEVEL"}
    assert sorted(n for n in own if not hasattr(b, n)) == []
