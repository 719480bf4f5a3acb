"""sqlglot without ``importlib.metadata`` at import (a cold ``accord lint`` never needs it).

``sqlglot.dialects.dialect`` runs ``from importlib.metadata import entry_points`` when it is
imported, for its dialect plugin lookup, which it makes only when a dialect name is neither
built in nor already loaded: accord names only ``snowflake``, ``databricks`` and ``duckdb``, so
the lookup is never made. Importing ``importlib.metadata`` imports ``email``, ``csv``,
``zipfile`` and ``socket`` (about 15 ms of CPU). :func:`install` defers that import to the
first call of ``entry_points``: while (and only while) ``sqlglot.dialects.dialect`` is executed,
``sys.modules["importlib.metadata"]`` is a stand-in whose ``entry_points`` imports the real
module and calls it, and whose every other attribute is the real module's. After that module's
body ran, the stand-in is gone: any later ``import importlib.metadata`` is the real one.
Nothing is installed when ``importlib.metadata`` is already imported (as under pytest), so the
lookup is always sqlglot's own (``tests/test_sqlglot_plugins.py`` runs a fresh interpreter).
"""

from __future__ import annotations

import importlib
import sys
import types
from typing import Any

_DIALECT = "sqlglot.dialects.dialect"
_METADATA = "importlib.metadata"


def _metadata() -> types.ModuleType:
    """The real ``importlib.metadata``, imported now if the stand-in is in its place."""
    module = sys.modules.get(_METADATA)
    if module is None or module is _STAND_IN:
        sys.modules.pop(_METADATA, None)

        module = importlib.import_module(_METADATA)
    return module


def entry_points(**params: Any) -> Any:
    """``importlib.metadata.entry_points``, imported when first called."""
    return _metadata().entry_points(**params)


def _getattr(name: str) -> Any:
    if name.startswith("__"):  # the import system asks for ``__path__``: a module, no package
        raise AttributeError(name)
    return getattr(_metadata(), name)


_STAND_IN = types.ModuleType(_METADATA, "accord: importlib.metadata, imported on first use")
_STAND_IN.entry_points = entry_points  # type: ignore[attr-defined]
_STAND_IN.__getattr__ = _getattr  # type: ignore[attr-defined]


class _Loader:
    """The real loader of ``sqlglot.dialects.dialect``, with the stand-in in place while it
    executes the module."""

    def __init__(self, loader: Any) -> None:
        self._loader = loader

    def __getattr__(self, name: str) -> Any:
        return getattr(self._loader, name)

    def create_module(self, spec: Any) -> Any:
        return self._loader.create_module(spec)

    def exec_module(self, module: types.ModuleType) -> None:
        if _METADATA in sys.modules:
            self._loader.exec_module(module)
            return
        sys.modules[_METADATA] = _STAND_IN
        try:
            self._loader.exec_module(module)
        finally:
            if sys.modules.get(_METADATA) is _STAND_IN:
                del sys.modules[_METADATA]
            # the module keeps the loader it would have had
            module.__loader__ = self._loader
            if module.__spec__ is not None:
                module.__spec__.loader = self._loader


class _Finder:
    """Finds ``sqlglot.dialects.dialect`` once (with the finders after it), then leaves."""

    def find_spec(self, name: str, path: Any = None, target: Any = None) -> Any:
        if name != _DIALECT:
            return None
        uninstall()
        for finder in sys.meta_path:
            find = getattr(finder, "find_spec", None)
            spec = find(name, path, target) if find is not None else None
            if spec is not None:
                if spec.loader is not None and _METADATA not in sys.modules:
                    spec.loader = _Loader(spec.loader)
                return spec
        return None


_FINDER = _Finder()


def install() -> None:
    """Defer ``importlib.metadata`` past sqlglot's import, unless either is imported already."""
    if _DIALECT in sys.modules or _METADATA in sys.modules or _FINDER in sys.meta_path:
        return
    sys.meta_path.insert(0, _FINDER)


def uninstall() -> None:
    if _FINDER in sys.meta_path:
        sys.meta_path.remove(_FINDER)
