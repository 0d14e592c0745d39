"""chainrule.fft, stft and istft without torch: values against NumPy, the gradients'
conventions (Note [fft adjoints]), argument handling and errors, out=, meta tensors.
The parity tier against torch is tests/test_parity_fft.py; gradcheck, gradgradcheck,
JVPs and vmap come from the samples (core/tests/samples/fft.py)."""
import numpy as np
import pytest

import chainrule as cr

RNG = np.random.default_rng(0)


def test_values_are_numpys_for_every_norm():
    x = RNG.standard_normal((3, 8))
    for norm in (None, "backward", "ortho", "forward"):
        np.testing.assert_allclose(cr.fft.fft(cr.tensor(x), norm=norm).numpy(),
                                   np.fft.fft(x, norm=norm))
        np.testing.assert_allclose(cr.fft.irfft(cr.tensor(np.fft.rfft(x)), n=8, norm=norm).numpy(),
                                   np.fft.irfft(np.fft.rfft(x), n=8, norm=norm))
        np.testing.assert_allclose(cr.fft.hfft(cr.tensor(x + 1j), n=7, norm=norm).numpy(),
                                   np.fft.hfft(x + 1j, n=7, norm=norm))
        np.testing.assert_allclose(cr.fft.ihfft(cr.tensor(x), norm=norm).numpy(),
                                   np.fft.ihfft(x, norm=norm))


def test_real_input_gradients_count_the_hermitian_bins():
    """rfft: bins it drops get no gradient; irfft: interior bins count twice."""
    x = cr.zeros(8, dtype=cr.float64, requires_grad=True)
    cr.fft.rfft(x)[0].real.backward()
    assert x.grad.tolist() == [1.0] * 8
    z = cr.zeros(5, dtype=cr.complex128, requires_grad=True)
    cr.fft.irfft(z, n=8, norm="forward").sum().backward()    # only the DC bin reaches it
    assert z.grad.tolist() == [8 + 0j, 0j, 0j, 0j, 0j]
    z.grad = None
    cr.fft.irfft(z, n=8, norm="forward")[0].backward()
    assert z.grad.real.tolist() == [1.0, 2.0, 2.0, 2.0, 1.0]


def test_complex_gradient_is_the_adjoint_transform():
    z = cr.tensor(RNG.standard_normal(6) + 1j * RNG.standard_normal(6), requires_grad=True)
    g = RNG.standard_normal(6) + 1j * RNG.standard_normal(6)
    cr.fft.fft(z, norm="ortho").backward(cr.tensor(g))
    np.testing.assert_allclose(z.grad.numpy(), np.fft.ifft(g, norm="ortho"))


def test_node_names_are_the_references():
    x = cr.ones(4, requires_grad=True)
    assert cr.fft.fft(x).grad_fn.name() == "FftR2CBackward0"
    assert cr.fft.ifft(x).grad_fn.name() == "ConjBackward0"
    assert cr.fft.fft2(x.reshape(2, 2)).grad_fn.name() == "FftC2CBackward0"
    assert cr.fft.irfft(x).grad_fn.name() == "FftC2RBackward0"


def test_dtypes_and_promotion():
    assert cr.fft.fft(cr.arange(4)).dtype == cr.complex64
    assert cr.fft.rfft(cr.ones(4, dtype=cr.float64)).dtype == cr.complex128
    assert cr.fft.irfft(cr.ones(3, dtype=cr.complex64)).dtype == cr.float32
    assert cr.fft.irfft(cr.ones(3)).dtype == cr.float32
    with pytest.raises(RuntimeError, match="Unsupported dtype Half"):
        cr.fft.fft(cr.ones(4, dtype=cr.float16))


def test_sizes_crop_and_pad():
    x = cr.arange(6.)
    assert cr.fft.fft(x, n=4).tolist() == cr.fft.fft(x[:4]).tolist()
    padded = cr.fft.fft(x, n=8).numpy()
    np.testing.assert_allclose(padded, np.fft.fft(np.arange(6.), n=8), atol=1e-5)
    assert cr.fft.fftn(cr.ones(3, 4, 5), s=(2, -1)).shape == (3, 2, 5)
    assert cr.fft.irfftn(cr.ones(3, 4, dtype=cr.complex64)).shape == (3, 6)
    assert cr.fft.ihfft2(cr.ones(3, 4), s=(3, 3)).shape == (3, 2)


