"""chainrule against its peers: the same workloads, one process per framework.

    ./bazelw run //bench:peers                 # the full table (a few minutes)
    ./bazelw run //bench:peers -- --quick      # fewer repetitions, smaller memory case
    ./bazelw run //bench:peers -- --only numpy,torch --workloads chain

Frameworks: hand-written NumPy, chainrule with the Python engine and with the C++
engine, PyTorch (CPU), HIPS autograd, MyGrad, and JAX (eager and jit) where it is
installed (skipped otherwise, like any framework that does not import). Each runs in
a fresh subprocess with the same thread count (OMP/MKL/OpenBLAS/torch/XLA; default
1), so no framework inherits another's warm caches, allocator or thread pool.

Workloads:
  chain   1,000 elementwise ops (a cycle of mul-by-scalar, sin, add-leaf, tanh) on a
          16-element float64 tensor: microseconds per op for the forward with
          recording, the backward, their total, and the forward with grad disabled.
  mlp     one training step of a float32 784-512-512-10 MLP (ReLU, cross entropy),
          batch 128, plain SGD: milliseconds per step.
  memory  peak RSS growth (MB) over forward + backward through a 200-layer chain of
          sin on a 1e6-element float64 tensor (its own process per framework).

Every number is the median over repetitions, timed with the process's CPU time by
default (Note [clock]), and the median over interleaved rounds of that (Note
[rounds]); ratios are against PyTorch and against hand-written NumPy. Internal use:
--worker FRAMEWORK WORKLOAD runs one measurement and prints one JSON line.
"""
import argparse
import gc
import json
import os
import resource
import statistics
import subprocess
import sys
import time

FRAMEWORKS = ["numpy", "chainrule-python", "chainrule-cpp", "torch", "autograd", "mygrad",
              "jax-eager", "jax-jit"]
WORKLOADS = ["chain", "mlp", "memory"]
CHAIN_OPS = 1000
CHAIN_SIZE = 16
MLP_SIZES = (784, 512, 512, 10)
MLP_BATCH = 128
LR = 0.01


def thread_env(threads):
    n = str(threads)
    return {"OMP_NUM_THREADS": n, "MKL_NUM_THREADS": n, "OPENBLAS_NUM_THREADS": n,
            "NUMEXPR_NUM_THREADS": n, "VECLIB_MAXIMUM_THREADS": n,
            "XLA_FLAGS": "--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=" + n,
            "JAX_PLATFORMS": "cpu"}


def median(values):
    return statistics.median(values)


# Note [clock]
#     The default clock is the process's CPU time (user + system, all threads), not
#     wall time: on a shared machine a process that is descheduled for a while does
#     not get charged for it, so runs are reproducible. With one thread per framework
#     (the default) the two agree on an idle machine; --clock wall uses wall time.
CLOCK = {"cpu": time.process_time, "wall": time.perf_counter}
clock = CLOCK["cpu"]


def timed(fn):
    t0 = clock()
    out = fn()
    return clock() - t0, out


# --- per-framework implementations ----------------------------------------------------
# Each framework module-like class offers:
#   chain_record(x) -> state      forward with recording (returns what backward needs)
#   chain_backward(state)         backward (gradient w.r.t. the leaf)
#   chain_nograd(x)               forward without recording
#   mlp_setup(params, X, y) -> step     one SGD training step
#   memory(x, layers)             forward + backward through `layers` sins

def chain_cycle(i):
    return i % 4


