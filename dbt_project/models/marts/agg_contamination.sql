-- Cross-session contamination per benchmark x model x condition, two ways (lib/evaluation/contamination.py).
-- Contaminated: a failed turn that took a value from another analyst's session, by provenance (its
-- result equals its ground truth with the profile of a session whose episode supplied a resolved key)
-- or by value (its SQL compares with a value of a retrieved session of another analyst that its own
-- analyst never held); only turns that another session's episode reached can be.
-- The paper's fallback: a failed turn whose result equals its fallback SQL's, the next session's
-- ground truth (only memory-critical turns carry one).
with turns as (
    select * from {{ ref('fct_turn_evaluations') }}
)

select
    benchmark,
    model,
    condition,
    count(*) as n_turns,
    count(*) filter (where not ex_strict) as n_failed,
    count(*) filter (where supplied_by_other_session) as n_supplied_by_other_session,
    count(*) filter (where not ex_strict and supplied_by_other_session) as n_failed_supplied_by_other_session,
    count(*) filter (where not ex_strict and retrieved_other_session) as n_failed_retrieved_other_session,
    count(*) filter (where contaminated) as n_contaminated,
    {{ pct('count(*) filter (where contaminated)', 'count(*)') }} as contamination_rate_pct,
    {{ pct('count(*) filter (where contaminated)', 'count(*) filter (where not ex_strict and retrieved_other_session)') }}
        as contaminated_share_of_failures_pct,
    count(*) filter (where has_fallback) as n_with_fallback,
    count(*) filter (where not ex_strict and has_fallback) as n_failed_with_fallback,
    count(*) filter (where fallback_match) as n_fallback_match,
    {{ pct('count(*) filter (where fallback_match)', 'count(*) filter (where has_fallback)') }}
        as fallback_match_rate_pct
from turns
group by benchmark, model, condition
