-- Cross-session contamination per model x condition. A turn is contaminated when it failed and its
-- result equals the result of its fallback SQL (the next session's ground truth); only memory-critical
-- turns carry a fallback, so only they can be contaminated.
select
    model,
    condition,
    count(*) as n_turns,
    count(*) filter (where has_fallback) as n_with_fallback,
    count(*) filter (where not ex_strict) as n_failed,
    count(*) filter (where not ex_strict and has_fallback) as n_failed_with_fallback,
    count(*) filter (where contaminated) as n_contaminated,
    {{ pct('count(*) filter (where contaminated)', 'count(*)') }} as contamination_rate_pct,
    {{ pct('count(*) filter (where contaminated)', 'count(*) filter (where has_fallback)') }}
        as contamination_rate_with_fallback_pct,
    {{ pct('count(*) filter (where contaminated)', 'count(*) filter (where not ex_strict and has_fallback)') }}
        as contaminated_share_of_failures_pct
from {{ ref('fct_turn_evaluations') }}
group by model, condition
