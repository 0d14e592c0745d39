"""What people meet when they vmap code written for one example: value-dependent
shapes (unique, nonzero, boolean masks), .item()/.tolist() and data-dependent
control flow, integer outputs under jacrev/vjp and integer inputs under jacfwd, and
the rewrites that work (masks that are not batched, torch.where with three
arguments, argwhere, sums over masked values)."""
import torch
from torch.func import vmap, jacrev, jacfwd, vjp, hessian

B = torch.tensor([[1.0, -2.0, 1.0], [3.0, 3.0, -1.0]])
mask = torch.tensor([True, False, True])


def attempt(name, fn):
    try:
        out = fn()
        print(name, "->", out.tolist() if isinstance(out, torch.Tensor) else out)
    except Exception as e:
        print(name, "!!", type(e).__name__, str(e).replace("\n", " "))


attempt("unique", lambda: vmap(torch.unique)(B))
attempt("unique dim", lambda: vmap(lambda x: torch.unique(x, dim=0))(B))
attempt("unique_consecutive", lambda: vmap(torch.unique_consecutive)(B))
attempt("nonzero", lambda: vmap(torch.nonzero)(B))
attempt("nonzero as_tuple", lambda: vmap(lambda x: torch.nonzero(x, as_tuple=True))(B))
attempt("where(cond)", lambda: vmap(lambda x: torch.where(x > 0))(B))
attempt("x[x > 0]", lambda: vmap(lambda x: x[x > 0])(B))
attempt("masked_select batched mask", lambda: vmap(lambda m: torch.masked_select(B[0], m))(B > 0))
attempt("x[x > 0] = 0", lambda: vmap(lambda x: x.clone().__setitem__(x > 0, 0.0))(B))
attempt(".item()", lambda: vmap(lambda x: x.sum().item())(B))
attempt("float()", lambda: vmap(lambda x: float(x[0]))(B))
attempt("if x.sum() > 0", lambda: vmap(lambda x: x if x.sum() > 0 else -x)(B))
attempt(".tolist()", lambda: vmap(lambda x: torch.tensor(x.tolist()))(B))
attempt("jacrev of a long output", lambda: jacrev(lambda x: (x > 0).long())(B[0]))
attempt("vjp of a bool output", lambda: vjp(lambda x: x > 0, B[0]))
attempt("jacfwd of an int input", lambda: jacfwd(lambda x: x * 2)(torch.tensor([1, 2])))
attempt("hessian of an int input", lambda: hessian(lambda x: (x * 2).sum())(torch.tensor([1, 2])))
# what works instead
attempt("x[mask] with a fixed mask", lambda: vmap(lambda x: x[mask])(B))
attempt("masked_select with a fixed mask", lambda: vmap(lambda x: torch.masked_select(x, mask))(B))
attempt("where(x > 0, x, 0)", lambda: vmap(lambda x: torch.where(x > 0, x, 0.0))(B))
attempt("sum of positives", lambda: vmap(lambda x: (x * (x > 0)).sum())(B))
attempt("count_nonzero", lambda: vmap(torch.count_nonzero)(B))
attempt("argwhere", lambda: vmap(torch.argwhere)(B))
attempt("jacrev through a boolean mask", lambda: jacrev(lambda x: x[x > 0].sum())(B[0]))
attempt("jacrev through masked_select", lambda: jacrev(lambda x: torch.masked_select(x, x > 0))(B[0]))
attempt("unique of an unbatched tensor inside", lambda: vmap(lambda x: x + torch.unique(mask).sum())(B))
