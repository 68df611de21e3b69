"""MemoryStore: the dict it is given."""

from __future__ import annotations

import pytest

from nczarr.errors import InvalidKeyError
from nczarr.store import MemoryStore


def test_the_given_dict_is_the_storage() -> None:
    data = {"a/b": b"1"}
    store = MemoryStore(data)
    store.set("c", b"2")
    store.delete("a/b")
    assert data == {"c": b"2"}
    assert MemoryStore(data, read_only=True).get("c") == b"2"


def test_given_values_become_bytes() -> None:
    data = {"a": bytearray(b"1"), "b": memoryview(b"22")}
    store = MemoryStore(data)  # type: ignore[arg-type]
    assert store.get("a") == b"1"
    assert type(store.get("a")) is bytes
    assert type(data["b"]) is bytes


def test_given_keys_are_validated() -> None:
    with pytest.raises(InvalidKeyError, match="'../escape'"):
        MemoryStore({"../escape": b""})


def test_stores_do_not_share_storage_by_default() -> None:
    first, second = MemoryStore(), MemoryStore()
    first.set("k", b"v")
    assert not second.exists("k")
    assert "1 keys" in repr(first)
