-- Extended benchmark: EX % per model x condition x phenomenon tag (docs: phenomenon_tag), over the
-- tag's turns and its memory-critical ones; the stale-state rate (of the turns with a stale ground
-- truth, those whose result is the overwritten state's) and the contamination rate beside it. The
-- paper benchmark's turns carry no tag and are not in this mart.
with turns as (
    select * from {{ ref('fct_turn_evaluations') }}
)

select
    model,
    condition,
    tag,
    count(distinct session_id) as n_sessions,
    count(*) as n_turns,
    count(*) filter (where ex_strict) as n_correct,
    {{ pct('count(*) filter (where ex_strict)', 'count(*)') }} as ex_pct,
    count(*) filter (where memory_critical) as n_memory_critical,
    {{ pct('count(*) filter (where ex_strict and memory_critical)', 'count(*) filter (where memory_critical)') }}
        as ex_memory_critical_pct,
    count(*) filter (where memory_critical and recall_distance > 5) as n_beyond_five_turns,
    {{ pct('count(*) filter (where ex_strict and memory_critical and recall_distance > 5)',
           'count(*) filter (where memory_critical and recall_distance > 5)') }} as ex_beyond_five_turns_pct,
    count(*) filter (where stale_state is not null) as n_stale_checked,
    count(*) filter (where stale_state) as n_stale_state,
    {{ pct('count(*) filter (where stale_state)', 'count(*) filter (where stale_state is not null)') }}
        as stale_state_rate_pct,
    count(*) filter (where contaminated) as n_contaminated,
    {{ pct('count(*) filter (where contaminated)', 'count(*)') }} as contamination_rate_pct
from turns
where benchmark = '{{ var("extended_benchmark") }}'
group by model, condition, tag
