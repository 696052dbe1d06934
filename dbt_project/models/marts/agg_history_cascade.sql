-- The cascade per benchmark x model x condition: EX with gold history (each earlier turn's ground
-- truth and its result in memory, lib/history.py) minus EX with the model's own history (the
-- paper's protocol, every other mart), over all turns, in percentage points. Its standard error and
-- 95 % interval come from the paired session bootstrap (docs: bootstrap_method): both histories
-- resampled with the same sessions, each side's epochs from its own. A gold-history file counts when it
-- is a whole evaluation of the current benchmark version and its own-history partition is usable.
with gold_turns as (
    select * from {{ ref('stg_gold_history_turns') }}
),

own_turns as (
    select * from {{ ref('fct_turn_evaluations') }}
),

versions as (
    select * from {{ ref('stg_benchmark_version') }}
),

turns as (
    select * from {{ ref('stg_turns') }}
),

benchmark_turns as (
    select benchmark, count(*) as n_turns from turns group by benchmark
),

complete_gold_files as (
    select g.result_file
    from gold_turns as g
    inner join versions as v on v.benchmark = g.benchmark
    inner join benchmark_turns as b on b.benchmark = g.benchmark
    group by g.result_file, b.n_turns
    having
        count(distinct g.benchmark_version) = 1
        and min(g.benchmark_version) = min(v.benchmark_version)
        and count(*) = max(b.n_turns) * count(distinct g.epoch)
),

per_session as (
    select g.benchmark, g.model, g.condition, g.session_id, g.epoch, 'x' as side,
        count(*) as n, count(*) filter (where g.ex_strict) as c
    from gold_turns as g
    inner join complete_gold_files as f on f.result_file = g.result_file
    group by g.benchmark, g.model, g.condition, g.session_id, g.epoch
    union all
    select o.benchmark, o.model, o.condition, o.session_id, o.epoch, 'y' as side,
        count(*) as n, count(*) filter (where o.ex_strict) as c
    from own_turns as o
    group by o.benchmark, o.model, o.condition, o.session_id, o.epoch
),

sides as (
    select
        benchmark,
        model,
        condition,
        sum(n) filter (where side = 'x') as n_turns,
        {{ pct('sum(c) filter (where side = \'x\')', 'sum(n) filter (where side = \'x\')') }} as ex_gold_history_pct,
        {{ pct('sum(c) filter (where side = \'y\')', 'sum(n) filter (where side = \'y\')') }} as ex_own_history_pct
    from per_session
    group by benchmark, model, condition
    having count(distinct side) = 2
),

intervals as (
    select * from {{ session_bootstrap('per_session', ['benchmark', 'model', 'condition']) }}
)

select
    s.benchmark,
    s.model,
    s.condition,
    s.n_turns,
    s.ex_gold_history_pct,
    s.ex_own_history_pct,
    s.ex_gold_history_pct - s.ex_own_history_pct as cascade_pp,
    i.se_pp as cascade_se_pp,
    i.ci_lo_pp as cascade_ci_lo_pp,
    i.ci_hi_pp as cascade_ci_hi_pp
from sides as s
left join intervals as i
    on i.benchmark = s.benchmark and i.model = s.model and i.condition = s.condition
