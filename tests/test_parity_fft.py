"""Parity tier for chainrule.fft (and stft/istft) against PyTorch (skips without
torch): values and gradients of every transform for real and complex inputs, every
norm, odd and even sizes, cropping and padding (``n``/``s``), single and double
precision; the helpers (fftfreq, rfftfreq, fftshift, ifftshift) and the errors."""
import numpy as np
import pytest

torch = pytest.importorskip("torch")

import chainrule as cr  # noqa: E402

RNG = np.random.default_rng(0)
ONE_D = ["fft", "ifft", "rfft", "irfft", "hfft", "ihfft"]
N_D = ["fft2", "ifft2", "fftn", "ifftn", "rfft2", "irfft2", "rfftn", "irfftn",
       "hfft2", "ihfft2", "hfftn", "ihfftn"]
REAL_ONLY = {"rfft", "ihfft", "rfft2", "rfftn", "ihfft2", "ihfftn"}
NORMS = [None, "backward", "ortho", "forward"]


def random(shape, complex_):
    x = RNG.standard_normal(shape)
    return x + 1j * RNG.standard_normal(shape) if complex_ else x


def loss(lib, out, w):
    """A real scalar reading every real and imaginary part of ``out`` with weights."""
    if out.is_complex():
        return (out.real * lib.tensor(w.real) + out.imag * lib.tensor(w.imag)).sum()
    return (out * lib.tensor(w.real)).sum()


def run(lib, name, x, kwargs, w=None):
    t = lib.tensor(x, requires_grad=True)
    out = getattr(lib.fft, name)(t, **kwargs)
    if w is None:
        return out, None
    loss(lib, out, w).backward()
    return out, t.grad


def arr(t):
    return t.detach().resolve_conj().numpy() if isinstance(t, torch.Tensor) else \
        t.detach().numpy()


def check(name, x, **kwargs):
    want, _ = run(torch, name, x, kwargs)
    w = random(tuple(want.shape), True)
    want, want_grad = run(torch, name, x, kwargs, w)
    got, got_grad = run(cr, name, x, kwargs, w)
    assert got.dtype.__repr__().split(".")[1] == str(want.dtype).split(".")[1]
    np.testing.assert_allclose(arr(got), arr(want), atol=1e-5, rtol=1e-5)
    np.testing.assert_allclose(arr(got_grad), arr(want_grad), atol=1e-5, rtol=1e-5)
    assert got.grad_fn.name() == want.grad_fn.name()


def inputs_for(name):
    return [False] if name in REAL_ONLY else [False, True]


@pytest.mark.parametrize("norm", NORMS)
@pytest.mark.parametrize("n", [None, 5, 8, 3])
@pytest.mark.parametrize("name", ONE_D)
def test_one_dimensional_transforms(name, n, norm):
    for complex_ in inputs_for(name):
        for size in (6, 7):
            check(name, random((3, size), complex_), n=n, norm=norm)
        check(name, random((size, 2), complex_), n=n, dim=0, norm=norm)


@pytest.mark.parametrize("norm", NORMS)
@pytest.mark.parametrize("name", N_D)
def test_n_dimensional_transforms(name, norm):
    for complex_ in inputs_for(name):
        x = random((3, 4, 5), complex_)
        check(name, x, norm=norm)
        check(name, x, s=(4, 7), norm=norm)
        check(name, x, s=(2, -1), dim=(0, 2), norm=norm)
        if not name.endswith("2"):
            check(name, x, dim=(2, 0, 1), norm=norm)
            check(name, x, s=(6,), norm=norm)


@pytest.mark.parametrize("name", ONE_D + N_D)
def test_single_precision_and_integer_inputs(name):
    for dtype in ((np.float32, np.complex64) if name not in REAL_ONLY else (np.float32,)):
        check(name, random((4, 6), dtype == np.complex64).astype(dtype))
    want = getattr(torch.fft, name)(torch.arange(8).reshape(2, 4))
    got = getattr(cr.fft, name)(cr.arange(8).reshape(2, 4))
    assert str(got.dtype).split(".")[1] == str(want.dtype).split(".")[1]
    np.testing.assert_allclose(arr(got), arr(want), atol=1e-5)


def test_second_derivatives_match():
    x = random((4, 6), False)
    for lib in (torch, cr):
        t = lib.tensor(x, requires_grad=True)
        y = lib.fft.irfft(lib.fft.rfft(t) ** 2, n=6)
        (g,) = lib.autograd.grad((y * y).sum(), t, create_graph=True)
        (gg,) = lib.autograd.grad(g.sum(), t)
        if lib is torch:
            want = (g.detach().numpy(), gg.numpy())
    np.testing.assert_allclose(g.detach().numpy(), want[0], atol=1e-8)
    np.testing.assert_allclose(gg.numpy(), want[1], atol=1e-8)


