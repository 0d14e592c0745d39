"""``stft`` and ``istft`` (functions and Tensor methods), composed as the reference
composes them: framing (``unfold``), the window, the fft table ops (fft.py), and for
the inverse an overlap-add (``index_add``) divided by the window's squared envelope.
Every step is differentiable, so gradients reach the signal and the window."""
import warnings

import numpy as np

from .. import _dtypes
from .._factories import as_tensor
from .._tensor import Tensor
from ._common import FUNCTIONS, public
from .fft import _fft_c2c, _fft_c2r, _fft_r2c

_NO_WINDOW = ("A window was not provided. A rectangular window will be applied{}To suppress "
              "this warning and use a rectangular window, explicitly set "
              "`window=torch.ones(n_fft, device=<device>)`.")
_STFT_LEAKAGE = (",which is known to cause spectral leakage. Other windows such as "
                 "torch.hann_window or torch.hamming_window are recommended to reduce "
                 "spectral leakage.")
_ISTFT_LOSSLESS = (".Please provide the same window used by stft to make the inversion "
                   "lossless.")
_DEPRECATED_REAL = (
    "stft with return_complex=False is deprecated. In a future pytorch release, stft will "
    "return complex tensors for all inputs, and return_complex=False will raise an error.\n"
    "Note: you can still call torch.view_as_real on the complex output to recover the old "
    "return format.")


def _describe(t):
    """The reference's argument rendering in stft/istft messages: type and shape."""
    if t is None:
        return "None"
    return f"{t.type()}[{', '.join(str(n) for n in t.shape)}]"


class _Checker:
    """Raises the reference's RuntimeError: the call rendered, then the complaint."""

    def __init__(self, name, input, n_fft, hop, win, window, **flags):
        shown = ", ".join(f"{k}={_flag(v)}" for k, v in flags.items())
        self.prefix = (f"{name}({_describe(input)}, n_fft={n_fft}, hop_length={hop}, "
                       f"win_length={win}, window={_describe(window)}, {shown}) : ")

    def __call__(self, ok, message):
        if not ok:
            raise RuntimeError(self.prefix + message)


def _flag(v):
    return int(v) if isinstance(v, bool) else v


def _padded_window(window, win_length, n_fft, like):
    """The window (ones when absent) zero-padded on both sides to ``n_fft``."""
    if window is None:
        window = (like.real if like.is_complex() else like).new_ones((win_length,))
    left = (n_fft - win_length) // 2
    if left or n_fft - win_length:
        window = FUNCTIONS["_constant_pad"](window, ((left, n_fft - win_length - left),), 0)
    return window


@public
def stft(input, n_fft, hop_length=None, win_length=None, window=None, center=True,
         pad_mode="reflect", normalized=False, onesided=None, return_complex=None,
         align_to_window=None):
    """Short-time Fourier transform: frames of ``n_fft`` samples every ``hop_length``
    (default n_fft // 4), times ``window`` (``win_length`` long, centred), each
    transformed; shape (batch?, freq, frames). ``center`` pads n_fft // 2 on both sides
    (``pad_mode``); ``return_complex`` must be given for real input (False returns the
    deprecated real (..., 2) form, with a warning).

    >>> import chainrule as cr
    >>> x = cr.arange(16.)
    >>> cr.stft(x, 8, window=cr.ones(8), return_complex=True).shape
    chainrule.Size([5, 9])
    """
    if center and align_to_window is not None:
        raise RuntimeError("stft align_to_window should only be set when center = false")
    if center:
        input = _center_pad(input, n_fft, pad_mode)
    return _frames_transform(input, n_fft, hop_length, win_length, window, normalized,
                             onesided, return_complex, align_to_window)


