"""Samples for the elementwise ops (``_ops/elementwise.py``) and fill/copy
(``_ops/operators.py``).

Calls use Tensor methods and operators where torch has the same ones, so the same
lambda serves the parity tier (``torch_call`` defaults to ``call``). Random data keeps
clear of the points where an op is not differentiable (relu and abs at 0, clamp
bounds, ties of maximum/minimum, jumps of floor/remainder): hitting one within eps
has probability ~1e-6. ``domain`` keeps log, sqrt, pow, div away from 0 and poles.
"""
import numpy as np

import chainrule as cr

from . import Sample

UNARY_SHAPES = ((3, 4), (), (1, 3), (0, 2))
COMPLEX_SHAPES = ((2, 3), ())
BINARY_SHAPES = (((3, 4), (3, 4)), ((3, 4), (4,)), ((2, 1, 3), (4, 1)), ((), (3,)),
                 ((1, 3), (2, 1)), ((0, 3), (3,)))
COMPLEX_BINARY_SHAPES = (((2, 3), (2, 3)), ((2, 3), (3,)))
POSITIVE = (0.5, 2.0)


def _torch():
    import torch
    return torch


def _mask(*shape, seed=1):
    """A fixed boolean condition (both branches present for 2+ elements)."""
    values = np.random.default_rng(seed).random(shape) > 0.5
    if values.size >= 2:
        values.flat[0], values.flat[1] = True, False
    return cr.tensor(values)


def _complex_constant(*shape, seed=2):
    """A complex tensor that needs no grad (a real input meeting it is cast)."""
    rng = np.random.default_rng(seed)
    return cr.tensor(rng.uniform(-1, 1, shape) + 1j * rng.uniform(-1, 1, shape))


def unary(op, call, real=UNARY_SHAPES, complex=COMPLEX_SHAPES, domain=None, **kw):
    return ([Sample(op, call, s, domain=domain, **kw) for s in real] +
            [Sample(op, call, s, complex=True, domain=domain, note="-complex", **kw)
             for s in complex])


def binary(op, call, real=BINARY_SHAPES, complex=COMPLEX_BINARY_SHAPES, domain=None, **kw):
    return ([Sample(op, call, *s, domain=domain, **kw) for s in real] +
            [Sample(op, call, *s, complex=True, domain=domain, note="-complex", **kw)
             for s in complex])


