"""``chainrule.fft``: discrete Fourier transforms with backward and forward rules,
torch.fft's names and signatures (fft, ifft, fft2, ifft2, fftn, ifftn, rfft, irfft,
rfft2, irfft2, rfftn, irfftn, hfft, ihfft, hfft2, ihfft2, hfftn, ihfftn, fftfreq,
rfftfreq, fftshift, ifftshift). Float and complex inputs (integers are promoted).

>>> import chainrule as cr
>>> x = cr.tensor([1., 2., 3., 4.], requires_grad=True)
>>> cr.fft.rfft(x).abs().sum().backward()
>>> [round(v, 4) for v in x.grad.tolist()]
[-0.7071, 1.2929, 0.7071, 2.7071]
"""
from ._ops.fft_functions import FFT as _FFT

globals().update(_FFT)
__all__ = sorted(_FFT)