class NumpyImpl:
    """Hand-written NumPy: the forward keeps what the backward needs; the backward
    applies the chain rule by hand."""

    def __init__(self):
        import numpy as np
        self.np = np

    def leaf(self, arr):
        return arr

    def chain_record(self, x):
        np = self.np
        saved, y = [], x
        for i in range(CHAIN_OPS):
            k = chain_cycle(i)
            if k == 0:
                y = y * 1.0001
            elif k == 1:
                saved.append(y)
                y = np.sin(y)
            elif k == 2:
                y = y + x
            else:
                y = np.tanh(y)
                saved.append(y)
        return y, saved

    def chain_backward(self, state):
        np = self.np
        y, saved = state
        g = np.ones_like(y)
        gx = np.zeros_like(y)
        for i in reversed(range(CHAIN_OPS)):
            k = chain_cycle(i)
            if k == 0:
                g = g * 1.0001
            elif k == 1:
                g = g * np.cos(saved.pop())
            elif k == 2:
                gx = gx + g
            else:
                t = saved.pop()
                g = g * (1 - t * t)
        return gx + g

    def chain_nograd(self, x):
        np = self.np
        y = x
        for i in range(CHAIN_OPS):
            k = chain_cycle(i)
            y = y * 1.0001 if k == 0 else np.sin(y) if k == 1 else y + x if k == 2 \
                else np.tanh(y)
        return y

    def mlp_setup(self, params, X, labels):
        np = self.np
        onehot = np.zeros((X.shape[0], MLP_SIZES[-1]), np.float32)
        onehot[np.arange(X.shape[0]), labels] = 1

        def step():
            (w1, b1), (w2, b2), (w3, b3) = params
            h1 = X @ w1.T + b1
            a1 = np.maximum(h1, 0)
            h2 = a1 @ w2.T + b2
            a2 = np.maximum(h2, 0)
            logits = a2 @ w3.T + b3
            shifted = logits - logits.max(axis=1, keepdims=True)
            exp = np.exp(shifted)
            sumexp = exp.sum(axis=1, keepdims=True)
            loss = float(np.mean(np.log(sumexp)[:, 0] - shifted[onehot > 0]))
            d3 = (exp / sumexp - onehot) / X.shape[0]
            dw3, db3 = d3.T @ a2, d3.sum(axis=0)
            d2 = (d3 @ w3) * (h2 > 0)
            dw2, db2 = d2.T @ a1, d2.sum(axis=0)
            d1 = (d2 @ w2) * (h1 > 0)
            dw1, db1 = d1.T @ X, d1.sum(axis=0)
            for p, g in ((w1, dw1), (b1, db1), (w2, dw2), (b2, db2), (w3, dw3), (b3, db3)):
                p -= LR * g
            return loss
        return step

    def memory(self, x, layers):
        np = self.np
        saved, y = [], x
        for _ in range(layers):
            saved.append(y)
            y = np.sin(y)
        del y
        g = np.ones_like(x)
        while saved:
            g = g * np.cos(saved.pop())
        return g


class ChainruleImpl:
    def __init__(self):
        import chainrule as cr
        import chainrule.nn.functional as F
        self.cr, self.F = cr, F

    def leaf(self, arr):
        return self.cr.tensor(arr, requires_grad=True)

    def _chain(self, x):
        y = x
        for i in range(CHAIN_OPS):
            k = chain_cycle(i)
            y = y * 1.0001 if k == 0 else y.sin() if k == 1 else y + x if k == 2 else y.tanh()
        return y

    def chain_record(self, x):
        x.grad = None
        return self._chain(x)

    def chain_backward(self, y):
        y.sum().backward()

    def chain_nograd(self, x):
        with self.cr.no_grad():
            return self._chain(x)

    def mlp_setup(self, params, X, labels):
        cr, F = self.cr, self.F
        ps = [(cr.tensor(w, requires_grad=True), cr.tensor(b, requires_grad=True))
              for w, b in params]
        flat = [p for pair in ps for p in pair]
        X, labels = cr.from_numpy(X), cr.from_numpy(labels)

        def step():
            (w1, b1), (w2, b2), (w3, b3) = ps
            h = F.relu(F.linear(X, w1, b1))
            h = F.relu(F.linear(h, w2, b2))
            loss = F.cross_entropy(F.linear(h, w3, b3), labels)
            loss.backward()
            with cr.no_grad():
                for p in flat:
                    p -= LR * p.grad
                    p.grad = None
            return loss.item()
        return step

    def memory(self, x, layers):
        x = self.cr.from_numpy(x).requires_grad_(True)
        y = x
        for _ in range(layers):
            y = y.sin()
        y.backward(self.cr.ones_like(y))
        return x.grad


class TorchImpl(ChainruleImpl):
    def __init__(self, threads):
        import torch
        import torch.nn.functional as F
        torch.set_num_threads(threads)
        self.cr, self.F = torch, F

    def leaf(self, arr):
        return self.cr.tensor(arr, requires_grad=True)


