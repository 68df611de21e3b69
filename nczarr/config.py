"""Settings read from the environment, each read in one place (floor 0: imports nothing of
nczarr, so every floor may ask)."""

from __future__ import annotations

import logging
import os

logger = logging.getLogger(__name__)

#: ``NCZARR_FSYNC=1`` makes every write survive a power cut (see :func:`fsync_enabled`).
FSYNC_VARIABLE = "NCZARR_FSYNC"
_FALSE = frozenset({"", "0", "false", "no", "off"})
_TRUE = frozenset({"1", "true", "yes", "on"})


def fsync_enabled() -> bool:
    """Whether stores and file writers fsync what they write by default (``NCZARR_FSYNC``).

    Off unless set: writes are atomic either way (a reader or a killed process never sees half
    a value), fsync adds durability across a power cut at a cost in speed. Read at each call,
    so a store opened after the variable changes follows it.
    """
    value = os.environ.get(FSYNC_VARIABLE, "").strip().lower()
    if value in _FALSE:
        return False
    if value not in _TRUE:
        # Someone asked for something: durability is the safe reading.
        logger.warning("%s=%r is not one of 0/1/true/false/yes/no/on/off: fsync is on", FSYNC_VARIABLE, value)
    return True