SAMPLES = [
    # --- add / sub (alpha, scalars, reflected operators) ---------------------------
    *binary("add", lambda a, b: a.add(b)),
    Sample("add", lambda a, b: a.add(b, alpha=2.5), (3, 4), (4,), note="-alpha"),
    Sample("add", lambda a, b: a.add(b, alpha=1 - 2j), (2, 3), (3,), complex=True,
           note="-complex-alpha"),
    Sample("add", lambda a: a + 3.0, (3, 4), note="-scalar"),
    Sample("add", lambda a: 1.5 + a, (), note="-radd"),
    *binary("sub", lambda a, b: a.sub(b), real=BINARY_SHAPES[:4]),
    Sample("sub", lambda a, b: a.sub(b, alpha=0.5), (3, 4), (4,), note="-alpha"),
    Sample("sub", lambda a, b: a - b, (2, 3), (3,), complex=True, note="-complex-operator"),
    Sample("rsub", lambda a: 2.0 - a, (3, 4)),
    Sample("rsub", lambda a: 1 - a, (), note="-int"),
    Sample("rsub", lambda a: (1 + 2j) - a, (2, 3), complex=True, note="-complex"),
    Sample("rsub_tensor", lambda a, b: cr.rsub(a, b, alpha=2), (3, 4), (4,),
           torch_call=lambda a, b: _torch().rsub(a, b, alpha=2)),
    Sample("pow_scalar_base", lambda a: 2.0 ** a, (3, 4)),
    Sample("pow_scalar_base", lambda a: 0.5 ** a, (), note="-fraction"),
    Sample("pow_scalar_base", lambda a: 3 ** a, (2, 3), complex=True, note="-complex"),
    # --- mul / div (true division and rounding modes) -------------------------------
    *binary("mul", lambda a, b: a.mul(b)),
    Sample("mul", lambda a: a * 2.5, (3, 4), note="-scalar"),
    Sample("mul", lambda a: a * (1 + 1j), (2, 3), complex=True, note="-complex-scalar"),
    *binary("div", lambda a, b: a.div(b), domain=POSITIVE),
    Sample("div", lambda a, b: a / b, (3, 4), (3, 1), domain=POSITIVE, note="-operator"),
    Sample("reciprocal", lambda a: 2.0 / a, (3, 4), domain=POSITIVE, note="-rdiv"),
    Sample("div_rounded", lambda a, b: a.div(b, rounding_mode="floor"), (3, 4), (4,),
           domain=POSITIVE, note="-floor"),
    Sample("div_rounded", lambda a, b: a.div(b, rounding_mode="trunc"), (3, 4), (3, 4),
           note="-trunc"),
    Sample("div_rounded", lambda a, b: a.div(b, rounding_mode="trunc"), (), (2,),
           domain=POSITIVE, note="-trunc"),
    # --- pow: tensor exponent, scalar exponent, scalar base -------------------------
    *binary("pow", lambda a, b: a.pow(b), domain=POSITIVE),
    Sample("pow", lambda a, b: a ** b, (2, 3), (), domain=POSITIVE, note="-operator"),
    *[Sample("pow_scalar", lambda a, e=e: a.pow(e), (3, 4), domain=POSITIVE, note=f"-{e}")
      for e in (0, 1, 2, 3, 0.5, -1, -2.5)],
    Sample("pow_scalar", lambda a: a ** 2, (), note="-square"),
    Sample("pow_scalar", lambda a: a ** 3, (0, 2), note="-cube"),
    Sample("pow_scalar", lambda a: a.pow(2), (2, 3), complex=True, note="-complex-2"),
    Sample("pow_scalar", lambda a: a.pow(0.5), (2, 3), complex=True, domain=POSITIVE,
           note="-complex-0.5"),
    Sample("pow_scalar", lambda a: a.pow(-1), (2, 3), complex=True, domain=POSITIVE,
           note="-complex--1"),
    # --- maximum / minimum / remainder / floor_divide (real only) -------------------
    *binary("maximum", lambda a, b: a.maximum(b), complex=()),
    *binary("minimum", lambda a, b: a.minimum(b), complex=()),
    *binary("remainder_tensor", lambda a, b: a.remainder(b), real=BINARY_SHAPES[:4], complex=(),
            domain=POSITIVE),
    Sample("remainder_tensor", lambda a, b: a % b, (3, 4), (4,), note="-operator"),
    Sample("remainder", lambda a: a % 0.7, (3, 4), note="-scalar"),
    *binary("floor_divide", lambda a, b: a.floor_divide(b), real=BINARY_SHAPES[:3],
            complex=(), domain=POSITIVE),
    Sample("floor_divide", lambda a, b: a // b, (3, 4), (4,), domain=POSITIVE,
           note="-operator"),
    # --- where ----------------------------------------------------------------------
    Sample("where", lambda c, a, b: cr.where(c, a, b), _mask(3, 4), (3, 4), (3, 4),
           torch_call=lambda c, a, b: _torch().where(c, a, b)),
    Sample("where", lambda c, a, b: cr.where(c, a, b), _mask(3, 1), (4,), (3, 4),
           torch_call=lambda c, a, b: _torch().where(c, a, b), note="-broadcast"),
    Sample("where", lambda c, a, b: cr.where(c, a, b), _mask(2, 3), (2, 3), (),
           complex=True, torch_call=lambda c, a, b: _torch().where(c, a, b),
           note="-complex"),
    Sample("where", lambda c, a, b: cr.where(c, a, b), _mask(0, 3), (0, 3), (3,),
           torch_call=lambda c, a, b: _torch().where(c, a, b), note="-empty"),
    Sample("where", lambda c, a, b: a.where(c, b), _mask(3, 4), (3, 4), (4,),
           note="-method"),
    # --- unary ops --------------------------------------------------------------------
    *unary("neg", lambda a: a.neg()),
    Sample("neg", lambda a: -a, (3, 4), note="-operator"),
    *unary("exp", lambda a: a.exp()),
    *unary("log", lambda a: a.log(), domain=POSITIVE),
    *unary("log1p", lambda a: a.log1p(), domain=(-0.5, 2.0)),
    *unary("expm1", lambda a: a.expm1()),
    *unary("sqrt", lambda a: a.sqrt(), domain=POSITIVE),
    *unary("rsqrt", lambda a: a.rsqrt(), domain=POSITIVE),
    *unary("sin", lambda a: a.sin()),
    *unary("cos", lambda a: a.cos()),
    *unary("tan", lambda a: a.tan(), domain=(-1.0, 1.0)),
    *unary("tanh", lambda a: a.tanh()),
    *unary("sigmoid", lambda a: a.sigmoid()),
    Sample("sigmoid", lambda a: a.sigmoid(), (3, 4), domain=(-40.0, 40.0), note="-wide"),
    *unary("relu", lambda a: a.relu(), complex=()),
    *unary("erf", lambda a: a.erf(), complex=()),
    *unary("abs", lambda a: a.abs()),
    Sample("abs", lambda a: abs(a), (3, 4), note="-operator"),
    *unary("sign", lambda a: a.sign(), complex=()),
    *unary("sgn", lambda a: a.sgn()),
    *unary("conj", lambda a: a.conj(), real=()),
    *unary("real", lambda a: a.real, real=()),
    Sample("real", lambda a: cr.real(a), (2, 3), complex=True,
           torch_call=lambda a: _torch().real(a), note="-function"),
    *unary("imag", lambda a: a.imag, real=()),
    Sample("imag", lambda a: cr.imag(a), (2, 3), complex=True,
           torch_call=lambda a: _torch().imag(a), note="-function"),
    *unary("angle", lambda a: a.angle()),
    # --- clamp: scalar bounds and tensor bounds -------------------------------------
    Sample("clamp", lambda a: a.clamp(-0.5, 0.8), (3, 4)),
    Sample("clamp", lambda a: a.clamp(min=-0.3), (3, 4), note="-min"),
    Sample("clamp", lambda a: a.clamp(max=0.2), (), note="-max"),
    Sample("clamp", lambda a: a.clamp(-1, 1), (0, 2), note="-empty"),
    Sample("clamp", lambda a: a.clip(0.1, 0.3), (1, 3), note="-clip"),
    Sample("clamp_tensor", lambda a, lo, hi: a.clamp(lo, hi), (3, 4), (4,), (3, 1)),
    Sample("clamp_tensor", lambda a, lo: a.clamp(min=lo), (3, 4), (3, 4), note="-min"),
    Sample("clamp_tensor", lambda a, hi: a.clamp(max=hi), (3, 4), (), note="-max"),
    # --- casts and copies -------------------------------------------------------------
    Sample("to_copy", lambda a: a.to(cr.complex128), (3, 4),
           torch_call=lambda a: a.to(_torch().complex128), note="-to-complex"),
    Sample("to_copy", lambda a: a.cdouble(), (), note="-cdouble"),
    Sample("to_copy", lambda a, z: a * z, (3, 4), _complex_constant(4), note="-promotion"),
    Sample("to_copy", lambda a: a.to(cr.complex128).exp(), (2, 3),
           torch_call=lambda a: a.to(_torch().complex128).exp(), note="-then-exp"),
    *unary("clone", lambda a: a.clone()),
    # --- rounding (zero gradient) ---------------------------------------------------
    *unary("floor", lambda a: a.floor(), complex=()),
    *unary("ceil", lambda a: a.ceil(), complex=()),
    *unary("round", lambda a: a.round(), complex=()),
    *unary("trunc", lambda a: a.trunc(), complex=()),
    # --- fill and copy (in place, on a non-leaf) --------------------------------------
    Sample("fill", lambda a: a.clone().fill_(2.5), (3, 4)),
    Sample("fill", lambda a: a.clone().fill_(1 - 1j), (2, 3), complex=True, note="-complex"),
    Sample("zero", lambda a: a.clone().zero_(), ()),
    Sample("zero", lambda a: a.clone().zero_(), (3, 4)),
    Sample("copy", lambda a, b: a.clone().copy_(b), (3, 4), (4,)),
    Sample("copy", lambda a, b: a.clone().copy_(b), (2, 3), (2, 3), complex=True,
           note="-complex"),
    Sample("fill_tensor", lambda a, v: a.clone().fill_(v), (3, 4), ()),
    Sample("fill_out", lambda a: cr.fill(a, 2.5), (3, 4),
           torch_call=lambda a: _torch().fill(a, 2.5)),
    Sample("fill_out_tensor", lambda a, v: cr.fill(a, v), (3, 4), (),
           torch_call=lambda a, v: _torch().fill(a, v)),
    # --- in-place forms of the table ops (rebased onto the clone's graph) ------------
    Sample("add", lambda a, b: a.clone().add_(b, alpha=2), (3, 4), (4,), note="-inplace"),
    Sample("mul", lambda a, b: a.clone().mul_(b), (2, 3), (3,), complex=True,
           note="-complex-inplace"),
    Sample("exp", lambda a: a.clone().exp_(), (3, 4), note="-inplace"),
    Sample("clamp", lambda a: a.clone().clamp_(-0.5, 0.5), (3, 4), note="-inplace"),
    Sample("div", lambda a, b: a.clone().div_(b), (3, 4), (3, 4), domain=POSITIVE,
           note="-inplace"),
]

