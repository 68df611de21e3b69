"""NcML out: what ``ncdump -x`` prints (netCDF classic data model only): dimensions,
global attributes and variables with their attributes; no data."""

from __future__ import annotations

from collections.abc import Callable, Iterator

from nczarr.model import AtomicType, Attribute, Group, Variable

__all__ = ["NCML_NAMESPACE", "ncml_lines"]

NCML_NAMESPACE = "https://www.unidata.ucar.edu/namespaces/netcdf/ncml-2.2"
_NAMED = {"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "\n": "&#xA;", "\r": "&#xD;", "\t": "&#x9;"}


def _xml(text: str) -> str:
    """Text escaped for an XML attribute value as ncdump escapes it."""
    out = []
    for c in text:
        if c in _NAMED:
            out.append(_NAMED[c])
        elif ord(c) < 0x20:
            out.append(f"&#{ord(c)};")
        else:
            out.append(c)
    return "".join(out)


def _attribute_line(attribute: Attribute, pad: str, number: Callable[[AtomicType, object], str]) -> str:
    name = _xml(attribute.name)
    type_ = attribute.type
    if type_ is AtomicType.CHAR:
        return f'{pad}<attribute name="{name}" value="{_xml(str(attribute.values).rstrip(chr(0)))}" />\n'
    assert isinstance(type_, AtomicType)
    values = " ".join(number(type_, v) for v in attribute.values)
    return f'{pad}<attribute name="{name}" type="{type_.value}" value="{values}" />\n'


def ncml_lines(
    root: Group,
    location: str,
    dimension_names: Callable[[Variable, Group], list[str]],
    wants_data: Callable[[Variable, Group], bool],
    number: Callable[[AtomicType, object], str],
) -> Iterator[str]:
    """The NcML of a classic-model tree; ``number`` formats one attribute number,
    ``wants_data`` says whether ncdump would print the variable's data (then a variable
    without attributes still gets a closing tag)."""
    yield '<?xml version="1.0" encoding="UTF-8"?>\n'
    yield f'<netcdf xmlns="{NCML_NAMESPACE}" location="{_xml(location)}">\n'
    for dim in root.dimensions:
        unlimited = ' isUnlimited="true"' if dim.unlimited else ""
        yield f'  <dimension name="{_xml(dim.name)}" length="{dim.size}"{unlimited} />\n'
    for attribute in root.attributes:
        yield _attribute_line(attribute, "  ", number)
    for variable in root.variables:
        dims = dimension_names(variable, root)
        shape = f' shape="{_xml(" ".join(dims))}"' if dims else ""
        head = f'  <variable name="{_xml(variable.name)}"{shape} type="{variable.type}"'
        if not variable.attributes and not wants_data(variable, root):
            yield head + " />\n"
            continue
        yield head + ">\n"
        for attribute in variable.attributes:
            yield _attribute_line(attribute, "    ", number)
        yield "  </variable>\n"
    yield "</netcdf>\n"
