"""chainrule.backends (recorded switches, availability) and chainrule.random."""
import chainrule as cr


def test_switches_are_recorded_and_flags_restores_them():
    cr.backends.cudnn.deterministic = True
    try:
        assert cr.backends.cudnn.deterministic
        with cr.backends.cudnn.flags(enabled=False, benchmark=True):
            assert not cr.backends.cudnn.enabled and cr.backends.cudnn.benchmark
        assert cr.backends.cudnn.enabled and not cr.backends.cudnn.benchmark
    finally:
        cr.backends.cudnn.deterministic = False
    assert not cr.backends.cudnn.is_available() and cr.backends.cudnn.version() is None
    assert not cr.backends.mps.is_available() and not cr.backends.mkldnn.is_available()
    assert cr.backends.cuda.matmul.allow_tf32 is False


def test_fork_rng_restores_the_generator():
    cr.manual_seed(3)
    with cr.random.fork_rng():
        cr.rand(5)
    after = cr.rand(2)
    cr.manual_seed(3)
    assert cr.equal(after, cr.rand(2))
    with cr.random.fork_rng(enabled=False):
        cr.rand(1)
    assert cr.random.manual_seed is cr.manual_seed
