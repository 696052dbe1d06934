"""The report's tables, built from the marts with the shared formats (fmt.py)."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

import pandas as pd

from memsql_assets.lib.conditions import CONDITIONS as CONDITION_TABLE
from memsql_assets.lib.report import fmt
from memsql_assets.lib.report.fmt import Table
from memsql_assets.lib.report.marts import CONDITION_NAMES, ERROR_CLASSES, SOURCES, Marts
from memsql_assets.lib.trajectories.phases import PHASES
from memsql_assets.lib.vocabulary import (
    AGENT_BASELINE_CONDITION,
    AGENTSM_CONDITION,
    ALL_SOURCES,
    BENCHMARKS,
    EXTENDED_BENCHMARK,
    FLOOR_CONDITION,
    GUESS_FLOOR_MAX_PCT,
    PAPER_BENCHMARK,
    PHENOMENA,
    PROMPT_TRAJECTORY_CONDITION,
    WINDOW_CONDITION,
)

# The ablation's terms as the table's note and the figure's title spell them (agg_ablation computes them).
ABLATION_DEFINITION = (
    f"Win = {WINDOW_CONDITION} − B, Ep = C − {WINDOW_CONDITION}, Sem = D − C, Net = D − B, "
    f"Traj = {AGENTSM_CONDITION} − {AGENT_BASELINE_CONDITION}, "
    f"Traj_prompt = {PROMPT_TRAJECTORY_CONDITION} − {WINDOW_CONDITION}"
)


def _rows(
    df: pd.DataFrame, spec: Iterable[tuple[str, str, Callable[[Any], str]]]
) -> tuple[tuple[str, ...], ...]:
    spec = list(spec)
    return tuple(tuple(f(rec[col]) for _, col, f in spec) for rec in df.to_dict("records"))


def _table(
    key: str, title: str, df: pd.DataFrame, spec: list[tuple[str, str, Callable[[Any], str]]], note: str = ""
) -> Table:
    return Table(key, title, tuple(h for h, _, _ in spec), _rows(df, spec), note)


def _text(v: Any) -> str:
    return fmt.MISSING if fmt.is_missing(v) else str(v)


# What the two memory probes measure, and what neither does (docs/reference_models.md).
PROBES_NOTE = (
    "reader-probe is a perfect SQL writer that takes each referenced value from the text of the prompt "
    "(the Resolved block, the SQL of the earlier turns it shows), like a careful LLM: a yardstick of what "
    "each condition's prompt shows, not an upper bound. recall-probe reads only the Resolved block "
    "(resolution only): what the condition's resolution step delivers. Neither measures everything a "
    "model can use: reader-probe never reads values stated only in words or in result lines, so a real "
    "LLM can score above it. Context mode: annotated (the paper's: the memory is given the annotated "
    "values and the Resolved block) or observed (only what the conversation showed)."
)


def summary_table(m: Marts, benchmark: str = PAPER_BENCHMARK) -> Table:
    """The headline table of one benchmark (the paper's by default)."""
    extended = benchmark == EXTENDED_BENCHMARK
    df = (m.extended_condition_summary if extended else m.condition_summary).copy()
    df["ex_ci95"] = _intervals(df, "ex_ci_lo_pct", "ex_ci_hi_pct")
    # The guess floor is read against condition A: shown on those rows only.
    df["floor_at_a"] = [  # each benchmark's own floor: guess-probe runs under A on both
        f if c == FLOOR_CONDITION else None
        for f, c in zip(df["guess_floor_pct"], df["condition"], strict=True)
    ]
    df["run"] = [
        (f"sample of {n} sessions" if s else ("complete" if c else fmt.MISSING))
        + (f", {e} epochs" if e > 1 else "")
        for n, s, c, e in zip(
            df["n_sessions"], df["is_sample"], df["is_complete"], df["n_epochs"], strict=True
        )
    ]
    across: list[tuple[str, str, Callable[[Any], str]]] = []
    if extended:  # the cross-session headline (DESIGN decision 21), its intervals over turns
        df["within_ci95"] = _intervals(df, "ex_within_session_ci_lo_pct", "ex_within_session_ci_hi_pct")
        df["across_ci95"] = _intervals(df, "ex_cross_session_ci_lo_pct", "ex_cross_session_ci_hi_pct")
        across = [
            ("EX within session %", "ex_within_session_pct", fmt.pct),
            ("within 95% CI (turns)", "within_ci95", _text),
            ("EX across sessions %", "ex_cross_session_pct", fmt.pct),
            ("across 95% CI (turns)", "across_ci95", _text),
            ("contaminated", "n_contaminated", fmt.count),
            ("stale state", "n_stale_state", fmt.count),
        ]
    return _table(
        "extended_summary" if extended else "summary",
        "Extended benchmark: headline EX per model × condition" if extended else "Headline EX per model × condition",
        df,
        [
            ("model", "model", _text),
            ("condition", "condition", _text),
            ("run", "run", _text),
            ("context mode", "context_mode", _text),
            ("turns", "n_turns", fmt.count),
            ("EX %", "ex_pct", fmt.pct),
            ("EX 95% CI", "ex_ci95", _text),
            ("EX mem-critical %", "ex_memory_critical_pct", fmt.pct),
            *across,
            ("guess floor %", "floor_at_a", fmt.pct),
            ("EX turn 1 %", "ex_turn1_pct", fmt.pct),
            ("contaminated %", "contamination_rate_pct", fmt.pct),
            ("tokens", "total_tokens", fmt.count),
            ("cost USD", "total_cost_usd", fmt.usd),
        ],
        "EX = strict execution accuracy (agg_condition_summary); 95% CI: Wilson score interval with the "
        "number of sessions as n, so it stays open at 0 % and 100 % (dbt docs: interval_method); turns "
        "count turns x epochs. "
        "A sample ran a subset of whole sessions: its numbers are a sample's, with a wider interval; a "
        "cut-short partition is never shown. Guess floor (condition A rows): guess-probe's memory-critical "
        "EX under A, what a model without memory scores by guessing the likeliest values; an A above it "
        "is information the question alone gave. " + PROBES_NOTE,
    )


def _by_depth(
    df: pd.DataFrame,
    value: str,
    conditions: Iterable[str],
    key: str,
    title: str,
    fmt_fn: Callable[[Any], str],
    note: str,
) -> Table:
    df = df[df["condition"].isin(list(conditions))]
    depths = sorted(int(d) for d in df["turn_depth"].unique())
    cells: dict[tuple[str, str], dict[int, Any]] = {}
    for rec in df.to_dict("records"):
        cells.setdefault((rec["model"], rec["condition"]), {})[int(rec["turn_depth"])] = rec[value]
    rows = tuple(
        (model, cond, *(fmt_fn(cells[(model, cond)].get(t)) for t in depths))
        for (model, cond) in cells  # df is already in report order
    )
    return Table(key, title, ("model", "condition", *(f"t={t}" for t in depths)), rows, note)


def per_turn_ex_table(m: Marts, conditions: Iterable[str] = ("A", "B")) -> Table:
    conds = tuple(conditions)
    label = " vs ".join(conds) if len(conds) <= 3 else "every condition"
    return _by_depth(
        m.ex_by_turn_depth,
        "ex_pct",
        conds,
        "per_turn_ex" if conds == ("A", "B") else "per_turn_ex_all",
        f"EX % by turn depth, {label}",
        fmt.pct,
        "EX_c(t) = 100 × correct / turns at depth t (agg_ex_by_turn_depth); paper Table 7 / Fig. 2.",
    )


def mbs_table(m: Marts) -> Table:
    return _by_depth(
        m.mbs,
        "mbs_pp",
        CONDITION_NAMES,
        "mbs",
        "MBS_c(t) = EX_c(t) − EX_A(t), pp",
        fmt.pp,
        "agg_mbs; MBS(1) ≈ 0 is the sanity check.",
    )


def ablation_table(m: Marts) -> Table:
    return _table(
        "ablation",
        "Memory ablation per model × source (pp of EX)",
        m.ablation,
        [
            ("model", "model", _text),
            ("source", "source", _text),
            ("EX B", "ex_b_pct", fmt.pct),
            ("EX B_wm5", "ex_b_wm5_pct", fmt.pct),
            ("EX C", "ex_c_pct", fmt.pct),
            ("EX D", "ex_d_pct", fmt.pct),
            (f"EX {AGENT_BASELINE_CONDITION}", "ex_t_pct", fmt.pct),
            (f"EX {AGENTSM_CONDITION}", "ex_e_pct", fmt.pct),
            (f"EX {PROMPT_TRAJECTORY_CONDITION}", "ex_e_prompt_pct", fmt.pct),
            ("Win", "win_pp", fmt.pp),
            ("Ep", "ep_pp", fmt.pp),
            ("Sem", "sem_pp", fmt.pp),
            ("Net", "net_pp", fmt.pp),
            ("Traj", "traj_pp", fmt.pp),
            ("Traj_prompt", "traj_prompt_pp", fmt.pp),
        ],
        f"{ABLATION_DEFINITION}; – where a condition has not been evaluated (agg_ablation).",
    )


def ex_by_source_table(m: Marts) -> Table:
    df = m.ex_by_source
    cells: dict[tuple[str, str], dict[str, Any]] = {}
    for rec in df.to_dict("records"):
        cells.setdefault((rec["model"], rec["condition"]), {})[rec["source"]] = rec["ex_pct"]
    rows = tuple((mo, c, *(fmt.pct(v.get(s)) for s in SOURCES)) for (mo, c), v in cells.items())
    return Table(
        "ex_by_source",
        "EX % by source",
        ("model", "condition", *SOURCES),
        rows,
        "agg_ex_by_source; ALL = every turn of the model × condition.",
    )


def ex_by_source_tier_table(m: Marts) -> Table:
    df = m.ex_by_source_tier
    cells: dict[tuple[str, str, str], dict[int, Any]] = {}
    for rec in df.to_dict("records"):
        cells.setdefault((rec["model"], rec["condition"], rec["source"]), {})[int(rec["tier"])] = rec[
            "ex_pct"
        ]
    rows = tuple((mo, c, s, *(fmt.pct(v.get(t)) for t in (1, 2, 3))) for (mo, c, s), v in cells.items())
    return Table(
        "ex_by_source_tier",
        "EX % by source × tier",
        ("model", "condition", "source", "T1", "T2", "T3"),
        rows,
        "agg_ex_by_source_tier.",
    )


def error_taxonomy_table(m: Marts) -> Table:
    df = m.error_taxonomy
    cells: dict[tuple[str, str], dict[str, Any]] = {}
    for rec in df.to_dict("records"):
        cells.setdefault((rec["model"], rec["condition"]), {})[rec["error_class"]] = rec["share_pct"]
    rows = tuple((mo, c, *(fmt.pct(v.get(k)) for k in ERROR_CLASSES)) for (mo, c), v in cells.items())
    return Table(
        "error_taxonomy",
        "Error taxonomy, % of turns",
        ("model", "condition", *ERROR_CLASSES),
        rows,
        "Six exclusive classes; a row sums to 100 (agg_error_taxonomy).",
    )


def contamination_table(m: Marts) -> Table:
    return _table(
        "contamination",
        "Cross-session contamination",
        m.contamination,
        [
            ("model", "model", _text),
            ("condition", "condition", _text),
            ("turns", "n_turns", fmt.count),
            ("failed, another session retrieved", "n_failed_retrieved_other_session", fmt.count),
            ("contaminated", "n_contaminated", fmt.count),
            ("% of turns", "contamination_rate_pct", fmt.pct),
            ("% of those failures", "contaminated_share_of_failures_pct", fmt.pct),
            ("with fallback", "n_with_fallback", fmt.count),
            ("fallback match", "n_fallback_match", fmt.count),
            ("% of fallback turns", "fallback_match_rate_pct", fmt.pct),
        ],
        "Contaminated: a failed turn that took a value from another analyst's session: its result equals "
        "its ground truth with the profile of the session that supplied a resolved key, or its SQL compares "
        "with a value of a retrieved session of another analyst that its own analyst never held. Fallback "
        "match (the paper's check): it equals the next session's ground truth (agg_contamination).",
    )


def episodic_hit_rate_table(m: Marts) -> Table:
    return _table(
        "episodic_hit_rate",
        "Episodic memory by wave size W",
        m.episodic_hit_rate,
        [
            ("model", "model", _text),
            ("condition", "condition", _text),
            ("W", "wave_size", fmt.count),
            ("memory-critical turns", "n_memory_critical", fmt.count),
            ("all values found", "n_memory_critical_resolved", fmt.count),
            ("hit rate %", "hit_rate_pct", fmt.pct),
            ("retrieved another session %", "retrieved_other_session_pct", fmt.pct),
        ],
        "C and D run each source's sessions in waves of W: a session never sees a session of its own wave, so a larger W "
        "may find fewer of the values a turn needs. W = 1 is the paper's strictly sequential order "
        "(memsql eval --wave-size 1) (agg_episodic_hit_rate).",
    )


def cost_table(m: Marts) -> Table:
    return _table(
        "cost",
        "Tokens, latency and cost",
        m.cost,
        [
            ("model", "model", _text),
            ("condition", "condition", _text),
            ("calls", "n_model_calls", fmt.count),
            ("cache hits", "n_cache_hits", fmt.count),
            ("tokens", "total_tokens", fmt.count),
            ("tokens/turn", "mean_tokens_per_turn", fmt.number),
            ("latency s (mean)", "mean_latency_s", fmt.seconds),
            ("latency s (p95)", "p95_latency_s", fmt.seconds),
            ("cost USD", "total_cost_usd", fmt.usd),
            ("USD/correct turn", "cost_per_correct_turn_usd", fmt.usd),
        ],
        "agg_cost.",
    )


def comparator_table(m: Marts) -> Table:
    return _table(
        "comparator_sensitivity",
        "Comparator sensitivity: strict vs bag vs set EX %",
        m.comparator_sensitivity,
        [
            ("model", "model", _text),
            ("condition", "condition", _text),
            ("strict", "ex_strict_pct", fmt.pct),
            ("bag", "ex_bag_pct", fmt.pct),
            ("set", "ex_set_pct", fmt.pct),
            ("bag − strict", "bag_minus_strict_pp", fmt.pp),
            ("set − strict", "set_minus_strict_pp", fmt.pp),
            ("turns strict≠bag", "n_strict_bag_disagree", fmt.count),
            ("turns strict≠set", "n_strict_set_disagree", fmt.count),
        ],
        "agg_comparator_sensitivity.",
    )


def pair_gaps_table(m: Marts) -> Table:
    df = m.model_pair_gaps
    flagged = df[df["is_flagged"].fillna(False).astype(bool)].copy()
    flagged["gap_ci95"] = _intervals(flagged, "gap_ci_lo_pp", "gap_ci_hi_pp")
    flagged = flagged.sort_values(
        ["involves_reference_model", "abs_gap_pp"], ascending=[True, False], kind="stable"
    )
    return _table(
        "pair_gaps",
        "Model pairs whose EX gap's 95% interval excludes 0",
        flagged,
        [
            ("model a", "model_a", _text),
            ("model b", "model_b", _text),
            ("condition", "condition", _text),
            ("source", "source", _text),
            ("EX a", "ex_a_pct", fmt.pct),
            ("EX b", "ex_b_pct", fmt.pct),
            ("gap (a − b)", "gap_pp", fmt.pp),
            ("gap 95% CI", "gap_ci95", _text),
            ("lower", "lower_model", _text),
            ("reference pair", "involves_reference_model", fmt.flag),
        ],
        f"{len(flagged)} of {len(df)} model-pair comparisons flagged (agg_model_pair_gaps); "
        "pairs with a reference model (gold, recall-probe) last.",
    )


def _claim_range(rec: dict[str, Any]) -> str:
    low, high, places = rec["low"], rec["high"], int(rec["decimals"])
    return f"{low:.{places}f}" if low == high else f"{low:.{places}f} to {high:.{places}f}"


def _claim_value(rec: dict[str, Any]) -> str:
    return fmt.MISSING if fmt.is_missing(rec["value"]) else f"{float(rec['value']):.{int(rec['decimals'])}f}"


def paper_table(m: Marts) -> Table:
    """Each evaluated claim × model × condition × source: this run's value next to the paper's figure."""
    df = m.paper_comparison
    shown = df[df["verdict"] != "not evaluated"]
    rows = tuple(
        (
            rec["model"],
            rec["claim_id"],
            _text(rec["condition"]),
            rec["source"],
            fmt.count(rec["turn_depth"]),
            _claim_range(rec),
            _claim_value(rec),
            rec["verdict"],
        )
        for rec in shown.to_dict("records")
    )
    counts = df["verdict"].value_counts()
    return Table(
        "paper",
        "This run vs the paper",
        ("model", "claim", "condition", "source", "turn", "paper", "this run", "verdict"),
        rows,
        f"{counts.get('inside', 0)} inside, {counts.get('outside', 0)} outside; "
        f"{counts.get('not evaluated', 0)} more apply to an evaluated model under conditions without a "
        "result yet (paper_comparison). The paper's claims are about LLMs: they are checked for every "
        "evaluated model except the reference models, which have their own expectations (next table).",
    )


def reference_table(m: Marts) -> Table:
    """The reference models against their own expectations (reference_expectations)."""
    df = m.reference_expectations.copy()
    df["bound"] = _intervals(df, "low", "high")
    counts = df["verdict"].value_counts()
    return _table(
        "reference",
        "Reference models vs their own expectations",
        df,
        [
            ("benchmark", "benchmark", _text),
            ("model", "model", _text),
            ("condition", "condition", _text),
            ("metric", "metric", _text),
            ("expected %", "bound", _text),
            ("this run %", "value", fmt.pct),
            ("verdict", "verdict", _text),
            ("expectation", "expectation", _text),
        ],
        f"{counts.get('inside', 0)} inside, {counts.get('outside', 0)} outside (reference_expectations): "
        "gold and paraphrase score 100 % EX everywhere, on both benchmarks; guess-probe stays at the guess floor, at most "
        f"{GUESS_FLOOR_MAX_PCT:.0f} % of memory-critical turns, under every condition.",
    )


def guess_rate_table(m: Marts) -> Table:
    """How guessable the memory-critical turns are from the data alone, per source (agg_guess_rate)."""
    df = m.guess_rate[m.guess_rate["turn_depth"].isna()]
    return _table(
        "guess_rate",
        "Guessability of memory-critical turns (guess_rate)",
        df,
        [
            ("benchmark", "benchmark", _text),
            ("source", "source", _text),
            ("memory-critical turns", "n_memory_critical", fmt.count),
            ("guessable at all", "n_guessable", fmt.count),
            ("mean guess_rate %", "mean_guess_rate_pct", fmt.pct),
            ("max guess_rate %", "max_guess_rate_pct", fmt.pct),
        ],
        "guess_rate: the share of the source's other profiles whose values give the turn's answer "
        "(agg_guess_rate, per depth in the mart); a benchmark that needs memory keeps its mean near 0.",
    )


def paper_claims_table(m: Marts) -> Table:
    """The sentence each claim shown in paper_table comes from."""
    df = m.paper_comparison
    shown = df[df["verdict"] != "not evaluated"].drop_duplicates("claim_id").sort_values("claim_id")
    return _table(
        "paper_claims",
        "Where the paper states them",
        shown,
        [("claim", "claim_id", _text), ("section", "section", _text), ("the paper says", "sentence", _text)],
        "Seed paper_claims (dbt_project/seeds): the paper's tables survive only as captions, so each "
        "figure is taken from a sentence of its text.",
    )


def reasoning_table(m: Marts) -> Table:
    return _table(
        "reasoning",
        "Reasoning vs standard mode",
        m.reasoning_vs_standard,
        [
            ("paper model", "paper_model", _text),
            ("condition", "condition", _text),
            ("source", "source", _text),
            ("reasoning", "reasoning_model", _text),
            ("standard", "standard_model", _text),
            ("EX reasoning", "ex_reasoning_pct", fmt.pct),
            ("EX standard", "ex_standard_pct", fmt.pct),
            ("gain", "reasoning_gain_pp", fmt.pp),
        ],
        "The paper's Tables 9/14: the same model with and without its reasoning configuration "
        "(agg_reasoning_vs_standard; the standard-mode entries are disabled by default).",
    )


def phenomenon_table(m: Marts) -> Table:
    """Extended benchmark: EX per phenomenon tag, and the stale-state and contamination counts, per model x condition."""
    df = m.ex_by_phenomenon
    cells = []
    for (model, condition), g in df.groupby(["model", "condition"], sort=False):
        by_tag = dict(zip(g["tag"], g["ex_pct"], strict=True))
        checked, stale = int(g["n_stale_checked"].sum()), int(g["n_stale_state"].sum())
        cells.append(
            (
                model,
                condition,
                *(fmt.pct(by_tag.get(t)) for t in PHENOMENA),
                f"{stale} of {checked}" if checked else fmt.MISSING,
                fmt.count(g["n_contaminated"].sum()),
            )
        )
    return Table(
        "extended_phenomena",
        "Extended benchmark: EX % by phenomenon",
        ("model", "condition", *PHENOMENA, "stale state", "contaminated"),
        tuple(cells),
        "EX % of the turns of each phenomenon tag (agg_ex_by_phenomenon; dbt docs: phenomenon_tag). Stale "
        "state: of the turns after a correction, those whose result is the ground truth built with the "
        "overwritten value. Contaminated: failed turns whose result is another session's answer.",
    )


def _spread(df: pd.DataFrame, model: str) -> str | None:
    """`model`'s memory-critical EX across the conditions with memory, as "low–high %" (None: not evaluated)."""
    with_memory = df[(df["model"] == model) & (df["condition"] != FLOOR_CONDITION)]["ex_memory_critical_pct"].dropna()
    return None if with_memory.empty else f"{with_memory.min():.1f}–{with_memory.max():.1f} %"


def benchmarks_table(m: Marts) -> Table:
    """Memory-critical EX on the paper's benchmark beside the extended one's, per model x condition."""
    cols = [
        "model",
        "condition",
        "context_mode",
        "ex_memory_critical_pct",
        "ex_memory_critical_ci_lo_pct",
        "ex_memory_critical_ci_hi_pct",
    ]
    paper, extended = m.condition_summary[cols], m.extended_condition_summary[cols]
    df = paper.merge(extended, on=["model", "condition"], how="inner", suffixes=("_paper", "_extended"))
    df["gap"] = df["ex_memory_critical_pct_extended"] - df["ex_memory_critical_pct_paper"]
    for side in ("paper", "extended"):
        df[f"ci_{side}"] = [
            fmt.interval(lo, hi)
            for lo, hi in zip(
                df[f"ex_memory_critical_ci_lo_pct_{side}"], df[f"ex_memory_critical_ci_hi_pct_{side}"], strict=True
            )
        ]
    paper_spread, extended_spread = _spread(paper, "reader-probe"), _spread(extended, "reader-probe")
    reading = (
        f"reader-probe, a yardstick of what each condition's prompt shows, scores {paper_spread} on memory-critical "
        f"turns across the conditions with memory on the paper's benchmark (saturated, as a capable LLM is: "
        f"the last turns' SQL restate nearly everything the next turn needs) and {extended_spread} on the "
        "extended one, where the conditions come apart. "
        if paper_spread and extended_spread
        else ""
    )
    return _table(
        "benchmarks",
        "The two benchmarks side by side: memory-critical EX %",
        df,
        [
            ("model", "model", _text),
            ("condition", "condition", _text),
            ("paper's benchmark", "ex_memory_critical_pct_paper", fmt.pct),
            ("paper 95% CI", "ci_paper", _text),
            ("paper mode", "context_mode_paper", _text),
            ("extended benchmark", "ex_memory_critical_pct_extended", fmt.pct),
            ("extended 95% CI", "ci_extended", _text),
            ("extended mode", "context_mode_extended", _text),
            ("extended − paper (pp)", "gap", fmt.pp),
        ],
        reading + "Memory-critical EX of every model × condition evaluated on both benchmarks "
        "(agg_condition_summary, by benchmark), with its 95 % interval (Wilson, the number of sessions as n).",
    )


def agents_table(m: Marts) -> Table:
    """Each pair of agent conditions (without and with the schema in the prompt) per model x source:
    EX, steps, tool calls, tokens and exploration share with intervals, steps saved and who earned them."""
    df = _paper_first(m.agent_steps_saved)
    t, e = AGENT_BASELINE_CONDITION, AGENTSM_CONDITION
    df = df.assign(
        pair=[f"{a} / {b}" for a, b in zip(df["condition_t"], df["condition_e"], strict=True)],
        ex_t_ci95=_intervals(df, "ex_t_ci_lo_pct", "ex_t_ci_hi_pct"),
        ex_e_ci95=_intervals(df, "ex_e_ci_lo_pct", "ex_e_ci_hi_pct"),
        traj_ci95=_intervals(df, "traj_ci_lo_pp", "traj_ci_hi_pp"),
    )
    means = [(f"{label} {c}", f"{col}_{side}") for label, col in AGENT_MEANS for side, c in (("t", t), ("e", e))]
    for _, col in means:
        scale = 100.0 if col.startswith("explore") else 1.0
        df[f"{col}_ci95"] = _mean_with_interval(df, col, scale)
    return _table(
        "agents",
        f"Agents: {t} (the agent baseline) against {e} (AgentSM) per source, without and with the schema in the prompt",
        df,
        [
            ("benchmark", "benchmark", _text),
            ("model", "model", _text),
            ("source", "source", _text),
            ("schema in prompt", "schema_in_prompt", fmt.flag),
            ("pair", "pair", _text),
            ("turns", "n_turns_e", fmt.count),
            (f"EX {t} %", "ex_t_pct", fmt.pct),
            (f"EX {t} 95% CI", "ex_t_ci95", _text),
            (f"EX {e} %", "ex_e_pct", fmt.pct),
            (f"EX {e} 95% CI", "ex_e_ci95", _text),
            (f"Traj = {e} − {t}", "traj_pp", fmt.pp),
            ("Traj 95% CI", "traj_ci95", _text),
            (f"median steps {t}", "median_steps_t", fmt.number),
            (f"median steps {e}", "median_steps_e", fmt.number),
            ("steps saved", "steps_saved", fmt.number),
            ("steps saved %", "steps_saved_pct", fmt.pct),
            ("steps saved by", "steps_saved_by", _text),
            *((f"{label} (95% CI)", f"{col}_ci95", _text) for label, col in means),
        ],
        f"agg_agent_steps_saved: the same agent with the window's memory ({t}) and with AgentSM's retrieved "
        f"trajectory ({e}: its explore segment in the first message, the others loaded per phase, the store's "
        "composite tools offered); without the schema in the first message (AgentSM's setting: the agent "
        f"finds it with its tools) and with it ({t}_schema, {e}_schema). Steps saved = median steps of the "
        "baseline − of AgentSM. Steps saved by the reference agent (gold-agent) are a scripted instrument's, "
        "not a model's: it knows the ground truth and explores only what its first message does not tell it, "
        "so its steps measure how much exploration a condition leaves necessary, never what a model does "
        "(it runs on its registry entry's fixed sample of sessions). Means per turn with 95% intervals "
        "(normal, the number of sessions as n); EX 95% CI: Wilson, the number of sessions as n; Traj's: "
        "paired session bootstrap (agg_ablation, paper benchmark, the pair without the schema).",
    )


# The per-turn means the agents table shows for each condition of a pair: (label, mart column stem).
AGENT_MEANS = (
    ("mean steps", "mean_steps"),
    ("tool calls", "mean_tool_calls"),
    ("tokens", "mean_tokens"),
    ("explore %", "explore_share"),
)


def _mean_with_interval(df: pd.DataFrame, col: str, scale: float) -> list[str]:
    """`mean (lo–hi)` of one mean column and its interval columns, scaled (a share to %)."""
    out = []
    for v, lo, hi in zip(df[col], df[f"{col}_ci_lo"], df[f"{col}_ci_hi"], strict=True):
        bounds = [None if fmt.is_missing(x) else scale * float(x) for x in (lo, hi)]
        value = fmt.number(None if fmt.is_missing(v) else scale * float(v))
        out.append(f"{value} ({fmt.interval(*bounds)})")
    return out


def _intervals(df: pd.DataFrame, lo: str, hi: str) -> list[str]:
    return [fmt.interval(a, b) for a, b in zip(df[lo], df[hi], strict=True)]


def agent_measures_table(m: Marts) -> Table:
    """AgentSM's measures per benchmark x model x condition x source, over the turns of the agent loop."""
    df = m.agent_steps.assign(ex_ci95=_intervals(m.agent_steps, "ex_ci_lo_pct", "ex_ci_hi_pct"))
    for phase in PHASES:
        df[f"{phase}_pct"] = 100.0 * df[f"{phase}_share"]
    df["trajectory_tables_used_pct"] = 100.0 * df["trajectory_tables_used_rate"]
    return _table(
        "agent_measures",
        "Agents: AgentSM's measures per model × condition × source",
        df,
        [
            ("benchmark", "benchmark", _text),
            ("model", "model", _text),
            ("condition", "condition", _text),
            ("source", "source", _text),
            ("turns", "n_turns", fmt.count),
            ("EX %", "ex_pct", fmt.pct),
            ("EX 95% CI", "ex_ci95", _text),
            ("median steps", "median_steps", fmt.number),
            ("tool calls / step", "mean_tool_calls_per_step", fmt.number),
            ("explore %", "explore_pct", fmt.pct),
            ("execute %", "execute_pct", fmt.pct),
            ("validate %", "validate_pct", fmt.pct),
            ("composite uses", "composite_uses", fmt.count),
            ("trajectory tables used %", "trajectory_tables_used_pct", fmt.pct),
        ],
        "Turns that ran through the agent loop with the exploration tools (the conditions with tools; "
        "agg_agent_steps): each step is one model request. Phase shares: the mean per turn of the agent's tool "
        "calls in each phase, by the trajectory store's phase rules. Trajectory tables used: the share of turns "
        "with a retrieved trajectory whose agent named or read one of its tables. 95% CI: Wilson, the number "
        "of sessions as n. Partitions of conditions without tools have no row.",
    )


def _paper_first(df: pd.DataFrame) -> pd.DataFrame:
    """The paper benchmark's rows, then the extended one's (each in the marts' order)."""
    order = {PAPER_BENCHMARK: 0, EXTENDED_BENCHMARK: 1}
    return df.sort_values("benchmark", key=lambda b: b.map(order), kind="stable")


def contrasts_table(m: Marts) -> Table:
    """Every condition but the two references, against B_wm5 and against A, over all sources."""
    df = m.condition_contrasts
    df = _paper_first(df[(df["source"] == ALL_SOURCES) & ~df["condition"].isin((WINDOW_CONDITION, FLOOR_CONDITION))])
    df = df.assign(
        memory=[CONDITION_TABLE[c].description if c in CONDITION_TABLE else fmt.MISSING for c in df["condition"]],
        vs_window_ci=_intervals(df, "vs_window_ci_lo_pp", "vs_window_ci_hi_pp"),
        vs_a_ci=_intervals(df, "vs_a_ci_lo_pp", "vs_a_ci_hi_pp"),
    )
    return _table(
        "contrasts",
        f"Each condition against {WINDOW_CONDITION} and against {FLOOR_CONDITION} (all sources, pp of EX)",
        df,
        [
            ("benchmark", "benchmark", _text),
            ("model", "model", _text),
            ("condition", "condition", _text),
            ("memory", "memory", _text),
            ("EX %", "ex_pct", fmt.pct),
            (f"− {WINDOW_CONDITION}", "vs_window_pp", fmt.pp),
            ("95% CI", "vs_window_ci", _text),
            (f"− {FLOOR_CONDITION} (MBS)", "vs_a_pp", fmt.pp),
            ("95% CI ", "vs_a_ci", _text),
        ],
        f"agg_condition_contrasts: EX under the condition minus EX under {WINDOW_CONDITION} (the paper's five-turn "
        f"working memory) and minus EX under {FLOOR_CONDITION} (no memory), with paired session-bootstrap "
        "intervals. The paper's ablation keeps its own terms (Ablation); a condition added in the conditions "
        "file appears here with its two differences.",
    )


def memory_cost_table(m: Marts) -> Table:
    return _table(
        "memory_cost",
        "What each condition's memory costs",
        _paper_first(m.memory_cost),
        [
            ("benchmark", "benchmark", _text),
            ("model", "model", _text),
            ("condition", "condition", _text),
            ("memory", "memory_implementation", _text),
            ("EX %", "ex_pct", fmt.pct),
            ("tokens added/turn", "mean_memory_prompt_tokens", fmt.number),
            (f"% of {FLOOR_CONDITION}'s prompt", "memory_prompt_tokens_pct", fmt.pct),
            ("retrieval ms (mean)", "mean_retrieval_ms", fmt.seconds),
            ("retrieval ms (p95)", "p95_retrieval_ms", fmt.seconds),
            ("store entries", "memory_store_entries", fmt.count),
            ("store bytes", "memory_store_bytes", fmt.count),
            ("memory errors", "n_memory_errors", fmt.count),
        ],
        f"agg_memory_cost: tokens the memory's blocks add to the same turn's prompt under {FLOOR_CONDITION} "
        "(as the model counts them), the retrieval and prompt assembly per turn, and what the memory's stores "
        "held (a shared memory after the partition; a per-session one summed over its sessions as each ended).",
    )


def cascade_table(m: Marts) -> Table:
    """The cascade, one line per benchmark: per model x condition evaluated with both histories, EX with
    gold history minus EX with its own, in points, with the paired session bootstrap's 95 % interval."""
    df = m.history_cascade
    rows = []
    for benchmark in BENCHMARKS:
        part = df[df["benchmark"] == benchmark]
        models = {
            model: ", ".join(
                f"{r.condition} {fmt.pp(r.cascade_pp)} ({fmt.interval(r.cascade_ci_lo_pp, r.cascade_ci_hi_pp)})"
                for r in rows_of.itertuples()
            )
            for model, rows_of in part.groupby("model", sort=False)
        }
        if models:
            rows.append((benchmark, "; ".join(f"{model}: {text}" for model, text in models.items())))
    note = (
        "EX with gold history (each earlier turn's ground truth and its result in memory, as SParC and CoSQL "
        "evaluate) minus EX with the model's own (the paper's protocol, every other table), in percentage "
        "points (95 % interval): how much of a condition's miss is the model's own earlier mistakes staying "
        "in memory. `memsql eval --history gold` evaluates a partition the other way."
    )
    return Table("cascade", "Cascade: gold history - own history, EX pp", ("benchmark", "cascade"), tuple(rows), note)


def all_tables(m: Marts) -> list[Table]:
    return [
        summary_table(m),
        summary_table(m, EXTENDED_BENCHMARK),
        benchmarks_table(m),
        phenomenon_table(m),
        paper_table(m),
        agents_table(m),
        agent_measures_table(m),
        reference_table(m),
        guess_rate_table(m),
        paper_claims_table(m),
        reasoning_table(m),
        per_turn_ex_table(m, ("A", "B")),
        mbs_table(m),
        ablation_table(m),
        error_taxonomy_table(m),
        contamination_table(m),
        episodic_hit_rate_table(m),
        cost_table(m),
        contrasts_table(m),
        cascade_table(m),
        memory_cost_table(m),
        ex_by_source_table(m),
        ex_by_source_tier_table(m),
        per_turn_ex_table(m, CONDITION_NAMES),
        comparator_table(m),
        pair_gaps_table(m),
    ]
