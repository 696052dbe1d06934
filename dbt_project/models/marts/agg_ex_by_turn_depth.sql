-- EX % per model x condition x turn depth t (turn_index), over all turns at that depth and over the
-- memory-critical ones only (none at t = 1, hence null there); EX with its standard error and 95 %
-- interval by the session bootstrap (docs: bootstrap_method; one turn per session at a depth).
with per_session as (
    select
        model,
        condition,
        turn_index as turn_depth,
        session_id,
        1 as n_x,
        case when ex_strict then 1 else 0 end as c_x
    from {{ ref('fct_turn_evaluations') }}
),

depth as (
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
)

select
    d.*,
    b.se_pp as ex_se_pp,
    b.ci_lo_pp as ex_ci_lo_pct,
    b.ci_hi_pp as ex_ci_hi_pct
from depth as d
left join {{ session_bootstrap('per_session', ['model', 'condition', 'turn_depth']) }} as b
    on b.model = d.model
    and b.condition = d.condition
    and b.turn_depth = d.turn_depth
