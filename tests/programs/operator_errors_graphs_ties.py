"""What users meet at the edges: operators given the wrong operand, in-place ops that
cannot keep their dtype, the graph nn.Linear records, and which index wins a tie."""
import torch
import torch.nn as nn
import torch.nn.functional as F


def attempt(label, fn):
    try:
        result = fn()
        print(f"{label}: ok {result}")
    except Exception as e:              # the error users see is the point here
        print(f"{label}: {type(e).__name__}: {e}")


def show_graph(fn, depth=0):
    """grad_fn and its next_functions, as a user printing them sees the nodes."""
    print("  " * depth + (type(fn).__name__ if fn is not None else "None"))
    if fn is not None:
        for child, _ in fn.next_functions:
            show_graph(child, depth + 1)


t = torch.tensor([1.0, 2.0])
print("-- operators with foreign operands")
attempt("t + list", lambda: t + [1, 2])
attempt("list + t", lambda: [1, 2] + t)
attempt("t * str", lambda: t * "a")
attempt("t @ 3", lambda: t @ 3)
attempt("2.5 @ t", lambda: 2.5 @ t)
attempt("(1, 2) - t", lambda: (1, 2) - t)
attempt("t / None", lambda: t / None)
attempt("t ** dict", lambda: t ** {})
attempt("t == None", lambda: t == None)        # noqa: E711
attempt("t != 'a'", lambda: t != "a")
attempt("t < []", lambda: t < [])
attempt("t & 1", lambda: t & 1)
attempt("int tensor << 1.5", lambda: torch.tensor([1, 2]) << 1.5)
attempt("t // 1j", lambda: t // 1j)
attempt("complex < 1", lambda: torch.tensor([1j]) < 1)
attempt("bool - bool", lambda: torch.tensor([True]) - torch.tensor([False]))
attempt("-bool", lambda: -torch.tensor([True]))
attempt("~float", lambda: ~t)
attempt("t + 1 still works", lambda: (t + 1, 2 ** t, 3 - t))

print("-- in-place ops that would change the dtype")
for name, op in [("add_", lambda x: x.add_(1.5)), ("mul_", lambda x: x.mul_(t)),
                 ("div_", lambda x: x.div_(2)), ("sqrt_", lambda x: x.sqrt_()),
                 ("clamp_", lambda x: x.clamp_(0.5, 1.5)),
                 ("clamp_ tensor", lambda x: x.clamp_(torch.tensor(0.5))),
                 ("lerp_", lambda x: x.lerp_(torch.ones(2), 0.5)),
                 ("index_add_", lambda x: x.index_add_(0, torch.tensor([0]), t[:1])),
                 ("scatter_add_", lambda x: x.scatter_add_(0, torch.tensor([0]), t[:1])),
                 ("addmm_", lambda x: x.addmm_(torch.ones(2, 2), torch.ones(2, 2))),
                 ("iadd", lambda x: x.__iadd__(0.5))]:
    x = torch.tensor([1, 2])
    attempt(name, lambda: op(x))
    print("   unchanged:", x.tolist(), x._version)

print("-- the graph of nn.Linear")
torch.manual_seed(0)
layer = nn.Linear(4, 3)
for shape in [(2, 4), (4,), (2, 5, 4)]:
    x = torch.randn(*shape, requires_grad=True)
    y = layer(x)
    print(shape, "->", tuple(y.shape))
    show_graph(y.grad_fn)
    y.pow(2).sum().backward()
    print("  weight grad sum", round(layer.weight.grad.sum().item(), 4), "x grad",
          [round(v, 4) for v in x.grad.flatten()[:3].tolist()])
    layer.zero_grad()
show_graph(F.linear(torch.randn(2, 4), layer.weight).grad_fn)
b = torch.zeros(3, requires_grad=True)
show_graph(torch.addmm(b, torch.randn(2, 4), layer.weight.t()).grad_fn)

print("-- ties")
v = torch.tensor([1.0, 3.0, 3.0, 0.0, 3.0, 0.0, 1.0])
print("max", torch.max(v, 0), "min", torch.min(v, 0))
print("argmax", v.argmax().item(), "argmin", v.argmin().item())
print("median", torch.median(v, 0))
print("sort", torch.sort(v).indices.tolist(), torch.sort(v, descending=True).indices.tolist())
print("stable", torch.sort(v, stable=True, descending=True).indices.tolist())
m = torch.tensor([[2.0, 1.0, 2.0, 1.0], [0.0, 0.0, 5.0, 5.0], [7.0, 7.0, 7.0, 7.0]])
print("max dim 1", m.max(dim=1).indices.tolist(), "min dim 0", m.min(dim=0).indices.tolist())
print("argmax dim 1", m.argmax(dim=1).tolist(), "median dim 1", m.median(dim=1).indices.tolist())
labels = torch.tensor([2, 0, 1, 1, 0, 2, 2, 1, 0, 0, 1, 2, 1, 0, 2, 1, 0, 1, 2, 0, 1])
print("sort 21 labels", torch.sort(labels).indices.tolist())
print("argsort descending", torch.argsort(labels, descending=True).tolist())
scores = labels.float() / 2
print("topk 5", torch.topk(scores, 5).indices.tolist(),
      "smallest unsorted", torch.topk(scores, 4, largest=False, sorted=False).indices.tolist())
print("kthvalue 7", torch.kthvalue(scores, 7).indices.item(), "mode", torch.mode(labels))
grid = labels[:20].reshape(4, 5).float()
print("topk dim 0", torch.topk(grid, 2, dim=0).indices.tolist())
print("kthvalue dim 1", torch.kthvalue(grid, 3, dim=1).indices.tolist())
print("mode dim 1", torch.mode(grid, dim=1).indices.tolist())
