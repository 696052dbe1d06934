-- Every condition against the two references an added condition is read against: B_wm5 (the paper's
-- working-memory window of five turns) and A (no memory, the MBS baseline), per benchmark x model x
-- source (and source = 'ALL'), in percentage points of EX over all turns. The paper's ablation keeps
-- its own terms (agg_ablation); this gives each condition, the added ones included, its own two
-- differences. A difference is null when the model has no result under the reference condition. Each
-- carries a standard error and 95 % interval by the paired session bootstrap (docs: bootstrap_method):
-- both conditions resampled with the same sessions, each side's epochs from its own.
{%- set refs = [('vs_window', var('window_condition')), ('vs_a', var('floor_condition'))] %}
with ex as (
    select * from {{ ref('agg_ex_by_source') }}
),

turns as (
    select * from {{ ref('fct_turn_evaluations') }}
),

per_session as (
    {{ session_ex_counts('turns') }}
),

reference_conditions as (
    select * from (values
        {%- for name, condition in refs %}
        ('{{ name }}', '{{ condition }}'){{ ',' if not loop.last }}
        {%- endfor %}
    ) as t(contrast, reference)
),

paired as (
    select s.benchmark, s.model, s.source, s.condition, r.contrast, s.session_id, s.epoch, 'x' as side, s.n, s.c
    from per_session as s
    inner join reference_conditions as r on s.condition <> r.reference
    union all
    select k.benchmark, k.model, k.source, k.condition, r.contrast, y.session_id, y.epoch, 'y' as side, y.n, y.c
    from per_session as y
    inner join reference_conditions as r on y.condition = r.reference
    inner join (select distinct benchmark, model, source, condition from per_session) as k
        on k.benchmark = y.benchmark and k.model = y.model and k.source = y.source and k.condition <> r.reference
),

intervals as (
    select
        benchmark,
        model,
        source,
        condition,
        {%- for name, _ in refs %}
        max(se_pp) filter (where contrast = '{{ name }}') as {{ name }}_se_pp,
        max(ci_lo_pp) filter (where contrast = '{{ name }}') as {{ name }}_ci_lo_pp,
        max(ci_hi_pp) filter (where contrast = '{{ name }}') as {{ name }}_ci_hi_pp{{ ',' if not loop.last }}
        {%- endfor %}
    from {{ session_bootstrap('paired', ['benchmark', 'model', 'source', 'condition', 'contrast']) }}
    group by benchmark, model, source, condition
)

select
    e.benchmark,
    e.model,
    e.source,
    e.condition,
    e.n_turns,
    e.ex_pct,
    w.ex_pct as ex_window_pct,
    a.ex_pct as ex_a_pct,
    e.ex_pct - w.ex_pct as vs_window_pp,
    i.vs_window_se_pp,
    i.vs_window_ci_lo_pp,
    i.vs_window_ci_hi_pp,
    e.ex_pct - a.ex_pct as vs_a_pp,
    i.vs_a_se_pp,
    i.vs_a_ci_lo_pp,
    i.vs_a_ci_hi_pp
from ex as e
left join ex as w
    on w.benchmark = e.benchmark and w.model = e.model and w.source = e.source
    and w.condition = '{{ var("window_condition") }}'
left join ex as a
    on a.benchmark = e.benchmark and a.model = e.model and a.source = e.source
    and a.condition = '{{ var("floor_condition") }}'
left join intervals as i
    on i.benchmark = e.benchmark and i.model = e.model and i.source = e.source and i.condition = e.condition
