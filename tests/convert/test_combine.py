"""The plan of many sources into one dataset, against NCO 5.1.4's rules."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest
from archive_files import month_cdl, monthly_archive, ncgen

from nczarr.convert.combine import (
    COPY,
    REBASE,
    REFILL,
    REPACK,
    CombineOptions,
    Piece,
    expand_sources,
    plan_combine,
)
from nczarr.errors import CombineError, NCZarrError, SourceChangedError


def test_concatenation_offsets_rebasing_and_first_file_attributes(tmp_path: Path) -> None:
    files = monthly_archive(tmp_path)
    plan = plan_combine([str(f) for f in files])
    assert plan.record_dimension == "/time" and plan.record_length == 8
    assert [(s.record_offset, s.record_length) for s in plan.sources] == [(0, 3), (3, 1), (4, 4)]
    assert plan.dataset.find_attribute("title").values == "month 1"  # ncrcat: the first file's
    assert plan.variables["/time"].outcomes == {REBASE}
    assert plan.variables["/t"].outcomes == {COPY} and plan.variables["/g/n"].record
    assert not plan.variables["/x"].record and plan.variables["/x"].sources == (0,)
    feb = plan.sources[1].conversions["/time"]
    assert feb.apply(np.array([0.0])).tolist() == [31.0]  # days since 2000-02-01 -> since 2000-01-01
    assert plan.pieces("/t", 2, 5) == [Piece(0, 2, 2, 3), Piece(1, 0, 3, 4), Piece(2, 0, 4, 5)]


def test_differing_fill_and_packing_are_planned_conversions(tmp_path: Path) -> None:
    a = ncgen(tmp_path, "a.nc", month_cdl(1, 2))
    b = ncgen(tmp_path, "b.nc", month_cdl(2, 2, fill=-1.0, scale=0.25))
    plan = plan_combine([str(a), str(b)])
    assert plan.variables["/t"].outcomes == {REFILL}
    assert plan.variables["/p"].outcomes == {REPACK}
    t = plan.sources[1].conversions["/t"]
    assert t.apply(np.array([5.0, -1.0], "f4")).tolist() == [5.0, -999.0]
    p = plan.sources[1].conversions["/p"]
    assert p.apply(np.array([40, -32767], "i2")).tolist() == [20, -32767]  # 40*.25+10 = 20 = 20*.5+10


def test_sorted_by_the_record_coordinate(tmp_path: Path) -> None:
    files = monthly_archive(tmp_path)
    plan = plan_combine([str(f) for f in reversed(files)], CombineOptions(sort=True))
    assert [Path(s.location).name for s in plan.sources] == ["m01.nc", "m02.nc", "m03.nc"]


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda c: c.replace("short p", "int p"), "m02.nc: variable /p: type int here, short in"),
        (lambda c: c.replace("float x(x) ;", "").replace("x = 1, 2, 3 ;", ""), "m02.nc: variable /x: missing"),
        (lambda c: c.replace("x = 3", "x = 4").replace("x = 1, 2, 3", "x = 1, 2, 3, 4"), "dimension /x: length 4 here, 3"),
        (
            lambda c: c.replace("int n(time) ;", "int n(time), m(time) ;").replace("n = 20 ;", "n = 20 ; m = 1 ;"),
            "variable /g/m: not in",
        ),
    ],
)
def test_mismatches_name_the_file_the_variable_and_the_difference(tmp_path: Path, edit, message: str) -> None:
    a = ncgen(tmp_path, "m01.nc", month_cdl(1, 2))
    b = ncgen(tmp_path, "m02.nc", edit(month_cdl(2, 1)))
    with pytest.raises(CombineError, match=message) as caught:
        plan_combine([str(a), str(b)])
    assert isinstance(caught.value, NCZarrError) and isinstance(caught.value, ValueError)


def test_merge_takes_later_attributes_as_ncks_append(tmp_path: Path) -> None:
    one = (
        'netcdf a { dimensions: time = UNLIMITED ; variables: double time(time) ; time:m = "a" ; float u(time) ; '
        ':title = "a" ; :only_a = 1 ; data: time = 0, 1 ; u = 1, 2 ; }'
    )
    two = one.replace("u(time)", "v(time)").replace("u = ", "v = ").replace('"a"', '"b"').replace("only_a", "only_b")
    plan = plan_combine([str(ncgen(tmp_path, "a.nc", one)), str(ncgen(tmp_path, "b.nc", two))], CombineOptions(merge=True))
    assert [a.name for a in plan.dataset.attributes] == ["title", "only_a", "only_b"]
    assert plan.dataset.find_attribute("title").values == "b"
    assert plan.variables["/u"].sources == (0,) and plan.variables["/v"].sources == (1,)
    assert plan.variables["/time"].sources == (1,)  # ncks -A: the later file's values
    assert plan.record_length == 2


def test_expand_sources_globs_and_lists(tmp_path: Path) -> None:
    files = monthly_archive(tmp_path)
    listing = tmp_path / "list.txt"
    listing.write_text(f"# the archive\n{files[2]}\n\n{tmp_path}/m0[12].nc\n")
    assert expand_sources([f"@{listing}"]) == [str(files[2]), str(files[0]), str(files[1])]
    with pytest.raises(CombineError, match="matches no file"):
        expand_sources([str(tmp_path / "none*.nc")])


def test_changed_source_is_detected(tmp_path: Path) -> None:
    files = monthly_archive(tmp_path, (1, 1))
    plan = plan_combine([str(f) for f in files])
    plan.check_identities()
    os.utime(files[1], ns=(1, 1))
    with pytest.raises(SourceChangedError, match="m02.nc: changed"):
        plan.check_identities()
