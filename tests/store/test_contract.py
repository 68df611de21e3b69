"""The behaviour every store shares, run against each kind of store."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING

import numpy as np
import pytest

from nczarr import config
from nczarr.errors import InvalidKeyError, KeyNotFoundError, ReadOnlyError, StoreError
from nczarr.store import Store

if TYPE_CHECKING:
    from conftest import StoreKind

CONTENTS = {
    "zarr.json": b'{"zarr_format": 3}',
    ".zattrs": b"{}",
    "a/.zarray": b"array",
    "a/0.0": b"0123456789",
    "a/0.1": b"",
    "ab/c/0": b"chunk",
    "v/c/0/1": bytes(range(256)) * 400,
}

BAD_KEYS = ["..", "a/../b", "/abs", "a//b", "a/", "a\\b", "a\x00b", "", ".", "a/./b"]


def populated(kind: StoreKind, contents: dict[str, bytes] = CONTENTS) -> Store:
    """A read-only store holding ``contents``, written through the kind's writable store."""
    store = kind.new()
    store.set_many(contents)
    return kind.reopen(store)


# -- reading ---------------------------------------------------------------------------------
def test_get_returns_each_value(kind: StoreKind) -> None:
    store = populated(kind)
    for key, value in CONTENTS.items():
        assert store.get(key) == value
        assert isinstance(store.get(key), bytes)


@pytest.mark.parametrize("key", ["missing", "a/missing", "a", "v/c", "missing/deeper/key"])
def test_get_absent_key_raises_key_error_naming_it(kind: StoreKind, key: str) -> None:
    store = populated(kind)
    with pytest.raises(KeyNotFoundError, match=repr(key)) as info:
        store.get(key)
    assert isinstance(info.value, KeyError)


@pytest.mark.parametrize(
    ("byte_range", "expected"),
    [
        ((0, 3), b"012"),
        ((2, None), b"23456789"),
        ((3, 4), b"3456"),
        ((5, 0), b""),
        ((8, 100), b"89"),
        ((20, None), b""),
        ((20, 5), b""),
        ((-3, None), b"789"),
        ((-10, None), b"0123456789"),
        ((-50, None), b"0123456789"),
    ],
)
def test_byte_ranges(kind: StoreKind, byte_range: tuple[int, int | None], expected: bytes) -> None:
    store = populated(kind)
    assert store.get("a/0.0", byte_range) == expected


def test_byte_range_of_a_large_value(kind: StoreKind) -> None:
    store = populated(kind)
    value = CONTENTS["v/c/0/1"]
    assert store.get("v/c/0/1", (1000, 5000)) == value[1000:6000]
    assert store.get("v/c/0/1", (-16, None)) == value[-16:]


@pytest.mark.parametrize("byte_range", [(-3, 2), (0, -1)])
def test_malformed_byte_range_is_refused(kind: StoreKind, byte_range: tuple[int, int]) -> None:
    store = populated(kind)
    with pytest.raises(InvalidKeyError, match="byte range"):
        store.get("a/0.0", byte_range)


def test_byte_range_of_absent_key_raises(kind: StoreKind) -> None:
    store = populated(kind)
    with pytest.raises(KeyNotFoundError):
        store.get("missing", (0, 2))
    with pytest.raises(KeyNotFoundError):
        store.get("missing", (-2, None))


def test_exists(kind: StoreKind) -> None:
    store = populated(kind)
    assert all(store.exists(key) for key in CONTENTS)
    assert not store.exists("missing")
    assert not store.exists("a")  # a prefix, not a key
    assert not store.exists("a/0.0/deeper")


def test_getsize(kind: StoreKind) -> None:
    store = populated(kind)
    assert {key: store.getsize(key) for key in CONTENTS} == {
        key: len(value) for key, value in CONTENTS.items()
    }
    for absent in ("missing", "a"):
        with pytest.raises(KeyNotFoundError, match=repr(absent)):
            store.getsize(absent)


def test_list(kind: StoreKind) -> None:
    store = populated(kind)
    assert sorted(store.list()) == sorted(CONTENTS)


@pytest.mark.parametrize(
    ("prefix", "expected"),
    [
        ("", sorted(CONTENTS)),
        ("a/", ["a/.zarray", "a/0.0", "a/0.1"]),
        ("ab/", ["ab/c/0"]),
        ("v/", ["v/c/0/1"]),
        ("v/c/0/", ["v/c/0/1"]),
        ("missing/", []),
        ("a/0.0/", []),
        ("zarr.json/", []),
    ],
)
def test_list_prefix(kind: StoreKind, prefix: str, expected: list[str]) -> None:
    store = populated(kind)
    assert sorted(store.list_prefix(prefix)) == expected


