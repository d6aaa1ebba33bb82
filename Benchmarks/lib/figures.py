"""A benchmark run's figures: name -> number, kept in <work>/figures.json for Benchmarks/check.

A script records each figure it prints next to a goal; Benchmarks/check compares them with
Benchmarks/Thresholds/<script>.json. Recording merges into the file, so a script that measures
in several steps (one Python process per step) adds its figures step by step.

  python3 lib/figures.py WORK NAME=VALUE...   (from bash)
  from figures import record; record(work, {"name": value})   (from Python in lib/)
"""
import json
import math
import pathlib
import sys

FILE_NAME = "figures.json"


def record(work, figures):
    """Merges `figures` (name -> number; None and NaN are left out) into WORK/figures.json."""
    path = pathlib.Path(work) / FILE_NAME
    merged = json.loads(path.read_text()) if path.exists() else {}
    for name, value in figures.items():
        if value is not None and not (isinstance(value, float) and math.isnan(value)):
            merged[name] = float(value)
    path.write_text(json.dumps(merged, indent=1, sort_keys=True) + "\n")


def main(argv):
    if len(argv) < 3 or any("=" not in a for a in argv[2:]):
        sys.stderr.write(__doc__)
        return 2
    record(argv[1], {name: float(value) for name, value in (a.split("=", 1) for a in argv[2:])})
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
