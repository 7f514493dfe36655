"""Keep a kind's front functions bound on its package.

Each kind package defines a function ``verify`` and also has a submodule ``verify.py``. When
Python first imports ``anonymatch.<kind>.verify`` it binds the submodule as an attribute of the
package, which would silently replace the function. ``keep_functions`` makes the package
ignore exactly that rebinding: the function stays ``anonymatch.<kind>.verify`` while the module
stays importable (``from anonymatch.<kind>.verify import ...`` goes through ``sys.modules``).
"""

from __future__ import annotations

import sys
import types
from collections.abc import Iterable


class _FrontModule(types.ModuleType):
    """A package module whose front functions are not replaced by same-named submodules."""

    def __setattr__(self, name: str, value: object) -> None:
        keep = self.__dict__.get("__front_functions__", ())
        if name in keep and isinstance(value, types.ModuleType):
            return  # the import system binding the submodule: keep the function
        super().__setattr__(name, value)


def keep_functions(module_name: str, names: Iterable[str]) -> None:
    """Protect the functions ``names`` of package ``module_name`` from submodule rebinding."""
    module = sys.modules[module_name]
    module.__dict__["__front_functions__"] = frozenset(names)
    module.__class__ = _FrontModule
