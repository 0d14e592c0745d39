"""Higher-order and forward-mode workloads: chainrule against its peers.

    ./bazelw run //bench:functional                 # the full table
    ./bazelw run //bench:functional -- --quick      # smoke run: few repetitions
    ./bazelw run //bench:functional -- --only numpy,chainrule-cpp,torch-func

Workloads (float64; A is a fixed 200x200 matrix, x in R^200):
  jacobian     of g(x) = tanh(A @ x) (200x200), vectorized where the API has it
  hessian      of f(x) = sum(tanh(A @ x) ** 2) (200x200), vectorized where possible
  hvp, jvp     of f (hvp) and g (jvp) at x along a fixed v
  fwd_chain    1,000 elementwise ops (the peers' chain cycle) in forward mode:
               microseconds per op
  per_sample   per-sample gradients of a 784-128-10 MLP's loss over a batch of 64
               (vmap(grad(loss)) where the framework has it)

Frameworks: hand-written NumPy (the closed forms), "python-dual" (hvp only: the floor
of any AD that dispatches each op in Python, see dual_floor_cases), chainrule with each engine through
chainrule.autograd.functional / forward_ad ("chainrule-*") and through chainrule.func
("chainrule-*-func"), torch.autograd.functional / forward_ad ("torch"), torch.func
("torch-func"), HIPS autograd. A framework without a workload shows "-". Each
(framework, workload) runs in a fresh process with the same thread count, timed with
CPU time and reported as the median over repetitions (as in peers.py).
"""
import argparse
import gc
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from peers import CLOCK, chain_cycle, median, thread_env  # noqa: E402

FRAMEWORKS = ["numpy", "python-dual", "chainrule-python", "chainrule-cpp", "chainrule-python-func",
              "chainrule-cpp-func", "torch", "torch-func", "autograd"]
WORKLOADS = ["jacobian", "hessian", "hvp", "jvp", "fwd_chain", "per_sample"]
UNITS = {"fwd_chain": "us/op"}
N, CHAIN_OPS, CHAIN_SIZE, BATCH, SIZES = 200, 1000, 16, 64, (784, 128, 10)


def data():
    import numpy as np
    rng = np.random.default_rng(0)
    A = rng.standard_normal((N, N)) / np.sqrt(N)
    x, v = rng.standard_normal(N), rng.standard_normal(N)
    w1 = rng.standard_normal((SIZES[1], SIZES[0])) / np.sqrt(SIZES[0])
    w2 = rng.standard_normal((SIZES[2], SIZES[1])) / np.sqrt(SIZES[1])
    batch = rng.standard_normal((BATCH, SIZES[0]))
    labels = np.eye(SIZES[2])[rng.integers(0, SIZES[2], BATCH)]      # one-hot rows
    return A, x, v, (w1, w2), batch, labels


# --- implementations: each returns a zero-argument callable per workload (or None) ---
def numpy_cases():
    import numpy as np
    A, x, v, (w1, w2), batch, labels = data()

    def hessian():
        u = np.tanh(A @ x)
        s = 1 - u * u
        return (A.T * (2 * s * s - 4 * u * u * s)) @ A

    def hvp():
        u = np.tanh(A @ x)
        s = 1 - u * u
        return A.T @ ((2 * s * s - 4 * u * u * s) * (A @ v))

    def fwd_chain():
        y, t = x[:CHAIN_SIZE].copy(), v[:CHAIN_SIZE].copy()
        x0, t0 = y, t
        for i in range(CHAIN_OPS):
            k = chain_cycle(i)
            if k == 0:
                y, t = y * 1.0001, t * 1.0001
            elif k == 1:
                y, t = np.sin(y), t * np.cos(y)
            elif k == 2:
                y, t = y + x0, t + t0
            else:
                y = np.tanh(y)
                t = t * (1 - y * y)
        return t

    def per_sample():
        h = np.tanh(batch @ w1.T)
        logits = h @ w2.T
        p = np.exp(logits - logits.max(1, keepdims=True))
        p /= p.sum(1, keepdims=True)
        p -= labels
        g2 = p[:, :, None] * h[:, None, :]
        dh = (p @ w2) * (1 - h * h)
        g1 = dh[:, :, None] * batch[:, None, :]
        return g1, g2
    return {"jacobian": lambda: (1 - np.tanh(A @ x) ** 2)[:, None] * A, "hessian": hessian,
            "hvp": hvp, "jvp": lambda: (1 - np.tanh(A @ x) ** 2) * (A @ v),
            "fwd_chain": fwd_chain, "per_sample": per_sample}


class _Dual:
    """A primal and its tangent: the least an op on dual numbers can cost in Python."""
    __slots__ = ("p", "t")

    def __init__(self, p, t):
        self.p, self.t = p, t

    def __mul__(self, other):
        if type(other) is _Dual:
            return _Dual(self.p * other.p, self.t * other.p + self.p * other.t)
        return _Dual(self.p * other, self.t * other)
    __rmul__ = __mul__

    def __rsub__(self, other):
        return _Dual(other - self.p, -self.t)


