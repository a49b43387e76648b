"""The whole-model route: a Relax module -> a VM executable (``relay.build``, ``create_executor``).

Beside the five stages that make one kernel (:mod:`compile_engine_compat.pipeline`), this route
builds a whole model with TVM's Relax pipeline and the shim's parts in it:

* :mod:`.vm_executable`: the Relax passes and the build of the VM executable; each distinct
  kernel goes through the schedule stage, the very code ``jit`` schedules with;
* :mod:`.fold`: constants and weight packing folded in NumPy, no kernel compiled for them;
* :mod:`.raise_calls`: elementwise ``call_tir`` calls of frontends raised back to Relax ops, so
  that layout passes see through them.

It imports the kernel stages' modules (schedule, op sources, build pool, the TIR pipeline of
:mod:`compile_engine_compat.pipeline.prefetch`), never the reverse. docs/architecture.md,
"relay.build, step by step", walks through it.
"""
