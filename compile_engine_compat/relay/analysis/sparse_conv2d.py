"""``relay.analysis.sparse_conv2d``: ``process_params`` (sparse weights), refused at the call."""

from __future__ import annotations

from .refused import sparse_process_params

__all__ = ["process_params"]

process_params = sparse_process_params("sparse_conv2d")
