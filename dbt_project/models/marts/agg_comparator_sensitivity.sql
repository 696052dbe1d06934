-- How much the headline EX depends on the comparator, per model x condition: strict (the paper's:
-- stringified multisets), bag (numbers compared with tolerance) and set (bag without duplicates);
-- each EX with its standard error and 95 % interval by the session bootstrap (docs: bootstrap_method).
{%- set verdicts = ['strict', 'bag', 'set'] %}
with per_session as (
    select
        model,
        condition,
        session_id,
        epoch,
        'x' as side,
        count(*) as n,
        {%- for v in verdicts %}
        count(*) filter (where ex_{{ v }}) as c_{{ v }}{{ ',' if not loop.last }}
        {%- endfor %}
    from {{ paper_only(ref('fct_turn_evaluations')) }}
    group by all
)

select
    e.model,
    e.condition,
    count(*) as n_turns,
    {{ pct('count(*) filter (where ex_strict)', 'count(*)') }} as ex_strict_pct,
    {{ pct('count(*) filter (where ex_bag)', 'count(*)') }} as ex_bag_pct,
    {{ pct('count(*) filter (where ex_set)', 'count(*)') }} as ex_set_pct,
    {%- for v in verdicts %}
    any_value(b_{{ v }}.se_pp) as ex_{{ v }}_se_pp,
    any_value(b_{{ v }}.ci_lo_pp) as ex_{{ v }}_ci_lo_pct,
    any_value(b_{{ v }}.ci_hi_pp) as ex_{{ v }}_ci_hi_pct,
    {%- endfor %}
    {{ pct('count(*) filter (where ex_bag)', 'count(*)') }}
        - {{ pct('count(*) filter (where ex_strict)', 'count(*)') }} as bag_minus_strict_pp,
    {{ pct('count(*) filter (where ex_set)', 'count(*)') }}
        - {{ pct('count(*) filter (where ex_strict)', 'count(*)') }} as set_minus_strict_pp,
    count(*) filter (where ex_strict <> ex_bag) as n_strict_bag_disagree,
    count(*) filter (where ex_strict <> ex_set) as n_strict_set_disagree,
    count(*) filter (where ex_bag <> ex_set) as n_bag_set_disagree
from {{ paper_only(ref('fct_turn_evaluations')) }} as e
{%- for v in verdicts %}
left join {{ session_bootstrap(
    '(select model, condition, session_id, epoch, side, n, c_' ~ v ~ ' as c from per_session)', ['model', 'condition']) }}
    as b_{{ v }}
    on b_{{ v }}.model = e.model
    and b_{{ v }}.condition = e.condition
{%- endfor %}
group by e.model, e.condition
