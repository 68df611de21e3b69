"""The syntax room's error: text that does not follow its grammar."""

from __future__ import annotations

from nczarr.errors import NCZarrError


class ParseError(NCZarrError, ValueError):
    """Text that cannot be parsed, with where it went wrong and what was expected there.

    ``line`` and ``column`` count from 1; ``token`` is the offending text (``None`` at the
    end of the text); ``expected`` lists what could have stood there, in words.
    """

    def __init__(
        self,
        message: str,
        line: int,
        column: int,
        token: str | None = None,
        expected: tuple[str, ...] = (),
        filename: str | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.line = line
        self.column = column
        self.token = token
        self.expected = expected
        self.filename = filename

    def __str__(self) -> str:
        where = f"{self.line}:{self.column}: {self.message}"
        return f"{self.filename}:{where}" if self.filename else where
