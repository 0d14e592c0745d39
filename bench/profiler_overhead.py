"""What the profiler adds per op: the bench's chain (peers.py) with and without
``chainrule.autograd.profiler.profile``, against ``torch.autograd.profiler.profile``.

    ./bazelw run //bench:profiler_overhead               # 30 repetitions, 3 rounds
    ./bazelw run //bench:profiler_overhead -- --quick    # smoke run

Each framework x mode (plain, profiled) runs in a fresh subprocess with one thread
(peers.thread_env), on peers' chain of 1,000 elementwise ops on 16 float64 values,
timed with the process's CPU time (peers' Note [clock]). Profiled: a profile is
entered before the forward and left after the backward of each repetition; the
forward and the backward are timed inside it (recording: one event per op and per
backward node), and leaving it (turning the recording into events) is timed apart.
Reported per op of the chain, in microseconds: the forward and backward with and
without the profiler, what the profiler adds to each, and the cost of leaving.
Internal use: --worker FRAMEWORK MODE prints one JSON line.
"""
import argparse
import gc
import json
import os
import subprocess
import sys

try:
    import peers                       # run as a script: bench/ is on sys.path
except ImportError:                    # under Bazel: the runfiles root is
    from bench import peers

FRAMEWORKS = ["chainrule-python", "chainrule-cpp", "torch"]
MODES = ["plain", "profiled"]


def profile_factory(framework):
    if framework == "torch":
        import torch
        return torch.autograd.profiler.profile
    from chainrule.autograd import profiler
    return profiler.profile


def measure(framework, mode, reps):
    """Median seconds of forward, backward and leaving the profile, per repetition."""
    impl = peers.make_impl(framework, 1)
    make = profile_factory(framework) if mode == "profiled" else None
    import numpy as np
    x = impl.leaf(np.random.default_rng(0).standard_normal(peers.CHAIN_SIZE) * 0.5)
    fwd, bwd, leave = [], [], []
    for rep in range(reps + 3):                       # 3 warm-up repetitions
        gc.collect()
        prof = make() if make else None
        if prof is not None:
            prof.__enter__()
        tf, state = peers.timed(lambda: impl.chain_record(x))
        tb, _ = peers.timed(lambda: impl.chain_backward(state))
        del state
        tl = peers.timed(lambda: prof.__exit__(None, None, None))[0] if prof else 0.0
        if rep >= 3:
            fwd.append(tf)
            bwd.append(tb)
            leave.append(tl)
    return {"fwd": peers.median(fwd), "bwd": peers.median(bwd), "leave": peers.median(leave)}


def run_worker(framework, mode, args):
    env = dict(os.environ, **peers.thread_env(1))
    env.pop("CHAINRULE_ENGINE", None)
    if framework.startswith("chainrule-"):
        env["CHAINRULE_ENGINE"] = framework.split("-", 1)[1]
    cmd = [sys.executable, os.path.abspath(__file__), "--worker", framework, mode,
           "--reps", str(args.reps), "--clock", args.clock]
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True)
    if proc.returncode != 0:
        raise SystemExit(f"{framework} {mode} failed:\n{proc.stderr[-2000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def collect(args):
    """Medians over interleaved rounds (peers' Note [rounds])."""
    rounds = {(fw, mode): [] for fw in args.frameworks for mode in MODES}
    for _ in range(args.rounds):
        for fw in args.frameworks:
            for mode in MODES:
                rounds[(fw, mode)].append(run_worker(fw, mode, args))
    return {key: {k: peers.median([r[k] for r in results]) for k in ("fwd", "bwd", "leave")}
            for key, results in rounds.items()}


def report(results, frameworks, out=sys.stdout):
    per_op = 1e6 / peers.CHAIN_OPS
    names = ["fwd plain", "fwd profiled", "fwd added", "bwd plain", "bwd profiled",
             "bwd added", "leaving"]
    width = max(len(f) for f in frameworks) + 2
    out.write("\nus per op of the chain (profiled: inside the profile; leaving: "
              "building the events, per op)\n")
    out.write("framework".ljust(width) + "".join(n.rjust(len(n) + 3) for n in names) + "\n")
    for fw in frameworks:
        plain, prof = results[(fw, "plain")], results[(fw, "profiled")]
        cells = [plain["fwd"], prof["fwd"], prof["fwd"] - plain["fwd"], plain["bwd"],
                 prof["bwd"], prof["bwd"] - plain["bwd"], prof["leave"]]
        out.write(fw.ljust(width) + "".join(f"{c * per_op:.2f}".rjust(len(n) + 3)
                                            for c, n in zip(cells, names)) + "\n")


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--worker", nargs=2, metavar=("FRAMEWORK", "MODE"), help=argparse.SUPPRESS)
    p.add_argument("--only", help="comma-separated frameworks (default: all)")
    p.add_argument("--reps", type=int, default=30)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--clock", choices=sorted(peers.CLOCK), default="cpu")
    p.add_argument("--quick", action="store_true", help="few repetitions, one round")
    args = p.parse_args(argv)
    peers.clock = peers.CLOCK[args.clock]
    if args.worker:
        print(json.dumps(measure(*args.worker, args.reps)))
        return
    if args.quick:
        args.reps, args.rounds = 3, 1
    args.frameworks = args.only.split(",") if args.only else FRAMEWORKS
    report(collect(args), args.frameworks)


if __name__ == "__main__":
    main()