class AutogradImpl:
    """HIPS autograd: make_vjp records the forward and returns the backward."""

    def __init__(self):
        import autograd.numpy as anp
        from autograd import grad
        from autograd.core import make_vjp
        self.anp, self.make_vjp, self.grad = anp, make_vjp, grad

    def leaf(self, arr):
        return arr

    def _chain(self, x):
        anp, y = self.anp, x
        for i in range(CHAIN_OPS):
            k = chain_cycle(i)
            y = y * 1.0001 if k == 0 else anp.sin(y) if k == 1 else y + x if k == 2 \
                else anp.tanh(y)
        return y

    def chain_record(self, x):
        return self.make_vjp(self._chain, x)

    def chain_backward(self, state):
        vjp, ans = state
        return vjp(self.anp.ones_like(ans))

    def chain_nograd(self, x):
        return self._chain(x)

    def mlp_setup(self, params, X, labels):
        anp = self.anp
        onehot = anp.zeros((X.shape[0], MLP_SIZES[-1]), anp.float32)
        onehot[anp.arange(X.shape[0]), labels] = 1
        flat = [p for pair in params for p in pair]

        def loss_fn(ps):
            w1, b1, w2, b2, w3, b3 = ps
            h = anp.maximum(anp.dot(X, w1.T) + b1, 0)
            h = anp.maximum(anp.dot(h, w2.T) + b2, 0)
            logits = anp.dot(h, w3.T) + b3
            shifted = logits - anp.max(logits, axis=1, keepdims=True)
            logp = shifted - anp.log(anp.sum(anp.exp(shifted), axis=1, keepdims=True))
            return -anp.sum(logp * onehot) / X.shape[0]

        grad_fn = self.grad(loss_fn)

        def step():
            grads = grad_fn(flat)
            for p, g in zip(flat, grads):
                p -= LR * g
            return 0.0
        return step

    def memory(self, x, layers):
        anp = self.anp

        def f(v):
            for _ in range(layers):
                v = anp.sin(v)
            return v
        vjp, ans = self.make_vjp(f, x)
        del ans
        return vjp(anp.ones_like(x))


class MygradImpl:
    def __init__(self):
        import mygrad as mg
        from mygrad.nnet.activations import relu
        from mygrad.nnet.losses import softmax_crossentropy
        self.mg, self.relu, self.xent = mg, relu, softmax_crossentropy

    def leaf(self, arr):
        return self.mg.tensor(arr)

    def _chain(self, x):
        mg, y = self.mg, x
        for i in range(CHAIN_OPS):
            k = chain_cycle(i)
            y = y * 1.0001 if k == 0 else mg.sin(y) if k == 1 else y + x if k == 2 \
                else mg.tanh(y)
        return y

    def chain_record(self, x):
        return self._chain(x)

    def chain_backward(self, y):
        y.backward(self.mg.ones_like(y).data)

    def chain_nograd(self, x):
        with self.mg.no_autodiff:
            return self._chain(x)

    def mlp_setup(self, params, X, labels):
        mg = self.mg
        ps = [(mg.tensor(w), mg.tensor(b)) for w, b in params]

        def step():
            (w1, b1), (w2, b2), (w3, b3) = ps
            h = self.relu(mg.matmul(X, w1.T) + b1)
            h = self.relu(mg.matmul(h, w2.T) + b2)
            loss = self.xent(mg.matmul(h, w3.T) + b3, labels)
            loss.backward()
            for pair in ps:
                for p in pair:
                    p.data -= LR * p.grad
            return float(loss.item())
        return step

    def memory(self, x, layers):
        mg = self.mg
        t = mg.tensor(x)
        y = t
        for _ in range(layers):
            y = mg.sin(y)
        y.backward(mg.ones_like(y).data)
        return t.grad


