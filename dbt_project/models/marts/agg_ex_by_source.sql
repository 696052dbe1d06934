-- EX % per model x condition x source, plus source = 'ALL' for the whole benchmark (grouping sets),
-- with its standard error and 95 % interval by the session bootstrap (docs: bootstrap_method).
with per_session as (
    {{ session_ex_counts('n_x', 'c_x') }}
),

ex as (
    select
        model,
        condition,
        coalesce(source, 'ALL') as source,
        count(distinct session_id) as n_sessions,
        count(*) as n_turns,
        count(*) filter (where ex_strict) as n_correct,
        {{ pct('count(*) filter (where ex_strict)', 'count(*)') }} as ex_pct,
        count(*) filter (where memory_critical) as n_memory_critical,
        {{ pct('count(*) filter (where ex_strict and memory_critical)', 'count(*) filter (where memory_critical)') }}
            as ex_memory_critical_pct
    from {{ ref('fct_turn_evaluations') }}
    group by grouping sets ((model, condition, source), (model, condition))
)

select
    ex.*,
    b.se_pp as ex_se_pp,
    b.ci_lo_pp as ex_ci_lo_pct,
    b.ci_hi_pp as ex_ci_hi_pct
from ex
left join {{ session_bootstrap('per_session', ['model', 'condition', 'source']) }} as b
    on b.model = ex.model
    and b.condition = ex.condition
    and b.source = ex.source
