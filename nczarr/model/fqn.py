"""Fully qualified names: escape and unescape a name, split and join an FQN.

An FQN is ``/`` (the root group) or ``/name/name...``; inside each name the characters
``/``, ``\\`` and blank are escaped as ``\\/``, ``\\\\`` and ``\\ `` (the NCZarr table).
Unescaping also accepts a backslash before any other character, which stands for that
character, so text written with extra escapes reads back; escaping produces only the table.
An FQN with an unescaped blank is malformed (blanks separate FQNs in text). Every name can
be escaped, and ``split_fqn(join_fqn(names)) == names`` for every list of non-empty names.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from nczarr.errors import FQNError

_ESCAPE = re.compile(r"[\\/ ]")
_UNESCAPE = re.compile(r"\\(.)", re.DOTALL)
# One FQN component: unescaped characters other than '/', '\' and blank, or escape pairs.
_COMPONENT = re.compile(r"(?:[^\\/ ]|\\.)*", re.DOTALL)


def escape_name(name: str) -> str:
    """The name with ``/``, ``\\`` and blank escaped, ready to be joined into an FQN."""
    if "/" not in name and "\\" not in name and " " not in name:
        return name  # nearly every name, without the regex (FQNs are computed all the time)
    return _ESCAPE.sub(r"\\\g<0>", name)


def unescape_name(text: str) -> str:
    """The name an escaped name stands for (inverse of :func:`escape_name`)."""
    if "\\" not in text:
        return text
    if (len(text) - len(text.rstrip("\\"))) % 2 == 1:
        raise FQNError(f"name {text!r} ends with a lone backslash")
    return _UNESCAPE.sub(r"\1", text)


def join_fqn(names: Iterable[str]) -> str:
    """The FQN of the node reached from the root through ``names``; ``[]`` gives ``/``."""
    return "/" + "/".join(map(escape_name, names))


def split_fqn(fqn: str) -> list[str]:
    """The names along an FQN, unescaped (inverse of :func:`join_fqn`)."""
    if not fqn.startswith("/"):
        raise FQNError(f"FQN {fqn!r} does not start with '/'")
    if fqn == "/":
        return []
    if "\\" not in fqn and " " not in fqn:  # fast path: nothing escaped
        names = fqn[1:].split("/")
    else:
        names = []
        pos = 1
        while True:
            match = _COMPONENT.match(fqn, pos)
            assert match is not None, "a component matches the empty string"
            end = match.end()
            if end < len(fqn) and fqn[end] == "\\":
                raise FQNError(f"FQN {fqn!r} ends with a lone backslash")
            if end < len(fqn) and fqn[end] == " ":
                raise FQNError(f"FQN {fqn!r} has a blank that is not escaped")
            names.append(_UNESCAPE.sub(r"\1", match.group()))
            if end == len(fqn):
                break
            pos = end + 1
    if "" in names:
        raise FQNError(f"FQN {fqn!r} has an empty name")
    return names
