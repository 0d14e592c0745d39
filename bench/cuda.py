"""chainrule on the GPU against PyTorch CUDA eager: the issue's three targets.

    python bench/cuda.py                   # on a GPU machine (cuda/gpu/run_gpu_tests.sh)
    python bench/cuda.py --smoke           # tiny sizes: checks the script runs, e.g. on
                                           # the host build (CHAINRULE_CUDA_EMULATE=1)
    python bench/cuda.py --only chainrule  # without PyTorch

Workloads (one process; the frameworks alternate in rounds, each number the median
over rounds of the median over repetitions; wall clock around a device synchronize):
  mlp      one SGD training step of a float32 4096-4096-4096-10 MLP (ReLU, cross
           entropy), batch 1024: milliseconds per step (target: at most 1.3x PyTorch)
  ew       ``a * b + c`` on 2^26 float32 elements, as effective bandwidth (bytes the
           two kernels read and write / time) next to a device-to-device copy's
           (target: at least 80% of the copy's)
  chain    the peers bench's 1,000-op chain (mul by a scalar, sin, add the leaf, tanh)
           on a 16-element float64 tensor, forward with recording + backward:
           microseconds per op (target: at most PyTorch's); also the forward and the
           backward apart (on the host build, CHAINRULE_CUDA_EMULATE=1, where kernels of
           16 elements cost next to nothing: the host-side overhead per op)
"""
import argparse
import json
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from peers import CHAIN_OPS, CHAIN_SIZE, chain_cycle  # noqa: E402

SIZES = {"full": dict(mlp=(4096, 4096, 4096, 10), batch=1024, ew=1 << 26, chain=CHAIN_OPS,
                      reps=10, rounds=5),
         "smoke": dict(mlp=(64, 32, 32, 10), batch=16, ew=1 << 12, chain=40, reps=2,
                       rounds=1)}


def load(framework):
    """(module, functional module) of a framework by name."""
    if framework == "torch":
        import torch
        import torch.nn.functional as F
        return torch, F
    import chainrule
    import chainrule.nn.functional as F
    return chainrule, F


def timed(lib, fn, reps):
    """Median seconds of ``fn()`` over ``reps`` runs, synchronized on both sides."""
    fn()
    lib.cuda.synchronize()
    times = []
    for _ in range(reps):
        start = time.perf_counter()
        fn()
        lib.cuda.synchronize()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def mlp_step(lib, F, sizes, batch):
    """One SGD step of the MLP as a closure over its parameters and data."""
    lib.manual_seed(0)
    params = [(lib.randn(o, i, device="cuda") * (1.0 / i ** 0.5), lib.zeros(o, device="cuda"))
              for i, o in zip(sizes[:-1], sizes[1:])]
    flat = [p.requires_grad_() for pair in params for p in pair]
    x = lib.randn(batch, sizes[0], device="cuda")
    labels = lib.randint(0, sizes[-1], (batch,), device="cuda")

    def step():
        h = x
        for n, (w, b) in enumerate(params):
            h = F.linear(h, w, b)
            h = F.relu(h) if n < len(params) - 1 else h
        F.cross_entropy(h, labels).backward()
        with lib.no_grad():
            for p in flat:
                p -= 0.01 * p.grad
                p.grad = None
    return step


def elementwise(lib, n):
    """(a*b+c closure, copy closure, bytes each moves)."""
    a, b, c = (lib.rand(n, device="cuda") for _ in range(3))
    dst = lib.empty(n, device="cuda")
    return (lambda: a * b + c), (lambda: dst.copy_(a)), 6 * 4 * n, 2 * 4 * n


def chain_forward(lib, ops):
    """(leaf, closure running the peers' chain cycle forward with recording)."""
    x = lib.linspace(0.1, 1.0, CHAIN_SIZE, dtype=lib.float64, device="cuda").requires_grad_()

    def forward():
        y = x
        for i in range(ops):
            k = chain_cycle(i)
            y = y * 1.0001 if k == 0 else y.sin() if k == 1 else y + x if k == 2 else y.tanh()
        return y
    return x, forward