def _center_pad(input, n_fft, pad_mode):
    from ..nn.functional import pad
    dims = input.dim()
    extended = input.view([1] * (3 - dims) + list(input.shape))
    padded = pad(extended, [n_fft // 2, n_fft // 2], pad_mode)
    return padded.view(padded.shape[3 - dims:])


def _frames_transform(input, n_fft, hop_length, win_length, window, normalized, onesided,
                      return_complex, align_to_window):
    hop = n_fft >> 2 if hop_length is None else hop_length
    win = n_fft if win_length is None else win_length
    complex_input = input.is_complex() or (window is not None and window.is_complex())
    _check_return_complex(return_complex, complex_input, window)
    check = _Checker("stft", input, n_fft, hop, win, window, normalized=normalized,
                     onesided=onesided, return_complex=return_complex,
                     align_to_window=align_to_window)
    x = _stft_signal(input, n_fft, hop, win, window, check)
    if align_to_window and win < n_fft:       # frames start where the window does
        left = (n_fft - win) // 2
        x = FUNCTIONS["_constant_pad"](x, ((0, 0), (left, n_fft - win - left)), 0)
    frames = x.unfold(-1, n_fft, hop)
    if window is not None:
        frames = frames * _padded_window(window, win, n_fft, x)
    out = _transform_frames(frames, normalized, onesided, complex_input).transpose(1, 2)
    out = out.squeeze(0) if input.dim() == 1 else out
    return out if return_complex else FUNCTIONS["view_as_real"](out)


def _stft_signal(input, n_fft, hop, win, window, check):
    """The signal as (batch, length), after the reference's argument checks."""
    check(input.dim() in (1, 2), "expected a 1D or 2D tensor")
    x = input.unsqueeze(0) if input.dim() == 1 else input
    length = x.shape[1]
    check(0 < n_fft <= length, f"expected 0 < n_fft < {length}, but got n_fft={n_fft}")
    check(hop > 0, f"expected hop_length > 0, but got hop_length={hop}")
    check(0 < win <= n_fft, f"expected 0 < win_length <= n_fft, but got win_length={win}")
    check(window is None or (window.dim() == 1 and window.shape[0] == win),
          f"expected a 1D window tensor of size equal to win_length={win}, but got window "
          f"with size {list(window.shape) if window is not None else []}")
    return x


def _check_return_complex(return_complex, complex_input, window):
    if window is None:
        warnings.warn(_NO_WINDOW.format(_STFT_LEAKAGE), UserWarning, stacklevel=4)
    if return_complex is None and not complex_input:
        raise RuntimeError("stft requires the return_complex parameter be given for real "
                           "inputs, and will further require that return_complex=True in a "
                           "future PyTorch release.")
    if return_complex is False and not complex_input:
        warnings.warn(_DEPRECATED_REAL, UserWarning, stacklevel=4)


def _transform_frames(frames, normalized, onesided, complex_input):
    normalization = 1 if normalized else 0
    last = (frames.dim() - 1,)
    if complex_input:
        if onesided:
            raise RuntimeError("Cannot have onesided output if window or input is complex")
        return _fft_c2c(_as_complex(frames), last, normalization, True)
    return _fft_r2c(frames, last, normalization, True if onesided is None else onesided)


def _as_complex(t):
    if t.is_complex():
        return t
    dtype = _dtypes.from_numpy_dtype(t._data.dtype)
    return t.to(dtype.to_complex())


@public
def istft(input, n_fft, hop_length=None, win_length=None, window=None, center=True,
          normalized=False, onesided=None, length=None, return_complex=False):
    """The inverse of ``stft`` (least-squares overlap-add): a complex (freq, frames) or
    (batch, freq, frames) spectrogram back to a signal of ``length`` samples (default:
    what the frames cover, minus the centre padding).

    >>> import chainrule as cr
    >>> x = cr.arange(16.)
    >>> w = cr.ones(8)
    >>> y = cr.istft(cr.stft(x, 8, window=w, return_complex=True), 8, window=w)
    >>> [round(v, 4) for v in y.tolist()[:4]]
    [0.0, 1.0, 2.0, 3.0]
    """
    hop = n_fft >> 2 if hop_length is None else hop_length
    win = n_fft if win_length is None else win_length
    check = _Checker("istft", input, n_fft, hop, win, window, center=center,
                     normalized=normalized, onesided=onesided, length=length,
                     return_complex=return_complex)
    frames, onesided = _istft_frames(input, n_fft, hop, win, window, check, onesided)
    window = _istft_window(window, win, n_fft, frames)
    spectra = frames.transpose(1, 2)
    signal_frames = _inverse_frames(spectra, n_fft, normalized, onesided, return_complex,
                                    window) * window
    y, envelope = _overlap_add(signal_frames, window, hop)
    return _trimmed(y, envelope, n_fft, center, length, input.dim() == 2, check)


def _istft_frames(input, n_fft, hop, win, window, check, onesided):
    if not (isinstance(input, Tensor) and input.is_complex()):
        raise RuntimeError("istft requires a complex-valued input tensor matching the output "
                           "from stft with return_complex=True.")
    check(input.numel() > 0, "istft input tensor cannot be empty")
    check(input.dim() in (2, 3), f"Expected a tensor with 3 or 4 dimensions of complex, but "
                                 f"got {input.dim() + 1}")
    fft_size = input.shape[-2]
    onesided = fft_size != n_fft if onesided is None else onesided
    if onesided:
        check(n_fft // 2 + 1 == fft_size, "expected the frequency dimension (3rd to the last) "
              f"of the input tensor to match n_fft / 2 + 1 when onesided=True, but got "
              f"{fft_size}")
    else:
        check(n_fft == fft_size, "expected the frequency dimension (3rd to the last) of the "
              f"input tensor to match n_fft when onesided=False, but got {fft_size}")
    check(0 < hop <= win, "expected 0 < hop_length <= win_length")
    check(0 < win <= n_fft, "expected 0 < win_length <= n_fft")
    check(window is None or (window.dim() == 1 and window.shape[0] == win),
          "Invalid window shape. window has to be 1D and length of `win_length`")
    return (input.unsqueeze(0) if input.dim() == 2 else input), onesided


def _istft_window(window, win, n_fft, frames):
    if window is None:
        warnings.warn(_NO_WINDOW.format(_ISTFT_LOSSLESS), UserWarning, stacklevel=3)
    return _padded_window(window, win, n_fft, frames)


def _inverse_frames(spectra, n_fft, normalized, onesided, return_complex, window):
    normalization = 1 if normalized else 2
    last = (spectra.dim() - 1,)
    if return_complex:
        if onesided:
            raise RuntimeError("Cannot have onesided output if window or input is complex")
        return _fft_c2c(spectra, last, normalization, False)
    if window.is_complex():
        raise RuntimeError("Complex windows are incompatible with return_complex=False")
    if not onesided:
        spectra = spectra.narrow(-1, 0, n_fft // 2 + 1)
    return _fft_c2r(spectra, last, normalization, n_fft)


def _overlap_add(frames, window, hop):
    """Frames (channel, n_frames, n_fft) summed into a signal, with the window's squared
    envelope over the same positions (the reference's unfold_backward)."""
    channels, n_frames, n_fft = frames.shape
    total = n_fft + hop * (n_frames - 1)
    positions = np.add.outer(np.arange(n_frames) * hop, np.arange(n_fft)).reshape(-1)
    index = as_tensor(positions, device=frames.device)
    y = frames.new_zeros((channels, total)).index_add(1, index, frames.reshape(channels, -1))
    squares = (window * window).expand(n_frames, n_fft).reshape(1, -1)
    envelope = squares.new_zeros((1, total)).index_add(1, index, squares)
    return y, envelope


def _trimmed(y, envelope, n_fft, center, length, squeeze, check):
    total = y.shape[1]
    start = n_fft // 2 if center else 0
    end = start + length if length is not None else (total - n_fft // 2 if center else total)
    y, envelope = y[:, start:end], envelope[:, start:end]
    if bool((envelope.abs().min() < 1e-11).item()):
        raise RuntimeError(check.prefix[:-3] + " window overlap add min: 1")
    y = y / envelope
    y = y.squeeze(0) if squeeze else y
    if end > total:
        warnings.warn("The length of signal is shorter than the length parameter. Result is "
                      "being padded with zeros in the tail. Please check your center and "
                      "hop_length settings.", UserWarning, stacklevel=3)
        pads = ((0, 0),) * (y.dim() - 1) + ((0, end - total),)
        y = FUNCTIONS["_constant_pad"](y, pads, 0)
    return y
