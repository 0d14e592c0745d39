"""``nn.factory_kwargs`` (torch.nn's helper for modules that take ``device``/``dtype``)."""


def factory_kwargs(kwargs):
    """The factory arguments (``device``, ``dtype``, ``memory_format``) of ``kwargs`` as
    one dict, merged with an explicit ``factory_kwargs`` entry; TypeError for any
    other key or one given twice.

    >>> import chainrule as cr
    >>> cr.nn.factory_kwargs({"dtype": cr.float64, "factory_kwargs": {"device": "cpu"}})
    {'device': 'cpu', 'dtype': chainrule.float64}
    """
    if kwargs is None:
        return {}
    simple_keys = ("device", "dtype", "memory_format")
    expected_keys = set(simple_keys) | {"factory_kwargs"}
    if not kwargs.keys() <= expected_keys:
        raise TypeError(f"unexpected kwargs {kwargs.keys() - expected_keys}")
    merged = dict(kwargs.get("factory_kwargs", {}))
    for key in simple_keys:
        if key in kwargs:
            if key in merged:
                raise TypeError(f"{key} specified twice, in **kwargs and in factory_kwargs")
            merged[key] = kwargs[key]
    return merged
