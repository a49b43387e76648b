"""``tvm.ir.supply`` of TVM 0.19 (served by ``install()``): ``NameSupply`` and ``GlobalVarSupply``.

TVM 0.27 dropped both objects; these are Python classes with TVM 0.19's behaviour: a name supply
keeps the names it handed out (``fresh_name("test")`` is ``prefix_test``, then
``prefix_test_1``, dots become underscores), and a global-var supply keeps one ``GlobalVar``
per name. A supply built from modules reserves their functions' names and takes the first
module's ``"mod_name"`` attribute (``tvmgen_default`` when it has none) as its prefix, as TVM
0.19 did. Unlike TVM 0.19's they are not ``tvm.Object``\\ s: they cannot be passed to packed
functions.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import tvm
import tvm_ffi

__all__ = ["GlobalVarSupply", "NameSupply"]

#: The prefix TVM 0.19 gave a supply built from a module without a ``"mod_name"`` attribute.
_DEFAULT_MODULE_NAME = "tvmgen_default"


class NameSupply:
    """Unique names: each name handed out or reserved is kept, a taken one gets ``_<n>``.

    Parameters
    ----------
    prefix : str
        Put before each name (with ``_``) where a method's ``add_prefix`` is true.
    """

    def __init__(self, prefix: str = "") -> None:
        if not isinstance(prefix, str):
            raise TypeError(f"NameSupply prefix must be a str, not {type(prefix).__name__}")
        self.prefix = prefix
        self._counts: dict[str, int] = {}

    def _prefixed(self, name: str, add_prefix: bool) -> str:
        if not isinstance(name, str):
            raise TypeError(f"a name must be a str, not {type(name).__name__}")
        return f"{self.prefix}_{name}" if add_prefix and self.prefix else name

    def fresh_name(self, name: str, add_prefix: bool = True, add_underscore: bool = True) -> str:
        """A name no one took yet, derived from ``name``, and now taken.

        Parameters
        ----------
        name : str
            The name it is derived from.
        add_prefix : bool
            Put the prefix before it.
        add_underscore : bool
            Put ``_`` between the name and the number a taken name gets.

        Returns
        -------
        str
            ``name`` (dots as underscores) when free, else ``name_1``, ``name_2``, ...
        """
        base = self._prefixed(name, add_prefix).replace(".", "_")
        if base not in self._counts:
            self._counts[base] = 0
            return base
        separator = "_" if add_underscore else ""
        candidate = base
        while candidate in self._counts:
            self._counts[base] += 1
            candidate = f"{base}{separator}{self._counts[base]}"
        self._counts[candidate] = 0
        return candidate

    def reserve_name(self, name: str, add_prefix: bool = True) -> str:
        """Take ``name`` (with the prefix), so that fresh names avoid it.

        Returns
        -------
        str
            The name as reserved.
        """
        final = self._prefixed(name, add_prefix)
        self._counts[final] = 0
        return final

    def contains_name(self, name: str, add_prefix: bool = True) -> bool:
        """Whether ``name`` (with the prefix) was handed out or reserved."""
        return self._prefixed(name, add_prefix) in self._counts

    def __repr__(self) -> str:
        return f"NameSupply(prefix={self.prefix!r}, names={len(self._counts)})"


class GlobalVarSupply:
    """One ``GlobalVar`` per name, over a :class:`NameSupply`.

    Parameters
    ----------
    value : NameSupply, IRModule, list of IRModule or None
        The name supply to use, or modules whose functions' names are reserved (the first
        module's ``"mod_name"`` attribute, else ``tvmgen_default``, is the prefix); None is a
        supply with no prefix.
    """

    def __init__(self, value: Any = None) -> None:
        self._vars: dict[str, tvm.ir.GlobalVar] = {}
        if value is None:
            self.name_supply = NameSupply("")
        elif isinstance(value, NameSupply):
            self.name_supply = value
        elif isinstance(value, tvm.IRModule):
            self._from_modules([value])
        elif isinstance(value, (list, tuple, tvm_ffi.Array)):
            self._from_modules(list(value))
        else:
            raise TypeError(
                "GlobalVarSupply takes a NameSupply, an IRModule, a list of IRModules or None, "
                f"not {type(value).__name__}"
            )

    def _from_modules(self, modules: Iterable[Any]) -> None:
        modules = list(modules)
        for module in modules:
            if not isinstance(module, tvm.IRModule):
                raise TypeError(f"GlobalVarSupply takes IRModules, not {type(module).__name__}")
        prefix = ""
        if modules:
            attrs = modules[0].attrs
            name = attrs["mod_name"] if attrs is not None and "mod_name" in attrs else None
            prefix = str(name) if name is not None else _DEFAULT_MODULE_NAME
        self.name_supply = NameSupply(prefix)
        for module in modules:
            for global_var in module.functions:
                self.reserve_global(global_var, allow_conflict=True)

    def fresh_global(self, name: str, add_prefix: bool = True) -> tvm.ir.GlobalVar:
        """A new ``GlobalVar`` under a fresh name derived from ``name``.

        Returns
        -------
        tvm.ir.GlobalVar
            Kept, so that :meth:`unique_global_for` finds it.
        """
        final = self.name_supply.fresh_name(name, add_prefix)
        if final in self._vars:
            raise RuntimeError(f"GlobalVar already exists for name {final}")
        self._vars[final] = global_var = tvm.ir.GlobalVar(final)
        return global_var

    def unique_global_for(self, name: str, add_prefix: bool = True) -> tvm.ir.GlobalVar:
        """The ``GlobalVar`` kept for ``name`` (with the prefix), made and kept if none is.

        Returns
        -------
        tvm.ir.GlobalVar
            The same object for the same name.
        """
        final = self.name_supply.reserve_name(name, add_prefix)
        if final not in self._vars:
            self._vars[final] = tvm.ir.GlobalVar(final)
        return self._vars[final]

    def reserve_global(self, global_var: tvm.ir.GlobalVar, allow_conflict: bool = False) -> None:
        """Keep ``global_var`` under its own name (no prefix).

        Raises
        ------
        RuntimeError
            When another ``GlobalVar`` is kept under that name and ``allow_conflict`` is false.
        """
        if not isinstance(global_var, tvm.ir.GlobalVar):
            raise TypeError(f"reserve_global takes a GlobalVar, not {type(global_var).__name__}")
        name = str(global_var.name_hint)
        self.name_supply.reserve_name(name, False)
        if not allow_conflict and name in self._vars:
            raise RuntimeError(f"GlobalVar {name} conflicts by name in this supply")
        self._vars[name] = global_var
