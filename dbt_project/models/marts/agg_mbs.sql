-- Memory Benefit Score MBS_c(t) = EX_c(t) - EX_A(t), in percentage points, per model x condition
-- (every condition but A) x turn depth, over all turns at t and over the memory-critical ones. Null
-- where the model has no condition-A result at that depth. Its interval pairs each session's turn t
-- under c with the same turn under A, each side's epochs resampled from its own (docs: bootstrap_method).
with depth as (
    select * from {{ paper_only(ref('agg_ex_by_turn_depth')) }}
),

turns as (
    select * from {{ paper_only(ref('fct_turn_evaluations')) }}
),

stateless as (
    select model, turn_depth, n_turns, ex_pct, n_memory_critical, ex_memory_critical_pct
    from depth
    where condition = 'A'
),

per_turn as (
    select
        model,
        condition,
        turn_index as turn_depth,
        session_id,
        epoch,
        memory_critical,
        case when ex_strict then 1 else 0 end as c
    from turns
),

-- Side x: the turn under c; side y: the same turn under A, once for every c of the model.
paired as (
    select model, condition, turn_depth, session_id, epoch, memory_critical, 'x' as side, 1 as n, c
    from per_turn
    where condition <> 'A'
    union all
    select a.model, k.condition, a.turn_depth, a.session_id, a.epoch, a.memory_critical, 'y' as side, 1 as n, a.c
    from per_turn as a
    inner join (select distinct model, condition from per_turn where condition <> 'A') as k
        on k.model = a.model
    where a.condition = 'A'
)

select
    d.model,
    d.condition,
    d.turn_depth,
    d.n_turns,
    a.n_turns as n_turns_a,
    d.ex_pct,
    a.ex_pct as ex_a_pct,
    d.ex_pct - a.ex_pct as mbs_pp,
    b.se_pp as mbs_se_pp,
    b.ci_lo_pp as mbs_ci_lo_pp,
    b.ci_hi_pp as mbs_ci_hi_pp,
    d.n_memory_critical,
    a.n_memory_critical as n_memory_critical_a,
    d.ex_memory_critical_pct,
    a.ex_memory_critical_pct as ex_memory_critical_a_pct,
    d.ex_memory_critical_pct - a.ex_memory_critical_pct as mbs_memory_critical_pp,
    m.se_pp as mbs_memory_critical_se_pp,
    m.ci_lo_pp as mbs_memory_critical_ci_lo_pp,
    m.ci_hi_pp as mbs_memory_critical_ci_hi_pp
from depth as d
left join stateless as a
    on a.model = d.model
    and a.turn_depth = d.turn_depth
left join {{ session_bootstrap('paired', ['model', 'condition', 'turn_depth']) }} as b
    on b.model = d.model
    and b.condition = d.condition
    and b.turn_depth = d.turn_depth
left join {{ session_bootstrap('(select * from paired where memory_critical)', ['model', 'condition', 'turn_depth']) }} as m
    on m.model = d.model
    and m.condition = d.condition
    and m.turn_depth = d.turn_depth
where d.condition <> 'A'
