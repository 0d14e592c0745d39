"""Samples for the fft family (fft_c2c, fft_r2c, fft_c2r), through the public
functions of chainrule.fft: every norm, odd and even sizes, cropping and padding
(``n``/``s``), several dims, and the compositions (``ifft`` of a real tensor, ``hfftn``,
``ihfftn``). torch is imported lazily by the parity calls."""
import importlib

import chainrule as cr

from . import Sample


def _torch():
    return importlib.import_module("torch")


def _torch_fft():
    return _torch().fft


def _fft(op, name, shape, complex=False, **kwargs):
    note = "-" + "-".join(f"{k}={v}" for k, v in kwargs.items()) if kwargs else ""
    return Sample(op, lambda x: getattr(cr.fft, name)(x, **kwargs), shape, complex=complex,
                  torch_call=lambda x: getattr(_torch_fft(), name)(x, **kwargs),
                  note=f"-{name}{note}{'-complex' if complex else ''}")


SAMPLES = [
    _fft("fft_c2c", "fft", (3, 5), complex=True),
    _fft("fft_c2c", "ifft", (3, 5), complex=True, n=6, norm="ortho"),
    _fft("fft_c2c", "fftn", (2, 3, 4), complex=True, s=(4, 2), norm="forward"),
    _fft("fft_c2c", "ifft2", (3, 4), norm="backward"),
    _fft("fft_c2c", "fftn", (2, 3), dim=()),
    _fft("fft_r2c", "rfft", (3, 5)),
    _fft("fft_r2c", "rfft", (4,), n=6, norm="ortho"),
    _fft("fft_r2c", "fft", (2, 5), dim=0),
    _fft("fft_r2c", "ifft", (4,), norm="forward"),
    _fft("fft_r2c", "rfftn", (2, 3, 4), dim=(0, 2)),
    _fft("fft_r2c", "ihfft", (5,), n=4),
    _fft("fft_r2c", "ihfftn", (3, 4), norm="ortho"),
    _fft("fft_c2r", "irfft", (3, 4), complex=True),
    _fft("fft_c2r", "irfft", (4,), complex=True, n=7, norm="ortho"),
    _fft("fft_c2r", "irfftn", (2, 3, 3), complex=True, s=(3, 4), norm="forward"),
    _fft("fft_c2r", "hfft", (4,), complex=True, n=5),
    _fft("fft_c2r", "hfftn", (3, 3), complex=True),
    _fft("fft_c2r", "irfft2", (2, 3), norm="ortho"),
]

# stft and istft compose the table ops: gradients reach the signal and the window
SAMPLES += [
    Sample("fft_r2c", lambda x, w: cr.stft(x, 8, hop_length=3, window=w, return_complex=True),
           (2, 20), (8,), domain=(0.5, 1.5),
           torch_call=lambda x, w: _torch().stft(
               x, 8, hop_length=3, window=w, return_complex=True), note="-stft"),
    Sample("fft_c2r", lambda z, w: cr.istft(cr.view_as_complex(z), 8, hop_length=2,
                                            win_length=6, window=w),
           (5, 9, 2), (6,), domain=(0.5, 1.5),
           torch_call=lambda z, w: _torch().istft(_torch().view_as_complex(z), 8,
                                                  hop_length=2, win_length=6, window=w),
           note="-istft"),
]
