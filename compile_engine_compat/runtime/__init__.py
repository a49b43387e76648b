"""The runtime: what runs a built kernel.

:mod:`.kernel` (the destination-passing :class:`~.kernel.Kernel`), :mod:`.thread_pool` (the
shim's launcher for parallel kernels and its C source, ``thread_pool.c``) and :mod:`.threads`
(how many threads kernels get, and fork safety). It imports only the foundation: the pipeline
builds kernels for it, the facade hands them out.
"""
