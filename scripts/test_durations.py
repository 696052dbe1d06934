"""Write tests/durations.json, the seconds each test file took, from a JUnit XML report of a whole run:

    .venv/bin/python -m pytest -n 2 --dist loadfile --junitxml=/tmp/suite.xml
    .venv/bin/python scripts/test_durations.py /tmp/suite.xml

tests/conftest.py runs the files longest first, so that the last files to finish are short ones.
"""

from __future__ import annotations

import json
import sys
import xml.etree.ElementTree as ET
from collections import defaultdict
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def file_seconds(report: Path) -> dict[str, float]:
    seconds: dict[str, float] = defaultdict(float)
    for case in ET.parse(report).iter("testcase"):
        # classname: tests.metrics.test_metrics_dbt (a class's tests: ...test_x.TestY)
        parts = case.get("classname", "").split(".")
        for end in range(len(parts), 0, -1):
            path = "/".join(parts[:end]) + ".py"
            if (REPO / path).exists():
                seconds[path] += float(case.get("time", 0))
                break
    return dict(sorted(seconds.items(), key=lambda kv: -kv[1]))


def main(report: str) -> None:
    out = REPO / "tests" / "durations.json"
    seconds = {path: round(s, 1) for path, s in file_seconds(Path(report)).items()}
    out.write_text(json.dumps(seconds, indent=1) + "\n")
    print(f"{out.relative_to(REPO)}: {len(seconds)} files, {sum(seconds.values()):.0f} s in all")


if __name__ == "__main__":
    main(*sys.argv[1:])