UNIT = (-0.9, 0.9)              # asin, acos, atanh, erfinv: inside (-1, 1)
PROBABILITY = (0.05, 0.95)      # logit

SAMPLES += [
    # --- inverse and hyperbolic trig -------------------------------------------------
    *unary("asin", lambda a: a.asin(), domain=UNIT, complex=((2, 3),)),
    Sample("asin", lambda a: cr.arcsin(a), (3, 4), domain=UNIT,
           torch_call=lambda a: _torch().arcsin(a), note="-arcsin"),
    *unary("acos", lambda a: a.acos(), domain=UNIT, complex=((2, 3),)),
    Sample("acos", lambda a: a.arccos(), (3,), domain=UNIT, note="-arccos"),
    *unary("atan", lambda a: a.atan(), complex=((2, 3),), domain=(-0.9, 0.9)),
    Sample("atan", lambda a: a.arctan(), (3,), note="-arctan"),
    *unary("sinh", lambda a: a.sinh()),
    *unary("cosh", lambda a: a.cosh()),
    *unary("asinh", lambda a: a.asinh(), complex=((2, 3),), domain=(-0.9, 0.9)),
    Sample("asinh", lambda a: a.arcsinh(), (3,), note="-arcsinh"),
    *unary("acosh", lambda a: a.acosh(), domain=(1.1, 3.0), complex=()),
    Sample("acosh", lambda a: a.acosh(), (2, 3), complex=True, domain=POSITIVE,
           note="-complex"),
    Sample("acosh", lambda a: a.arccosh(), (3,), domain=(1.1, 3.0), note="-arccosh"),
    *unary("atanh", lambda a: a.atanh(), domain=UNIT, complex=((2, 3),)),
    Sample("atanh", lambda a: a.arctanh(), (3,), domain=UNIT, note="-arctanh"),
    # --- logs, powers of 2, reciprocal --------------------------------------------------
    *unary("log2", lambda a: a.log2(), domain=POSITIVE),
    *unary("log10", lambda a: a.log10(), domain=POSITIVE),
    *unary("exp2", lambda a: a.exp2(), complex=()),
    Sample("exp2", lambda a: a.exp2(), (2, 3), complex=True, note="-complex",
           torch_call=None),                       # torch's exp2 has no complex kernel
    *unary("reciprocal", lambda a: a.reciprocal(), domain=POSITIVE),
    Sample("pow_scalar", lambda a: a.square(), (3, 4), note="-square-method"),
    Sample("pow_scalar", lambda a: cr.square(a), (2, 3), complex=True,
           torch_call=lambda a: _torch().square(a), note="-square-complex"),
    Sample("pow", lambda a, b: cr.float_power(a, b), (3, 4), (4,), domain=POSITIVE,
           torch_call=lambda a, b: _torch().float_power(a, b), note="-float_power"),
    Sample("pow_scalar", lambda a: a.float_power(2.5), (3, 4), domain=POSITIVE,
           note="-float_power"),
    # --- special functions ----------------------------------------------------------------
    *unary("erfc", lambda a: a.erfc(), complex=()),
    *unary("erfinv", lambda a: a.erfinv(), domain=UNIT, complex=()),
    *unary("lgamma", lambda a: a.lgamma(), domain=(0.2, 4.0), complex=()),
    Sample("lgamma", lambda a: a.lgamma(), (3, 4), domain=(-2.9, -2.1), note="-negative"),
    *unary("digamma", lambda a: a.digamma(), domain=(0.2, 4.0), complex=()),
    Sample("digamma", lambda a: a.digamma(), (3, 4), domain=(-1.8, -1.2), note="-negative"),
    *[Sample("polygamma", lambda a, n=n: a.polygamma(n), (3, 4), domain=(0.3, 4.0),
             note=f"-{n}") for n in (1, 2, 3)],
    Sample("polygamma", lambda a: cr.polygamma(1, a), (), domain=(0.3, 4.0),
           torch_call=lambda a: _torch().polygamma(1, a), note="-function"),
    Sample("digamma", lambda a: cr.polygamma(0, a), (3,), domain=(0.3, 4.0),
           torch_call=lambda a: _torch().polygamma(0, a), note="-polygamma0"),
    Sample("mvlgamma", lambda a: a.mvlgamma(3), (3, 4), domain=(1.2, 4.0)),
    Sample("mvlgamma", lambda a: cr.mvlgamma(a, 1), (), domain=(0.2, 4.0),
           torch_call=lambda a: _torch().mvlgamma(a, 1), note="-p1"),
    *unary("logit", lambda a: a.logit(), domain=PROBABILITY, complex=()),
    Sample("logit", lambda a: a.logit(eps=0.2), (3, 4), domain=(0.0, 1.0), note="-eps"),
    *unary("sinc", lambda a: a.sinc()),
    *unary("frac", lambda a: a.frac(), complex=()),
    *unary("rad2deg", lambda a: a.rad2deg(), complex=()),
    *unary("deg2rad", lambda a: a.deg2rad(), complex=()),
    Sample("nan_to_num", lambda a: a.nan_to_num(), (3, 4)),
    Sample("nan_to_num", lambda a: a.log().nan_to_num(nan=0.5, posinf=2.0, neginf=-2.0),
           (3, 4), note="-nans"),
    Sample("trunc", lambda a: a.fix(), (3, 4), note="-fix"),
    Sample("round_decimals", lambda a: a.round(decimals=2), (3, 4)),
    Sample("round_decimals", lambda a: cr.round(a * 100, decimals=-1), (2, 3),
           torch_call=lambda a: _torch().round(a * 100, decimals=-1), note="-negative"),
    # --- clamp_min / clamp_max (scalar and tensor bounds) ---------------------------------
    Sample("clamp_min", lambda a: a.clamp_min(0.1), (3, 4)),
    Sample("clamp_min", lambda a: a.clamp_min(-1), (), note="-int"),
    Sample("clamp_max", lambda a: a.clamp_max(0.1), (3, 4)),
    Sample("clamp_min_tensor", lambda a, b: a.clamp_min(b), (3, 4), (4,)),
    Sample("clamp_min_tensor", lambda a, b: a.clamp_min(b), (), (2, 3), note="-broadcast"),
    Sample("clamp_max_tensor", lambda a, b: a.clamp_max(b), (3, 4), (3, 1)),
    Sample("clamp_tensor", lambda a, lo, hi: a.clip(lo, hi), (3, 4), (4,), (3, 1), note="-clip"),
    Sample("clamp_tensor", lambda a, lo, hi: cr.clamp(a, lo, hi), (2, 3), (), (3,),
           torch_call=lambda a, lo, hi: _torch().clamp(a, lo, hi), note="-function"),
    # --- binary ------------------------------------------------------------------------
    *binary("atan2", lambda a, b: a.atan2(b), complex=()),
    Sample("atan2", lambda a, b: cr.arctan2(a, b), (3, 4), (4,),
           torch_call=lambda a, b: _torch().arctan2(a, b), note="-arctan2"),
    *binary("hypot", lambda a, b: a.hypot(b), complex=(), domain=POSITIVE),
    *binary("copysign", lambda a, b: a.copysign(b), complex=()),
    Sample("copysign", lambda a: a.copysign(-1.0), (3, 4), note="-scalar"),
    *binary("fmod", lambda a, b: a.fmod(b), real=BINARY_SHAPES[:4], complex=(),
            domain=POSITIVE),
    Sample("fmod", lambda a: a.fmod(0.7), (3, 4), note="-scalar"),
    *binary("logaddexp", lambda a, b: a.logaddexp(b), complex=()),
    *binary("logaddexp2", lambda a, b: a.logaddexp2(b), real=BINARY_SHAPES[:3], complex=()),
    *binary("xlogy", lambda a, b: a.xlogy(b), complex=(), domain=POSITIVE),
    Sample("xlogy", lambda a: a.xlogy(2.0), (3, 4), note="-scalar"),
    Sample("xlogy", lambda b: cr.xlogy(2.0, b), (3, 4), domain=POSITIVE,
           torch_call=lambda b: _torch().xlogy(2.0, b), note="-scalar-self"),
    *binary("fmax", lambda a, b: a.fmax(b), real=BINARY_SHAPES[:4], complex=()),
    *binary("fmin", lambda a, b: a.fmin(b), real=BINARY_SHAPES[:4], complex=()),
    Sample("lerp", lambda a, b: a.lerp(b, 0.3), (3, 4), (4,)),
    Sample("lerp", lambda a, b: a.lerp(b, 0.8), (), (2, 3), note="-large-weight"),
    Sample("lerp", lambda a, b: a.lerp(b, 0.25), (2, 3), (2, 3), complex=True, note="-complex"),
    Sample("lerp_tensor", lambda a, b, w: a.lerp(b, w), (3, 4), (4,), (3, 1)),
    Sample("lerp_tensor", lambda a, b, w: cr.lerp(a, b, w), (2, 3), (2, 3), (3,), complex=True,
           torch_call=lambda a, b, w: _torch().lerp(a, b, w), note="-complex"),
    # --- in-place forms ------------------------------------------------------------------
    Sample("asin", lambda a: a.clone().asin_(), (3, 4), domain=UNIT, note="-inplace"),
    Sample("pow_scalar", lambda a: a.clone().square_(), (3, 4), note="-square-inplace"),
    Sample("atan2", lambda a, b: a.clone().atan2_(b), (3, 4), (4,), note="-inplace"),
    Sample("lerp_tensor", lambda a, b, w: a.clone().lerp_(b, w), (3, 4), (4,), (3, 4),
           note="-inplace"),
    Sample("clamp_min_tensor", lambda a, b: a.clone().clamp_min_(b), (3, 4), (4,),
           note="-inplace"),
    Sample("polygamma", lambda a: a.clone().polygamma_(1), (3, 4), domain=(0.3, 4.0),
           note="-inplace"),
    Sample("clamp_tensor", lambda a, lo: a.clone().clip_(min=lo), (3, 4), (4,), note="-inplace"),
]

SAMPLES += [
    Sample("heaviside", lambda a, b: a.heaviside(b), (3, 4), (4,), torch_call=None,
           note="-not-differentiable"),
    Sample("mul", lambda a, b: cr.ldexp(a, b), (3, 4), (4,),
           torch_call=lambda a, b: _torch().ldexp(a, b), note="-ldexp"),
]
