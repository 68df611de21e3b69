"""The ``nczarr zom`` commands and ``nczarr info``, run in-process as a user would type them."""

from __future__ import annotations

import json

import pytest

from nczarr.cli import main
from nczarr.store import DirectoryStore
from nczarr.zarr import create_group, zom


@pytest.fixture
def dataset(tmp_path):
    """A v3 dataset on disk: a group with a sharded, compressed array and an attribute."""
    path = tmp_path / "data.zarr"
    with create_group(DirectoryStore(path), attributes={"title": "t"}) as root:
        sub = root.create_group("sub")
        a = sub.create_array(
            "a", shape=(8, 6), dtype="f4", chunks=(2, 3), shards=(4, 6), dimension_names=["y", "x"],
            compressors=[{"name": "gzip", "configuration": {"level": 1}}], attributes={"units": "m"},
        )
        a[:] = 1.5
        root.create_array("b", shape=(3,), dtype="i2", chunks=(3,))
    return path


def run(capsys, *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def test_export_prints_the_document(capsys, dataset, tmp_path):
    code, out, err = run(capsys, "zom", "export", str(dataset))
    assert (code, err) == (0, "")
    document = json.loads(out)
    assert document == zom.export(DirectoryStore(dataset, read_only=True))
    assert document["members"]["sub"]["members"]["a"]["attributes"] == {"units": "m"}
    code, out, _ = run(capsys, "zom", "export", str(dataset), "-o", str(tmp_path / "doc.json"), "--no-consolidated")
    assert (code, out) == (0, "")
    assert json.loads((tmp_path / "doc.json").read_text()) == document


def test_create_then_check_succeeds(capsys, dataset, tmp_path):
    run(capsys, "zom", "export", str(dataset), "-o", str(tmp_path / "doc.json"))
    target = tmp_path / "copy.zarr"
    assert run(capsys, "zom", "create", str(tmp_path / "doc.json"), str(target)) == (0, "", "")
    doc = tmp_path / "doc.json"
    assert run(capsys, "zom", "check", str(doc), str(target)) == (0, f"{target} matches {doc}\n", "")
    # The copy has the structure but no data.
    assert not [p for p in target.rglob("*") if p.is_file() and "/c/" in str(p)]


def test_create_refuses_a_non_empty_store_unless_overwrite(capsys, dataset, tmp_path):
    run(capsys, "zom", "export", str(dataset), "-o", str(tmp_path / "doc.json"))
    code, _out, err = run(capsys, "zom", "create", str(tmp_path / "doc.json"), str(dataset))
    assert code == 1 and "is not empty" in err and "Traceback" not in err
    assert run(capsys, "zom", "create", str(tmp_path / "doc.json"), str(dataset), "--overwrite")[0] == 0
    assert DirectoryStore(dataset).exists("sub/a/zarr.json")
    assert not DirectoryStore(dataset).exists("sub/a/c/0/0")  # the data went with the overwrite


def test_check_prints_every_difference_and_exits_1(capsys, dataset, tmp_path):
    document = zom.export(DirectoryStore(dataset, read_only=True))
    document["members"]["sub"]["members"]["a"]["shape"] = [9, 6]
    document["members"]["sub"]["attributes"]["new"] = "x"
    del document["members"]["b"]
    zom.write_document(document, tmp_path / "doc.json")
    code, out, _ = run(capsys, "zom", "check", str(tmp_path / "doc.json"), str(dataset))
    assert code == 1
    assert out.splitlines() == [
        "/b: extra",
        '/sub: changed attributes.new: "x" != (absent)',
        "/sub/a: changed shape: [9, 6] != [8, 6]",
    ]


def test_validate_prints_problems_with_json_paths(capsys, dataset, tmp_path):
    document = zom.export(DirectoryStore(dataset, read_only=True))
    zom.write_document(document, tmp_path / "good.json")
    good = tmp_path / "good.json"
    assert run(capsys, "zom", "validate", str(good)) == (0, f"{good} is a valid ZOM document\n", "")
    document["members"]["sub"]["members"]["a"]["shape"] = [8, "6"]
    document["members"]["b"]["unknown"] = 1
    zom.write_document(document, tmp_path / "bad.json")
    code, out, _ = run(capsys, "zom", "validate", str(tmp_path / "bad.json"))
    assert code == 1
    assert out.splitlines() == [
        "$.members.b.unknown: 1 is not of type 'object'",
        "$.members.sub.members.a.shape[1]: '6' is not of type 'integer'",
    ]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["zom", "validate", "{missing}"], "cannot read"),
        (["zom", "check", "{bad}", "{store}"], "not valid JSON: Expecting"),
        (["zom", "create", "{bad}", "{store}"], "not valid JSON"),
        (["zom", "export", "{missing}"], "does not exist"),
        (["zom", "check", "{notzom}", "{store}"], "$.zarr_format: must be 2 or 3"),
        (["zom", "export", "{store}", "-o", "{nodir}"], "cannot write"),
    ],
)
def test_errors_are_one_clear_line(capsys, dataset, tmp_path, args, message):
    (tmp_path / "bad.json").write_text('{"zarr_format": 3,')
    (tmp_path / "notzom.json").write_text('{"hello": 1}')
    names = {
        "missing": tmp_path / "missing.json", "bad": tmp_path / "bad.json", "store": dataset,
        "notzom": tmp_path / "notzom.json", "nodir": tmp_path / "no" / "such" / "doc.json",
    }
    code, _, err = run(capsys, *(a.format(**names) for a in args))
    assert code == 1
    assert err.startswith("nczarr: error: ") and message in err
    assert len(err.splitlines()) == 1


def test_zom_without_a_subcommand_is_a_usage_error(capsys):
    with pytest.raises(SystemExit) as info:
        main(["zom"])
    assert info.value.code == 2
    assert "ZOM_COMMAND" in capsys.readouterr().err


def test_info_shows_the_tree_with_shards_codecs_sizes_and_totals(capsys, dataset):
    code, out, _ = run(capsys, "info", str(dataset))
    assert code == 0
    lines = out.splitlines()
    assert lines[0] == f"{dataset} (Zarr v3, consolidated metadata)"
    assert lines[1] == '  @ {"title": "t"}'
    # b has no chunk written: what it stores is its zarr.json.
    assert lines[2] == f"  b: 3 int16, chunks 3, codecs bytes, stored {(dataset / 'b' / 'zarr.json').stat().st_size} B"
    assert lines[3] == "  sub/"
    assert lines[4].startswith("    a (y, x): 8x6 float32, shards 4x6 of chunks 2x3, codecs bytes, gzip, stored ")
    assert lines[5] == '      @ {"units": "m"}'
    assert lines[6].startswith("1 group, 2 arrays, ")


def test_create_overwrite_does_not_wipe_a_directory_of_something_else(capsys, dataset, tmp_path):
    run(capsys, "zom", "export", str(dataset), "-o", str(tmp_path / "doc.json"))
    other = tmp_path / "photos"
    other.mkdir()
    (other / "cat.jpg").write_bytes(b"meow")
    code, _, err = run(capsys, "zom", "create", str(tmp_path / "doc.json"), str(other), "--overwrite")
    assert code == 1 and "holds no Zarr dataset" in err
    assert (other / "cat.jpg").read_bytes() == b"meow"
