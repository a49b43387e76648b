"""The one tuning core behind AutoTVM, auto_scheduler and MetaSchedule-over-Relay programs.

TVM <=0.19's three tuning APIs are served by the same steps, each one module:

* :mod:`.extra`: the ``[tune]`` extra MetaSchedule needs (psutil, cloudpickle, xgboost);
* :mod:`.anchors`: AutoTVM's tasks as TVM 0.19 extracted them (one per template workload);
* :mod:`.kernels`: the kernels ``relay.build`` makes for a module (what is tuned);
* :mod:`.measure`: MetaSchedule's builder and runner, in this process (no worker processes, each
  of which would import TVM), building as the shim's builds do, and the timing of a kernel;
* :mod:`.search`: one kernel tuned by ``tune_tir``, the shim's own schedule measured beside;
* :mod:`.records`: the shim's record file (JSON lines), TVM 0.19's records refused;
* :mod:`.progress`: the progress lines of the legacy ``progress_bar``;
* :mod:`.applied`: a record file applied to ``relay.build`` (the faster schedule per kernel).
"""
