"""PNG figures drawn from the marts with matplotlib's object API on the Agg canvas.

No pyplot: pyplot keeps global figure state and picks a GUI backend, neither of which a Dagster
run or a test wants. Every figure is written atomically. A figure whose mart has no rows yet is not
drawn (None): the report says in one line what fills its section instead.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd

from memsql_assets.lib.atomic import atomic_path
from memsql_assets.lib.report.marts import CONDITION_NAMES, ERROR_CLASSES, Marts
from memsql_assets.lib.report.tables import ABLATION_DEFINITION
from memsql_assets.lib.vocabulary import AGENTSM_CONDITION

if TYPE_CHECKING:
    from matplotlib.figure import Figure

DPI = 110
CONDITION_COLORS = {
    "A": "#7f7f7f",
    "B": "#1f77b4",
    "B_wm5": "#2ca02c",
    "C": "#ff7f0e",
    "D": "#d62728",
    AGENTSM_CONDITION: "#9467bd",
}
# Conditions without a colour of their own (T, H, S, a user's) take one of these by their place in the
# conditions file, so that adding a condition needs no edit here.
EXTRA_COLORS = ("#8c564b", "#e377c2", "#17becf", "#bcbd22", "#393b79", "#637939", "#8c6d31", "#843c39")


def condition_color(condition: str) -> str:
    if condition in CONDITION_COLORS:
        return CONDITION_COLORS[condition]
    others = [c for c in CONDITION_NAMES if c not in CONDITION_COLORS]
    index = others.index(condition) if condition in others else len(others)
    return EXTRA_COLORS[index % len(EXTRA_COLORS)]


CLASS_COLORS = {
    "correct": "#2ca02c",
    "wrong_result": "#ff7f0e",
    "preamble": "#9467bd",
    "syntax_error": "#d62728",
    "runtime_error": "#8c564b",
    "empty": "#7f7f7f",
    "model_error": "#17becf",
    "memory_error": "#bcbd22",
}
ABLATION_TERMS = (
    ("win_pp", "Win"),
    ("ep_pp", "Ep"),
    ("sem_pp", "Sem"),
    ("net_pp", "Net"),
    ("traj_pp", "Traj"),
    ("traj_prompt_pp", "Traj_prompt"),
)


def _figure(**kwargs: Any) -> Figure:
    # matplotlib is imported when a figure is drawn, not with the Dagster definitions that every run
    # worker, code server and `memsql` command loads.
    from matplotlib.figure import Figure

    return Figure(**kwargs)


def _save(fig: Figure, path: Path) -> Path:
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    FigureCanvasAgg(fig)
    with atomic_path(path) as tmp:
        fig.savefig(tmp, format="png", dpi=DPI, bbox_inches="tight", metadata={"Software": None})
    return path


def _label(model: str, condition: str) -> str:
    return f"{model} · {condition}"


def _yerr(df: pd.DataFrame, value: str, lo: str, hi: str) -> list[pd.Series]:
    """Asymmetric error bars (value − lo, hi − value) from a mart's 95 % interval; 0 where it has none."""
    v = df[value].astype(float)
    return [
        (v - df[lo].astype(float)).fillna(0.0).clip(lower=0),
        (df[hi].astype(float) - v).fillna(0.0).clip(lower=0),
    ]


def mbs_hook(m: Marts) -> Figure | None:
    """MBS_c(t) per model (one panel each), one line per condition: the paper's 'hook' curve."""
    df = m.mbs.dropna(subset=["mbs_pp"])
    if df.empty:
        return None
    models = sorted(df["model"].unique())
    ncols = min(3, len(models))
    nrows = math.ceil(len(models) / ncols)
    fig = _figure(figsize=(4.6 * ncols, 3.4 * nrows), layout="constrained")
    axes = fig.subplots(nrows, ncols, squeeze=False, sharey=True)
    for ax, model in zip(axes.flat, models, strict=False):
        sub = df[df["model"] == model]
        for cond in CONDITION_NAMES:
            line = sub[sub["condition"] == cond].sort_values("turn_depth")
            if not line.empty:
                ax.errorbar(
                    line["turn_depth"],
                    line["mbs_pp"],
                    yerr=_yerr(line, "mbs_pp", "mbs_ci_lo_pp", "mbs_ci_hi_pp"),
                    marker="o",
                    ms=3,
                    capsize=2,
                    elinewidth=0.8,
                    label=cond,
                    color=condition_color(cond),
                )
        ax.axhline(0, color="black", lw=0.8)
        ax.set_title(model)
        ax.set_xlabel("turn depth t")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8)
    for ax in axes[:, 0]:
        ax.set_ylabel("MBS (pp)")
    for ax in list(axes.flat)[len(models) :]:
        ax.axis("off")
    fig.suptitle(
        "Memory Benefit Score MBS_c(t) = EX_c(t) − EX_A(t), 95 % interval (paired session bootstrap)"
    )
    return fig