class JaxImpl:
    def __init__(self, jit):
        import jax
        import jax.numpy as jnp
        jax.config.update("jax_enable_x64", True)
        self.jax, self.jnp, self.jit = jax, jnp, jit
        self._nograd = jax.jit(self._chain) if jit else self._chain
        # jit: the recorded forward is one compiled function returning the output and
        # the backward (a pytree of residuals).
        self._record = jax.jit(lambda v: jax.vjp(self._chain, v)) if jit else \
            (lambda v: jax.vjp(self._chain, v))

    def leaf(self, arr):
        return self.jnp.asarray(arr)

    def _chain(self, x):
        jnp, y = self.jnp, x
        for i in range(CHAIN_OPS):
            k = chain_cycle(i)
            y = y * 1.0001 if k == 0 else jnp.sin(y) if k == 1 else y + x if k == 2 \
                else jnp.tanh(y)
        return y

    def _ready(self, v):
        return self.jax.block_until_ready(v)

    def chain_record(self, x):
        out, vjp = self._record(x)
        return self._ready(out), vjp

    def chain_backward(self, state):
        out, vjp = state
        return self._ready(vjp(self.jnp.ones_like(out)))

    def chain_nograd(self, x):
        return self._ready(self._nograd(x))

    def mlp_setup(self, params, X, labels):
        jax, jnp = self.jax, self.jnp
        ps = [(jnp.asarray(w), jnp.asarray(b)) for w, b in params]
        X, labels = jnp.asarray(X), jnp.asarray(labels)

        def loss_fn(ps):
            (w1, b1), (w2, b2), (w3, b3) = ps
            h = jax.nn.relu(X @ w1.T + b1)
            h = jax.nn.relu(h @ w2.T + b2)
            logp = jax.nn.log_softmax(h @ w3.T + b3)
            return -jnp.mean(jnp.take_along_axis(logp, labels[:, None], axis=1))

        def update(ps):
            grads = jax.grad(loss_fn)(ps)
            return jax.tree_util.tree_map(lambda p, g: p - LR * g, ps, grads)
        update = jax.jit(update) if self.jit else update
        state = [ps]

        def step():
            state[0] = self._ready(update(state[0]))
            return 0.0
        return step

    def memory(self, x, layers):
        jax, jnp = self.jax, self.jnp

        def f(v):
            for _ in range(layers):
                v = jnp.sin(v)
            return v
        f = jax.jit(f) if self.jit else f
        out, vjp = jax.vjp(f, jnp.asarray(x))
        return self._ready(vjp(jnp.ones_like(out)))


def make_impl(framework, threads):
    if framework == "numpy":
        return NumpyImpl()
    if framework.startswith("chainrule"):
        return ChainruleImpl()
    if framework == "torch":
        return TorchImpl(threads)
    if framework == "autograd":
        return AutogradImpl()
    if framework == "mygrad":
        return MygradImpl()
    if framework.startswith("jax"):
        return JaxImpl(jit=framework == "jax-jit")
    raise ValueError(framework)


# --- workloads (run inside the worker process) ---------------------------------------
def run_chain(impl, reps):
    import numpy as np
    x = impl.leaf(np.random.default_rng(0).standard_normal(CHAIN_SIZE) * 0.5)
    for _ in range(3):                                  # warm-up (and jit compiles)
        impl.chain_backward(impl.chain_record(x))
        impl.chain_nograd(x)
    fwd, bwd, total, nograd = [], [], [], []
    for _ in range(reps):
        gc.collect()
        tf, state = timed(lambda: impl.chain_record(x))
        tb, _ = timed(lambda: impl.chain_backward(state))
        del state
        gc.collect()
        tn, _ = timed(lambda: impl.chain_nograd(x))
        fwd.append(tf)
        bwd.append(tb)
        total.append(tf + tb)
        nograd.append(tn)
    per_op = 1e6 / CHAIN_OPS
    return {"fwd_us": median(fwd) * per_op, "bwd_us": median(bwd) * per_op,
            "total_us": median(total) * per_op, "nograd_us": median(nograd) * per_op}


def mlp_params():
    import numpy as np
    rng = np.random.default_rng(0)
    params = []
    for fan_in, fan_out in zip(MLP_SIZES[:-1], MLP_SIZES[1:]):
        bound = 1 / np.sqrt(fan_in)
        params.append((rng.uniform(-bound, bound, (fan_out, fan_in)).astype(np.float32),
                       rng.uniform(-bound, bound, fan_out).astype(np.float32)))
    X = rng.standard_normal((MLP_BATCH, MLP_SIZES[0])).astype(np.float32)
    labels = rng.integers(0, MLP_SIZES[-1], MLP_BATCH).astype(np.int64)
    return params, X, labels