def chain(lib, ops):
    """Forward with recording + backward through the peers' chain cycle."""
    x, forward = chain_forward(lib, ops)

    def run():
        forward().sum().backward()
        x.grad = None
    return run


def chain_split(lib, ops, reps):
    """Microseconds per op of the chain's forward and of its backward, apart (medians
    over ``reps``): on the host build (CHAINRULE_CUDA_EMULATE=1) the kernels of 16
    elements cost next to nothing, so these are the host-side costs per op."""
    x, forward = chain_forward(lib, ops)
    fwd, bwd = [], []
    for _ in range(reps + 1):
        start = time.perf_counter()
        y = forward()
        lib.cuda.synchronize()
        middle = time.perf_counter()
        y.sum().backward()
        lib.cuda.synchronize()
        fwd.append(middle - start)
        bwd.append(time.perf_counter() - middle)
        x.grad = None
    return 1e6 * statistics.median(fwd[1:]) / ops, 1e6 * statistics.median(bwd[1:]) / ops


def measure(framework, size):
    lib, F = load(framework)
    reps = size["reps"]
    out = {"mlp_ms": 1e3 * timed(lib, mlp_step(lib, F, size["mlp"], size["batch"]), reps)}
    ew, copy, ew_bytes, copy_bytes = elementwise(lib, size["ew"])
    out["ew_GBps"] = ew_bytes / timed(lib, ew, reps) / 1e9
    out["copy_GBps"] = copy_bytes / timed(lib, copy, reps) / 1e9
    out["chain_us_per_op"] = 1e6 * timed(lib, chain(lib, size["chain"]), reps) / size["chain"]
    out["chain_fwd_us"], out["chain_bwd_us"] = chain_split(lib, size["chain"], reps)
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--smoke", action="store_true", help="tiny sizes, one round")
    parser.add_argument("--only", default="chainrule,torch", help="frameworks, comma separated")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    args = parser.parse_args()
    size = SIZES["smoke" if args.smoke else "full"]
    frameworks = args.only.split(",")
    rounds = {f: [] for f in frameworks}
    for _ in range(size["rounds"]):
        for f in frameworks:
            rounds[f].append(measure(f, size))
    result = {f: {k: statistics.median(r[k] for r in rs) for k in rs[0]}
              for f, rs in rounds.items()}
    print(json.dumps(result) if args.json else table(result))


def emulated():
    import chainrule_cuda._lib
    return chainrule_cuda._lib.emulation_requested()


def table(result):
    keys = ["mlp_ms", "ew_GBps", "copy_GBps", "chain_us_per_op"]
    lines = [f"{'framework':<12}" + "".join(f"{k:>17}" for k in keys)]
    for f, r in result.items():
        lines.append(f"{f:<12}" + "".join(f"{r[k]:>17.3f}" for k in keys))
    if "chainrule" in result:
        cr = result["chainrule"]
        lines.append(f"ew / copy bandwidth (chainrule): {cr['ew_GBps'] / cr['copy_GBps']:.2f}"
                     " (target >= 0.80)")
    for f, r in result.items():
        lines.append(f"chain per op ({f}): forward {r['chain_fwd_us']:.1f} us, backward "
                     f"{r['chain_bwd_us']:.1f} us" + (" (host build: the host-side cost per op)"
                                                     if f == "chainrule" and emulated() else ""))
    if "chainrule" in result:
        cr = result["chainrule"]
        if "torch" in result:
            t = result["torch"]
            lines.append(f"mlp ratio vs torch: {cr['mlp_ms'] / t['mlp_ms']:.2f} (target <= 1.3); "
                         f"chain ratio vs torch: {cr['chain_us_per_op'] / t['chain_us_per_op']:.2f}"
                         " (target <= 1.0)")
    return "\n".join(lines)


if __name__ == "__main__":
    main()
