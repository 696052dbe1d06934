-- Episodic memory by wave size W, for the partitions that ran in waves (C and D: wave_size is set).
-- With W > 1 a session cannot see the up to W - 1 sessions just before it; this shows what that costs:
-- how often a memory-critical turn still found every value it needs, and how often retrieval reached
-- another session at all.
with partition_summaries as (
    select * from {{ ref('stg_partition_summaries') }}
),

turn_evaluations as (
    select * from {{ paper_only(ref('fct_turn_evaluations')) }}
),

partitions as (
    select model, condition, wave_size
    from partition_summaries
    where wave_size is not null and benchmark = '{{ var("paper_benchmark") }}'
),

turns as (
    select
        t.model,
        t.condition,
        t.memory_critical,
        t.missing_keys = '[]' as all_keys_resolved,
        t.retrieved_other_session
    from turn_evaluations as t
)

select
    p.model,
    p.condition,
    p.wave_size,
    count(*) as n_turns,
    count(*) filter (where t.memory_critical) as n_memory_critical,
    count(*) filter (where t.memory_critical and t.all_keys_resolved) as n_memory_critical_resolved,
    {{ pct('count(*) filter (where t.memory_critical and t.all_keys_resolved)', 'count(*) filter (where t.memory_critical)') }}
        as hit_rate_pct,
    count(*) filter (where t.retrieved_other_session) as n_retrieved_other_session,
    {{ pct('count(*) filter (where t.retrieved_other_session)', 'count(*)') }} as retrieved_other_session_pct
from partitions as p
inner join turns as t on t.model = p.model and t.condition = p.condition
group by p.model, p.condition, p.wave_size