def test_list_prefix_needs_a_trailing_slash(kind: StoreKind) -> None:
    store = populated(kind)
    with pytest.raises(InvalidKeyError, match="'a'"):
        store.list_prefix("a")


@pytest.mark.parametrize(
    ("prefix", "expected"),
    [
        ("", ([".zattrs", "zarr.json"], ["a", "ab", "v"])),
        ("a/", ([".zarray", "0.0", "0.1"], [])),
        ("v/", ([], ["c"])),
        ("v/c/0/", (["1"], [])),
        ("missing/", ([], [])),
        ("a/0.0/", ([], [])),
    ],
)
def test_list_dir(kind: StoreKind, prefix: str, expected: tuple[list[str], list[str]]) -> None:
    store = populated(kind)
    assert store.list_dir(prefix) == expected


def test_get_many_leaves_out_absent_keys(kind: StoreKind) -> None:
    store = populated(kind)
    keys = ["a/0.0", "missing", "v/c/0/1", "a", "a/0.1"]
    assert store.get_many(keys) == {k: CONTENTS[k] for k in ("a/0.0", "v/c/0/1", "a/0.1")}
    assert store.get_many([]) == {}


def test_ranges_past_the_end_of_values_read_empty_in_batches(kind: StoreKind) -> None:
    """S3 refuses such a range (416); a store reads it as none of the value, as get does."""
    store = populated(kind)
    assert store.get_many(["a/0.1", "a/0.0", "missing"], (1, 3)) == {"a/0.1": b"", "a/0.0": b"123"}
    assert store.get_ranges_many({"a/0.0": [(20, 2)], "a/0.1": [(1, 3)], "missing": [(0, 1)]}) == {
        "a/0.0": [b""], "a/0.1": [b""]}


@pytest.mark.parametrize("requests", [1, 2, 64])
def test_get_arriving_gives_each_key_once(kind: StoreKind, requests: int) -> None:
    """In groups, in any order, absent keys as None; a range as in get_many; across
    batches or a window (the bound on requests in flight smaller than the keys)."""
    store = populated(kind)
    keys = ["a/0.0", "missing", "v/c/0/1", "a", "a/0.1", "ab/c/0"]
    with config.settings(requests=requests):
        got = [pair for group in store.get_arriving(keys) for pair in group]
        ranged = dict(pair for group in store.get_arriving(keys, (1, 3)) for pair in group)
    assert sorted(key for key, _ in got) == sorted(keys)
    assert dict(got) == {k: CONTENTS.get(k) for k in keys}
    assert ranged == {k: None if k not in CONTENTS else CONTENTS[k][1:4] for k in keys}
    assert list(store.get_arriving([])) == []
    with pytest.raises(InvalidKeyError):
        store.get_arriving(["a/../b"])


def test_get_into_buffers(kind: StoreKind) -> None:
    store = populated(kind)
    target = bytearray(10)
    assert store.get_into("a/0.0", target) is True
    assert target == CONTENTS["a/0.0"]
    array = np.zeros((2, 5), dtype="u1")
    assert store.get_into("a/0.0", array) is True
    assert array.tobytes() == CONTENTS["a/0.0"]
    assert store.get_into("missing", bytearray(10)) is False


def test_get_into_refuses_a_buffer_of_another_size(kind: StoreKind) -> None:
    store = populated(kind)
    with pytest.raises(StoreError, match="'a/0.0' has 10 bytes"):
        store.get_into("a/0.0", bytearray(11))


# -- writing ---------------------------------------------------------------------------------
def test_set_accepts_bytes_like_values(kind: StoreKind) -> None:
    store = kind.new()
    array = np.arange(6, dtype="<i4")
    store.set("bytes", b"abc")
    store.set("bytearray", bytearray(b"def"))
    store.set("memoryview", memoryview(b"xghix")[1:4])
    store.set("ndarray", array)
    expected = {
        "bytes": b"abc",
        "bytearray": b"def",
        "memoryview": b"ghi",
        "ndarray": array.tobytes(),
    }
    assert store.get_many(list(expected)) == expected
    assert kind.reopen(store).get_many(list(expected)) == expected


def test_set_overwrites(kind: StoreKind) -> None:
    store = kind.new()
    store.set("a/b", b"a long first value")
    store.set("a/b", b"short")
    assert store.get("a/b") == b"short"
    assert store.getsize("a/b") == 5
    reopened = kind.reopen(store)
    assert reopened.get("a/b") == b"short"
    assert list(reopened.list()) == ["a/b"]


def test_set_copies_the_value(kind: StoreKind) -> None:
    store = kind.new()
    value = bytearray(b"before")
    store.set("k", value)
    value[:] = b"after!"
    assert store.get("k") == b"before"


