"""The caching allocator (Note [caching allocator]) against a fake device memory of a
set capacity: size classes, reuse, split and merge, per-stream pools, record_stream,
out-of-memory retry and the error's text, statistics."""
import pytest

import chainrule as cr
from chainrule_cuda import _lib, runtime

from runtime_support import (  # noqa: F401  (fake_device: a fixture)
    Allocator, MiB, fake_device, hold, host_build_only, needs_device)

pytestmark = needs_device


def test_requests_round_up_to_512_bytes_in_a_2_mib_small_segment(fake_device):
    a = fake_device(64 * MiB)
    p = a.alloc(1)
    q = a.alloc(513)
    s = a.stats()
    assert s["allocated_bytes.all.current"] == 512 + 1024
    assert s["allocated_bytes.small_pool.current"] == 512 + 1024
    assert s["reserved_bytes.all.current"] == 2 * MiB
    assert s["segment.all.current"] == 1
    assert q == p + 512  # split from the same segment, right after p
    a.free(p), a.free(q)


def test_large_requests_get_20_mib_segments_or_their_size_rounded_to_2_mib(fake_device):
    a = fake_device(128 * MiB)
    q = a.alloc(11 * MiB)
    assert a.stats()["reserved_bytes.large_pool.current"] == 12 * MiB
    p = a.alloc(3 * MiB)
    assert a.stats()["reserved_bytes.large_pool.current"] == 12 * MiB + 20 * MiB
    a.free(p), a.free(q)


def test_a_freed_block_is_reused_without_asking_the_device(fake_device):
    a = fake_device(64 * MiB)
    p = a.alloc(1000)
    a.free(p)
    assert runtime.memory_allocated() == 0
    assert runtime.memory_reserved() == 2 * MiB
    assert a.alloc(900) == p  # same size class: the cached block
    assert a.stats()["segment.all.allocated"] == 1
    a.free(p)


def test_split_blocks_merge_back_into_the_whole_segment(fake_device):
    a = fake_device(64 * MiB)
    p = a.alloc(3 * MiB)
    q = a.alloc(5 * MiB)
    assert q == p + 3 * MiB
    a.free(p)
    a.free(q)
    # The 20 MiB segment is one free block again: a 20 MiB request reuses it whole.
    assert a.alloc(20 * MiB) == p
    assert runtime.memory_reserved() == 20 * MiB
    a.free(p)


def test_the_rest_of_a_large_block_stays_whole_when_too_small_to_split(fake_device):
    a = fake_device(64 * MiB)
    p = a.alloc(20 * MiB - 512 * 1024)  # leaves 512 KiB: not split off (<= 1 MiB)
    assert runtime.memory_allocated() == 20 * MiB
    a.free(p)


def test_pools_are_per_stream(fake_device):
    a = fake_device(64 * MiB)
    s1, s2 = cr.cuda.Stream(), cr.cuda.Stream()
    p = a.alloc(4096, s1)
    a.free(p)
    q = a.alloc(4096, s2)
    assert q != p
    assert runtime.memory_reserved() == 4 * MiB  # s2 got its own segment
    assert a.alloc(4096, s1) == p
    a.free(p), a.free(q)


@host_build_only
def test_record_stream_defers_reuse_until_the_other_streams_work_is_done(fake_device):
    a = fake_device(64 * MiB)
    side = cr.cuda.Stream()
    p = a.alloc(4096)
    a.record_stream(p, side)
    hold(side)  # work using p is still queued on `side`
    a.free(p)
    assert runtime.memory_allocated() == 0
    assert runtime.memory_stats()["active_bytes.all.current"] == 4096
    q = a.alloc(4096)
    assert q != p
    hold(side, False)  # that work finishes
    r = a.alloc(4096)
    assert r == p
    assert runtime.memory_stats()["active_bytes.all.current"] == 8192
    a.free(q), a.free(r)


def test_record_stream_of_the_allocating_stream_changes_nothing(fake_device):
    a = fake_device(64 * MiB)
    p = a.alloc(4096)
    a.record_stream(p, cr.cuda.default_stream())
    a.free(p)
    assert a.alloc(4096) == p
    a.free(p)


def test_out_of_memory_frees_the_cache_once_and_retries(fake_device):
    a = fake_device(22 * MiB)
    a.free(a.alloc(1000))  # 2 MiB cached
    p = a.alloc(21 * MiB)  # a 22 MiB segment fits only without the cache
    s = a.stats()
    assert s["num_alloc_retries"] == 1 and s["num_ooms"] == 0
    assert s["reserved_bytes.all.current"] == 22 * MiB
    a.free(p)


@host_build_only
def test_the_retry_waits_for_blocks_other_streams_still_use(fake_device):
    a = fake_device(2 * MiB)
    side = cr.cuda.Stream()
    p, filler = a.alloc(1 * MiB), a.alloc(1 * MiB)  # the whole device
    a.record_stream(p, side)
    hold(side)
    a.free(p)
    q = a.alloc(1 * MiB)  # p's block, once the retry has waited for `side`
    assert q == p
    assert runtime.memory_stats()["num_alloc_retries"] == 1
    assert side.query()
    a.free(q), a.free(filler)


