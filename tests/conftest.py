"""Fixtures shared by every test folder."""

from __future__ import annotations

import os

import pytest
from hypothesis import settings

from nczarr.store import MemoryStore

# The property tests draw the same examples on every run ("reproducible"), so a commit passes
# or fails CI on its own merits; HYPOTHESIS_PROFILE=explore draws new ones on each run, to look
# for bugs (a failure prints the example to add to the hand-picked cases).
settings.register_profile("reproducible", derandomize=True)
settings.register_profile("explore", derandomize=False)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "reproducible"))


class RecordingStore(MemoryStore):
    """A memory store that records what is asked of it: how many values and bytes were
    read (batch reads go through ``_get`` too) and every write and delete, in order."""

    def __init__(self) -> None:
        super().__init__()
        self.reset()

    def reset(self) -> None:
        self.reads = 0
        self.bytes_read = 0
        self.log: list[tuple[str, str]] = []

    @property
    def written(self) -> list[str]:
        """The keys set since the last reset, in order."""
        return [key for action, key in self.log if action == "set"]

    def _get(self, key, byte_range):
        self.reads += 1
        value = super()._get(key, byte_range)
        self.bytes_read += len(value or b"")
        return value

    def _set(self, key, value):
        self.log.append(("set", key))
        super()._set(key, value)

    def _set_many(self, items):
        self.log.extend(("set", key) for key in items)
        super()._set_many(items)

    def _delete(self, key):
        self.log.append(("delete", key))
        super()._delete(key)

    def _delete_many(self, keys):
        self.log.extend(("delete", key) for key in keys)
        super()._delete_many(keys)


@pytest.fixture
def recording_store() -> type[RecordingStore]:
    """Call it to get a new, empty RecordingStore."""
    return RecordingStore