def per_turn_ex(m: Marts) -> Figure | None:
    """EX by turn depth, A (dashed) vs B (solid) per model: the paper's Fig. 2."""
    df = m.ex_by_turn_depth[m.ex_by_turn_depth["condition"].isin(["A", "B"])]
    if df.empty:
        return None
    fig = _figure(figsize=(7.5, 4.2), layout="constrained")
    ax = fig.subplots()
    colors = [f"C{i}" for i in range(10)]
    for i, model in enumerate(sorted(df["model"].unique())):
        for cond, style in (("A", "--"), ("B", "-")):
            line = df[(df["model"] == model) & (df["condition"] == cond)].sort_values("turn_depth")
            if not line.empty:
                ax.errorbar(
                    line["turn_depth"],
                    line["ex_pct"],
                    yerr=_yerr(line, "ex_pct", "ex_ci_lo_pct", "ex_ci_hi_pct"),
                    fmt=style,
                    marker="o",
                    ms=3,
                    capsize=2,
                    elinewidth=0.8,
                    color=colors[i % len(colors)],
                    label=_label(model, cond),
                )
    ax.set_ylim(-2, 102)
    ax.set_xlabel("turn depth t")
    ax.set_ylabel("EX (%)")
    ax.set_title("EX by turn depth: stateless A (dashed) vs working memory B (solid), 95 % interval")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8, ncols=2)
    return fig


def ablation(m: Marts) -> Figure | None:
    """Win / Ep / Sem / Net / Traj / Traj_prompt (pp) per model, all sources together."""
    df = m.ablation[m.ablation["source"] == "ALL"]
    terms = [(col, name) for col, name in ABLATION_TERMS if col in df and df[col].notna().any()]
    if df.empty or not terms:
        return None
    models = list(df["model"])
    fig = _figure(figsize=(max(6.0, 1.4 * len(models) * len(terms) / 3), 4.0), layout="constrained")
    ax = fig.subplots()
    width = 0.8 / len(terms)
    for j, (col, name) in enumerate(terms):
        xs = [i + (j - (len(terms) - 1) / 2) * width for i in range(len(models))]
        term = col.removesuffix("_pp")
        yerr = _yerr(df, col, f"{term}_ci_lo_pp", f"{term}_ci_hi_pp")
        # NaN (condition not evaluated): no bar
        ax.bar(
            xs, df[col].astype(float), width, yerr=yerr, capsize=2, error_kw={"elinewidth": 0.8}, label=name
        )
    ax.set_xticks(range(len(models)), models)
    ax.axhline(0, color="black", lw=0.8)
    ax.set_ylabel("pp of EX")
    ax.set_title(f"Ablation: {ABLATION_DEFINITION}", fontsize=9)
    ax.legend(fontsize=8)
    ax.grid(axis="y", alpha=0.3)
    return fig


def error_taxonomy(m: Marts) -> Figure | None:
    """Stacked shares of the error classes per model × condition."""
    df = m.error_taxonomy
    if df.empty:
        return None
    wide = df.pivot_table(index=["model", "condition"], columns="error_class", values="share_pct", sort=False)
    labels = [_label(mo, c) for mo, c in wide.index]
    fig = _figure(figsize=(8, 0.35 * len(labels) + 1.5), layout="constrained")
    ax = fig.subplots()
    left = pd.Series(0.0, index=wide.index)
    for cls in ERROR_CLASSES:
        vals = wide[cls] if cls in wide else pd.Series(0.0, index=wide.index)
        ax.barh(labels, vals, left=left, color=CLASS_COLORS[cls], label=cls)
        left = left + vals
    ax.invert_yaxis()
    ax.set_xlim(0, 100)
    ax.set_xlabel("% of turns")
    ax.set_title("Error taxonomy")
    fig.legend(*ax.get_legend_handles_labels(), loc="outside right center", fontsize=8)
    return fig


