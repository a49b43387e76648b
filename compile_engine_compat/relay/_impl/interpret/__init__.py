"""The Relay interpreter: what TVM 0.19's ``create_executor("debug")`` was.

``definitions`` keeps what a module holds that Relax cannot (functions with ADTs, references or
type variables, and the ADT declarations); ``values`` the values a program computes (closures,
constructor values, references); ``primitives`` builds and caches each op call; ``evaluator``
walks the Relay graph.
"""
