"""Times as ncdump ``-t`` / ``-i`` prints them: values of variables with ``<unit> since
<date>`` units (and of their ``bounds`` companions) as quoted dates, trailing zero fields
left out (``"2000-01-01"``, ``"2000-01-02 12"``, ``"2000-01-01 00:30"``,
``"2000-01-01 00:00:59.999996"``), in the variable's ``calendar``.

ncdump does its date arithmetic in double-precision hours counted from 1970-01-01 (netcdf-c's
``nctime.c``, from LLNL's cdtime), so a value that is not a whole number of seconds in
binary shows its rounding (``10:39:59.999999`` for 10,000,000 minutes after 1582-10-01 in
the Julian calendar, where exact arithmetic gives ``10:40``). To print the same text, the
same steps are taken here, in the same order; the mixed Julian/Gregorian calendar
(``standard``, ``gregorian``) switches from 1582-10-05 to 1582-10-15 and adds through the
calendar the base date is in, as netcdf-c does.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable
from dataclasses import dataclass
from enum import Enum

from nczarr.model import AtomicType, Group, Variable

__all__ = ["TimeAxis", "time_axes"]

_UNITS = re.compile(r"^\s*(\S+)\s+since\s+(\S+)(?:\s+(\S+))?", re.IGNORECASE)
_DATE = re.compile(r"^(-?\d+)(?:-(\d+)(?:-(\d+))?)?$")
_CLOCK = re.compile(r"^(\d+)(?::(\d+)(?::(\d+(?:\.\d*)?))?)?")
_EPOCH = 1970
_MONTH_DAYS = (31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)
_MONTH_DAYS_LEAP = (31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)
_EPS_SECONDS = 0.5e-6


class _Calendar(Enum):
    MIXED = "mixed"
    GREGORIAN = "gregorian"
    JULIAN = "julian"
    NOLEAP = "noleap"
    ALL_LEAP = "all_leap"
    DAY360 = "360_day"


_CALENDARS = {
    "standard": _Calendar.MIXED,
    "gregorian": _Calendar.MIXED,
    "proleptic_gregorian": _Calendar.GREGORIAN,
    "julian": _Calendar.JULIAN,
    "noleap": _Calendar.NOLEAP,
    "365_day": _Calendar.NOLEAP,
    "all_leap": _Calendar.ALL_LEAP,
    "366_day": _Calendar.ALL_LEAP,
    "360_day": _Calendar.DAY360,
}


def _unit_hours(word: str) -> float | None:
    """Hours in one unit named like cdtime names it; None for other units."""
    w = word.lower()
    if w.startswith("sec") or w == "s":
        return 1 / 3600.0
    if w.startswith("min") or w == "mn":
        return 1 / 60.0
    if w.startswith("hour") or w == "hr":
        return 1.0
    if w.startswith("day") or w == "dy":
        return 24.0
    if w.startswith("week") or w == "wk":
        return 168.0
    return None


@dataclass(frozen=True)
class _Date:
    year: int
    month: int
    day: int
    hour: float  # hours into the day, fractional

    def key(self) -> tuple[int, int, int, float]:
        return (self.year, self.month, self.day, self.hour)


_JULIAN_END = _Date(1582, 10, 5, 0.0)  # in the Julian calendar, the same day as...
_GREGORIAN_START = _Date(1582, 10, 15, 0.0)  # ...this one in the Gregorian calendar
_BASE_1979 = _Date(1979, 1, 1, 0.0)  # cdtime's base of bare "hours"


def _is_leap(year: int, calendar: _Calendar) -> bool:
    if calendar is _Calendar.ALL_LEAP:
        return True
    if calendar in (_Calendar.NOLEAP, _Calendar.DAY360):
        return False
    if year % 4:
        return False
    return calendar is _Calendar.JULIAN or bool(year % 100) or year % 400 == 0


def _year_days(year: int, calendar: _Calendar) -> int:
    if calendar is _Calendar.DAY360:
        return 360
    if calendar is _Calendar.ALL_LEAP:
        return 366
    return 366 if _is_leap(year, calendar) else 365


def _month_lengths(year: int, calendar: _Calendar) -> tuple[int, ...]:
    if calendar is _Calendar.DAY360:
        return (30,) * 12
    return _MONTH_DAYS_LEAP if _is_leap(year, calendar) else _MONTH_DAYS


def _to_hours(date: _Date, calendar: _Calendar) -> float:
    """Hours from 1970-01-01 to ``date`` (cdtime's epochal time)."""
    day_of_year = sum(_month_lengths(date.year, calendar)[: date.month - 1]) + date.day
    days = 0
    if date.year > _EPOCH:
        days = sum(_year_days(y, calendar) for y in range(_EPOCH, date.year))
    elif date.year < _EPOCH:
        days = -sum(_year_days(y, calendar) for y in range(date.year, _EPOCH))
    return float(days + day_of_year - 1) * 24.0 + date.hour


def _from_hours(hours: float, calendar: _Calendar) -> _Date:
    """The date ``hours`` after 1970-01-01 (inverse of :func:`_to_hours`)."""
    day = math.floor(hours / 24.0) + 1
    hour = hours - float(day - 1) * 24.0
    if hour >= 24.0:
        day += 1
        hour -= 24.0
    year = _EPOCH
    if day > 0:
        while day > _year_days(year, calendar):
            day -= _year_days(year, calendar)
            year += 1
    else:
        year -= 1
        while True:
            day += _year_days(year, calendar)
            if day > 0:
                break
            year -= 1
    month = 1
    for length in _month_lengths(year, calendar):
        if day <= length:
            break
        day -= length
        month += 1
    return _Date(year, month, day, hour)


def _add(date: _Date, hours: float, calendar: _Calendar) -> _Date:
    """``date`` plus ``hours`` in a single calendar, through cdtime's 1979 base."""
    base = _to_hours(_BASE_1979, calendar)
    relative = _to_hours(date, calendar) - base
    relative += hours
    return _from_hours(base + relative, calendar)


def _diff(a: _Date, b: _Date, calendar: _Calendar) -> float:
    base = _to_hours(_BASE_1979, calendar)
    return (_to_hours(a, calendar) - base) - (_to_hours(b, calendar) - base)


def _add_mixed(date: _Date, hours: float) -> _Date:
    if date.key() < _GREGORIAN_START.key():
        julian_left = _diff(_JULIAN_END, date, _Calendar.JULIAN)
        if hours <= julian_left:
            return _add(date, hours, _Calendar.JULIAN)
        return _add(_GREGORIAN_START, hours - julian_left, _Calendar.GREGORIAN)
    gregorian_back = _diff(_GREGORIAN_START, date, _Calendar.GREGORIAN)
    if hours > gregorian_back:
        return _add(date, hours, _Calendar.GREGORIAN)
    return _add(_JULIAN_END, hours - gregorian_back, _Calendar.JULIAN)


def _parse_base(date_text: str, clock_text: str | None) -> _Date | None:
    if "T" in date_text and clock_text is None:
        date_text, _, clock_text = date_text.partition("T")
    match = _DATE.match(date_text)
    if match is None:
        return None
    year = int(match.group(1))
    month = int(match.group(2) or 1)
    day = int(match.group(3) or 1)
    hour = 0.0
    if clock_text:
        clock = _CLOCK.match(clock_text)
        if clock is not None:
            hour = float(int(clock.group(1)))
            if clock.group(2) is not None:
                hour += int(clock.group(2)) / 60.0
            if clock.group(3) is not None:
                hour += float(clock.group(3)) / 3600.0
    if not (1 <= month <= 12 and 1 <= day <= 31 and 0.0 <= hour <= 24.0):
        return None
    return _Date(year, month, day, hour)


@dataclass(frozen=True)
class TimeAxis:
    """The units and calendar that turn a variable's numbers into dates."""

    unit_hours: float  # hours in one unit; below 1, the unit is 1/round(1/unit_hours) hour
    base: _Date
    calendar: _Calendar
    separator: str = " "

    def date(self, value: float) -> _Date:
        hours = float(value) * self.unit_hours if self.unit_hours >= 1 else float(value) / round(1 / self.unit_hours)
        if self.calendar is _Calendar.MIXED:
            return _add_mixed(self.base, hours)
        return _from_hours(_to_hours(self.base, self.calendar) + hours, self.calendar)

    def text(self, value: float) -> str:
        """One value as a quoted date."""
        d = self.date(value)
        hours = int(d.hour + _EPS_SECONDS / 3600.0)
        minutes_left = 60.0 * (d.hour - hours)
        minutes = int(minutes_left + _EPS_SECONDS / 60.0)
        seconds = 60.0 * (minutes_left - minutes)
        whole = int(seconds + _EPS_SECONDS)
        date = f"{d.year:04d}-{d.month:02d}-{d.day:02d}"
        if seconds - whole >= _EPS_SECONDS:
            clock = f"{hours:02d}:{minutes:02d}:{seconds:f}"
        elif whole:
            clock = f"{hours:02d}:{minutes:02d}:{whole:02d}"
        elif minutes:
            clock = f"{hours:02d}:{minutes:02d}"
        elif hours:
            clock = f"{hours:02d}"
        else:
            return f'"{date}"'
        return f'"{date}{self.separator}{clock}"'

    def texts(self, values: Iterable[float]) -> list[str]:
        return [self.text(v) for v in values]


def _char_attribute(variable: Variable, name: str) -> str | None:
    attribute = variable.find_attribute(name)
    if attribute is None or attribute.type is not AtomicType.CHAR:
        return None
    return str(attribute.values)


def _axis_of(variable: Variable, separator: str) -> TimeAxis | None:
    units = _char_attribute(variable, "units")
    match = _UNITS.match(units) if units is not None else None
    if match is None:
        return None
    unit_hours = _unit_hours(match.group(1))
    base = _parse_base(match.group(2), match.group(3))
    calendar = _CALENDARS.get((_char_attribute(variable, "calendar") or "standard").strip().lower())
    if unit_hours is None or base is None or calendar is None:
        return None
    return TimeAxis(unit_hours, base, calendar, separator)


def time_axes(group: Group, separator: str) -> dict[int, TimeAxis]:
    """The time axis of each time variable of ``group`` and of their bounds variables,
    keyed by ``id(variable)``."""
    axes: dict[int, TimeAxis] = {}
    for variable in group.variables:
        axis = _axis_of(variable, separator)
        if axis is None:
            continue
        axes[id(variable)] = axis
        bounds = _char_attribute(variable, "bounds")
        companion = group.find_variable(bounds.strip()) if bounds else None
        if companion is not None and id(companion) not in axes:
            axes[id(companion)] = axis
    return axes
