"""Markdown rendering against golden files (MEMSQL_UPDATE_GOLDEN=1 rewrites them)."""

from __future__ import annotations

import os
from pathlib import Path

from traj_fixtures import golden_trace

from memsql_assets.lib.trajectories.markdown import render_markdown, segments, split_by_phase

GOLDEN = Path(__file__).parent / "golden"


def check(name: str, text: str) -> None:
    path = GOLDEN / name
    if os.environ.get("MEMSQL_UPDATE_GOLDEN") == "1":
        path.write_text(text, encoding="utf-8")
    assert text == path.read_text(encoding="utf-8"), (
        f"{name} differs from golden; MEMSQL_UPDATE_GOLDEN=1 to accept"
    )


def test_segments_follow_what_steps_do():
    segs = [(s.phase, s.first, s.last) for s in segments(golden_trace())]
    assert segs == [
        ("explore", 1, 3),
        ("execute", 4, 4),
        ("explore", 5, 5),
        ("execute", 6, 6),
        ("validate", 7, 8),
    ]


def test_whole_trajectory_golden():
    check("trajectory.md", render_markdown(golden_trace()))


def test_per_phase_golden():
    parts = split_by_phase(golden_trace())
    assert list(parts) == ["explore", "execute", "validate"]
    for phase, md in parts.items():
        check(f"trajectory.{phase}.md", md)
    assert "## Explore (steps 1–3)" in parts["explore"] and "## Explore (step 5)" in parts["explore"]
    assert "```sql" in parts["execute"] and "```sql" not in parts["explore"]


def test_custom_header():
    md = render_markdown(golden_trace(), header=lambda phase, a, b, steps: f"{phase}: {len(steps)} step(s)")
    assert "## explore: 3 step(s)" in md and "## validate: 2 step(s)" in md
