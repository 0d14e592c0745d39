"""Parity tier: how calls with wrong arguments fail, against PyTorch (skips without torch).

- Python numbers where the reference's signature takes only a Tensor (Note
  [tensor-only arguments]): function, method and in-place forms, each with the
  reference's TypeError word for word.
- The matmul family called with shapes and dtypes both wrong, and the other
  combinations of a bad shape, a dtype mismatch and bool operands (Note [product
  checks]): the same error type and message as the reference.
"""
import warnings

import pytest

torch = pytest.importorskip("torch")

import chainrule as cr  # noqa: E402


def _outcome(fn):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")            # chain_matmul's deprecation
        try:
            fn()
        except Exception as exc:  # noqa: BLE001 - the type and message are compared
            return type(exc).__name__, str(exc)
    return "no error"


# (name, the tensor-only argument's name, whether Tensor has the method, the in-place
# method); "fn" forms are chainrule.<name> / torch.<name>
TENSOR_ONLY = [
    ("atan2", True, True), ("arctan2", True, True), ("hypot", True, True),
    ("logaddexp", True, False), ("logaddexp2", True, False), ("fmax", True, False),
    ("fmin", True, False), ("maximum", True, False), ("minimum", True, False),
    ("gcd", True, True), ("lcm", True, True), ("ldexp", True, True),
    ("nextafter", True, True), ("heaviside", True, True), ("logical_and", True, True),
    ("logical_or", True, True), ("logical_xor", True, True), ("dist", True, False),
    ("isclose", True, False), ("allclose", True, False), ("masked_select", True, False),
    ("equal", True, False), ("kron", True, False), ("inner", True, False),
    ("cross", True, False), ("take", True, False), ("take_along_dim", True, False),
    ("bincount", True, False), ("prelu", True, False), ("mm", True, False),
    ("type_as", True, False), ("view_as", True, False), ("reshape_as", True, False),
    ("expand_as", True, False), ("is_same_size", True, False),
]
DATA = {"gcd": [1, 2], "lcm": [1, 2], "bincount": [1, 2], "take": [1.0, 2.0]}


def _forms(name, method, inplace):
    yield "fn", lambda L, x, v: getattr(L, name)(x, v)
    if method:
        yield "method", lambda L, x, v: getattr(x, name)(v)
    if inplace:
        yield "inplace", lambda L, x, v: getattr(x, name + "_")(v)


CASES = [(name, form, call, number) for name, method, inplace in TENSOR_ONLY
         for form, call in _forms(name, method, inplace) for number in (2.0, 1, True)
         if hasattr(torch, name) or form != "fn"]


@pytest.mark.parametrize("name,form,call,number", CASES,
                         ids=[f"{c[0]}-{c[1]}-{type(c[3]).__name__}" for c in CASES])
def test_a_number_for_a_tensor_only_argument_is_refused_like_the_reference(
        name, form, call, number):
    data = DATA.get(name, [[1.0, 2.0]] if name == "mm" else [1.0, 2.0])
    theirs = _outcome(lambda: call(torch, torch.tensor(data), number))
    ours = _outcome(lambda: call(cr, cr.tensor(data), number))
    assert theirs[0] == "TypeError" and ours == theirs


@pytest.mark.parametrize("name", ["atan2", "maximum", "logical_and", "heaviside", "kron",
                                  "masked_select"])
def test_a_number_first_is_refused_like_the_reference(name):
    theirs = _outcome(lambda: getattr(torch, name)(2.0, torch.tensor([1.0])))
    ours = _outcome(lambda: getattr(cr, name)(2.0, cr.tensor([1.0])))
    assert ours == theirs


def test_the_scalar_overloads_still_take_numbers():
    for name in ("copysign", "fmod", "xlogy", "remainder", "eq", "bitwise_and"):
        x = [3, 4] if name == "bitwise_and" else [3.0, 4.0]
        ours = getattr(cr, name)(cr.tensor(x), 2).tolist()
        assert ours == getattr(torch, name)(torch.tensor(x), 2).tolist()


# --- the matmul family (Note [product checks]) ----------------------------------------------
def _call(name):
    def call(L, a, b):
        if name == "addmm":
            return L.addmm(L.ones(2, 5, dtype=a.dtype), a, b)
        if name == "addmm_big_input":
            return L.addmm(L.ones(7, 7, dtype=b.dtype), a, b)
        if name == "addmv":
            return L.addmv(L.ones(2, dtype=a.dtype), a, b)
        if name == "addbmm":
            return L.addbmm(L.ones(2, 5, dtype=a.dtype), a, b)
        if name == "baddbmm":
            return L.baddbmm(L.ones(2, 2, 5, dtype=a.dtype), a, b)
        if name == "baddbmm_big_input":
            return L.baddbmm(L.ones(9, 2, 5, dtype=b.dtype), a, b)
        if name == "linear":
            return L.nn.functional.linear(a, b)
        if name == "linear_bias":
            return L.nn.functional.linear(a, b, L.ones(5, dtype=b.dtype))
        if name == "multi_dot":
            return L.linalg.multi_dot([a, b])
        if name == "vecdot":
            return L.linalg.vecdot(a, b)
        if name == "tensordot":
            return L.tensordot(a, b, dims=1)
        if name == "bilinear":
            return L.nn.functional.bilinear(a, b, L.ones(5, 3, 3))
        return getattr(L, name)(a, b)
    return call


