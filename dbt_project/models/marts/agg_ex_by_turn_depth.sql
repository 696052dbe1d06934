-- EX % per benchmark x model x condition x turn depth t (turn_index), over all turns at that depth and over the
-- memory-critical ones only (none at t = 1, hence null there); each EX with its 95 % Wilson
-- interval over sessions (docs: interval_method; one turn per session and epoch at a depth).
with turns as (
    select * from {{ ref('fct_turn_evaluations') }}
),

depth as (
    select
        benchmark,
        model,
        condition,
        turn_index as turn_depth,
        count(distinct session_id) as n_sessions,
        count(*) as n_turns,
        count(*) filter (where ex_strict) as n_correct,
        {{ pct('count(*) filter (where ex_strict)', 'count(*)') }} as ex_pct,
        count(*) filter (where memory_critical) as n_memory_critical,
        count(distinct session_id) filter (where memory_critical) as n_memory_critical_sessions,
        count(*) filter (where ex_strict and memory_critical) as n_memory_critical_correct,
        {{ pct('count(*) filter (where ex_strict and memory_critical)', 'count(*) filter (where memory_critical)') }}
            as ex_memory_critical_pct
    from turns
    group by benchmark, model, condition, turn_index
)

select
    * exclude (n_sessions, n_memory_critical_sessions),
    ex_ci_lo(n_correct, n_turns, n_sessions) as ex_ci_lo_pct,
    ex_ci_hi(n_correct, n_turns, n_sessions) as ex_ci_hi_pct,
    ex_ci_lo(n_memory_critical_correct, n_memory_critical, n_memory_critical_sessions) as ex_memory_critical_ci_lo_pct,
    ex_ci_hi(n_memory_critical_correct, n_memory_critical, n_memory_critical_sessions) as ex_memory_critical_ci_hi_pct
from depth
