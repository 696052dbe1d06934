-- SPEC §3 sanity check: turn 1 needs no memory, so MBS_c(1) should be about 0. Warns when a
-- condition moves turn-1 EX away from stateless A by more than sampling explains: the paired
-- session-bootstrap interval of MBS_c(1) excludes 0 (e.g. episodic retrieval leaking another
-- session's answer into a first turn). Each cell has its own model answer, so a sampled LLM's
-- MBS(1) is not 0 by construction; its noise stays inside the interval.
{{ config(severity='warn') }}
select model, condition, turn_depth, ex_pct, ex_a_pct, mbs_pp, mbs_ci_lo_pp, mbs_ci_hi_pp
from {{ ref('agg_mbs') }}
where turn_depth = 1 and (mbs_ci_lo_pp > 0 or mbs_ci_hi_pp < 0)