def run_mlp(impl, reps):
    params, X, labels = mlp_params()
    step = impl.mlp_setup(params, X, labels)
    for _ in range(5):
        step()
    times = []
    for _ in range(reps):
        t, _ = timed(step)
        times.append(t)
    return {"step_ms": median(times) * 1e3}


def current_rss_mb():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def peak_rss_mb():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024   # KiB on Linux


def run_memory(impl, size, layers):
    import numpy as np
    impl.memory(np.ones(1000), 3)                        # import and warm everything
    gc.collect()
    x = np.random.default_rng(0).standard_normal(size)
    base = current_rss_mb()
    if peak_rss_mb() > base + 1:
        base = peak_rss_mb()        # an earlier peak would hide part of this one
    grad = impl.memory(x, layers)
    peak = peak_rss_mb()
    del grad
    return {"peak_mb": peak - base, "array_mb": x.nbytes / 2**20}


def worker(framework, workload, args):
    global clock
    clock = CLOCK[args.clock]
    impl = make_impl(framework, args.threads)
    if workload == "chain":
        result = run_chain(impl, args.chain_reps)
    elif workload == "mlp":
        result = run_mlp(impl, args.mlp_reps)
    else:
        result = run_memory(impl, args.memory_size, args.memory_layers)
    print(json.dumps(result))


# --- driver ------------------------------------------------------------------------------
def run_worker(framework, workload, args):
    env = dict(os.environ)
    env.update(thread_env(args.threads))
    env.pop("CHAINRULE_ENGINE", None)
    if framework.startswith("chainrule-"):
        env["CHAINRULE_ENGINE"] = framework.split("-", 1)[1]
    cmd = [sys.executable, os.path.abspath(__file__), "--worker", framework, workload,
           "--threads", str(args.threads), "--clock", args.clock, "--chain-reps", str(args.chain_reps),
           "--mlp-reps", str(args.mlp_reps), "--memory-size", str(args.memory_size),
           "--memory-layers", str(args.memory_layers)]
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True)
    if proc.returncode != 0:
        last = (proc.stderr.strip().splitlines() or ["exit %d" % proc.returncode])[-1]
        return None, last
    return json.loads(proc.stdout.strip().splitlines()[-1]), None


def fmt(value, digits=2):
    return "-" if value is None else f"{value:.{digits}f}"


def ratio(value, ref):
    return None if value is None or not ref else value / ref


COLUMNS = [("chain", "fwd_us", "chain fwd us/op"), ("chain", "bwd_us", "chain bwd us/op"),
           ("chain", "total_us", "chain total us/op"), ("chain", "nograd_us", "no-grad us/op"),
           ("mlp", "step_ms", "MLP step ms"), ("memory", "peak_mb", "deep-chain peak MB")]


def print_table(results, frameworks, workloads, out=sys.stdout):
    cols = [c for c in COLUMNS if c[0] in workloads]
    names = [c[2] for c in cols]
    width = max(len(f) for f in frameworks) + 2

    def row(label, cells):
        out.write(label.ljust(width) + "".join(c.rjust(len(n) + 3) for c, n in
                                               zip(cells, names)) + "\n")

    def value(fw, col):
        r = results.get((fw, col[0]))
        return None if r is None else r[col[1]]

    out.write("\nMedians\n")
    row("framework", names)
    for fw in frameworks:
        row(fw, [fmt(value(fw, c)) for c in cols])
    for ref in ("torch", "numpy"):
        out.write(f"\nRatios to {ref}\n")
        row("framework", names)
        for fw in frameworks:
            row(fw, [fmt(ratio(value(fw, c), value(ref, c))) for c in cols])


