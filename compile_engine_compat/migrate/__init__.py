"""Tooling to move off the shim: the API table, scan, fix, docs, ledger, reports."""
