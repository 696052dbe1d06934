-- One row per evaluated benchmark x model x condition partition: the headline numbers (what `memsql` prints and
-- the report's first table shows) and where they came from; EX, memory-critical EX and turn-1 EX
-- each with its n and its Wilson interval over sessions; the epochs (n_epochs; n_turns
-- counts turns x epochs) and, for a sample run (is_sample), the sample's size in sessions (n_sessions);
-- on every row the benchmark's guess floor (guess-probe's memory-critical EX under A), to read each
-- model's A against; the context mode the partition ran in (what its memory was given). The
-- cross-session headline: memory-critical EX within a session (turns not tagged cross-session)
-- beside EX on the cross-session turns, each with its Wilson interval over turns (the unit: turns),
-- and the contaminated and stale-state counts beside them.
with turn_evaluations as (
    select * from {{ ref('fct_turn_evaluations') }}
),

partitions as (
    select * from {{ ref('int_partitions') }}
),

ex_by_source as (
    select * from {{ ref('agg_ex_by_source') }}
),

partition_summaries as (
    select * from {{ ref('stg_partition_summaries') }}
),

ex_by_turn_depth as (
    select * from {{ ref('agg_ex_by_turn_depth') }}
),

turns as (
    select
        benchmark,
        model,
        condition,
        count(*) as n_turns,
        count(*) filter (where ex_strict) as n_correct,
        {{ pct('count(*) filter (where ex_strict)', 'count(*)') }} as ex_pct,
        count(*) filter (where memory_critical) as n_memory_critical,
        {{ pct('count(*) filter (where ex_strict and memory_critical)', 'count(*) filter (where memory_critical)') }}
            as ex_memory_critical_pct,
        count(*) filter (where memory_critical and not {{ is_cross_session() }}) as n_within_session,
        count(*) filter (where ex_strict and memory_critical and not {{ is_cross_session() }})
            as n_within_session_correct,
        count(*) filter (where {{ is_cross_session() }}) as n_cross_session,
        count(*) filter (where ex_strict and {{ is_cross_session() }}) as n_cross_session_correct,
        count(*) filter (where contaminated) as n_contaminated,
        count(*) filter (where contaminated and {{ is_cross_session() }}) as n_cross_session_contaminated,
        count(*) filter (where stale_state) as n_stale_state,
        count(*) filter (where turn_index = 1) as n_turn1,
        {{ pct('count(*) filter (where ex_strict and turn_index = 1)', 'count(*) filter (where turn_index = 1)') }}
            as ex_turn1_pct,
        {{ pct('count(*) filter (where contaminated)', 'count(*)') }} as contamination_rate_pct,
        count(*) filter (where stale_state is not null) as n_stale_checked,
        {{ pct('count(*) filter (where stale_state)', 'count(*) filter (where stale_state is not null)') }}
            as stale_state_rate_pct,
        count(*) filter (where gt_error is not null) as n_gt_errors,
        count(*) filter (where model_error_type is not null) as n_model_errors,
        count(*) filter (where retries > 0) as n_retried_turns,
        cast(sum(total_tokens) as bigint) as total_tokens,
        sum(cost_usd) as total_cost_usd,
        avg(latency_s) as mean_latency_s
    from turn_evaluations
    group by benchmark, model, condition
),

floor as (
    select benchmark, ex_memory_critical_pct as guess_floor_pct
    from turns
    where model = '{{ var("guess_probe") }}'
        and condition = '{{ var("floor_condition") }}'
)

select
    t.*,
    ps.context_mode,
    x.n_sessions,
    x.n_epochs,
    x.ex_ci_lo_pct,
    x.ex_ci_hi_pct,
    x.ex_memory_critical_ci_lo_pct,
    x.ex_memory_critical_ci_hi_pct,
    d.ex_ci_lo_pct as ex_turn1_ci_lo_pct,
    d.ex_ci_hi_pct as ex_turn1_ci_hi_pct,
    p.is_complete,
    p.is_sample,
    p.benchmark_version,
    p.dagster_partition_key,
    p.result_file,
    p.partition_fingerprint,
    {{ pct('t.n_within_session_correct', 't.n_within_session') }} as ex_within_session_pct,
    ex_ci_lo(t.n_within_session_correct, t.n_within_session, t.n_within_session) as ex_within_session_ci_lo_pct,
    ex_ci_hi(t.n_within_session_correct, t.n_within_session, t.n_within_session) as ex_within_session_ci_hi_pct,
    {{ pct('t.n_cross_session_correct', 't.n_cross_session') }} as ex_cross_session_pct,
    ex_ci_lo(t.n_cross_session_correct, t.n_cross_session, t.n_cross_session) as ex_cross_session_ci_lo_pct,
    ex_ci_hi(t.n_cross_session_correct, t.n_cross_session, t.n_cross_session) as ex_cross_session_ci_hi_pct,
    f.guess_floor_pct,
    t.ex_memory_critical_pct - f.guess_floor_pct as above_floor_pp
from turns as t
-- each benchmark's own floor (guess-probe runs under A on both)
left join floor as f
    on f.benchmark = t.benchmark
inner join partitions as p
    on p.benchmark = t.benchmark
    and p.model = t.model
    and p.condition = t.condition
inner join ex_by_source as x
    on x.benchmark = t.benchmark
    and x.model = t.model
    and x.condition = t.condition
    and x.source = '{{ var("all_sources") }}'
left join partition_summaries as ps
    on ps.benchmark = t.benchmark
    and ps.model = t.model
    and ps.condition = t.condition
left join ex_by_turn_depth as d
    on d.benchmark = t.benchmark
    and d.model = t.model
    and d.condition = t.condition
    and d.turn_depth = 1
