"""The registry of named entries (model backends, executors, tasks), as spaCy's `util.registry`: entries kept in a
`catalogue` namespace ("hinter", KIND) and read from the Python entry-point group `hinter_KIND`, so another
installed package adds an entry without touching this one. models/registry.py holds the model backends' records
(`Backend`, options, spec parsing) built on it."""
from __future__ import annotations

from typing import Callable, Generic, Iterator, TypeVar

import catalogue

from hinter.errors import InputError

T = TypeVar("T")


def _origin(entry: object) -> str:
    module = getattr(entry, "__module__", None) or type(entry).__module__
    return f"from {module}"


class Registry(Generic[T]):
    """Entries of one kind by name: built-ins (registered when first needed), then the entry points of group
    `hinter_KIND`. `noun` and `option` word the errors ("unknown executor 'spark'", where "--executor")."""

    def __init__(self, kind: str, noun: str, option: str, builtins: Callable[[], None] | None = None,
                 check: Callable[[str, object], T] | None = None):
        self.kind, self.noun, self.option = kind, noun, option
        self.namespace = ("hinter", kind)
        self.group = "_".join(self.namespace)  # the entry-point group catalogue reads
        self._catalogue = catalogue.create(*self.namespace, entry_points=True)
        self._builtins, self._check = builtins, check
        self._origins: dict[str, str] = {}  # name -> where it was registered from
        self._loaded = False

    # ------------------------------------------------------------------ registering

    def register(self, name: str, entry: T, origin: str | None = None) -> T:
        """Add `entry` under `name`; a name already taken is refused."""
        if not isinstance(name, str) or not name.strip() or ":" in name:
            raise ValueError(f"a {self.noun} name must be a non-empty string without ':', got {name!r}")
        if catalogue.check_exists(*self.namespace, name):
            raise InputError(f"two {self.noun}s are registered as {name!r} ({self._origins.get(name, 'unknown')}, "
                             f"and {origin or _origin(entry)})", where=f"the {self.noun} registry",
                             fix=f"Register one of them under another name, or uninstall the package whose "
                                 f"{self.group} entry point clashes.")
        self._catalogue.register(name, func=entry)
        self._origins[name] = origin or _origin(entry)
        return entry

    def unregister(self, name: str) -> None:
        """Remove `name` (for tests, and for a package that replaces one of its own entries)."""
        catalogue.REGISTRY.pop((*self.namespace, name), None)
        self._origins.pop(name, None)

    def _ensure_loaded(self) -> None:
        if self._loaded:
            return
        self._loaded = True
        if self._builtins is not None:
            self._builtins()
        for ep in self._catalogue._get_entry_points():
            try:
                entry = ep.load()
            except Exception as e:
                raise InputError(f"the {self.group} entry point {ep.name} = {ep.value} cannot be loaded "
                                 f"({type(e).__name__}: {e})", where=f"the {self.noun} registry",
                                 fix="Reinstall or uninstall the package that declares it.") from None
            if self._check is not None:
                entry = self._check(ep.name, entry)
            self.register(ep.name, entry, origin=f"entry point {ep.value}")

    # ------------------------------------------------------------------ looking up

    def names(self) -> list[str]:
        """The registered names, sorted (the same order whatever was imported first)."""
        self._ensure_loaded()
        return sorted(self._origins)

    def items(self) -> Iterator[tuple[str, T]]:
        for name in self.names():
            yield name, self.find(name)

    def find(self, name: str) -> T | None:
        """The entry registered as `name`, or None."""
        self._ensure_loaded()
        key = (*self.namespace, name)
        return catalogue.REGISTRY.get(key) if name in self._origins else None

    def get(self, name: str, fix: str = "") -> T:
        """The entry registered as `name`; an InputError listing the registered names if there is none."""
        entry = self.find(name)
        if entry is None:
            raise self.unknown(name, fix)
        return entry

    def unknown(self, name: str, fix: str = "") -> InputError:
        listed = ", ".join(self.names()) or "none"
        return InputError(f"unknown {self.noun} {name!r}", where=self.option,
                          fix=f"Registered {self.noun}s: {listed}" + (f"; {fix}" if fix else "."))

    def __contains__(self, name: str) -> bool:
        return self.find(name) is not None