def test_out_of_memory_error_has_the_references_text_and_figures(fake_device):
    a = fake_device(22 * MiB)
    p = a.alloc(21 * MiB)  # the whole 22 MiB segment: a 1 MiB rest is not split off
    with pytest.raises(cr.cuda.OutOfMemoryError) as info:
        a.alloc(1000)
    assert str(info.value) == (
        "CUDA out of memory. Tried to allocate 2.00 MiB (GPU 0; 22.00 MiB total capacity; "
        "22.00 MiB already allocated; 0 bytes free; 22.00 MiB reserved in total by chainrule)")
    assert isinstance(info.value, RuntimeError)
    assert a.stats()["num_ooms"] == 1
    a.free(p)
    q = a.alloc(1000)  # usable again
    a.free(q)


def test_empty_cache_returns_whole_free_segments_only(fake_device):
    a = fake_device(64 * MiB)
    p, q = a.alloc(1000), a.alloc(3 * MiB)
    a.free(q)
    runtime.empty_cache()
    assert runtime.memory_reserved() == 2 * MiB  # p's segment is in use
    a.free(p)
    runtime.empty_cache()
    assert runtime.memory_reserved() == 0
    assert a.stats()["segment.all.freed"] == 2


def test_peaks_and_counts(fake_device):
    a = fake_device(64 * MiB)
    p, q = a.alloc(4096), a.alloc(8192)
    a.free(q)
    assert runtime.max_memory_allocated() == 4096 + 8192
    assert runtime.memory_allocated() == 4096
    runtime.reset_peak_memory_stats()
    assert runtime.max_memory_allocated() == 4096
    s = a.stats()
    assert (s["allocation.all.allocated"], s["allocation.all.freed"]) == (2, 1)
    assert runtime.max_memory_reserved() == 2 * MiB
    a.free(p)


def test_zero_bytes_is_a_null_pointer_and_no_memory(fake_device):
    a = fake_device(64 * MiB)
    assert a.alloc(0) is None
    a.free(None)
    assert runtime.memory_reserved() == 0


def test_freeing_an_unknown_or_freed_pointer_is_an_error(fake_device):
    a = fake_device(64 * MiB)
    p = a.alloc(4096)
    a.free(p)
    with pytest.raises(RuntimeError, match="not allocated by the caching allocator"):
        a.free(p)
    with pytest.raises(RuntimeError, match="not a live allocation"):
        a.record_stream(p, cr.cuda.Stream())


def test_a_fake_device_in_use_cannot_be_replaced(fake_device):
    a = fake_device(64 * MiB)
    p = a.alloc(4096)
    with pytest.raises(RuntimeError, match="the fake device 0 still holds 4096 bytes"):
        fake_device(32 * MiB)
    a.free(p)


def test_real_allocations_outlive_a_fake_device(fake_device):
    runtime.empty_cache()
    real = Allocator()
    p = real.alloc(4096)
    before = runtime.memory_stats()
    a = fake_device(64 * MiB)
    assert runtime.memory_allocated() == 0  # the fake device's figures
    a.free(a.alloc(100))
    real.free(p)  # back to the real allocator
    assert runtime.memory_allocated() == 0
    _lib.call("cr_testing_set_fake_capacity", 0, -1)
    assert runtime.memory_allocated() == before["allocated_bytes.all.current"] - 4096


def test_mem_get_info_reports_the_fake_device(fake_device):
    a = fake_device(64 * MiB)
    p = a.alloc(4096)
    assert runtime.mem_get_info() == (62 * MiB, 64 * MiB)
    a.free(p)


def test_memory_fraction_caps_what_the_allocator_reserves(fake_device):
    a = fake_device(100 * MiB)
    cr.cuda.set_per_process_memory_fraction(0.25)
    assert cr.cuda.get_per_process_memory_fraction() == 0.25
    p = a.alloc(20 * MiB)  # 20 MiB of the 25 allowed
    with pytest.raises(cr.cuda.OutOfMemoryError, match="Tried to allocate 20.00 MiB"):
        a.alloc(3 * MiB)  # would need another 20 MiB segment
    a.free(p)
    with pytest.raises(ValueError, match="Invalid fraction value: 1.5. Allowed range: 0~1"):
        cr.cuda.set_per_process_memory_fraction(1.5)
    with pytest.raises(TypeError, match="must be `float`"):
        cr.cuda.set_per_process_memory_fraction(1)


def test_accumulated_stats_reset_and_the_summary(fake_device):
    a = fake_device(64 * MiB)
    a.free(a.alloc(4096))
    cr.cuda.reset_accumulated_memory_stats()
    s = a.stats()
    assert (s["allocation.all.allocated"], s["allocated_bytes.all.freed"]) == (0, 0)
    assert s["reserved_bytes.all.current"] == 2 * MiB
    summary = cr.cuda.memory_summary()
    assert "GPU reserved memory" in summary and "2.00 MiB" in summary
    assert "from small pool" in summary and "from small pool" not in cr.cuda.memory_summary(
        abbreviated=True)