def dual_floor_cases():
    """hvp as forward-over-reverse with every graph, dispatch and check removed: the
    forward pass and tangents inlined, the reverse pass the table's own VJP formulas
    (tanh, pow, mv) evaluated on _Dual values. Any AD that runs one Python-level step
    per op pays at least this; it shows how far a per-op target can go."""
    import numpy as np
    A, x, v = data()[:3]

    def hvp():
        z, z_t = A @ x, A @ v                          # forward, with tangents
        u = np.tanh(z)
        u_d = _Dual(u, z_t * (1 - u * u))
        g = _Dual(np.broadcast_to(1.0, u.shape), np.broadcast_to(0.0, u.shape))
        g = g * (2 * u_d)                              # pow's VJP
        g = g * (1 - u_d * u_d)                        # tanh's VJP
        return A.T @ g.t                               # mv's VJP, tangent part
    return {"hvp": hvp}


def _chain(lib_y, x0):
    y = lib_y
    for i in range(CHAIN_OPS):
        k = chain_cycle(i)
        y = y * 1.0001 if k == 0 else y.sin() if k == 1 else y + x0 if k == 2 else y.tanh()
    return y


def _mlp_loss(lib, w1, w2, xb, onehot):
    logits = lib.tanh(xb @ w1.T) @ w2.T
    return -(lib.log_softmax(logits, dim=0) * onehot).sum()


def chainrule_cases(use_func):
    import chainrule as cr
    import chainrule.autograd.forward_ad as fwAD
    F, fn = cr.autograd.functional, cr.func
    A, x, v, (w1, w2), batch, labels = (cr.tensor(a) if not isinstance(a, tuple) else
                                        tuple(cr.tensor(b) for b in a) for a in data())
    g = lambda x: cr.tanh(A @ x)                     # noqa: E731
    f = lambda x: (cr.tanh(A @ x) ** 2).sum()        # noqa: E731

    def fwd_chain():
        with fwAD.dual_level():
            d = fwAD.make_dual(x[:CHAIN_SIZE], v[:CHAIN_SIZE])
            return fwAD.unpack_dual(_chain(d, d)).tangent

    def per_sample():
        loss = lambda w1, w2, xb, label: _mlp_loss(cr, w1, w2, xb, label)  # noqa: E731
        return fn.vmap(fn.grad(loss, argnums=(0, 1)), in_dims=(None, None, 0, 0))(
            w1, w2, batch, labels)
    if use_func:
        cases = {"jacobian": lambda: fn.jacrev(g)(x), "hessian": lambda: fn.hessian(f)(x),
                 "hvp": lambda: fn.jvp(fn.grad(f), (x,), (v,))[1],
                 "jvp": lambda: fn.jvp(g, (x,), (v,))[1]}
    else:
        cases = {"jacobian": lambda: F.jacobian(g, x, vectorize=True),
                 "hessian": lambda: F.hessian(f, x, vectorize=True),
                 "hvp": lambda: F.hvp(f, x, v)[1], "jvp": lambda: F.jvp(g, x, v)[1]}
    cases.update(fwd_chain=fwd_chain, per_sample=per_sample)
    return cases


def torch_cases(use_func, threads):
    import torch
    import torch.autograd.forward_ad as fwAD
    torch.set_num_threads(threads)
    F, fn = torch.autograd.functional, torch.func
    A, x, v, (w1, w2), batch, labels = (torch.tensor(a) if not isinstance(a, tuple) else
                                        tuple(torch.tensor(b) for b in a) for a in data())
    g = lambda x: torch.tanh(A @ x)                  # noqa: E731
    f = lambda x: (torch.tanh(A @ x) ** 2).sum()     # noqa: E731

    def fwd_chain():
        with fwAD.dual_level():
            d = fwAD.make_dual(x[:CHAIN_SIZE], v[:CHAIN_SIZE])
            return fwAD.unpack_dual(_chain(d, d)).tangent
    if not use_func:
        return {"jacobian": lambda: F.jacobian(g, x, vectorize=True),
                "hessian": lambda: F.hessian(f, x, vectorize=True),
                "hvp": lambda: F.hvp(f, x, v)[1], "jvp": lambda: F.jvp(g, x, v)[1],
                "fwd_chain": fwd_chain}
    loss = lambda w1, w2, xb, label: _mlp_loss(torch, w1, w2, xb, label)  # noqa: E731
    return {"jacobian": lambda: fn.jacrev(g)(x), "hessian": lambda: fn.hessian(f)(x),
            "hvp": lambda: fn.jvp(fn.grad(f), (x,), (v,))[1],
            "jvp": lambda: fn.jvp(g, (x,), (v,))[1],
            "per_sample": lambda: fn.vmap(fn.grad(loss, argnums=(0, 1)),
                                          in_dims=(None, None, 0, 0))(w1, w2, batch, labels)}


