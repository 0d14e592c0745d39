"""torch.func and forward_ad edge semantics, and out= on the functions: jacfwd's
randomness, forward transforms inside a user's dual level, the nodes of make_dual and
unpack_dual, in-place writes into captured tensors under grad and vmap, and out=
(values, resizing warnings, casting, autograd refusal, tuple outs)."""
import warnings

import torch
import torch.autograd.forward_ad as fwAD
from torch.func import grad, jacfwd, jacrev, jvp, vjp, vmap, hessian

torch.manual_seed(0)


def show(name, value):
    if isinstance(value, torch.Tensor):
        print(name, tuple(value.shape), value.dtype,
              [round(v, 5) for v in value.detach().flatten().tolist()], value.requires_grad)
    elif isinstance(value, tuple):
        print(name, type(value).__name__)
        for i, v in enumerate(value):
            show(f"  {name}[{i}]", v)
    else:
        print(name, value)


def attempt(name, fn):
    try:
        show(name, fn())
    except Exception as e:
        print(name, "raised", type(e).__name__, str(e).split("\n")[0][:240])


# --- jacfwd's randomness: a jacobian is a vmap over basis tangents ------------------
noisy = lambda x: x * torch.rand(3)
dropped = lambda x: torch.nn.functional.dropout(x, 0.5) * 2
x = torch.ones(3)
for mode in ("error", "same", "different"):
    for name, f in (("noisy", noisy), ("dropped", dropped)):
        torch.manual_seed(1)
        attempt(f"jacfwd {name} randomness={mode}", lambda: jacfwd(f, randomness=mode)(x))
        print("  next draw", round(torch.rand(1).item(), 6))
torch.manual_seed(2)
attempt("jacfwd aux of the first basis tangent",
        lambda: jacfwd(lambda x: (x * 2, torch.rand(2)), has_aux=True, randomness="different")(x))
attempt("vmap of jacfwd (inner same, outer error)",
        lambda: vmap(jacfwd(noisy, randomness="same"))(torch.ones(2, 3)))
torch.manual_seed(3)
attempt("vmap different of vmap same",
        lambda: vmap(vmap(noisy, randomness="same"), randomness="different")(torch.ones(2, 2, 3)))

# --- forward transforms inside a user's dual level ------------------------------------
p = torch.tensor([0.5, 1.5], dtype=torch.float64)
t = torch.ones(2, dtype=torch.float64)
cube_sin = lambda a: (a ** 3).sin()
with fwAD.dual_level():
    attempt("jvp in a dual level", lambda: jvp(torch.sin, (p,), (t,)))
    attempt("jacfwd in a dual level", lambda: jacfwd(torch.sin)(p))
    attempt("hessian in a dual level", lambda: hessian(lambda a: a.sin().sum())(p))
    attempt("jacfwd of integers in a dual level", lambda: jacfwd(torch.sin)(torch.ones(2, dtype=torch.long)))
    attempt("grad in a dual level", lambda: grad(lambda a: a.sin().sum())(p))
    dual = fwAD.make_dual(p, torch.tensor([1.0, 2.0], dtype=torch.float64))
    attempt("jacrev of a dual", lambda: jacrev(cube_sin)(dual))
    attempt("its tangent", lambda: fwAD.unpack_dual(jacrev(cube_sin)(dual)).tangent)
    attempt("vjp of a dual", lambda: vjp(cube_sin, dual)[1](t))
    attempt("vjp's tangent", lambda: fwAD.unpack_dual(vjp(cube_sin, dual)[1](t)[0]).tangent)
    attempt("vjp create_graph", lambda: vjp(cube_sin, dual)[1](t, create_graph=True))
    attempt("grad of a dual", lambda: grad(lambda a: cube_sin(a).sum())(dual))
    attempt("jacrev aux of a dual", lambda: jacrev(lambda a: (cube_sin(a), a * 2), has_aux=True)(dual))
attempt("jvp of jvp", lambda: jvp(lambda a: jvp(cube_sin, (a,), (t,))[1], (p,), (t,)))
attempt("jvp of jacfwd", lambda: jvp(lambda a: jacfwd(cube_sin)(a), (p,), (t,))[1])
attempt("jacfwd of jvp", lambda: jacfwd(lambda a: jvp(cube_sin, (a,), (t,))[1])(p))

# --- the nodes of make_dual and unpack_dual ------------------------------------------
w = torch.tensor([1.0, 2.0], dtype=torch.float64, requires_grad=True)
with fwAD.dual_level():
    dual = fwAD.make_dual(w * 2, t)
    primal = fwAD.unpack_dual(dual).primal
    print("make_dual node", dual.grad_fn.name(), dual.grad_fn.next_functions[0][0].name())
    print("unpack_dual node", primal.grad_fn.name())
    print(primal)
    (primal * 3).sum().backward()
print("grad through both", w.grad)

