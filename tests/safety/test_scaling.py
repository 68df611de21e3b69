"""Metadata work grows linearly: adding the n-th attribute or variable must not scan the ones
before it (40,000 ``setncattr`` calls once took 10.7 s against 0.6 s for 10,000).

Timings are compared as ratios, never against a limit: the CPU time for 4n operations over
the time for n, each the median of a few runs, must stay well below 16 (quadratic) and near 4
(linear). Datasets are diskless so that disk speed does not weigh in.
"""

from __future__ import annotations

import copy
import gc
import pickle
import statistics
import time
from collections.abc import Callable

import pytest

from nczarr.api import Dataset
from nczarr.model import AtomicType
from nczarr.model import Dataset as ModelDataset

RUNS = 3
LIMIT = 8.0  # linear: about 4; quadratic: about 16


def _median_seconds(work: Callable[[int], None], n: int) -> float:
    # CPU time, not wall-clock time: other processes on a shared machine do not count; and
    # without the cyclic garbage collector, whose passes over the whole heap add their noise
    times = []
    for _ in range(RUNS):
        gc.collect()
        gc.disable()
        try:
            start = time.process_time()
            work(n)
            times.append(time.process_time() - start)
        finally:
            gc.enable()
    return statistics.median(times)


def _ratio(work: Callable[[int], None], n: int) -> float:
    work(n // 10)  # warm up: imports, caches
    return _median_seconds(work, 4 * n) / _median_seconds(work, n)


def _attributes_on_one_variable(n: int) -> None:
    with Dataset("scaling.zarr", "w", diskless=True) as ds:
        v = ds.createVariable("v", "f4")
        for i in range(n):
            v.setncattr(f"a{i}", i)


def _attributes_of_a_group(n: int) -> None:
    with Dataset("scaling.zarr", "w", diskless=True) as ds:
        for i in range(n):
            setattr(ds, f"a{i}", float(i))


def _variables_in_one_group(n: int) -> None:
    with Dataset("scaling.zarr", "w", diskless=True) as ds:
        ds.createDimension("d", 2)
        for i in range(n):
            ds.createVariable(f"v{i}", "i2", ("d",))


@pytest.mark.parametrize(
    "work, n",
    [
        (_attributes_on_one_variable, 2500),
        (_attributes_of_a_group, 2500),
        (_variables_in_one_group, 400),
    ],
    ids=["variable-attributes", "group-attributes", "variables"],
)
def test_metadata_work_is_linear(work: Callable[[int], None], n: int) -> None:
    ratio = _ratio(work, n)
    assert ratio < LIMIT, f"{4 * n} operations took {ratio:.1f} times as long as {n}"


def test_renamed_and_removed_attributes_are_found_by_their_current_names() -> None:
    # the name index must follow renames and removals
    with Dataset("names.zarr", "w", diskless=True) as ds:
        v = ds.createVariable("v", "f4")
        for i in range(100):
            v.setncattr(f"a{i}", i)
        v.renameAttribute("a5", "renamed")
        v.delncattr("a7")
        v.setncattr("a5", -5)
        assert v.getncattr("renamed") == 5 and v.getncattr("a5") == -5
        assert "a7" not in v.ncattrs()
        with pytest.raises(AttributeError):
            v.getncattr("a7")
        assert v.ncattrs()[-1] == "a5" and len(v.ncattrs()) == 100


def test_the_name_index_follows_every_change_of_a_child_list() -> None:
    dataset = ModelDataset()
    group = dataset.add_group("g")
    first = group.add_variable("a", AtomicType.INT)
    assert group.find_variable("a") is first
    first.name = "b"  # a rename as the session does it
    assert group.find_variable("a") is None and group.find_variable("b") is first
    second = group.add_variable("b", AtomicType.INT)  # a duplicate (parsed text may hold one)
    assert group.find_variable("b") is first
    group.variables.remove(first)
    assert group.find_variable("b") is second
    group.variables = [v for v in group.variables if v is not second]  # replaced wholesale
    assert group.find_variable("b") is None
    group.variables.insert(0, first)
    assert group.find_variable("b") is first
    copied = copy.deepcopy(dataset)
    assert copied == dataset and copied.find_group("g").find_variable("b") is not first
    assert pickle.loads(pickle.dumps(dataset)) == dataset
