"""Train a small MLP classifier on scikit-learn's bundled digits data set with chainrule.

Run: ./bazelw run //examples:train_digits   (or: python examples/train_digits.py)

It prints a progress bar per epoch, the loss and test accuracy, and ends with the
autograd totals: how many ops were recorded and how long backward took.
``--profile trace.json`` profiles the last epoch (needs the chainrule-profiler
wheel): it prints the table of the top ops and writes the epoch's Chrome trace.
"""
import argparse
import contextlib
import time

import numpy as np
from sklearn.datasets import load_digits
from sklearn.model_selection import train_test_split
from tqdm import tqdm

import chainrule as cr
import chainrule.nn.functional as F
from chainrule.autograd.node import next_sequence_nr


def load_data(seed):
    digits = load_digits()
    x = (digits.data / 16.0).astype(np.float32)
    return train_test_split(x, digits.target.astype(np.int64), test_size=0.25,
                            random_state=seed, stratify=digits.target)


def init_params(sizes, rng):
    """He-initialised weights (out x in, like nn.Linear) and zero biases."""
    params = []
    for fan_in, fan_out in zip(sizes[:-1], sizes[1:]):
        w = (rng.standard_normal((fan_out, fan_in)) * np.sqrt(2.0 / fan_in)).astype(np.float32)
        params.append(cr.tensor(w, requires_grad=True))
        params.append(cr.zeros(fan_out, requires_grad=True))
    return params


def forward(params, x):
    h = x
    for i in range(0, len(params) - 2, 2):
        h = F.relu(F.linear(h, params[i], params[i + 1]))
    return F.linear(h, params[-2], params[-1])


class SGD:
    """SGD with momentum, on .grad, under no_grad (in-place updates of leaves)."""

    def __init__(self, params, lr, momentum):
        self.params, self.lr, self.momentum = params, lr, momentum
        self.velocity = [cr.zeros_like(p) for p in params]

    @cr.no_grad()
    def step(self):
        for p, v in zip(self.params, self.velocity):
            v.mul_(self.momentum).add_(p.grad)
            p.sub_(v, alpha=self.lr)
            p.grad = None


def accuracy(params, x, y):
    with cr.no_grad():
        predictions = forward(params, cr.from_numpy(x)).numpy().argmax(axis=1)
    return float((predictions == y).mean())


def epoch_profile(profile_path, epoch, epochs):
    """A profile of the last epoch when asked for, else a context that does nothing."""
    if profile_path is None or epoch != epochs:
        return contextlib.nullcontext()
    from chainrule.autograd import profiler
    return profiler.profile()


def report_profile(prof, path, rows=15):
    print(prof.key_averages().table(sort_by="self_cpu_time_total", row_limit=rows))
    prof.export_chrome_trace(path)
    print(f"trace of the last epoch written to {path}")


def record(name, profiling):
    """A named range in the profile (only while profiling)."""
    if not profiling:
        return contextlib.nullcontext()
    from chainrule.autograd.profiler import record_function
    return record_function(name)


def train(epochs, batch_size, lr, seed, profile_path=None):
    x_train, x_test, y_train, y_test = load_data(seed)
    rng = np.random.default_rng(seed)
    params = init_params([64, 128, 64, 10], rng)
    optimizer = SGD(params, lr, momentum=0.9)
    first_node, backward_seconds = next_sequence_nr(), 0.0
    for epoch in range(1, epochs + 1):
        order = rng.permutation(len(x_train))
        batches = range(0, len(order), batch_size)
        bar = tqdm(batches, desc=f"epoch {epoch:2d}/{epochs}", unit="batch", leave=True)
        total = 0.0
        with epoch_profile(profile_path, epoch, epochs) as prof:
            for start in bar:
                idx = order[start:start + batch_size]
                with record("forward", prof is not None):
                    loss = F.cross_entropy(forward(params, cr.from_numpy(x_train[idx])),
                                           cr.from_numpy(y_train[idx]))
                began = time.perf_counter()
                loss.backward()
                backward_seconds += time.perf_counter() - began
                with record("optimizer.step", prof is not None):
                    optimizer.step()
                total += loss.item() * len(idx)
                bar.set_postfix(loss=f"{loss.item():.4f}", refresh=False)
        bar.close()
        if prof is not None:
            report_profile(prof, profile_path)
        print(f"epoch {epoch:2d}: train loss {total / len(x_train):.4f}, "
              f"test accuracy {accuracy(params, x_test, y_test):.4f}")
    recorded = next_sequence_nr() - first_node - 1
    return accuracy(params, x_test, y_test), recorded, backward_seconds


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epochs", type=int, default=15)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--lr", type=float, default=0.05)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--min-accuracy", type=float, default=0.95,
                        help="exit with status 1 if the final test accuracy is lower")
    parser.add_argument("--profile", metavar="TRACE.json", default=None,
                        help="profile the last epoch: print the top ops, write a Chrome trace")
    args = parser.parse_args()
    acc, recorded, backward_seconds = train(args.epochs, args.batch_size, args.lr, args.seed,
                                            args.profile)
    print(f"final test accuracy: {acc:.4f}")
    print(f"autograd totals: {recorded} ops recorded, backward time {backward_seconds:.3f} s")
    if acc < args.min_accuracy:
        raise SystemExit(f"test accuracy {acc:.4f} is below {args.min_accuracy}")


if __name__ == "__main__":
    main()
