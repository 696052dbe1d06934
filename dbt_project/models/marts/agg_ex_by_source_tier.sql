-- EX % per model x condition x source x tier (all turns, and memory-critical turns only).
select
    model,
    condition,
    source,
    tier,
    count(*) as n_turns,
    count(*) filter (where ex_strict) as n_correct,
    {{ pct('count(*) filter (where ex_strict)', 'count(*)') }} as ex_pct,
    count(*) filter (where memory_critical) as n_memory_critical,
    {{ pct('count(*) filter (where ex_strict and memory_critical)', 'count(*) filter (where memory_critical)') }}
        as ex_memory_critical_pct
from {{ ref('fct_turn_evaluations') }}
group by model, condition, source, tier