def contamination(m: Marts) -> Figure | None:
    df = m.contamination
    if df.empty:
        return None
    labels = [_label(mo, c) for mo, c in zip(df["model"], df["condition"], strict=True)]
    fig = _figure(figsize=(8, 0.35 * len(labels) + 1.5), layout="constrained")
    ax = fig.subplots()
    ax.barh(
        labels,
        df["contamination_rate_pct"].astype(float),
        color=[condition_color(c) for c in df["condition"]],
    )
    ax.invert_yaxis()
    ax.set_xlabel("contaminated turns, % of all turns")
    ax.set_title("Cross-session contamination (a failed turn took another analyst's value)")
    ax.grid(axis="x", alpha=0.3)
    return fig


def cost(m: Marts) -> Figure | None:
    df = m.cost
    if df.empty:
        return None
    labels = [_label(mo, c) for mo, c in zip(df["model"], df["condition"], strict=True)]
    panels = [
        ("mean_tokens_per_turn", "tokens per turn"),
        ("mean_latency_s", "mean latency (s)"),
        ("total_cost_usd", "total cost (USD)"),
    ]
    fig = _figure(figsize=(12, 0.35 * len(labels) + 1.5), layout="constrained")
    axes = fig.subplots(1, len(panels), sharey=True)
    colors = [condition_color(c) for c in df["condition"]]
    for ax, (col, title) in zip(axes, panels, strict=True):
        values = df[col].astype(float).fillna(0.0)
        ax.barh(labels, values, color=colors)
        ax.set_title(title)
        ax.grid(axis="x", alpha=0.3)
        if not values.any():  # offline models: say so instead of drawing an empty axis
            ax.text(0.5, 0.5, "all zero", transform=ax.transAxes, ha="center", va="center", color="#666")
            ax.set_xticks([])
    axes[0].invert_yaxis()
    return fig


def paper(m: Marts) -> Figure | None:
    """Each evaluated claim: the paper's range as a bar, this run's value as a dot (green inside)."""
    df = m.paper_comparison.dropna(subset=["value"])
    if df.empty:
        return None
    labels = [
        " · ".join(str(v) for v in (r["model"], r["claim_id"], r["condition"], r["source"]) if not pd.isna(v))
        for r in df.to_dict("records")
    ]
    fig = _figure(figsize=(9, 0.3 * len(labels) + 1.5), layout="constrained")
    ax = fig.subplots()
    y = range(len(labels))
    ax.hlines(y, df["low"], df["high"], color="#9ecae1", linewidth=7, label="paper's range")
    # A point figure (low = high) has no length: its ends are drawn so that it shows.
    ax.plot(pd.concat([df["low"], df["high"]]), [*y, *y], "|", color="#3182bd", markersize=12)
    inside = df["verdict"] == "inside"
    for mask, color, name in (
        (inside, "#2ca02c", "this run, inside"),
        (~inside, "#d62728", "this run, outside"),
    ):
        ys = [i for i, keep in zip(y, mask, strict=True) if keep]
        ax.plot(df["value"][mask.to_numpy()], ys, "o", color=color, label=name)
    ax.set_yticks(list(y), labels, fontsize=8)
    ax.invert_yaxis()
    ax.set_xlabel("% or percentage points (as the claim states)")
    ax.set_title("This run vs the paper")
    ax.grid(axis="x", alpha=0.3)
    fig.legend(*ax.get_legend_handles_labels(), loc="outside lower center", ncols=3, fontsize=8)
    return fig


FIGURES: dict[str, tuple[str, Callable[[Marts], Figure | None]]] = {
    "paper": ("This run vs the paper", paper),
    "mbs_hook": ("MBS hook curve", mbs_hook),
    "per_turn_ex": ("EX by turn depth, A vs B (Table 7 / Fig. 2)", per_turn_ex),
    "ablation": ("Memory ablation", ablation),
    "error_taxonomy": ("Error taxonomy", error_taxonomy),
    "contamination": ("Contamination", contamination),
    "cost": ("Tokens, latency and cost", cost),
}


def write_figures(m: Marts, directory: Path) -> dict[str, Path]:
    """The figures with data, as PNG files; a figure without data leaves no file (an earlier one goes)."""
    written = {}
    for key, (_, draw) in FIGURES.items():
        path, fig = directory / f"{key}.png", draw(m)
        if fig is None:
            path.unlink(missing_ok=True)
        else:
            written[key] = _save(fig, path)
    return written