def test_delete(kind: StoreKind) -> None:
    store = kind.new()
    store.set_many(CONTENTS)
    store.delete("v/c/0/1")
    store.delete("a/0.0")
    store.delete("missing")  # absent keys are no error
    store.delete("a/0.0")
    expected = sorted(set(CONTENTS) - {"v/c/0/1", "a/0.0"})
    assert sorted(store.list()) == expected
    assert not store.exists("a/0.0")
    assert store.list_dir("") == ([".zattrs", "zarr.json"], ["a", "ab"])
    reopened = kind.reopen(store)
    assert sorted(reopened.list()) == expected
    assert reopened.list_dir("") == ([".zattrs", "zarr.json"], ["a", "ab"])
    with pytest.raises(KeyNotFoundError):
        reopened.get("v/c/0/1")


def test_set_after_delete(kind: StoreKind) -> None:
    store = kind.new()
    store.set("a/b", b"1")
    store.delete("a/b")
    store.set("a/b", b"2")
    assert store.get("a/b") == b"2"
    assert kind.reopen(store).get("a/b") == b"2"


def test_delete_many(kind: StoreKind) -> None:
    store = kind.new()
    store.set_many(CONTENTS)
    store.delete_many(["a/0.0", "ab/c/0", "missing"])
    expected = sorted(set(CONTENTS) - {"a/0.0", "ab/c/0"})
    assert sorted(store.list()) == expected
    assert sorted(kind.reopen(store).list()) == expected


def test_delete_prefix_removes_only_that_prefix(kind: StoreKind) -> None:
    store = kind.new()
    store.set_many(CONTENTS)
    store.delete_prefix("a/")
    expected = sorted(k for k in CONTENTS if not k.startswith("a/"))
    assert "ab/c/0" in expected
    assert sorted(store.list()) == expected
    assert sorted(kind.reopen(store).list()) == expected


def test_delete_prefix_of_everything(kind: StoreKind) -> None:
    store = kind.new()
    store.set_many(CONTENTS)
    store.delete_prefix("")
    assert list(store.list()) == []
    assert list(kind.reopen(store).list()) == []


def test_concurrent_sets_and_gets(kind: StoreKind) -> None:
    store = kind.new()
    values = {f"c/{i}": bytes([i]) * (1000 + i) for i in range(64)}

    def write_then_read(key: str) -> bytes:
        store.set(key, values[key])
        return store.get(key)

    with ThreadPoolExecutor(max_workers=8) as pool:
        read = dict(zip(values, pool.map(write_then_read, values)))
    assert read == values
    assert kind.reopen(store).get_many(list(values)) == values


# -- refusals --------------------------------------------------------------------------------
@pytest.mark.parametrize("key", BAD_KEYS)
def test_invalid_keys_are_refused_everywhere(kind: StoreKind, key: str) -> None:
    store = kind.new()
    store.set("good", b"1")
    calls = [
        lambda: store.get(key),
        lambda: store.get(key, (0, 1)),
        lambda: store.get_into(key, bytearray(1)),
        lambda: store.exists(key),
        lambda: store.getsize(key),
        lambda: store.get_many(["good", key]),
        lambda: store.set(key, b"x"),
        lambda: store.set_many({"fine": b"x", key: b"x"}),
        lambda: store.delete(key),
        lambda: store.delete_many(["good", key]),
        lambda: store.list_prefix(key + "/"),
        lambda: store.delete_prefix(key + "/"),
    ]
    for call in calls:
        with pytest.raises(InvalidKeyError):
            call()
    assert kind.reopen(store).get_many(["good", "fine"]) == {"good": b"1"}


def test_non_string_key_is_refused(kind: StoreKind) -> None:
    store = kind.new()
    with pytest.raises(InvalidKeyError, match="must be a str"):
        store.set(b"bytes-key", b"x")  # type: ignore[arg-type]


def test_read_only_store_refuses_writes(kind: StoreKind) -> None:
    store = populated(kind)
    assert store.read_only
    writes = {
        "set": lambda: store.set("a/0.0", b"new"),
        "set_many": lambda: store.set_many({"a/0.0": b"new"}),
        "delete": lambda: store.delete("a/0.0"),
        "delete_many": lambda: store.delete_many(["a/0.0"]),
        "delete_prefix": lambda: store.delete_prefix("a/"),
    }
    for name, write in writes.items():
        with pytest.raises(ReadOnlyError, match=r"'a/(0\.0)?'.*read-only") as info:
            write()
        assert repr(store) in str(info.value), name
        assert isinstance(info.value, PermissionError)
    assert store.get("a/0.0") == CONTENTS["a/0.0"]
    assert sorted(store.list()) == sorted(CONTENTS)
