"""chainrule.nn/optim against PyTorch and hand-written NumPy: a CNN training step, and
the memory that activation checkpointing saves. Same method as peers.py (one
process per framework and workload, equal threads, CPU clock, medians over
repetitions and interleaved rounds; see README.md here).

    ./bazelw run //bench:nn_train                   # both workloads
    ./bazelw run //bench:nn_train -- --quick        # smoke run
    ./bazelw run //bench:nn_train -- --workloads checkpoint --only chainrule-cpp,torch

Workloads:
  cnn         one training step (forward, backward, SGD update, zero_grad) of a float32
              CNN on a batch of 64 1x28x28 images: Conv2d(1, 16, 3, padding=1), ReLU,
              MaxPool2d(2), Conv2d(16, 32, 3, padding=1), ReLU, MaxPool2d(2), Flatten,
              Linear(1568, 10), cross entropy. chainrule and torch use their nn modules
              and optim.SGD; NumPy is hand-written (im2col convolution, window max
              pooling and their backward). All start from the same weights and reach
              the same loss: milliseconds per step.
  checkpoint  peak RSS growth (MB) and time of forward + backward through --ckpt-layers
              layers of sin on a --ckpt-size float64 tensor, as --ckpt-segments
              segments: plain, checkpointed per segment (use_reentrant=False), and
              reentrant (use_reentrant=True). Each mode in its own process.
"""
import argparse
import gc
import json
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import peers  # noqa: E402  (the shared method: threads, clock, medians, RSS)

FRAMEWORKS = ["numpy", "chainrule-python", "chainrule-cpp", "torch"]
WORKLOADS = ["cnn", "checkpoint"]
CKPT_MODES = ["plain", "checkpoint", "checkpoint-reentrant"]
BATCH, CHANNELS, SIDE, CLASSES = 64, (1, 16, 32), 28, 10
LR = 0.01