@pytest.mark.parametrize("call", [
    lambda lib: lib.fft.fftfreq(5),
    lambda lib: lib.fft.fftfreq(6, 0.1, dtype=lib.float64),
    lambda lib: lib.fft.rfftfreq(7, d=2.0),
    lambda lib: lib.fft.rfftfreq(8),
    lambda lib: lib.fft.fftfreq(0),
    lambda lib: lib.fft.fftshift(lib.arange(10).reshape(2, 5)),
    lambda lib: lib.fft.fftshift(lib.arange(10).reshape(2, 5), dim=1),
    lambda lib: lib.fft.ifftshift(lib.arange(10).reshape(2, 5), dim=(0, 1)),
    lambda lib: lib.fft.ifftshift(lib.arange(7)),
    lambda lib: lib.fft.fftshift(lib.fft.fftfreq(6)),
])
def test_helpers(call):
    want, got = call(torch), call(cr)
    assert str(got.dtype).split(".")[1] == str(want.dtype).split(".")[1]
    np.testing.assert_allclose(got.numpy(), want.numpy(), atol=1e-7)


def test_fftfreq_arguments():
    f = cr.fft.fftfreq(4, dtype=cr.float64, requires_grad=True)
    assert f.requires_grad and f.is_leaf and f.dtype == cr.float64
    g = cr.fft.rfftfreq(4, out=cr.empty(0))
    assert g.tolist() == torch.fft.rfftfreq(4).tolist()
    for lib in (torch, cr):
        with pytest.raises(RuntimeError, match="fftfreq requires a floating point or complex"):
            lib.fft.fftfreq(4, dtype=lib.int64)


def test_fftshift_gradient_is_the_inverse_shift():
    x = random((3, 5), False)
    grads = []
    for lib in (torch, cr):
        t = lib.tensor(x, requires_grad=True)
        (lib.fft.fftshift(t) * lib.tensor(x)).sum().backward()
        grads.append(t.grad.numpy())
    np.testing.assert_allclose(grads[1], grads[0])


ERRORS = [
    (lambda lib, x, z: lib.fft.fft(x, norm="bad"), RuntimeError),
    (lambda lib, x, z: lib.fft.fft(x, n=0), RuntimeError),
    (lambda lib, x, z: lib.fft.fft(x, dim=3), IndexError),
    (lambda lib, x, z: lib.fft.fft(x, dim=(0, 1)), TypeError),
    (lambda lib, x, z: lib.fft.fft(lib.tensor(1.)), IndexError),
    (lambda lib, x, z: lib.fft.rfft(z), RuntimeError),
    (lambda lib, x, z: lib.fft.ihfft(z), RuntimeError),
    (lambda lib, x, z: lib.fft.rfftn(z), RuntimeError),
    (lambda lib, x, z: lib.fft.ihfftn(z), RuntimeError),
    (lambda lib, x, z: lib.fft.rfftn(x, dim=()), RuntimeError),
    (lambda lib, x, z: lib.fft.irfftn(z, dim=()), RuntimeError),
    (lambda lib, x, z: lib.fft.hfftn(z, dim=()), RuntimeError),
    (lambda lib, x, z: lib.fft.fftn(x, dim=(0, 0)), RuntimeError),
    (lambda lib, x, z: lib.fft.fftn(x, s=(2,), dim=(0, 1)), RuntimeError),
    (lambda lib, x, z: lib.fft.fftn(x, s=(2, 3, 4)), RuntimeError),
    (lambda lib, x, z: lib.fft.fftn(x, s=(-2, 3)), RuntimeError),
    (lambda lib, x, z: lib.fft.irfft(z[:, :1]), RuntimeError),
    (lambda lib, x, z: lib.fft.irfft(z, n=-1), RuntimeError),
    (lambda lib, x, z: lib.fft.fft(x.to(lib.float16)), RuntimeError),
    (lambda lib, x, z: lib.fft.fftshift(x, dim=5), IndexError),
    (lambda lib, x, z: lib.fft.fft(x, n=2.5), TypeError),
    (lambda lib, x, z: lib.fft.fftn(lib.tensor(1.), dim=0), IndexError),
    (lambda lib, x, z: lib.fft.fftshift(lib.tensor(1.)), RuntimeError),
]