def print_targets(results, out=sys.stdout):
    def get(fw, workload, key):
        r = results.get((fw, workload))
        return None if r is None else r[key]
    targets = [("chain fwd+bwd per op vs PyTorch", "chain", "total_us", "torch", 0.5),
               ("chain no-grad forward per op vs PyTorch", "chain", "nograd_us", "torch", 1.0),
               ("MLP step vs hand-written NumPy", "mlp", "step_ms", "numpy", 1.05),
               ("deep-chain peak memory vs hand-written NumPy", "memory", "peak_mb", "numpy",
                1.05)]
    out.write("\nTargets (chainrule-cpp)\n")
    for label, workload, key, ref, limit in targets:
        r = ratio(get("chainrule-cpp", workload, key), get(ref, workload, key))
        verdict = "-" if r is None else ("met" if r <= limit else "NOT met")
        out.write(f"  {label:<48} {fmt(r)}x  (target <= {limit}x)  {verdict}\n")


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--worker", nargs=2, metavar=("FRAMEWORK", "WORKLOAD"), help=argparse.SUPPRESS)
    p.add_argument("--only", help="comma-separated frameworks (default: all)")
    p.add_argument("--workloads", default=",".join(WORKLOADS), help="comma-separated")
    p.add_argument("--threads", type=int, default=1, help="threads for every framework")
    p.add_argument("--clock", choices=sorted(CLOCK), default="cpu",
                   help="cpu: process CPU time (default, Note [clock]); wall: wall time")
    p.add_argument("--chain-reps", type=int, default=30)
    p.add_argument("--mlp-reps", type=int, default=30)
    p.add_argument("--memory-size", type=int, default=1_000_000)
    p.add_argument("--memory-layers", type=int, default=200)
    p.add_argument("--rounds", type=int, default=3,
                   help="interleaved rounds of the timed workloads (Note [rounds])")
    p.add_argument("--quick", action="store_true", help="few repetitions, small memory case")
    p.add_argument("--json", help="also write the raw results here")
    args = p.parse_args(argv)
    if args.quick:
        args.chain_reps, args.mlp_reps, args.rounds = 3, 3, 1
        args.memory_size, args.memory_layers = 100_000, 20
    return args


# Note [rounds]
#     The machines are shared: a framework measured in a noisy minute looks slower than
#     one measured in a quiet minute, and the ratios between frameworks moved by ±10%
#     from run to run. So the timed workloads run in rounds (`--rounds`, default 3):
#     every framework once per round, interleaved, and each number is the median over
#     the rounds of the per-round medians. Every framework is measured the same way.
def run_workload(workload, frameworks, args, skipped, failed):
    rounds = 1 if workload == "memory" else args.rounds
    per_round = {}
    for _ in range(rounds):
        for fw in frameworks:
            if fw in skipped or (fw, workload) in failed:
                continue
            t0 = time.perf_counter()
            result, error = run_worker(fw, workload, args)
            if result is None:
                ours = fw == "numpy" or fw.startswith("chainrule")
                print(f"  {fw:<17} {workload:<7} {'FAILED' if ours else 'skipped'}: {error}",
                      flush=True)
                if ours:
                    failed.append((fw, workload))    # a peer may be missing; we may not
                elif "ModuleNotFoundError" in error or "ImportError" in error:
                    skipped[fw] = error
                continue
            per_round.setdefault(fw, []).append(result)
            print(f"  {fw:<17} {workload:<7} {json.dumps(result)}  "
                  f"({time.perf_counter() - t0:.0f} s)", flush=True)
    return {(fw, workload): {key: median([r[key] for r in runs]) for key in runs[0]}
            for fw, runs in per_round.items() if (fw, workload) not in failed}


def main(argv=None):
    args = parse_args(sys.argv[1:] if argv is None else argv)
    if args.worker:
        worker(args.worker[0], args.worker[1], args)
        return 0
    frameworks = args.only.split(",") if args.only else FRAMEWORKS
    workloads = args.workloads.split(",")
    print(f"clock: {args.clock} time; threads per framework: {args.threads}; chain: {CHAIN_OPS} ops on {CHAIN_SIZE} "
          f"float64; MLP: {'-'.join(map(str, MLP_SIZES))} float32, batch {MLP_BATCH}; memory: "
          f"{args.memory_layers} layers of {args.memory_size:,} float64", flush=True)
    results, skipped, failed = {}, {}, []
    for workload in workloads:
        results.update(run_workload(workload, frameworks, args, skipped, failed))
    shown = [fw for fw in frameworks if fw not in skipped]
    print_table(results, shown, workloads)
    print_targets(results)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({f"{k[0]}/{k[1]}": v for k, v in results.items()}, f, indent=1)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
