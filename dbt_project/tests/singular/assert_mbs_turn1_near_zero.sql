-- SPEC §3 sanity check: turn 1 needs no memory, so MBS_c(1) should be about 0. Warns when a
-- condition moves turn-1 EX by more than 5 pp from stateless A (e.g. episodic retrieval leaking
-- another session's answer into a first turn).
{{ config(severity='warn') }}
select model, condition, turn_depth, ex_pct, ex_a_pct, mbs_pp
from {{ ref('agg_mbs') }}
where turn_depth = 1 and abs(mbs_pp) > 5
