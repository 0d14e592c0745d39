"""Integer images and labels: uint8 arithmetic wraps as C casts, stores check the range,
and the factories refuse values that overflow (torch's messages)."""
import torch

torch.manual_seed(0)
img = torch.randint(0, 256, (2, 4, 4), dtype=torch.uint8)
print(img[0])
print("darker (wraps):", (img - 50)[0, 0])
print("inverted:", (255 - img)[0, 0], (img + (-1))[0, 0])
print("scaled:", (img * 2)[0, 0], (img // 3)[1, 1])
bright = (img.float() * 1.5).clamp(0, 255).to(torch.uint8)
print("brightened:", bright[0, 0], bright.dtype)
mask = img > 128
print("masked:", img.masked_fill(mask, 255)[0, 0], torch.where(mask, img, -1)[0, 1])
print("compare:", (img == 300).any().item(), (img < -1).all().item())
acc = torch.zeros(4, dtype=torch.uint8)
for row in img[0]:
    acc += row                       # accumulates modulo 256
print("accumulated:", acc)
labels = torch.tensor([-1, 3, 7, -1], dtype=torch.int8)
print("labels:", labels, (labels + 200), labels.clamp(min=0))
print("from negatives:", torch.tensor([-1, -255], dtype=torch.uint8), torch.full((2,), -1, dtype=torch.uint8))
for what, f in [("fill_", lambda: img.clone().fill_(300)),
                ("masked_fill", lambda: img.masked_fill(mask, 256)),
                ("clamp", lambda: img.clamp(-1, 300)),
                ("setitem", lambda: img.clone().__setitem__((0, 0, 0), 256)),
                ("full", lambda: torch.full((2,), 256, dtype=torch.uint8)),
                ("tensor", lambda: torch.tensor([300], dtype=torch.uint8)),
                ("tensor float", lambda: torch.tensor([1.5e10], dtype=torch.int32)),
                ("tensor huge", lambda: torch.tensor([2 ** 63])),
                ("add huge", lambda: img + 2 ** 70)]:
    try:
        f()
        print(what, "ok")
    except (RuntimeError, ValueError, OverflowError) as e:
        print(what, type(e).__name__, e)
