"""The tangent slot: where forward-mode AD hooks into what the dispatch slot cannot see.

Note [tangent slot]
    Forward-mode AD (the forward_ad layer) keeps the tangents of dual tensors itself
    and sees every table op through Note [dispatch slot]. Three things happen outside
    table ops, and core reports them to ``SLOT`` (None until a dual level is entered,
    so each costs one check when forward AD is off):

    - ``SLOT.inplace(t, result)``: an in-place op wrote ``result`` (an out-of-place
      result, made by a table op) into ``t`` (``_common.commit_inplace`` and the
      in-place ``index_put_``); the layer updates ``t``'s tangent in place, or gives
      ``t`` (and, for a view, its base) one.
    - ``SLOT.run_forward(run)``: a custom Function's forward is about to run;
      ``run()`` runs it, and the layer runs it with tangent propagation paused,
      like the reference (forward sees no tangents; ``jvp`` supplies them).
    - ``SLOT.function_applied(ctx, args, outputs)``: a custom Function returned
      ``outputs`` for ``args``; the layer calls ``Function.jvp`` when an argument
      has a tangent and attaches what it returns to the outputs. While ``jvp`` runs,
      ``ctx.saved_tensors`` reads what ``ctx.save_for_forward`` saved (the layer
      sets ``ctx._jvp_saved``; see function.py).

    - ``SLOT.saved_output(t)``: a node rebuilt ``t`` from a saved output's array
      (Note [saved outputs]) for a create_graph backward; the layer gives it the
      tangent the output had, so tangents flow through such backwards
      (forward-over-reverse through ``tanh``, ``exp``, ...).

    - ``SLOT.kept_original(t, copy)``: an in-place op on ``t`` saved ``copy`` of t's
      values for its backward (``_common._keep_original_self``); the layer gives the
      copy a copy of t's tangent, which the in-place op is about to overwrite.

    - ``SLOT.tangent_of(t)``: ``t``'s tangent at the current level, or None: a dual
      tensor's repr shows it (``tensor([1.], tangent=tensor([3.]))``).

    The layer installs its slot with ``set_tangent_slot`` when a dual level is entered
    and removes it (``set_tangent_slot(None)``) when the level exits.
"""
SLOT = None


def set_tangent_slot(slot):
    """Install ``slot`` (None removes it); returns the previous one.

    >>> from chainrule.autograd import tangent_slot
    >>> tangent_slot.set_tangent_slot(None) is None
    True
    """
    global SLOT
    previous, SLOT = SLOT, slot
    return previous
