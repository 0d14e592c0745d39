"""Shared by the core optimizer tests: a small quartic problem and a state_dict round
trip that must continue exactly as the uninterrupted run."""
import copy

import chainrule as cr


def make_params(shape=(2, 3), seed=0, dtype=cr.float64):
    gen = cr.Generator().manual_seed(seed)
    return [cr.randn(*shape, generator=gen, dtype=dtype).requires_grad_(),
            cr.randn(shape[-1], generator=gen, dtype=dtype).requires_grad_()]


def loss_of(params):
    return sum((p ** 4 / 4 - p).sum() for p in params)


def train(params, opt, steps):
    for _ in range(steps):
        opt.zero_grad()
        loss_of(params).backward()
        opt.step()


def assert_round_trip_continues(make_opt, shape=(2, 3), steps=4, dtype=cr.float64):
    """``steps`` steps, a state_dict into a fresh optimizer on a copy of the
    parameters, ``steps`` more on both: the parameters agree bit for bit."""
    first = make_params(shape, dtype=dtype)
    opt = make_opt(first)
    train(first, opt, steps)
    saved = copy.deepcopy(opt.state_dict())
    second = [p.detach().clone().requires_grad_() for p in first]
    again = make_opt(second)
    again.load_state_dict(saved)
    train(first, opt, steps)
    train(second, again, steps)
    for a, b in zip(first, second):
        assert cr.equal(a, b)
    return opt
