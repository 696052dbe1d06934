-- EX % per benchmark x model x condition x turn depth t (turn_index), over all turns at that depth and over the
-- memory-critical ones only (none at t = 1, hence null there); each EX with its standard error and
-- 95 % interval by the session bootstrap (docs: bootstrap_method; one turn per session and epoch at
-- a depth).
with per_session as (
    select
        benchmark,
        model,
        condition,
        turn_index as turn_depth,
        session_id,
        epoch,
        'x' as side,
        memory_critical,
        1 as n,
        case when ex_strict then 1 else 0 end as c
    from {{ ref('fct_turn_evaluations') }}
),

depth as (
    select
        benchmark,
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
    group by benchmark, model, condition, turn_index
)

select
    d.*,
    b.se_pp as ex_se_pp,
    b.ci_lo_pp as ex_ci_lo_pct,
    b.ci_hi_pp as ex_ci_hi_pct,
    m.se_pp as ex_memory_critical_se_pp,
    m.ci_lo_pp as ex_memory_critical_ci_lo_pct,
    m.ci_hi_pp as ex_memory_critical_ci_hi_pct
from depth as d
left join {{ session_bootstrap('per_session', ['benchmark', 'model', 'condition', 'turn_depth']) }} as b
    on b.benchmark = d.benchmark
    and b.model = d.model
    and b.condition = d.condition
    and b.turn_depth = d.turn_depth
left join {{ session_bootstrap('(select * from per_session where memory_critical)', ['benchmark', 'model', 'condition', 'turn_depth']) }} as m
    on m.benchmark = d.benchmark
    and m.model = d.model
    and m.condition = d.condition
    and m.turn_depth = d.turn_depth
