"""A sandbox to import a peer's pure-Python sources without the stack they come with.

A peer (vLLM's scheduler now, SGLang's next) is a handful of real source files out of a large
package whose other modules need a GPU stack (torch, CUDA kernels, a model runner...). A
:class:`Sandbox` serves the real files from a folder, empty packages for their parents (their
``__init__`` would import the world), and, for every other module of the peer's packages and of
the libraries it names, an inert placeholder: every name in it is a class that can be subclassed,
called and indexed, whose instances accept any attribute or call and are falsy. A few names get
a working stand-in because the peer's path really uses them. The sandbox's modules are swapped
into ``sys.modules`` only while it is active, so nothing of the peer leaks into the process.
"""

from __future__ import annotations

import contextlib
import importlib.abc
import importlib.machinery
import importlib.util
import sys
import types
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, Optional


class _PlaceholderType(type):
    """The type of placeholder classes: reading any attribute of one gives another placeholder
    class, indexing it gives itself (``Foo[int]`` in annotations), it iterates as empty, and it
    is falsy."""

    def __getattr__(cls, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        return _placeholder(f"{cls.__qualname__}.{name}", cls.__module__)

    def __getitem__(cls, item: Any) -> Any:
        return cls

    def __iter__(cls) -> Iterator[Any]:  # else iter() would index it 0, 1, 2... forever
        return iter(())

    def __bool__(cls) -> bool:
        return False


class _Placeholder(metaclass=_PlaceholderType):
    """An instance of a placeholder class: takes any arguments, attribute or call (giving
    itself back), iterates as empty, works as a context manager, and is falsy."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        pass

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        return self

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self

    def __iter__(self) -> Iterator[Any]:
        return iter(())

    def __bool__(self) -> bool:
        return False

    def __enter__(self) -> Any:
        return self

    def __exit__(self, *exc: Any) -> None:
        return None


def _placeholder(qualname: str, module: str) -> type:
    return _PlaceholderType(
        qualname.rsplit(".", 1)[-1], (_Placeholder,), {"__qualname__": qualname, "__module__": module}
    )


class _PlaceholderModule(types.ModuleType):
    """A module left out: each name read from it is a placeholder class (made once)."""

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        value = _placeholder(name, self.__name__)
        setattr(self, name, value)
        return value


class _Finder(importlib.abc.MetaPathFinder):
    """Serves the real modules from the sources folder, empty packages for their parents, and
    placeholders for everything else under the sandbox's top-level names."""

    def __init__(self, sandbox: Sandbox) -> None:
        self.sandbox = sandbox
        self.root = sandbox.root
        self.real = {name[: -len(".py")].replace("/", "."): sandbox.root / name for name in sandbox.sources}

    def find_spec(
        self, fullname: str, path: Any = None, target: Any = None
    ) -> Optional[importlib.machinery.ModuleSpec]:
        sandbox = self.sandbox
        if fullname in sandbox.packages:
            return importlib.machinery.ModuleSpec(fullname, _PackageLoader(sandbox), is_package=True)
        if fullname in self.real:
            return importlib.util.spec_from_file_location(fullname, self.real[fullname])
        if sandbox.owns(fullname):
            return importlib.machinery.ModuleSpec(fullname, _PlaceholderLoader(sandbox), is_package=True)
        return None


class _PackageLoader(importlib.abc.Loader):
    def __init__(self, sandbox: Sandbox) -> None:
        self.sandbox = sandbox

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> types.ModuleType:
        module = types.ModuleType(spec.name)
        module.__path__ = [str(self.sandbox.root.joinpath(*spec.name.split(".")))]
        module.__dict__.update(self.sandbox.stand_ins.get(spec.name, {}))
        return module

    def exec_module(self, module: types.ModuleType) -> None:
        pass


class _PlaceholderLoader(importlib.abc.Loader):
    def __init__(self, sandbox: Sandbox) -> None:
        self.sandbox = sandbox

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> types.ModuleType:
        module = _PlaceholderModule(spec.name)
        module.__path__ = []
        module.__dict__.update(self.sandbox.stand_ins.get(spec.name, {}))
        return module

    def exec_module(self, module: types.ModuleType) -> None:
        pass


class Sandbox:
    """The real ``sources`` (paths like ``pkg/sub/mod.py`` under ``root``) of a peer, inside
    empty ``packages``; placeholders for every other module under the top-level names of the
    packages and of ``third_party`` (libraries imported but not used on the peer's path);
    ``stand_ins``: by module name, the names that get a working stand-in."""

    def __init__(
        self,
        root: Path,
        sources: Sequence[str],
        packages: Sequence[str],
        third_party: Sequence[str] = (),
        stand_ins: Optional[Mapping[str, Mapping[str, Any]]] = None,
    ) -> None:
        self.root = root
        self.sources = tuple(sources)
        self.packages = tuple(packages)
        self.top = tuple(sorted({name.split(".")[0] for name in self.packages} | set(third_party)))
        self.stand_ins = {name: dict(names) for name, names in (stand_ins or {}).items()}
        self.finder = _Finder(self)
        self.modules: dict[str, types.ModuleType] = {}

    def owns(self, name: str) -> bool:
        """Whether module ``name`` is the sandbox's (real or placeholder)."""
        return name.split(".")[0] in self.top

    @contextlib.contextmanager
    def active(self) -> Iterator[None]:
        """Put the sandbox's modules in ``sys.modules`` for the duration (and take them back out,
        restoring whatever modules of those names were there)."""
        before = {name: module for name, module in sys.modules.items() if self.owns(name)}
        for name in before:
            del sys.modules[name]
        sys.modules.update(self.modules)
        sys.meta_path.insert(0, self.finder)
        try:
            yield
        finally:
            sys.meta_path.remove(self.finder)
            for name in [name for name in sys.modules if self.owns(name)]:
                self.modules[name] = sys.modules.pop(name)
            sys.modules.update(before)