def autograd_cases():
    import autograd
    import autograd.numpy as anp
    A, x, v, (w1, w2), batch, labels = data()
    g = lambda x: anp.tanh(A @ x)                    # noqa: E731
    f = lambda x: anp.sum(anp.tanh(A @ x) ** 2)      # noqa: E731

    def fwd_chain():
        def chain(y):
            x0 = y
            for i in range(CHAIN_OPS):
                k = chain_cycle(i)
                y = y * 1.0001 if k == 0 else anp.sin(y) if k == 1 else y + x0 if k == 2 \
                    else anp.tanh(y)
            return y
        return autograd.make_jvp(chain)(x[:CHAIN_SIZE])(v[:CHAIN_SIZE])[1]
    return {"jacobian": lambda: autograd.jacobian(g)(x), "hessian": lambda: autograd.hessian(f)(x),
            "hvp": lambda: autograd.hessian_vector_product(f)(x, v),
            "jvp": lambda: autograd.make_jvp(g)(x)(v)[1], "fwd_chain": fwd_chain}


def cases_for(framework, threads):
    if framework == "numpy":
        return numpy_cases()
    if framework == "python-dual":
        return dual_floor_cases()
    if framework.startswith("chainrule"):
        return chainrule_cases(framework.endswith("-func"))
    if framework.startswith("torch"):
        return torch_cases(framework == "torch-func", threads)
    return autograd_cases()


# --- measuring -------------------------------------------------------------------------
def worker(framework, workload, args):
    clock = CLOCK[args.clock]
    case = cases_for(framework, args.threads).get(workload)
    if case is None:
        print(json.dumps(None))
        return
    for _ in range(2):
        case()
    times = []
    for _ in range(args.reps):
        gc.collect()
        t0 = clock()
        case()
        times.append(clock() - t0)
    scale = 1e6 / CHAIN_OPS if workload == "fwd_chain" else 1e3
    print(json.dumps(median(times) * scale))


def run_worker(framework, workload, args):
    env = dict(os.environ)
    env.update(thread_env(args.threads))
    env.pop("CHAINRULE_ENGINE", None)
    if framework.startswith("chainrule-"):
        env["CHAINRULE_ENGINE"] = framework.split("-")[1]
    cmd = [sys.executable, os.path.abspath(__file__), "--worker", framework, workload,
           "--threads", str(args.threads), "--clock", args.clock, "--reps", str(args.reps)]
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True)
    if proc.returncode != 0:
        return None, (proc.stderr.strip().splitlines() or ["exit %d" % proc.returncode])[-1]
    return json.loads(proc.stdout.strip().splitlines()[-1]), None


def print_table(results, frameworks, workloads, ref):
    head = "".join(f"{w + ' ' + UNITS.get(w, 'ms'):>20}" for w in workloads)
    print(f"{'framework':<24}{head}")
    for fw in frameworks:
        print(f"{fw:<24}" + "".join(f"{_fmt(results.get((fw, w))):>20}" for w in workloads))
    print(f"\nRatios to {ref}")
    print(f"{'framework':<24}{head}")
    for fw in frameworks:
        cells = []
        for w in workloads:
            a, b = results.get((fw, w)), results.get((ref, w))
            cells.append(_fmt(a / b if a is not None and b else None))
        print(f"{fw:<24}" + "".join(f"{c:>20}" for c in cells))


def _fmt(value):
    return "-" if value is None else f"{value:.3f}"


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--worker", nargs=2, metavar=("FRAMEWORK", "WORKLOAD"), help=argparse.SUPPRESS)
    p.add_argument("--only", help="comma-separated frameworks (default: all)")
    p.add_argument("--workloads", default=",".join(WORKLOADS), help="comma-separated")
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--clock", choices=sorted(CLOCK), default="cpu")
    p.add_argument("--reps", type=int, default=20)
    p.add_argument("--quick", action="store_true", help="few repetitions")
    p.add_argument("--json", help="also write the raw results here")
    args = p.parse_args(argv)
    if args.worker:
        return worker(*args.worker, args)
    if args.quick:
        args.reps = 2
    frameworks = args.only.split(",") if args.only else FRAMEWORKS
    workloads = args.workloads.split(",")
    results = {}
    for fw in frameworks:
        for w in workloads:
            value, error = run_worker(fw, w, args)
            results[(fw, w)] = value
            if error:
                print(f"{fw} {w}: failed ({error})", file=sys.stderr)
                if fw.startswith(("chainrule", "numpy")):
                    raise SystemExit(f"{fw} {w} failed: {error}")
    print_table(results, frameworks, workloads, "torch" if "torch" in frameworks else
                frameworks[0])
    if args.json:
        with open(args.json, "w") as f:
            json.dump({f"{k[0]}/{k[1]}": v for k, v in results.items()}, f, indent=1)


if __name__ == "__main__":
    main()
