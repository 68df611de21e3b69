"""The sample files are valid and read back from their dump."""

from pathlib import Path

import pytest

from nczarr.model import AtomicType, validate
from nczarr.syntax import dump, parse, parse_file

SAMPLES = sorted((Path(__file__).parents[2] / "samples").glob("*.nczm"))


def test_there_are_samples() -> None:
    assert [path.name for path in SAMPLES] == ["classic.nczm", "full.nczm", "small.nczm"]


@pytest.mark.parametrize("path", SAMPLES, ids=lambda path: path.name)
def test_a_sample_is_valid_and_round_trips(path: Path) -> None:
    tree = parse_file(path)
    assert validate(tree) == []
    assert parse(dump(tree)) == tree


def test_the_full_sample_uses_every_feature() -> None:
    tree = parse_file(SAMPLES[1])
    kinds = {type(t).__name__ for t in tree.types}
    assert kinds == {"CompoundType", "EnumType", "OpaqueType", "VlenType"}
    types = {a.type for g in tree.walk() for a in g.attributes}
    assert set(AtomicType) <= types
    assert any(d.unlimited for d in tree.dimensions)
    references = [ref for g in tree.walk() for v in g.variables for ref in v.dimensions]
    assert any(isinstance(ref, str) and ref.startswith("/") for ref in references)
    assert any(isinstance(ref, str) and not ref.startswith("/") for ref in references)
    assert any(g.groups for g in tree.groups)
