"""Trajectory-store settings (SPEC §4: θ and N are not published, so they are configuration)."""

import dagster as dg


class TrajectorySettings(dg.ConfigurableResource):
    """`budget`: N synthetic questions in all; `theta`: composite-tool support (fraction of trajectories
    when < 1, else a count); `max_len`: longest composite; `explorer`: deterministic or llm."""

    budget: int = 60
    seed: int = 0
    theta: float = 0.25
    max_len: int = 3
    explorer: str = "deterministic"
