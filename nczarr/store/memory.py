"""A store held in a dict."""

from __future__ import annotations

import threading
from collections.abc import Iterator, Mapping

from nczarr.store.base import ByteRange, Store, slice_range, validate_key


class MemoryStore(Store):
    """Keys and values in a dict of bytes, safe to use from several threads at once.

    A ``data`` dict given is used as the store's storage, not copied, so stores can share it;
    its keys are validated and its values turned into ``bytes``.
    """

    def __init__(self, data: dict[str, bytes] | None = None, *, read_only: bool = False) -> None:
        super().__init__(read_only=read_only)
        self._data: dict[str, bytes] = {} if data is None else data
        for key, value in self._data.items():
            validate_key(key)
            if type(value) is not bytes:
                self._data[key] = bytes(value)
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return f"{type(self).__name__}(<{len(self._data)} keys at {id(self._data):#x}>)"

    def _get(self, key: str, byte_range: ByteRange | None) -> bytes | None:
        value = self._data.get(key)
        return None if value is None else slice_range(value, byte_range)

    def _exists(self, key: str) -> bool:
        return key in self._data

    def _list_prefix(self, prefix: str) -> Iterator[str]:
        with self._lock:
            keys = list(self._data)
        return (key for key in keys if key.startswith(prefix))

    def _set(self, key: str, value: bytes | bytearray | memoryview) -> None:
        value = bytes(value)  # a private copy: the caller may reuse its buffer
        with self._lock:
            self._data[key] = value

    def _set_many(self, items: Mapping[str, bytes | bytearray | memoryview]) -> None:
        values = {key: bytes(value) for key, value in items.items()}
        with self._lock:
            self._data.update(values)

    def _delete(self, key: str) -> None:
        with self._lock:
            self._data.pop(key, None)

    def _delete_many(self, keys: list[str]) -> None:
        with self._lock:
            for key in keys:
                self._data.pop(key, None)