# --- in-place writes into captured tensors --------------------------------------------
captured = torch.zeros(3)


def adds_into_captured(x):
    captured.add_(x)
    return x.sum()


def copies_into_captured(x):
    captured[0] = x[0]
    return x.sum()


def local_buffer(x):
    buffer = torch.zeros(3)
    buffer.add_(x)
    buffer[0] = 5.0
    return (buffer * x).sum()


attempt("grad add_ into captured", lambda: grad(adds_into_captured)(torch.ones(3)))
attempt("vjp setitem into captured", lambda: vjp(copies_into_captured, torch.ones(3))[0])
attempt("jacrev zero_ of captured", lambda: jacrev(lambda x: captured.zero_() + x)(torch.ones(3)))
attempt("jvp view of captured", lambda: jvp(lambda x: captured[:2].mul_(2) * 0 + x[:2], (x,), (x,)))
norm = torch.nn.BatchNorm1d(3)
attempt("grad through batch norm statistics", lambda: grad(lambda x: norm(x).sum())(torch.ones(2, 3)))
attempt("grad local buffer", lambda: grad(local_buffer)(torch.ones(3)))
print("captured unchanged", captured)
for name, write in (("add_", lambda b, r: b.add_(r)), ("mul_", lambda b, r: b.mul_(r)),
                    ("copy_", lambda b, r: b.copy_(r)), ("fill_", lambda b, r: b.fill_(r[0])),
                    ("index_put_", lambda b, r: b.index_put_((torch.tensor([0]),), r[:1])),
                    ("out=", lambda b, r: torch.add(b, r, out=b))):
    attempt(f"vmap {name} into an unbatched buffer",
            lambda: vmap(lambda r: write(torch.zeros(3), r))(torch.ones(2, 3)))

# --- out= -----------------------------------------------------------------------------
a, b = torch.tensor([1.0, 2.0, 3.0]), torch.tensor([0.5, 0.25, 2.0])
out = torch.empty(3)
result = torch.add(a, b, alpha=2, out=out)
print("out is returned", result is out, out, out._version)
base = torch.zeros(3, 2)
torch.sin(a, out=base[:, 1])
torch.mul(a, b, out=base[:, 0])
print("written through a view", base)
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    show("resized", torch.sub(a, b, out=torch.empty(2)))
    show("from empty", torch.exp(a, out=torch.empty(0)))
    show("sum keepdim", torch.sum(torch.ones(2, 3), 1, keepdim=True, out=torch.empty(2)))
print("warnings", [str(w.message)[:120] for w in caught])
show("int into float", torch.add(torch.tensor([1, 2]), 1, out=torch.empty(2)))
show("comparison into long", torch.lt(a, b, out=torch.empty(3, dtype=torch.long)))
show("sum into long", torch.sum(torch.tensor([1.5, 2.5]), 0, out=torch.empty((), dtype=torch.long)))
show("mean into double", torch.mean(torch.tensor([1e8, 1.0, -1e8]), 0, out=torch.empty((), dtype=torch.float64)))
attempt("float into long", lambda: torch.add(a, b, out=torch.empty(3, dtype=torch.long)))
attempt("complex into float", lambda: torch.mul(a, 1j, out=torch.empty(3)))
attempt("mm into double", lambda: torch.mm(torch.ones(2, 2), torch.ones(2, 2), out=torch.empty(2, 2, dtype=torch.float64)))
leaf = a.clone().requires_grad_()
attempt("requires grad", lambda: torch.sin(leaf, out=torch.empty(3)))
attempt("reduction requires grad", lambda: torch.sum(leaf, 0, out=torch.empty(())))
attempt("out requires grad", lambda: torch.mul(a, b, out=torch.empty(3, requires_grad=True)))
with torch.no_grad():
    attempt("under no_grad", lambda: torch.mul(leaf, b, out=torch.empty(3)))
values, indices = torch.empty(0), torch.empty(0, dtype=torch.long)
attempt("max with dim", lambda: torch.max(torch.tensor([[1.0, 5.0], [7.0, 2.0]]), 1, out=(values, indices)))
print("the tuple's tensors", values, indices)
attempt("sort", lambda: torch.sort(torch.tensor([3.0, 1.0, 2.0]), out=(torch.empty(0), torch.empty(0, dtype=torch.long))))
attempt("where", lambda: torch.where(a > 1.5, a, b, out=torch.empty(3)))
attempt("clamp", lambda: torch.clamp(a, 1.5, 2.5, out=torch.empty(3)))
attempt("matmul", lambda: torch.matmul(torch.ones(2, 3), torch.ones(3, 2), out=torch.empty(2, 2)))
attempt("logsumexp", lambda: torch.logsumexp(a, 0, out=torch.empty(())))
attempt("cumsum", lambda: torch.cumsum(a, 0, out=torch.empty(3)))