@pytest.mark.parametrize("call, error, message", [
    (lambda x: cr.fft.fft(x, norm="bad"), RuntimeError, 'Invalid normalization mode: "bad"'),
    (lambda x: cr.fft.fft(x, n=0), RuntimeError, r"Invalid number of data points \(0\)"),
    (lambda x: cr.fft.fft(x, dim=2), IndexError, "Dimension out of range"),
    (lambda x: cr.fft.rfft(x + 0j), RuntimeError, "rfft expects a real input tensor, but "
                                                  "got ComplexFloat"),
    (lambda x: cr.fft.fftn(x, dim=(1, 1)), RuntimeError, "FFT dims must be unique"),
    (lambda x: cr.fft.fftn(x, s=(1,), dim=(0, 1)), RuntimeError, "must have the same length"),
    (lambda x: cr.fft.rfftn(x, dim=()), RuntimeError, "rfftn must transform at least one"),
    (lambda x: cr.fft.irfft(x[:, :1]), RuntimeError, r"Invalid number of data points \(0\)"),
    (lambda x: cr.fft.fftfreq(3, dtype=cr.int32), RuntimeError, "fftfreq requires a floating"),
])
def test_errors(call, error, message):
    with pytest.raises(error, match=message):
        call(cr.ones(2, 3))


def test_out_and_its_refusal_with_autograd():
    out = cr.empty(0, dtype=cr.complex64)
    assert cr.fft.fft(cr.arange(4.), out=out) is out and out.shape == (4,)
    with pytest.raises(RuntimeError, match="don't support automatic differentiation"):
        cr.fft.fft(cr.ones(4, requires_grad=True), out=out)


def test_frequencies_and_shifts():
    np.testing.assert_allclose(cr.fft.fftfreq(7, 0.5).numpy(), np.fft.fftfreq(7, 0.5), rtol=1e-6)
    np.testing.assert_allclose(cr.fft.rfftfreq(6).numpy(), np.fft.rfftfreq(6), rtol=1e-6)
    x = cr.arange(12).reshape(3, 4)
    assert cr.fft.fftshift(x).tolist() == np.fft.fftshift(np.arange(12).reshape(3, 4)).tolist()
    assert cr.fft.ifftshift(cr.fft.fftshift(x, dim=0), dim=0).tolist() == x.tolist()
    assert cr.fft.fftfreq(4, requires_grad=True).requires_grad


def test_meta_tensors_infer_shapes_without_data():
    x = cr.empty(512, 512, 64, device="meta", requires_grad=True)
    y = cr.fft.rfftn(x, dim=(0, 2))
    assert y.is_meta and y.shape == (512, 512, 33) and y.dtype == cr.complex64
    cr.fft.irfftn(y, s=(512, 64), dim=(0, 2)).sum().backward()
    assert x.grad.is_meta and x.grad.shape == x.shape


def test_stft_istft_round_trip_and_gradient():
    x = cr.tensor(RNG.standard_normal((2, 40)), requires_grad=True)
    window = cr.hann_window(16, dtype=cr.float64)
    spec = cr.stft(x, 16, hop_length=4, window=window, return_complex=True)
    assert spec.shape == (2, 9, 11)
    back = cr.istft(spec, 16, hop_length=4, window=window, length=40)
    np.testing.assert_allclose(back.detach().numpy(), x.detach().numpy(), atol=1e-12)
    back.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), np.ones((2, 40)), atol=1e-12)


def test_stft_requires_return_complex_for_real_input():
    with pytest.raises(RuntimeError, match="stft requires the return_complex parameter"):
        cr.stft(cr.ones(20), 8, window=cr.ones(8))
    with pytest.warns(UserWarning, match="return_complex=False is deprecated"):
        assert cr.stft(cr.ones(20), 8, window=cr.ones(8), return_complex=False).shape == \
            (5, 11, 2)
    with pytest.raises(RuntimeError, match="istft requires a complex-valued input"):
        cr.istft(cr.ones(5, 11), 8)
