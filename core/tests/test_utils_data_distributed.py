"""chainrule.utils.data.DistributedSampler: the replicas' shares (padding, drop_last),
shuffling by seed and epoch, use with DataLoader, and the errors."""
import pytest

import chainrule as cr
from chainrule.utils.data import DataLoader, DistributedSampler, TensorDataset


def shares(n, replicas, **options):
    return [list(DistributedSampler(range(n), replicas, r, **options)) for r in range(replicas)]


def test_shares_are_strided_and_padded_from_the_start():
    assert shares(10, 3, shuffle=False) == [[0, 3, 6, 9], [1, 4, 7, 0], [2, 5, 8, 1]]
    assert shares(2, 5, shuffle=False) == [[0], [1], [0], [1], [0]]
    assert shares(10, 3, shuffle=False, drop_last=True) == [[0, 3, 6], [1, 4, 7], [2, 5, 8]]
    sampler = DistributedSampler(range(10), 4, 1, drop_last=True)
    assert len(sampler) == sampler.num_samples == 2 and sampler.total_size == 8


def test_shuffle_is_a_permutation_fixed_by_seed_and_epoch():
    parts = shares(12, 3, seed=5)
    assert sorted(i for part in parts for i in part) == list(range(12))
    assert parts == shares(12, 3, seed=5)
    assert parts != shares(12, 3, seed=6)
    sampler = DistributedSampler(range(12), 3, 0, seed=5)
    first = list(sampler)
    sampler.set_epoch(1)
    assert sampler.epoch == 1 and list(sampler) != first
    assert list(sampler) == list(DistributedSampler(range(12), 3, 0, seed=6))


def test_with_a_data_loader():
    data = TensorDataset(cr.arange(8.0))
    loader = DataLoader(data, batch_size=2, sampler=DistributedSampler(data, 2, 1, shuffle=False))
    assert [batch[0].tolist() for batch in loader] == [[1.0, 3.0], [5.0, 7.0]]


@pytest.mark.parametrize("options", [dict(), dict(num_replicas=2), dict(rank=0)])
def test_without_a_process_group_both_numbers_are_needed(options):
    with pytest.raises(ValueError, match="Default process group has not been initialized"):
        DistributedSampler(range(4), **options)


@pytest.mark.parametrize("rank", [2, -1])
def test_rank_must_be_in_range(rank):
    with pytest.raises(ValueError, match=rf"Invalid rank {rank}, rank should be in the "
                                         r"interval \[0, 1\]"):
        DistributedSampler(range(4), num_replicas=2, rank=rank)
