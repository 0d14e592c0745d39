def gradcheck(*a, **k): raise RuntimeError
def gradgradcheck(*a, **k): raise RuntimeError
