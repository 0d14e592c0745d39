"""Spectral methods as users write them: denoising by learning a frequency-domain
filter (rfft / irfft, a few gradient steps), circular convolution through fft2, a
spectrogram (stft) and its inversion (istft), fftfreq/fftshift bookkeeping."""
import math

import torch

torch.set_default_dtype(torch.float64)

# --- a noisy signal and a learnable spectral filter -------------------------------------
n = 64
t = torch.arange(n) / n
clean = torch.sin(2 * math.pi * 3 * t) + 0.5 * torch.cos(2 * math.pi * 7 * t)
noise = 0.3 * torch.sin(2 * math.pi * 23 * t) + 0.2 * torch.cos(2 * math.pi * 29 * t + 0.4)
noisy = clean + noise

freqs = torch.fft.rfftfreq(n, d=1.0 / n)
print("rfftfreq", freqs[:5], freqs[-1].item())
gain = torch.full((n // 2 + 1,), 0.5, requires_grad=True)
opt = torch.optim.Adam([gain], lr=0.1)
for step in range(30):
    opt.zero_grad()
    spectrum = torch.fft.rfft(noisy, norm="ortho")
    denoised = torch.fft.irfft(spectrum * gain, n=n, norm="ortho")
    loss = ((denoised - clean) ** 2).mean()
    loss.backward()
    opt.step()
    if step % 10 == 0 or step == 29:
        print(f"step {step:2d} loss {loss.item():.6f}")
print("learned gain at 3, 7, 23, 29 Hz", gain.detach()[[3, 7, 23, 29]])
print("gain grad at 3, 7 Hz (last step)", gain.grad[[3, 7]])

# --- the Hermitian-redundant bins: rfft's gradient vs fft's --------------------------------
x = torch.linspace(-1, 1.5, 9, requires_grad=True)
torch.fft.rfft(x).abs().sum().backward()
print("rfft |X| grad", x.grad)
x.grad = None
torch.fft.fft(x).abs().sum().backward()
print("fft |X| grad", x.grad)
y = torch.fft.irfft(torch.tensor([1.0, 2 - 1j, 0.5j, 3.0, -1 + 1j], requires_grad=True), n=8)
z = torch.tensor([1.0, 2 - 1j, 0.5j, 3.0, -1 + 1j], requires_grad=True)
(torch.fft.irfft(z, n=8) * torch.arange(8.0)).sum().backward()
print("irfft output", y.detach())
print("irfft grad (interior bins doubled)", z.grad)

# --- circular convolution of an image with a kernel through fft2 -----------------------
rows, cols = torch.meshgrid(torch.arange(6.0), torch.arange(8.0), indexing="ij")
image = (torch.sin(rows * 1.3 + cols * 0.7) + 0.1 * cols).requires_grad_()
kernel = torch.zeros(6, 8)
kernel[0, 0], kernel[0, 1], kernel[1, 0] = 0.5, 0.25, 0.25
blurred = torch.fft.ifft2(torch.fft.fft2(image) * torch.fft.fft2(kernel)).real
direct = 0.5 * image + 0.25 * torch.roll(image, 1, 1) + 0.25 * torch.roll(image, 1, 0)
print("fft2 convolution matches roll", torch.allclose(blurred, direct))
(blurred ** 2).sum().backward()
print("image grad row 0", image.grad[0])
print("rfftn/irfftn round trip", torch.allclose(torch.fft.irfftn(torch.fft.rfftn(image), s=(6, 8)), image))
print("hfft of ihfft", torch.allclose(torch.fft.hfft(torch.fft.ihfft(clean), n=n), clean))

# --- spectrogram and inversion --------------------------------------------------------------
window = torch.hann_window(16, dtype=torch.float64)
signal = noisy.clone().requires_grad_()
spec = torch.stft(signal, n_fft=16, hop_length=4, window=window, return_complex=True)
print("spectrogram", spec.shape, spec.dtype)
power = spec.abs() ** 2
print("frame energy", power.sum(0)[:5])
back = torch.istft(spec, n_fft=16, hop_length=4, window=window, length=n)
print("istft reconstructs", torch.allclose(back, signal), (back - signal).abs().max().item() < 1e-12)
power[2:5].sum().backward()
print("band-energy grad", signal.grad[:6])

# --- frequency bookkeeping ---------------------------------------------------------------------
f = torch.fft.fftfreq(8, d=0.5)
print("fftfreq", f)
print("fftshift", torch.fft.fftshift(f))
print("ifftshift(fftshift)", torch.fft.ifftshift(torch.fft.fftshift(f)))
centered = torch.fft.fftshift(torch.fft.fft2(image.detach()), dim=(-2, -1))
print("centered DC", centered[3, 4].real.item(), image.detach().sum().item())
print("ortho preserves energy", torch.allclose(torch.fft.fftn(image.detach(), norm="ortho").abs().pow(2).sum(), image.detach().pow(2).sum()))
