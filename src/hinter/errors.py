"""Errors a user can act on: each names where the problem is and what to do."""
from __future__ import annotations


class HinterError(Exception):
    """Base class: the CLI prints these as one paragraph and exits with code 2."""

    exit_code = 2

    def __init__(self, problem: str, *, where: str | None = None, fix: str | None = None):
        self.problem, self.where, self.fix = problem, where, fix
        super().__init__(self.message)

    @property
    def message(self) -> str:
        parts = [f"{self.where}: {self.problem}" if self.where else self.problem]
        if self.fix:
            parts.append(self.fix)
        return " ".join(p if p.endswith(".") else p + "." for p in parts)


class InputError(HinterError):
    """A dataset, dictionary or option that cannot be used as given."""


class ModelError(HinterError):
    """The model under test could not be loaded or called. `fatal`: retrying cannot help (a refused key, an
    unknown model), so the run stops at once rather than recording the failure and going on."""

    def __init__(self, problem: str, *, where: str | None = None, fix: str | None = None, fatal: bool = False):
        super().__init__(problem, where=where, fix=fix)
        self.fatal = fatal
