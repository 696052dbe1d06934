-- EX % per benchmark x model x condition x source, plus source = 'ALL' for the whole benchmark (grouping sets),
-- over all turns and over the memory-critical ones, each with its standard error and 95 % interval
-- by the session bootstrap (docs: bootstrap_method). With several epochs, EX is their mean (every
-- epoch covers the same turns, so it is the pooled share) and n_turns counts turns x epochs.
with per_session as (
    {{ session_ex_counts() }}
),

per_session_critical as (
    {{ session_ex_counts('memory_critical') }}
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
        {{ pct('count(*) filter (where ex_strict and memory_critical)', 'count(*) filter (where memory_critical)') }}
            as ex_memory_critical_pct
    from {{ ref('fct_turn_evaluations') }}
    group by grouping sets ((benchmark, model, condition, source), (benchmark, model, condition))
)

select
    ex.*,
    b.se_pp as ex_se_pp,
    b.ci_lo_pp as ex_ci_lo_pct,
    b.ci_hi_pp as ex_ci_hi_pct,
    m.se_pp as ex_memory_critical_se_pp,
    m.ci_lo_pp as ex_memory_critical_ci_lo_pct,
    m.ci_hi_pp as ex_memory_critical_ci_hi_pct
from ex
left join {{ session_bootstrap('per_session', ['benchmark', 'model', 'condition', 'source']) }} as b
    on b.benchmark = ex.benchmark
    and b.model = ex.model
    and b.condition = ex.condition
    and b.source = ex.source
left join {{ session_bootstrap('per_session_critical', ['benchmark', 'model', 'condition', 'source']) }} as m
    on m.benchmark = ex.benchmark
    and m.model = ex.model
    and m.condition = ex.condition
    and m.source = ex.source
