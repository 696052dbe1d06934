-- EX % per model x condition x source x tier (all turns, and memory-critical turns only); each EX
-- with its standard error and 95 % interval by the session bootstrap (docs: bootstrap_method).
with per_session as (
    select
        model,
        condition,
        source,
        tier,
        session_id,
        epoch,
        'x' as side,
        memory_critical,
        count(*) as n,
        count(*) filter (where ex_strict) as c
    from {{ paper_only(ref('fct_turn_evaluations')) }}
    group by all
),

ex as (
    select
        model,
        condition,
        source,
        tier,
        count(*) as n_turns,
        count(*) filter (where ex_strict) as n_correct,
        {{ pct('count(*) filter (where ex_strict)', 'count(*)') }} as ex_pct,
        count(*) filter (where memory_critical) as n_memory_critical,
        {{ pct('count(*) filter (where ex_strict and memory_critical)', 'count(*) filter (where memory_critical)') }}
            as ex_memory_critical_pct
    from {{ paper_only(ref('fct_turn_evaluations')) }}
    group by model, condition, source, tier
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
left join {{ session_bootstrap(
    '(select model, condition, source, tier, session_id, epoch, side, sum(n) as n, sum(c) as c from per_session group by all)',
    ['model', 'condition', 'source', 'tier']) }} as b
    on b.model = ex.model
    and b.condition = ex.condition
    and b.source = ex.source
    and b.tier = ex.tier
left join {{ session_bootstrap('(select * from per_session where memory_critical)', ['model', 'condition', 'source', 'tier']) }} as m
    on m.model = ex.model
    and m.condition = ex.condition
    and m.source = ex.source
    and m.tier = ex.tier
