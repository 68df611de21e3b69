"""Where the Lark grammars are: inside the installed package, or at the top of a checkout."""

from __future__ import annotations

from importlib import resources
from pathlib import Path


def grammar_path(name: str) -> Path:
    """The path of grammar file ``name`` (``cdl.lark``, ``model.lark``)."""
    installed = resources.files("nczarr") / "grammar" / name
    if installed.is_file():
        return Path(str(installed))
    checkout = Path(__file__).resolve().parent.parent.parent / "grammar" / name
    if checkout.is_file():
        return checkout
    raise FileNotFoundError(f"grammar {name!r} is not installed with nczarr")
