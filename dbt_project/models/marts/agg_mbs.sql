-- Memory Benefit Score MBS_c(t) = EX_c(t) - EX_A(t), in percentage points, per model x condition
-- (every condition but A) x turn depth. Null where the model has no condition-A result at that depth.
-- Its interval pairs each session's turn t under c with the same turn under A (docs: bootstrap_method).
with depth as (
    select * from {{ ref('agg_ex_by_turn_depth') }}
),

stateless as (
    select model, turn_depth, ex_pct, ex_memory_critical_pct
    from depth
    where condition = 'A'
),

per_turn as (
    select model, condition, turn_index as turn_depth, session_id, case when ex_strict then 1 else 0 end as c
    from {{ ref('fct_turn_evaluations') }}
),

paired as (
    select d.model, d.condition, d.turn_depth, d.session_id, 1 as n_x, d.c as c_x, 1 as n_y, a.c as c_y
    from per_turn as d
    inner join per_turn as a
        on a.model = d.model
        and a.turn_depth = d.turn_depth
        and a.session_id = d.session_id
        and a.condition = 'A'
    where d.condition <> 'A'
)

select
    d.model,
    d.condition,
    d.turn_depth,
    d.n_turns,
    d.ex_pct,
    a.ex_pct as ex_a_pct,
    d.ex_pct - a.ex_pct as mbs_pp,
    b.se_pp as mbs_se_pp,
    b.ci_lo_pp as mbs_ci_lo_pp,
    b.ci_hi_pp as mbs_ci_hi_pp,
    d.ex_memory_critical_pct,
    a.ex_memory_critical_pct as ex_memory_critical_a_pct,
    d.ex_memory_critical_pct - a.ex_memory_critical_pct as mbs_memory_critical_pp
from depth as d
left join stateless as a
    on a.model = d.model
    and a.turn_depth = d.turn_depth
left join {{ session_bootstrap('paired', ['model', 'condition', 'turn_depth'], paired=true) }} as b
    on b.model = d.model
    and b.condition = d.condition
    and b.turn_depth = d.turn_depth
where d.condition <> 'A'
