"""Sessions: creating a dataset, changing it, and writing only what changed, through every
NCZarr convention."""

from __future__ import annotations

import numpy as np
import pytest

from nczarr.errors import ReadOnlyError
from nczarr.formats import FormatError, convention, detect
from nczarr.formats.session import Session
from nczarr.model import AtomicType, Dimension
from nczarr.store import MemoryStore
from nczarr.syntax import parse
from nczarr.values.storage import VariableStorage

NCZARR_FORMATS = ["NCZARR", "NCZARR_V2"]

TEXT = """
dataset d zarr 3 enhanced {
    dimension time = unlimited(2)
    dimension x = 3
    variable float t(time, x) {
        attribute string units = "K"
        attribute float _FillValue = -999.0
    }
    variable int w(time)
    group g {
        dimension y = 2
        variable double v(x, y) { attribute double scale = 0.5 }
    }
    attribute string title = "session test"
}
"""


def create(fmt: str, store=None) -> Session:
    store = MemoryStore() if store is None else store
    return Session.create(
        store,
        parse(TEXT),
        convention(fmt),
        {"/t": VariableStorage(chunks=(1, 3), compression="zlib", shuffle=True)},
    )


def reopen(session: Session, read_only: bool = False) -> Session:
    return Session.open(session.store, detect(session.store), read_only=read_only)


@pytest.mark.parametrize("fmt", NCZARR_FORMATS)
def test_created_dataset_reads_back_equal_with_its_data(fmt):
    session = create(fmt)
    t = session.dataset.find_variable("t")
    session.array(t)[:] = [[1, 2, 3], [4, 5, 6]]
    session.sync()
    again = reopen(session)
    assert type(again.convention) is type(session.convention)
    expected = parse(TEXT)
    expected.name = again.dataset.name  # a store keeps no dataset name: it is the location
    expected.zarr_version = str(session.convention.zarr_format)
    assert again.dataset == expected
    assert again.array(again.dataset.find_variable("t"))[:].tolist() == [[1, 2, 3], [4, 5, 6]]
    assert again.stored.storage["/t"].chunks == (1, 3)
    assert again.stored.storage["/t"].compression == "zlib" and again.stored.storage["/t"].shuffle


@pytest.mark.parametrize("fmt", NCZARR_FORMATS)
def test_sync_without_changes_writes_nothing(recording_store, fmt):
    store = recording_store()
    create(fmt, store)
    session = reopen(Session(store, convention(fmt), None, {}))  # type: ignore[arg-type]
    store.reset()
    session.sync()
    assert store.written == []


@pytest.mark.parametrize("fmt", NCZARR_FORMATS)
def test_an_attribute_change_rewrites_only_its_document(recording_store, fmt):
    store = recording_store()
    session = create(fmt, store)
    store.reset()
    session.dataset.find_group("g").find_variable("v").add_attribute("units", AtomicType.STRING, ["m"])
    session.sync()
    # besides its document, only the root's consolidated metadata (dropped, then refreshed)
    nodes = [key for key in store.written if key not in ("zarr.json", ".zmetadata")]
    assert nodes and all(key.startswith("g/v/") for key in nodes)
    v = reopen(session).dataset.find_group("g").find_variable("v")
    assert [a.name for a in v.attributes] == ["scale", "units"]


@pytest.mark.parametrize("fmt", NCZARR_FORMATS)
def test_deleted_attributes_are_gone_after_sync(fmt):
    session = create(fmt)
    session.dataset.attributes.clear()
    session.sync()
    assert reopen(session).dataset.attributes == []


@pytest.mark.parametrize("fmt", NCZARR_FORMATS)
def test_growing_an_unlimited_dimension_reshapes_every_array_that_uses_it(fmt):
    session = create(fmt)
    time = session.dataset.find_dimension("time")
    t, w = session.dataset.find_variable("t"), session.dataset.find_variable("w")
    session.grow(time, 5)
    session.array(t)[4] = [7, 8, 9]
    session.sync()
    again = reopen(session)
    assert again.dataset.find_dimension("time").size == 5
    assert again.array(again.dataset.find_variable("w")).shape == (5,)
    got = again.array(again.dataset.find_variable("t"))[:]
    assert got.shape == (5, 3) and got[4].tolist() == [7, 8, 9] and got[0, 0] == -999
    with pytest.raises(FormatError, match="cannot shrink from 5 to 1"):
        session.grow(time, 1)
    with pytest.raises(FormatError, match="dimension /x is not unlimited"):
        session.grow(session.dataset.find_dimension("x"), 9)
    assert session.array(w).shape == (5,)


@pytest.mark.parametrize("fmt", NCZARR_FORMATS)
def test_renaming_a_variable_and_a_group_moves_their_data(fmt):
    session = create(fmt)
    v = session.dataset.find_group("g").find_variable("v")
    session.array(v)[:] = np.arange(6).reshape(3, 2)
    session.sync()
    session.rename(v, "renamed")
    session.rename(session.dataset.find_group("g"), "h")
    session.sync()
    assert not [k for k in session.store.list() if k.startswith("g/")]
    again = reopen(session)
    moved = again.dataset.find_group("h").find_variable("renamed")
    assert again.array(moved)[:].tolist() == [[0, 1], [2, 3], [4, 5]]


@pytest.mark.parametrize("fmt", NCZARR_FORMATS)
def test_renaming_a_dimension_and_adding_nodes_after_reopening(fmt):
    session = reopen(create(fmt))
    session.rename(session.dataset.find_dimension("x"), "xx")
    session.dataset.add(Dimension("z", 4))
    new = session.dataset.add_variable("new", AtomicType.SHORT, ["z"])
    session.define(new)
    session.array(new)[:] = [1, 2, 3, 4]
    session.sync()
    again = reopen(session)
    assert [d.name for d in again.dataset.dimensions] == ["time", "xx", "z"]
    assert again.dataset.find_variable("t").dimensions[1] == "xx"
    assert again.dataset.find_group("g").find_variable("v").dimensions == ["xx", "y"]
    assert again.array(again.dataset.find_variable("new"))[:].tolist() == [1, 2, 3, 4]


def test_a_dimension_named_by_fqn_stays_named_by_fqn_and_types_cannot_be_renamed():
    tree = parse(
        "dataset d zarr 3 enhanced { dimension x = 2 enum byte e_t { a = 1 } group g { variable e_t v(/x) } }"
    )
    session = Session.create(MemoryStore(), tree, convention("NCZARR"))
    session.rename(tree.find_dimension("x"), "x2")
    assert tree.find_group("g").find_variable("v").dimensions == ["/x2"]
    with pytest.raises(FormatError, match=r"netCDF cannot rename a user type \(/e_t\)"):
        session.rename(tree.find_type("e_t"), "f_t")


def test_a_dataset_the_format_cannot_hold_is_refused_before_anything_is_written():
    tree = parse("dataset d zarr 2 enhanced { opaque blob(4) variable blob b }")
    store = MemoryStore()
    with pytest.raises(FormatError, match="NCZARR_V2 cannot hold"):
        Session.create(store, tree, convention("NCZARR_V2"))
    assert list(store.list()) == []


def test_a_read_only_session_refuses_changes():
    session = reopen(create("NCZARR"), read_only=True)
    with pytest.raises(ReadOnlyError):
        session.grow(session.dataset.find_dimension("time"), 3)
    with pytest.raises(ReadOnlyError):
        session.array(session.dataset.find_variable("t"))[0, 0] = 1
