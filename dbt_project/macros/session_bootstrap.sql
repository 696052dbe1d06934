{#- Standard error and 95 % interval of an EX figure (or of a paired difference of two) by the
    seeded cluster bootstrap over whole sessions, and over epochs where a session has several,
    documented in docs.md (`bootstrap_method`), with the draws of int_bootstrap_draws and
    int_bootstrap_epoch_draws: the same numbers as memsql_assets/lib/evaluation/bootstrap.py.

    `per_session`: a relation, CTE or parenthesised query with the `group_cols`, session_id, epoch,
    side ('x'; and 'y' when `paired`: the other side of the difference), n and c (turns and correct
    turns of the session in that epoch and side). A paired figure uses the sessions both sides have:
    EX_x - EX_y over the same drawn sessions, each side's epochs drawn from its own.
    Returns group_cols, se_pp, ci_lo_pp, ci_hi_pp (percent, or percentage points when paired). -#}
{% macro session_bootstrap(per_session, group_cols, paired=false) -%}
{%- set cols = group_cols | join(', ') -%}
{%- set match_cols -%}
{% for c in group_cols %}{{ 'and ' if not loop.first }}r.{{ c }} = l.{{ c }} {% endfor %}
{%- endset -%}
(
    with cells as (
        select {{ cols }}, session_id, epoch, side, n, c from {{ per_session }}
    ),

    positioned as (
        select
            {{ cols }},
            session_id,
            row_number() over (partition by {{ cols }} order by session_id) - 1 as session_pos,
            count(*) over (partition by {{ cols }}) as n_sessions
        from cells
        group by {{ cols }}, session_id
        {%- if paired %}
        having count(distinct side) = 2
        {%- endif %}
    ),

    epochs as (
        select
            {% for c in group_cols %}l.{{ c }}, {% endfor %}l.session_pos, r.side, r.n, r.c,
            row_number() over (
                partition by {% for c in group_cols %}l.{{ c }}, {% endfor %}l.session_pos, r.side order by r.epoch
            ) - 1 as epoch_pos,
            count(*) over (partition by {% for c in group_cols %}l.{{ c }}, {% endfor %}l.session_pos, r.side)
                as n_epochs
        from positioned as l
        inner join cells as r on {{ match_cols }} and r.session_id = l.session_id
    ),

    figures as (
        select distinct {{ cols }}, n_sessions from positioned
    ),

    picked as (
        select {% for c in group_cols %}f.{{ c }}, {% endfor %}d.replicate, d.draw_index,
            floor(d.u * f.n_sessions) as session_pos
        from figures as f
        inner join {{ ref('int_bootstrap_draws') }} as d on d.draw_index < f.n_sessions
    ),

    -- Each drawn session brings its epochs: all of its one, or E draws with replacement from its E.
    chosen as (
        select {% for c in group_cols %}l.{{ c }}, {% endfor %}l.replicate, r.side, r.n, r.c
        from picked as l
        inner join epochs as r on {{ match_cols }} and r.session_pos = l.session_pos
        left join {{ ref('int_bootstrap_epoch_draws') }} as v
            on r.n_epochs > 1
            and v.replicate = l.replicate
            and v.draw_index = l.draw_index
            and v.epoch_draw < r.n_epochs
        where r.n_epochs = 1 or r.epoch_pos = floor(v.v * r.n_epochs)
    ),

    replicates as (
        select
            {{ cols }},
            replicate,
            {{ pct("sum(c) filter (where side = 'x')", "sum(n) filter (where side = 'x')") }}
            {%- if paired %} - {{ pct("sum(c) filter (where side = 'y')", "sum(n) filter (where side = 'y')") }}{% endif %} as stat
        from chosen
        group by {{ cols }}, replicate
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

{#- Turns (n) and strictly correct turns (c) per model x condition x source x session x epoch, plus
    source = 'ALL' (grouping sets), over the turns `where` selects: the clusters the session
    bootstrap resamples, as side 'x'. -#}
{% macro session_ex_counts(where='true') -%}
    select
        model,
        condition,
        coalesce(source, '{{ var("all_sources") }}') as source,
        session_id,
        epoch,
        'x' as side,
        count(*) as n,
        count(*) filter (where ex_strict) as c
    from {{ ref('fct_turn_evaluations') }}
    where {{ where }}
    group by grouping sets ((model, condition, source, session_id, epoch), (model, condition, session_id, epoch))
{%- endmacro %}
