"""Parity tier for chainrule.utils.data.DistributedSampler against PyTorch (skips
without torch): shares, padding, drop_last, lengths and errors. Shuffled orders come
from each library's own generator, so only their properties are compared."""
import pytest

torch = pytest.importorskip("torch")

from torch.utils.data import DistributedSampler as TorchSampler  # noqa: E402

from chainrule.utils.data import DistributedSampler  # noqa: E402
from chainrule.utils.data.distributed import DistributedSampler as ByPath  # noqa: E402


@pytest.mark.parametrize("n", [0, 1, 2, 7, 10, 12])
@pytest.mark.parametrize("replicas", [1, 3, 5])
@pytest.mark.parametrize("drop_last", [False, True])
def test_unshuffled_shares_match_torch(n, replicas, drop_last):
    for rank in range(replicas):
        ours = DistributedSampler(range(n), replicas, rank, shuffle=False, drop_last=drop_last)
        theirs = TorchSampler(range(n), replicas, rank, shuffle=False, drop_last=drop_last)
        assert list(ours) == list(theirs)
        assert (len(ours), ours.total_size) == (len(theirs), theirs.total_size)


@pytest.mark.parametrize("drop_last", [False, True])
def test_shuffled_shares_have_torch_shape(drop_last):
    def summary(cls):
        parts = [list(cls(range(11), 3, r, seed=2, drop_last=drop_last)) for r in range(3)]
        flat = [i for p in parts for i in p]
        return [len(p) for p in parts], len(set(flat)), len(flat)
    assert summary(DistributedSampler) == summary(TorchSampler)


def _error(fn):
    try:
        fn()
    except Exception as exc:  # noqa: BLE001 - the type and message are compared
        return type(exc).__name__, str(exc)
    return None


@pytest.mark.parametrize("options", [dict(), dict(num_replicas=2), dict(rank=1),
                                     dict(num_replicas=2, rank=2),
                                     dict(num_replicas=2, rank=-1),
                                     dict(num_replicas=0, rank=0)])
def test_errors_match_torch(options):
    got = [_error(lambda cls=cls: cls(range(4), **options)) for cls in (DistributedSampler,
                                                                       TorchSampler)]
    assert got[0] is not None and got[0] == got[1]


def test_attributes_and_path_match_torch():
    ours, theirs = (cls(range(9), 2, 1, seed=4) for cls in (DistributedSampler, TorchSampler))
    names = ("num_replicas", "rank", "epoch", "drop_last", "num_samples", "total_size",
             "shuffle", "seed")
    assert [getattr(ours, k) for k in names] == [getattr(theirs, k) for k in names]
    ours.set_epoch(3)
    theirs.set_epoch(3)
    assert ours.epoch == theirs.epoch == 3 and ByPath is DistributedSampler