# --- the CNN's data and initial weights (shared by every framework) -------------------
def cnn_data():
    import numpy as np
    rng = np.random.default_rng(0)
    c0, c1, c2 = CHANNELS
    feat = c2 * (SIDE // 4) ** 2

    def uniform(bound, *shape):
        return rng.uniform(-bound, bound, shape).astype(np.float32)

    weights = {"w1": uniform(1 / 3, c1, c0, 3, 3), "b1": uniform(1 / 3, c1),
               "w2": uniform(1 / (3 * c1 ** 0.5), c2, c1, 3, 3), "b2": uniform(0.1, c2),
               "w3": uniform(1 / feat ** 0.5, CLASSES, feat), "b3": uniform(0.05, CLASSES)}
    x = rng.standard_normal((BATCH, c0, SIDE, SIDE)).astype(np.float32)
    labels = rng.integers(0, CLASSES, BATCH).astype(np.int64)
    return weights, x, labels


class NumpyCNN:
    """The CNN by hand: im2col convolutions, 2x2 max pooling, softmax cross entropy,
    each with its backward, and the SGD update."""

    def __init__(self, weights, x, labels):
        self.w = {k: v.copy() for k, v in weights.items()}
        self.x, self.labels = x, labels

    @staticmethod
    def im2col(x):
        import numpy as np
        n, c, h, w = x.shape
        p = np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)))
        s = p.strides
        win = np.lib.stride_tricks.as_strided(p, (n, c, 3, 3, h, w), s[:2] + s[2:] + s[2:])
        return win.transpose(1, 2, 3, 0, 4, 5).reshape(c * 9, n * h * w)

    @staticmethod
    def col2im(cols, shape):
        import numpy as np
        n, c, h, w = shape
        cols = cols.reshape(c, 3, 3, n, h, w)
        out = np.zeros((n, c, h + 2, w + 2), cols.dtype)
        for i in range(3):
            for j in range(3):
                out[:, :, i:i + h, j:j + w] += cols[:, i, j].transpose(1, 0, 2, 3)
        return out[:, :, 1:-1, 1:-1]

    def conv(self, x, w, b):
        n, _, h, wd = x.shape
        cols = self.im2col(x)
        out = (w.reshape(w.shape[0], -1) @ cols).reshape(w.shape[0], n, h, wd)
        return out.transpose(1, 0, 2, 3) + b.reshape(1, -1, 1, 1), cols

    def conv_backward(self, g, cols, w, x_shape):
        g2 = g.transpose(1, 0, 2, 3).reshape(w.shape[0], -1)
        dw = (g2 @ cols.T).reshape(w.shape)
        dx = self.col2im(w.reshape(w.shape[0], -1).T @ g2, x_shape)
        return dx, dw, g.sum(axis=(0, 2, 3))

    @staticmethod
    def pool(x):
        n, c, h, w = x.shape
        win = x.reshape(n, c, h // 2, 2, w // 2, 2)
        out = win.max(axis=(3, 5))
        mask = win == out[:, :, :, None, :, None]
        return out, mask

    @staticmethod
    def pool_backward(g, mask):
        n, c, h, _, w, _ = mask.shape
        first = mask & (mask.cumsum(3).cumsum(5) == 1)     # one winner per window
        return (first * g[:, :, :, None, :, None]).reshape(n, c, h * 2, w * 2)

    def step(self):
        import numpy as np
        w = self.w
        a1, cols1 = self.conv(self.x, w["w1"], w["b1"])
        r1 = np.maximum(a1, 0)
        p1, m1 = self.pool(r1)
        a2, cols2 = self.conv(p1, w["w2"], w["b2"])
        r2 = np.maximum(a2, 0)
        p2, m2 = self.pool(r2)
        flat = p2.reshape(BATCH, -1)
        logits = flat @ w["w3"].T + w["b3"]
        shifted = logits - logits.max(axis=1, keepdims=True)
        logp = shifted - np.log(np.exp(shifted).sum(axis=1, keepdims=True))
        loss = -logp[np.arange(BATCH), self.labels].mean()
        g = np.exp(logp)
        g[np.arange(BATCH), self.labels] -= 1
        g /= BATCH
        grads = {"w3": g.T @ flat, "b3": g.sum(axis=0)}
        g = self.pool_backward((g @ w["w3"]).reshape(p2.shape), m2) * (a2 > 0)
        g, grads["w2"], grads["b2"] = self.conv_backward(g, cols2, w["w2"], p1.shape)
        g = self.pool_backward(g, m1) * (a1 > 0)
        _, grads["w1"], grads["b1"] = self.conv_backward(g, cols1, w["w1"], self.x.shape)
        for k, v in grads.items():
            w[k] -= LR * v
        return float(loss)


def module_cnn(lib, weights, x, labels):
    """The CNN as nn modules with optim.SGD (chainrule or torch); returns step()."""
    nn = lib.nn
    model = nn.Sequential(nn.Conv2d(1, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                          nn.Conv2d(16, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                          nn.Flatten(), nn.Linear(CHANNELS[2] * (SIDE // 4) ** 2, CLASSES))
    names = {"0.weight": "w1", "0.bias": "b1", "3.weight": "w2", "3.bias": "b2",
             "7.weight": "w3", "7.bias": "b3"}
    model.load_state_dict({k: lib.tensor(weights[v]) for k, v in names.items()})
    opt = lib.optim.SGD(model.parameters(), lr=LR)
    loss_fn = nn.CrossEntropyLoss()
    inputs, targets = lib.from_numpy(x), lib.from_numpy(labels)

    def step():
        opt.zero_grad()
        loss = loss_fn(model(inputs), targets)
        loss.backward()
        opt.step()
        return loss.item()
    return step


def make_cnn_step(framework, threads):
    weights, x, labels = cnn_data()
    if framework == "numpy":
        return NumpyCNN(weights, x, labels).step
    if framework == "torch":
        import torch
        torch.set_num_threads(threads)
        return module_cnn(torch, weights, x, labels)
    import chainrule
    return module_cnn(chainrule, weights, x, labels)


def run_cnn(framework, args):
    step = make_cnn_step(framework, args.threads)
    first = step()
    for _ in range(2):
        step()
    times = []
    for _ in range(args.cnn_reps):
        gc.collect()
        t, _ = peers.timed(step)
        times.append(t)
    return {"step_ms": peers.median(times) * 1e3, "first_loss": first}


# --- checkpoint memory ------------------------------------------------------------------------
def _segments(lib, mode, layers, segments):
    """forward(x) through `layers` sins in `segments` parts, checkpointed per mode."""
    per = layers // segments

    def part(t):
        for _ in range(per):
            t = t.sin()
        return t

    def forward(x):
        for _ in range(segments):
            if mode == "plain":
                x = part(x)
            else:
                x = lib.utils.checkpoint.checkpoint(
                    part, x, use_reentrant=mode == "checkpoint-reentrant")
        return x
    return forward


def run_checkpoint(framework, mode, args):
    import numpy as np
    if framework == "torch":
        import torch as lib
        import torch.utils.checkpoint  # noqa: F401
        lib.set_num_threads(args.threads)
    else:
        import chainrule as lib
    forward = _segments(lib, mode, args.ckpt_layers, args.ckpt_segments)

    def run(size):
        x = lib.from_numpy(np.random.default_rng(0).standard_normal(size)).requires_grad_(True)
        forward(x).sum().backward()
        return x.grad

    run(1000)                                   # import and warm everything
    gc.collect()
    base = peers.current_rss_mb()
    if peers.peak_rss_mb() > base + 1:
        base = peers.peak_rss_mb()
    t0 = peers.clock()
    grad = run(args.ckpt_size)
    seconds = peers.clock() - t0
    peak = peers.peak_rss_mb()
    del grad
    return {"peak_mb": peak - base, "seconds": seconds,
            "array_mb": args.ckpt_size * 8 / 2**20}


def worker(framework, workload, args):
    peers.clock = peers.CLOCK[args.clock]
    if workload == "cnn":
        result = run_cnn(framework, args)
    else:
        result = run_checkpoint(framework, workload.split(":", 1)[1], args)
    print(json.dumps(result))


# --- driver ------------------------------------------------------------------------------------
def run_worker(framework, workload, args):
    env = dict(os.environ)
    env.update(peers.thread_env(args.threads))
    env.pop("CHAINRULE_ENGINE", None)
    if framework.startswith("chainrule-"):
        env["CHAINRULE_ENGINE"] = framework.split("-", 1)[1]
    cmd = [sys.executable, os.path.abspath(__file__), "--worker", framework, workload,
           "--threads", str(args.threads), "--clock", args.clock,
           "--cnn-reps", str(args.cnn_reps), "--ckpt-size", str(args.ckpt_size),
           "--ckpt-layers", str(args.ckpt_layers), "--ckpt-segments", str(args.ckpt_segments)]
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True)
    if proc.returncode != 0:
        last = (proc.stderr.strip().splitlines() or ["exit %d" % proc.returncode])[-1]
        return None, last
    return json.loads(proc.stdout.strip().splitlines()[-1]), None


def measure(jobs, rounds, args):
    """Run every (framework, workload) job `rounds` times, interleaved; the median per
    key (Note [rounds] in peers.py)."""
    per_job, failed = {}, []
    for _ in range(rounds):
        for job in jobs:
            if job in failed:
                continue
            t0 = time.perf_counter()
            result, error = run_worker(*job, args)
            if result is None:
                print(f"  {job[0]:<17} {job[1]:<26} failed: {error}", flush=True)
                failed.append(job)
                continue
            per_job.setdefault(job, []).append(result)
            print(f"  {job[0]:<17} {job[1]:<26} {json.dumps(result)}  "
                  f"({time.perf_counter() - t0:.0f} s)", flush=True)
    return {job: {k: peers.median([r[k] for r in runs]) for k in runs[0]}
            for job, runs in per_job.items() if job not in failed}, failed


def print_cnn(results, frameworks):
    print("\nCNN training step (ms, median)")
    torch_ms = results.get(("torch", "cnn"), {}).get("step_ms")
    numpy_ms = results.get(("numpy", "cnn"), {}).get("step_ms")
    print(f"{'framework':<18}{'step ms':>10}{'vs torch':>10}{'vs numpy':>10}{'first loss':>12}")
    for fw in frameworks:
        r = results.get((fw, "cnn"))
        if r is None:
            continue
        print(f"{fw:<18}{peers.fmt(r['step_ms']):>10}{peers.fmt(peers.ratio(r['step_ms'], torch_ms)):>10}"
              f"{peers.fmt(peers.ratio(r['step_ms'], numpy_ms)):>10}{r['first_loss']:>12.5f}")


def print_checkpoint(results, frameworks, args):
    print(f"\nCheckpointing: {args.ckpt_layers} sin layers of {args.ckpt_size:,} float64 "
          f"({args.ckpt_size * 8 / 2**20:.1f} MB each) in {args.ckpt_segments} segments")
    print(f"{'framework':<18}{'mode':<24}{'peak MB':>10}{'vs plain':>10}{'seconds':>10}")
    for fw in frameworks:
        plain = results.get((fw, "checkpoint:plain"), {}).get("peak_mb")
        for mode in CKPT_MODES:
            r = results.get((fw, "checkpoint:" + mode))
            if r is not None:
                print(f"{fw:<18}{mode:<24}{peers.fmt(r['peak_mb'], 1):>10}"
                      f"{peers.fmt(peers.ratio(r['peak_mb'], plain)):>10}{r['seconds']:>10.3f}")


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--worker", nargs=2, metavar=("FRAMEWORK", "WORKLOAD"), help=argparse.SUPPRESS)
    p.add_argument("--only", help="comma-separated frameworks (default: all)")
    p.add_argument("--workloads", default=",".join(WORKLOADS), help="comma-separated")
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--clock", choices=sorted(peers.CLOCK), default="cpu")
    p.add_argument("--cnn-reps", type=int, default=20)
    p.add_argument("--ckpt-size", type=int, default=500_000)
    p.add_argument("--ckpt-layers", type=int, default=200)
    p.add_argument("--ckpt-segments", type=int, default=10)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--quick", action="store_true", help="few repetitions, small sizes")
    p.add_argument("--json", help="also write the raw results here")
    args = p.parse_args(argv)
    if args.quick:
        args.cnn_reps, args.rounds, args.ckpt_size, args.ckpt_layers = 3, 1, 50_000, 40
        args.ckpt_segments = 4
    return args


def main(argv=None):
    args = parse_args(sys.argv[1:] if argv is None else argv)
    if args.worker:
        worker(args.worker[0], args.worker[1], args)
        return 0
    frameworks = args.only.split(",") if args.only else FRAMEWORKS
    workloads = args.workloads.split(",")
    print(f"clock: {args.clock} time; threads per framework: {args.threads}", flush=True)
    results, failed = {}, []
    if "cnn" in workloads:
        got, bad = measure([(fw, "cnn") for fw in frameworks], args.rounds, args)
        results.update(got)
        failed += bad
    if "checkpoint" in workloads:
        jobs = [(fw, "checkpoint:" + m) for fw in frameworks if fw != "numpy" for m in CKPT_MODES]
        got, bad = measure(jobs, 1, args)
        results.update(got)
        failed += bad
    print_cnn(results, frameworks)
    print_checkpoint(results, frameworks, args)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({f"{k[0]}/{k[1]}": v for k, v in results.items()}, f, indent=1)
    return 1 if any(fw != "torch" for fw, _ in failed) else 0


if __name__ == "__main__":
    sys.exit(main())
