"""``relay.backend.runtime`` and ``relay.backend.executor``: the modules TVM 0.19 defined
``Runtime`` and ``Executor`` in, the classes ``relay.backend`` re-exports."""

from __future__ import annotations

from compile_engine_compat.relay import backend
from compile_engine_compat.relay.backend.executor import Executor
from compile_engine_compat.relay.backend.runtime import Runtime


def test_the_defining_modules_give_relay_backends_classes():
    # TVM 0.19's test_pass_partition_graph calls Runtime("cpp") at import, from this module.
    assert Runtime is backend.Runtime and Executor is backend.Executor
    assert Runtime("cpp") == Runtime("cpp")
    assert Executor("graph", {"link-params": True})["link-params"]