@pytest.mark.parametrize("call, error", ERRORS)
def test_errors_match(call, error):
    messages = []
    for lib in (torch, cr):
        x, z = lib.ones(4, 6), lib.ones(4, 6, dtype=lib.complex64)
        with pytest.raises(error) as info:
            call(lib, x, z)
        messages.append(str(info.value))
    assert messages[1] in messages[0] or messages[0] in messages[1], messages


def test_out_argument():
    x = RNG.standard_normal((3, 4))
    for name in ONE_D + N_D:
        want = getattr(torch.fft, name)(torch.tensor(x, dtype=torch.float32))
        out = cr.empty(0, dtype=cr.complex64 if want.is_complex() else cr.float32)
        got = getattr(cr.fft, name)(cr.tensor(x, dtype=cr.float32), out=out)
        assert got is out
        np.testing.assert_allclose(arr(out), arr(want), atol=1e-5)


# --- stft / istft ------------------------------------------------------------------------
def _spectral(f, *arrays):
    """Values and input gradients of ``f(lib, *tensors)`` on both libraries."""
    results = []
    for lib in (torch, cr):
        ts = [lib.tensor(a, requires_grad=True) for a in arrays]
        with _quiet():
            out = f(lib, *ts)
        w = RNG_FIXED.standard_normal(tuple(out.shape) + (2,))
        loss(lib, out, w[..., 0] + 1j * w[..., 1]).backward()
        results.append((arr(out), [arr(t.grad) for t in ts]))
    (want, want_grads), (got, got_grads) = results
    np.testing.assert_allclose(got, want, atol=1e-8)
    for g, w in zip(got_grads, want_grads):
        np.testing.assert_allclose(g, w, atol=1e-8)


class _quiet:
    def __enter__(self):
        import warnings
        self._w = warnings.catch_warnings()
        self._w.__enter__()
        warnings.simplefilter("ignore")

    def __exit__(self, *exc):
        self._w.__exit__(*exc)


class _FixedRng:
    """The same weights for both libraries' outputs (reseeded per call)."""

    def standard_normal(self, shape):
        return np.random.default_rng(1).standard_normal(shape)


RNG_FIXED = _FixedRng()
SIGNAL = RNG.standard_normal(20)
BATCH = RNG.standard_normal((2, 20))
CSIGNAL = RNG.standard_normal(20) + 1j * RNG.standard_normal(20)
WINDOW = np.hanning(8) + 0.1

STFT_CALLS = [
    (lambda L, x: L.stft(x, 8, return_complex=True), SIGNAL),
    (lambda L, x: L.stft(x, 8, return_complex=False), SIGNAL),
    (lambda L, x, w: L.stft(x, 8, window=w, return_complex=True), SIGNAL, WINDOW),
    (lambda L, x, w: L.stft(x, 8, hop_length=3, win_length=6, window=w, normalized=True,
                            return_complex=True), SIGNAL, WINDOW[:6]),
    (lambda L, x, w: L.stft(x, 8, win_length=6, window=w, center=False,
                            align_to_window=True, return_complex=True), SIGNAL, WINDOW[:6]),
    (lambda L, x, w: L.stft(x, 7, hop_length=2, window=w, center=False, return_complex=True),
     SIGNAL, WINDOW[:7]),
    (lambda L, x, w: L.stft(x, 8, window=w, pad_mode="constant", onesided=False,
                            return_complex=True), BATCH, WINDOW),
    (lambda L, x, w: L.stft(x, 8, window=w, pad_mode="circular", return_complex=True),
     BATCH, WINDOW),
    (lambda L, x, w: L.stft(x, 8, window=w, pad_mode="replicate", return_complex=True),
     SIGNAL, WINDOW),
    (lambda L, x, w: L.stft(x, 8, window=w, return_complex=True), CSIGNAL, WINDOW),
    (lambda L, x, w: L.stft(x, 8, window=w, return_complex=False), CSIGNAL, WINDOW),
    (lambda L, x, w: x.stft(8, window=w, return_complex=True), SIGNAL, WINDOW),
    (lambda L, x, w: L.istft(L.stft(x, 8, window=w, return_complex=True), 8, window=w),
     SIGNAL, WINDOW),
    (lambda L, x, w: L.istft(L.stft(x, 8, window=w, return_complex=True), 8, window=w,
                             length=17), SIGNAL, WINDOW),
    (lambda L, x, w: L.istft(L.stft(x, 8, window=w, return_complex=True), 8, window=w,
                             length=30), SIGNAL, WINDOW),
    (lambda L, x: L.istft(L.stft(x, 8, return_complex=True), 8), BATCH),
    (lambda L, x, w: L.istft(L.stft(x, 8, hop_length=3, win_length=6, window=w,
                                    normalized=True, return_complex=True),
                             8, hop_length=3, win_length=6, window=w, normalized=True),
     BATCH, WINDOW[:6]),
    (lambda L, x, w: L.istft(L.stft(x, 8, window=w, onesided=False, return_complex=True),
                             8, window=w, onesided=False), SIGNAL, WINDOW),
    (lambda L, x, w: L.istft(L.stft(x, 8, window=w, return_complex=True), 8, window=w,
                             onesided=False, return_complex=True), CSIGNAL, WINDOW),
    (lambda L, x, w: L.istft(L.stft(x, 8, window=w, return_complex=True), 8, window=w,
                             center=False), SIGNAL, WINDOW),
    (lambda L, x, w: x.stft(8, window=w, return_complex=True).istft(8, window=w),
     SIGNAL, WINDOW),
]


