"""Legacy-style programs bundled with the shim (run by ``compile-engine-compat demo``).

Files here count as *user* code for warning attribution and the ledger.
"""
