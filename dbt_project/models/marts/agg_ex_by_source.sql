-- EX % per benchmark x model x condition x source, plus source = 'ALL' for the whole benchmark (grouping sets),
-- over all turns and over the memory-critical ones, each with its 95 % Wilson interval over sessions
-- (docs: interval_method). With several epochs, EX is their mean (every epoch covers the same turns,
-- so it is the pooled share) and n_turns counts turns x epochs.
with turns as (
    select * from {{ ref('fct_turn_evaluations') }}
),

ex as (
    select
        benchmark,
        model,
        condition,
        coalesce(source, '{{ var("all_sources") }}') as source,
        count(distinct session_id) as n_sessions,
        count(distinct epoch) as n_epochs,
        count(*) as n_turns,
        count(*) filter (where ex_strict) as n_correct,
        {{ pct('count(*) filter (where ex_strict)', 'count(*)') }} as ex_pct,
        count(*) filter (where memory_critical) as n_memory_critical,
        count(distinct session_id) filter (where memory_critical) as n_memory_critical_sessions,
        count(*) filter (where ex_strict and memory_critical) as n_memory_critical_correct,
        {{ pct('count(*) filter (where ex_strict and memory_critical)', 'count(*) filter (where memory_critical)') }}
            as ex_memory_critical_pct
    from turns
    group by grouping sets ((benchmark, model, condition, source), (benchmark, model, condition))
)

select
    * exclude (n_memory_critical_sessions, n_memory_critical_correct),
    ex_ci_lo(n_correct, n_turns, n_sessions) as ex_ci_lo_pct,
    ex_ci_hi(n_correct, n_turns, n_sessions) as ex_ci_hi_pct,
    ex_ci_lo(n_memory_critical_correct, n_memory_critical, n_memory_critical_sessions) as ex_memory_critical_ci_lo_pct,
    ex_ci_hi(n_memory_critical_correct, n_memory_critical, n_memory_critical_sessions) as ex_memory_critical_ci_hi_pct
from ex
