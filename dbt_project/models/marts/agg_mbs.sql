-- Memory Benefit Score MBS_c(t) = EX_c(t) - EX_A(t), in percentage points, per model x condition
-- (every condition but A) x turn depth. Null where the model has no condition-A result at that depth.
with depth as (
    select * from {{ ref('agg_ex_by_turn_depth') }}
),

stateless as (
    select model, turn_depth, ex_pct, ex_memory_critical_pct
    from depth
    where condition = 'A'
)

select
    d.model,
    d.condition,
    d.turn_depth,
    d.n_turns,
    d.ex_pct,
    a.ex_pct as ex_a_pct,
    d.ex_pct - a.ex_pct as mbs_pp,
    d.ex_memory_critical_pct,
    a.ex_memory_critical_pct as ex_memory_critical_a_pct,
    d.ex_memory_critical_pct - a.ex_memory_critical_pct as mbs_memory_critical_pp
from depth as d
left join stateless as a
    on a.model = d.model
    and a.turn_depth = d.turn_depth
where d.condition <> 'A'
