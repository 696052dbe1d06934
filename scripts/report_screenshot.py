"""Screenshot the top of a results report (its <header>: the title and each benchmark's leaderboard)
as a PNG, in Debian's chromium (/usr/bin/chromium) driven by playwright, at the width the report test
reads it. docs/img/report.png is made by it:

    python scripts/report_screenshot.py "$MEMSQL_HOME/report/report.html" docs/img/report.png
"""

from __future__ import annotations

import sys
from pathlib import Path

from playwright.sync_api import sync_playwright

CHROMIUM = "/usr/bin/chromium"
VIEWPORT = {"width": 1300, "height": 900}


def screenshot(report: Path, out: Path) -> int:
    """Write the PNG; return its size in bytes."""
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox", "--disable-gpu"])
        try:
            tab = browser.new_page(viewport=VIEWPORT)
            tab.goto(report.resolve().as_uri(), wait_until="load")
            tab.locator("header#top").screenshot(path=str(out))
        finally:
            browser.close()
    return out.stat().st_size


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit("usage: python scripts/report_screenshot.py REPORT_HTML OUT_PNG")
    report, out = Path(sys.argv[1]), Path(sys.argv[2])
    if not report.is_file():
        sys.exit(f"{report}: no such report (the results_report asset writes $MEMSQL_HOME/report/report.html)")
    print(f"{out}: {screenshot(report, out):,} bytes")
