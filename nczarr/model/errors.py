"""The model room's errors: a malformed FQN, a tree that fails its checks."""

from __future__ import annotations

from typing import TYPE_CHECKING

from nczarr.errors import NCZarrError

if TYPE_CHECKING:
    from nczarr.model.checks import Problem


class ModelError(NCZarrError, ValueError):
    """A model tree, name or reference that cannot be used as asked."""


class FQNError(ModelError):
    """A fully qualified name (or an escaped name) that is malformed."""


class ValidationError(ModelError):
    """A tree that has errors; ``problems`` lists all of them (warnings included)."""

    def __init__(self, problems: list[Problem]) -> None:
        self.problems = problems
        errors = [p for p in problems if p.severity == "error"]
        super().__init__(f"{len(errors)} error(s) in the model: " + "; ".join(map(str, errors)))
