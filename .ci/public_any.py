"""No ``Any`` in a public signature: lists every public function, method, and annotated class
attribute (a dataclass field is a constructor parameter) of nczarr whose annotation says
``Any``. Public: not under a ``_``-prefixed module or name; dunder methods count (they are the
protocols users call). Exit 1 when one is found. Run: ``python .ci/public_any.py [nczarr]``."""

from __future__ import annotations

import ast
import sys
from collections.abc import Iterator
from pathlib import Path


def _mentions_any(annotation: ast.expr | None) -> bool:
    if annotation is None:
        return False
    if isinstance(annotation, ast.Constant) and isinstance(annotation.value, str):
        try:
            annotation = ast.parse(annotation.value, mode="eval").body
        except SyntaxError:
            return "Any" in annotation.value
    return any(
        (isinstance(node, ast.Name) and node.id == "Any") or (isinstance(node, ast.Attribute) and node.attr == "Any")
        for node in ast.walk(annotation)
    )


def _public(name: str) -> bool:
    return not name.startswith("_") or (name.startswith("__") and name.endswith("__"))


def _signature_problems(function: ast.FunctionDef | ast.AsyncFunctionDef) -> Iterator[str]:
    arguments = function.args
    every = [*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs]
    every += [a for a in (arguments.vararg, arguments.kwarg) if a is not None]
    for argument in every:
        if _mentions_any(argument.annotation):
            yield f"parameter {argument.arg!r}"
    if _mentions_any(function.returns):
        yield "return"


def _problems(tree: ast.Module) -> Iterator[tuple[int, str]]:
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and _public(node.name):
            for what in _signature_problems(node):
                yield node.lineno, f"{node.name}(): {what}"
        elif isinstance(node, ast.ClassDef) and _public(node.name):
            for member in node.body:
                if isinstance(member, (ast.FunctionDef, ast.AsyncFunctionDef)) and _public(member.name):
                    for what in _signature_problems(member):
                        yield member.lineno, f"{node.name}.{member.name}(): {what}"
                elif (
                    isinstance(member, ast.AnnAssign)
                    and isinstance(member.target, ast.Name)
                    and _public(member.target.id)
                    and _mentions_any(member.annotation)
                ):
                    yield member.lineno, f"{node.name}.{member.target.id}: attribute"


def main(root: str = "nczarr") -> int:
    found = 0
    for path in sorted(Path(root).rglob("*.py")):
        parts = path.relative_to(root).with_suffix("").parts
        if any(part.startswith("_") and part != "__init__" for part in parts):
            continue
        for line, what in _problems(ast.parse(path.read_text(encoding="utf-8"))):
            print(f"{path}:{line}: Any in a public signature: {what}")
            found += 1
    print(f"{found} public signatures with Any")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:]))
