-- EX % per model x condition x turn depth t (turn_index), over all turns at that depth and over the
-- memory-critical ones only (none at t = 1, hence null there).
select
    model,
    condition,
    turn_index as turn_depth,
    count(*) as n_turns,
    count(*) filter (where ex_strict) as n_correct,
    {{ pct('count(*) filter (where ex_strict)', 'count(*)') }} as ex_pct,
    count(*) filter (where memory_critical) as n_memory_critical,
    count(*) filter (where ex_strict and memory_critical) as n_memory_critical_correct,
    {{ pct('count(*) filter (where ex_strict and memory_critical)', 'count(*) filter (where memory_critical)') }}
        as ex_memory_critical_pct
from {{ ref('fct_turn_evaluations') }}
group by model, condition, turn_index