@pytest.mark.parametrize("call", STFT_CALLS)
def test_stft_and_istft(call):
    _spectral(call[0], *call[1:])


SPECTRAL_ERRORS = [
    lambda L, x: L.stft(x, 8),
    lambda L, x: L.stft(x.to(L.complex128), 8, onesided=True),
    lambda L, x: L.stft(x, 8, window=L.ones(5), return_complex=True),
    lambda L, x: L.stft(x, 8, win_length=9, return_complex=True),
    lambda L, x: L.stft(x, 30, center=False, return_complex=True),
    lambda L, x: L.stft(x, 8, hop_length=0, return_complex=True),
    lambda L, x: L.stft(x.reshape(2, 2, 5), 4, return_complex=True),
    lambda L, x: L.stft(x, 8, return_complex=True, align_to_window=True),
    lambda L, x: L.istft(L.stft(x, 8, return_complex=True).real, 8),
    lambda L, x: L.istft(L.stft(x, 8, return_complex=True), 7),
    lambda L, x: L.istft(L.stft(x, 8, return_complex=True), 8, onesided=False),
    lambda L, x: L.istft(L.stft(x, 8, return_complex=True), 8, return_complex=True),
    lambda L, x: L.istft(L.stft(x, 8, return_complex=True), 8, window=L.zeros(8)),
    lambda L, x: L.istft(L.stft(x, 8, return_complex=True), 8,
                         window=L.tensor(np.hanning(8)), center=False),
]


@pytest.mark.parametrize("call", SPECTRAL_ERRORS)
def test_stft_and_istft_errors(call):
    messages = []
    for lib in (torch, cr):
        with _quiet(), pytest.raises((RuntimeError, NotImplementedError)) as info:
            call(lib, lib.tensor(SIGNAL))
        messages.append((type(info.value), str(info.value).split(") ")[-1].split("\n")[0]))
    assert messages[0] == messages[1]


def test_stft_warnings():
    """(torch warns once per process: chainrule's warnings are checked alone)"""
    for lib in (cr,):
        x = lib.tensor(SIGNAL)
        with pytest.warns(UserWarning, match="return_complex=False is deprecated"):
            lib.stft(x, 8, window=lib.ones(8), return_complex=False)
        with pytest.warns(UserWarning, match="length parameter"):
            lib.istft(lib.stft(x, 8, window=lib.ones(8), return_complex=True), 8,
                      window=lib.ones(8), length=40)


@pytest.mark.parametrize("call", [
    lambda lib, x: lib.fft.fftn(x, out=lib.empty(0)),
    lambda lib, x: lib.fft.rfft2(x, out=lib.empty(0)),
    lambda lib, x: lib.fft.irfftn(x, out=lib.empty(0, dtype=lib.complex64)),
    lambda lib, x: lib.fft.hfft(x, out=lib.empty(0, dtype=lib.complex64)),
    lambda lib, x: lib.fft.ihfft(x, out=lib.empty(0)),
    lambda lib, x: lib.fft.fftfreq(4, out=lib.empty(0, dtype=lib.int64)),
])
def test_out_dtype_errors(call):
    messages = []
    for lib in (torch, cr):
        with pytest.raises(RuntimeError) as info:
            call(lib, lib.ones(4, 6))
        messages.append(str(info.value))
    assert messages[0] == messages[1]


def test_out_takes_its_dtype():
    for lib in (torch, cr):
        out = lib.empty(0, dtype=lib.complex128)
        lib.fft.fft(lib.ones(4), out=out)
        freq = lib.empty(0, dtype=lib.float64)
        lib.fft.fftfreq(5, out=freq)
        assert out.dtype == lib.complex128 and freq.dtype == lib.float64
        assert freq.tolist()[1] == 0.2