# --- out= without dim, and on torch.special and torch.linalg --------------------------
m = torch.tensor([[2.0, 1.0], [1.0, 3.0]])
attempt("sum without dim", lambda: torch.sum(m, out=torch.empty(0)))
attempt("prod without dim", lambda: torch.prod(m, out=torch.empty(0)))
attempt("sum dtype without dim", lambda: torch.sum(m, dtype=torch.float64, out=torch.empty(0)))
attempt("median without dim", lambda: torch.median(m, out=torch.empty(0)))
attempt("mean without dim", lambda: torch.mean(m, out=torch.empty(0)))
attempt("amax without dim", lambda: torch.amax(m, out=torch.empty(0)))
attempt("any without dim", lambda: torch.any(m > 1, out=torch.empty(0, dtype=torch.bool)))
attempt("special.expit", lambda: torch.special.expit(a, out=torch.empty(0, dtype=torch.float64)))
attempt("special.ndtr", lambda: torch.special.ndtr(a, out=torch.empty(3)))
attempt("special.xlogy", lambda: torch.special.xlogy(a, b, out=torch.empty(0)))
attempt("special.logsumexp", lambda: torch.special.logsumexp(m, 1, out=torch.empty(0)))
attempt("special.gammaln requires grad", lambda: torch.special.gammaln(leaf, out=torch.empty(0)))
attempt("special.entr requires grad", lambda: torch.special.entr(leaf, out=torch.empty(0)))
attempt("special.i0e into long", lambda: torch.special.i0e(a, out=torch.empty(0, dtype=torch.long)))
attempt("linalg.vector_norm", lambda: torch.linalg.vector_norm(m, out=torch.empty(0)))
attempt("linalg.vector_norm into double", lambda: torch.linalg.vector_norm(m, out=torch.empty(0, dtype=torch.float64)))
attempt("linalg.inv", lambda: torch.linalg.inv(m, out=torch.empty(0)))
attempt("linalg.inv into double", lambda: torch.linalg.inv(m, out=torch.empty(0, dtype=torch.float64)))
attempt("linalg.inv tuple", lambda: torch.linalg.inv(m, out=(torch.empty(0),)))
attempt("linalg.eigh", lambda: torch.linalg.eigh(m, out=(torch.empty(0), torch.empty(0))))
attempt("linalg.eigh tensor", lambda: torch.linalg.eigh(m, out=torch.empty(0)))
attempt("linalg.slogdet", lambda: torch.linalg.slogdet(m, out=(torch.empty(0), torch.empty(0))))
attempt("linalg.lu_factor pivots long", lambda: torch.linalg.lu_factor(m, out=(torch.empty(0), torch.empty(0, dtype=torch.long))))

# --- make_dual's result is a view of the primal -----------------------------------------
root = torch.tensor([1.0, 2.0, 3.0, 4.0])
with fwAD.dual_level():
    dual = fwAD.make_dual(root[1:], torch.tensor([10.0, 20.0, 30.0]))
    print("dual is a view", dual._is_view(), dual._base is root, root._version)
    unpacked = fwAD.unpack_dual(dual)
    print("unpacked primal", unpacked.primal._base is root, fwAD.unpack_dual(root).tangent)
    dual.mul_(2)
    print("in place through the dual", root, root._version, fwAD.unpack_dual(dual).tangent)
    strided = dual.as_strided((2,), (2,), 1)
    print("as_strided of the dual", strided, fwAD.unpack_dual(strided).tangent)
    print("view of the dual", fwAD.unpack_dual(dual.view(3, 1)).tangent.flatten())
    leaf = torch.tensor([1.0, 2.0], requires_grad=True)
    attempt("in place on a dual of a leaf", lambda: fwAD.make_dual(leaf, torch.ones(2)).add_(1))

# --- vmap of as_strided: strides relative to each entry's storage -----------------------
grid = torch.arange(24.).reshape(4, 6)
attempt("vmap as_strided", lambda: vmap(lambda t: t.as_strided((2, 2), (1, 2), 1))(grid))
attempt("vmap as_strided in_dims=1", lambda: vmap(lambda t: t.as_strided((2,), (1,), 1), in_dims=1)(grid))
attempt("vmap as_strided of a view", lambda: vmap(lambda t: t.as_strided((2,), (1,), 1))(grid[:, 1:]))
attempt("vmap as_strided outside the entry", lambda: vmap(lambda t: t.as_strided((3, 3), (3, 1)))(grid))
attempt("vmap as_strided before the entry", lambda: vmap(lambda t: t[1:].as_strided((2,), (1,), 0))(grid))
attempt("vmap of vmap as_strided", lambda: vmap(vmap(lambda t: t.as_strided((2,), (2,))))(grid.reshape(2, 3, 4)))
attempt("vmap grad as_strided", lambda: vmap(grad(lambda t: t.as_strided((2,), (2,), 1).sum()))(grid[:2]))
