"""Griffe extension for the API pages: a front's functions win over its submodules of one name.

``anonymatch.tables.verify`` is both a function (defined in ``tables/__init__.py``) and a
submodule (``tables/verify.py``); at run time the function wins (``keep_functions`` in
``anonymatch.core.front``), but griffe's static loader lets the submodule replace it, so the API
pages would document a module instead of the function. This extension puts the functions back
in every package module that calls ``keep_functions``, as Python sees them.
"""

from __future__ import annotations

from typing import Any

import griffe


class FrontFunctions(griffe.Extension):
    """Restore the functions of ``keep_functions`` packages shadowed by their submodules."""

    def __init__(self) -> None:
        super().__init__()
        self._functions: list[griffe.Function] = []

    def on_function_instance(self, *, func: griffe.Function, **kwargs: Any) -> None:
        parent = func.parent
        if isinstance(parent, griffe.Module) and parent.is_init_module:
            self._functions.append(func)

    def on_package(self, *, pkg: griffe.Module, **kwargs: Any) -> None:
        for func in self._functions:
            module = func.parent
            if not isinstance(module, griffe.Module) or "keep_functions" not in module.imports:
                continue
            member = module.members.get(func.name)
            if member is not None and not member.is_alias and member.is_module:
                module.set_member(func.name, func)
