"""Parse and validate a ~5 MB model text; print MB/s (median of 3 runs after a warm-up).

    python benchmarks/bench_model_text.py [--megabytes 5]

The text has many groups, each with dimensions, user types, variables and attributes of
every kind, like the metadata of a large archive.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

from nczarr.model import validate
from nczarr.syntax import dump, parse


def group_text(index: int) -> str:
    """One group of about 40 KB: 4 dimensions, 2 types, 60 variables of 8 attributes."""
    lines = [
        f"    group region_{index} {{",
        "        dimension time = unlimited(365)",
        "        dimension lat = 180",
        "        dimension lon = 360",
        "        dimension level = 17",
        "        enum ubyte quality_t { good = 0, suspect = 1, bad = 2, missing = 255 }",
        "        compound obs_t {",
        "            field double time",
        "            field float position(3)",
        "            field quality_t quality",
        "        }",
    ]
    for v in range(60):
        lines += [
            f"        variable float field_{v}(time, level, lat, /global\\ lon) {{",
            f'            attribute string long_name = "Field number {v} of region {index}"',
            '            attribute string units = "kg m-2 s-1"',
            "            attribute float valid_range = -1.5e3, 1.5e3",
            "            attribute float _FillValue = nan",
            "            attribute double scale_factor = 0.0001",
            f"            attribute short flags = 1, 2, 4, 8, 16, {v}",
            "            attribute quality_t quality = 0, 1, 2",
            '            attribute char comment = "generated for the benchmark, line after line"',
            "        }",
        ]
    lines += [
        '        attribute string title = "A region of the benchmark"',
        "        variable obs_t obs(time) { attribute int n = 1 }",
        "    }",
    ]
    return "\n".join(lines)


def make_text(megabytes: float) -> str:
    """A valid model text of about ``megabytes`` MB."""
    head = "# benchmark\ndataset bench zarr 3 enhanced {\n    dimension global\\ lon = 360\n"
    groups: list[str] = []
    size = len(head)
    while size < megabytes * 1e6:
        groups.append(group_text(len(groups)))
        size += len(groups[-1]) + 1
    return head + "\n".join(groups) + "\n}\n"


def main() -> None:
    """Time parse, validate and dump of the generated text."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--megabytes", type=float, default=5.0)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    text = make_text(args.megabytes)
    mb = len(text.encode("utf-8")) / 1e6
    tree = parse(text)  # warm-up: builds the parser
    problems = validate(tree)
    assert not problems, problems[:5]
    names = ["parse", "validate", "parse+validate", "dump"]
    timings: dict[str, list[float]] = {name: [] for name in names}
    for _ in range(args.runs):
        start = time.perf_counter()
        tree = parse(text)
        middle = time.perf_counter()
        validate(tree)
        end = time.perf_counter()
        dump(tree)
        after = time.perf_counter()
        timings["parse"].append(middle - start)
        timings["validate"].append(end - middle)
        timings["parse+validate"].append(end - start)
        timings["dump"].append(after - end)
    print(f"model text: {mb:.2f} MB, {text.count(chr(10))} lines, median of {args.runs} runs")
    print(f"load average before: {load} (the machine may be shared)")
    for name, values in timings.items():
        seconds = statistics.median(values)
        print(f"{name:>15}: {seconds:6.3f} s  {mb / seconds:6.2f} MB/s")


if __name__ == "__main__":
    main()
