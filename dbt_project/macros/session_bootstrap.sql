{#- Standard error and 95 % interval of an EX figure (or of a paired difference of two) by the
    seeded cluster bootstrap over whole sessions documented in docs.md (`bootstrap_method`), with
    the draws of int_bootstrap_draws: the same numbers as memsql_assets/lib/evaluation/bootstrap.py.

    `per_session`: a relation or CTE with the `group_cols`, session_id, n_x and c_x (turns and
    correct turns of the session in the figure), and n_y, c_y when `paired` (the other side of
    the difference, same session: EX_x - EX_y over the same drawn sessions).
    Returns group_cols, se_pp, ci_lo_pp, ci_hi_pp (percent, or percentage points when paired). -#}
{% macro session_bootstrap(per_session, group_cols, paired=false) -%}
{%- set cols = group_cols | join(', ') -%}
(
    with positioned as (
        select
            *,
            row_number() over (partition by {{ cols }} order by session_id) - 1 as session_pos,
            count(*) over (partition by {{ cols }}) as n_sessions
        from {{ per_session }}
    ),

    figures as (
        select distinct {{ cols }}, n_sessions from positioned
    ),

    picked as (
        select {% for c in group_cols %}f.{{ c }}, {% endfor %}d.replicate, floor(d.u * f.n_sessions) as session_pos
        from figures as f
        inner join {{ ref('int_bootstrap_draws') }} as d on d.draw_index < f.n_sessions
    ),

    replicates as (
        select
            {% for c in group_cols %}p.{{ c }}, {% endfor %}p.replicate,
            {{ pct('sum(s.c_x)', 'sum(s.n_x)') }}
            {%- if paired %} - {{ pct('sum(s.c_y)', 'sum(s.n_y)') }}{% endif %} as stat
        from picked as p
        inner join positioned as s
            on {% for c in group_cols %}s.{{ c }} = p.{{ c }} and {% endfor %}s.session_pos = p.session_pos
        group by {% for c in group_cols %}p.{{ c }}, {% endfor %}p.replicate
    )

    select
        {{ cols }},
        stddev_samp(stat) as se_pp,
        quantile_cont(stat, 0.025) as ci_lo_pp,
        quantile_cont(stat, 0.975) as ci_hi_pp
    from replicates
    group by {{ cols }}
)
{%- endmacro %}

{#- Turns (as `n`) and strictly correct turns (as `c`) per model x condition x source x session, plus
    source = 'ALL' (grouping sets): the clusters the session bootstrap resamples. -#}
{% macro session_ex_counts(n='n', c='c') -%}
    select
        model,
        condition,
        coalesce(source, 'ALL') as source,
        session_id,
        count(*) as {{ n }},
        count(*) filter (where ex_strict) as {{ c }}
    from {{ ref('fct_turn_evaluations') }}
    group by grouping sets ((model, condition, source, session_id), (model, condition, session_id))
{%- endmacro %}