PRODUCTS = [  # name, first shape, second shapes (the first fits, the others do not)
    ("mm", (2, 3), [(3, 5), (4, 5)]), ("matmul", (2, 3), [(3, 5), (4, 5)]),
    ("matmul", (2, 3), [(3,), (4,)]), ("matmul", (3,), [(3, 5), (4, 5)]),
    ("matmul", (3,), [(3,), (4,)]), ("matmul", (2, 2, 3), [(3, 5), (4, 5)]),
    ("matmul", (2, 2, 3), [(3,), (4,)]), ("matmul", (2, 2, 3), [(2, 3, 5), (2, 4, 5), (3, 3, 5)]),
    ("matmul", (3,), [(2, 3, 5), (2, 4, 5)]), ("matmul", (2, 3), [(2, 3, 5), (2, 4, 5)]),
    ("bmm", (2, 2, 3), [(2, 3, 5), (2, 4, 5), (3, 3, 5)]), ("mv", (2, 3), [(3,), (4,)]),
    ("dot", (3,), [(3,), (4,)]), ("vdot", (3,), [(3,), (4,)]), ("inner", (2, 3), [(2, 3), (2, 4)]),
    ("outer", (3,), [(4,)]), ("addmm", (2, 3), [(3, 5), (4, 5)]),
    ("addmm_big_input", (2, 3), [(3, 5), (4, 5)]), ("addmv", (2, 3), [(3,), (4,)]),
    ("addbmm", (2, 2, 3), [(2, 3, 5), (2, 4, 5), (3, 3, 5)]),
    ("baddbmm", (2, 2, 3), [(2, 3, 5), (2, 4, 5), (3, 3, 5)]),
    ("baddbmm_big_input", (2, 2, 3), [(2, 3, 5), (2, 4, 5)]),
    ("linear", (2, 3), [(5, 3), (5, 4)]), ("linear", (4, 2, 3), [(5, 3), (5, 4)]),
    ("linear", (3,), [(5, 3), (5, 4)]), ("linear_bias", (2, 3), [(5, 3), (5, 4)]),
    ("multi_dot", (2, 3), [(3, 5), (4, 5)]), ("chain_matmul", (2, 3), [(3, 5), (4, 5)]),
    ("vecdot", (2, 3), [(2, 3), (2, 4)]), ("tensordot", (2, 3), [(3, 5), (4, 5)]),
    ("bilinear", (2, 3), [(2, 3), (2, 4)]),
]
DTYPES = [("float32", "float64"), ("float32", "int64"), ("bool", "bool"), ("int64", "int64"),
          ("bool", "float32"), ("float32", "complex64"), ("float64", "float32")]
PRODUCT_CASES = [(name, a, b, da, db) for name, a, bs in PRODUCTS for b in bs for da, db in DTYPES]


@pytest.mark.parametrize("name,shape_a,shape_b,dtype_a,dtype_b", PRODUCT_CASES)
def test_products_report_what_the_reference_reports_first(name, shape_a, shape_b, dtype_a,
                                                           dtype_b):
    def run(L):
        a = L.ones(*shape_a, dtype=getattr(L, dtype_a))
        b = L.ones(*shape_b, dtype=getattr(L, dtype_b))
        return _outcome(lambda: _call(name)(L, a, b))
    assert run(cr) == run(torch)


def test_expand_names_the_last_mismatching_dim_like_the_reference():
    for shape, sizes in (((7, 7), (2, 5)), ((3, 1), (-2, 4, 5)), ((3,), (-2, 4))):
        assert _outcome(lambda: cr.ones(*shape).expand(*sizes)) == \
            _outcome(lambda: torch.ones(*shape).expand(*sizes))


# --- out= with an argument that requires grad (Note [out= arguments]) ------------------------
def _out_call(module, name):
    def call(L, out):
        x = L.tensor([[0.3, 0.6], [0.2, 0.9]], dtype=L.float64, requires_grad=True)
        a = L.tensor([[2.0, 0.5], [0.5, 3.0]], dtype=L.float64, requires_grad=True)
        fn = getattr(getattr(L, module), name)
        if module == "special":
            return fn(x, x, out=out) if "polynomial" in name or name in (
                "gammainc", "gammaincc", "xlogy", "zeta") else fn(x, out=out)
        if name == "tensorsolve":
            return fn(a, L.ones(2, dtype=L.float64), out=out)
        if name in ("solve", "matmul"):
            return fn(a, a, out=out)
        if name == "multi_dot":
            return fn([a, a], out=out)
        return fn(a, out=out)
    return call


OUT_CASES = [("special", n) for n in (
    "ndtr", "ndtri", "expit", "gammainc", "gammaincc", "xlogy", "zeta", "airy_ai", "bessel_j0",
    "bessel_y1", "modified_bessel_k1", "scaled_modified_bessel_k0", "spherical_bessel_j0",
    "chebyshev_polynomial_t", "hermite_polynomial_he", "legendre_polynomial_p", "entr")] + \
    [("linalg", n) for n in (
        "norm", "cond", "matrix_norm", "tensorinv", "tensorsolve", "matrix_rank", "inv", "det",
        "cholesky", "eigvalsh", "svdvals", "solve", "matmul", "multi_dot", "vector_norm", "pinv",
        "qr", "svd", "eigh", "slogdet", "inv_ex", "lu_factor")]


@pytest.mark.parametrize("module,name", OUT_CASES)
def test_out_with_an_argument_requiring_grad_like_the_reference(module, name):
    def run(L):
        out = L.empty(0, dtype=L.float64)
        try:
            result = _out_call(module, name)(L, out)
        except Exception as exc:  # noqa: BLE001 - the type and message are compared
            return type(exc).__name__, str(exc)
        node = result.grad_fn
        return result is out, None if node is None else type(node).__name__
    assert run(cr) == run(torch)
