"""The TVM <=0.19 names outside ``tvm.relay`` that ``install()`` serves, one module each.

Each module here serves one legacy TVM module or a few legacy attributes of one:
:mod:`.autotvm` (``tvm.autotvm``), :mod:`.nd` (``tvm.nd``, ``Tensor.asnumpy``),
:mod:`.graph_executor` (``tvm.contrib.graph_executor``), :mod:`.device` (``tvm.context``,
``tvm.device("llvm")``) and :mod:`.target` (``tvm.target.generic_func``). Which name each serves
is not written here but in the one table of moved names,
:data:`compile_engine_compat.surfaces.moved_names.MOVED_NAMES`, which ``install()`` reads.
Adding a name is one row there plus its implementation here.

Nothing is patched by importing these modules: ``install()`` sets the names, ``uninstall()``
removes them.
"""
