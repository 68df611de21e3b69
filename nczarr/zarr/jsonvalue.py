"""The type of a JSON document as ``json.loads`` gives it (metadata documents, attributes)."""

from __future__ import annotations

from typing import TypeAlias

#: Any JSON value; code that reads one checks the shape it needs with isinstance.
JSON: TypeAlias = "dict[str, JSON] | list[JSON] | str | int | float | bool | None"
#: A JSON object (a metadata document, a codec's configuration).
JSONObject: TypeAlias = "dict[str, JSON]"
