"""The Relay wing's machinery: how the served ``tvm.relay`` modules do their work.

Nothing here is a ``tvm.relay`` module: the import alias serves the modules of
:mod:`compile_engine_compat.relay` that TVM <=0.19 had, under their Relay paths, and never
this package (``import tvm.relay._impl`` is refused). Only :mod:`compile_engine_compat.relay`
imports it (tests/test_layout.py).

* the op table's machinery: :mod:`.registry` (a row -> an op object and a builder),
  :mod:`.convert` and :mod:`.convert_te` (a row -> Relax, or TE through ``bb.emit_te``),
  :mod:`.normalize` (Relay's attribute normalization), :mod:`.type_relations` (types inferred
  for untyped weights), :mod:`.dynamic` (ops on ``relay.Any()`` dimensions), :mod:`.custom` (ops
  users register), :mod:`.relay_strategies` (``OpStrategy`` on the engine's strategy registry);
* :mod:`.to_relax`: the emitter, a Relay graph -> one Relax function, and ``checked_type``;
* :mod:`.printer`: ``astext`` and the parser of ``relay.fromtext``/``parse``;
* :mod:`.passes` and :mod:`.pass_infra`: ``relay.transform``'s passes and decorators;
  :mod:`.gradient`: ``relay.transform.gradient`` on ``relax.transform.Gradient``;
* :mod:`.host_library` and :mod:`.runtime_config`: what ``relay.build`` returns, and
  ``Executor``/``Runtime``; :mod:`.unserved`: the importers of frameworks Relax has none for.
"""
