{#- Standard error and 95 % interval of a paired difference of two EX figures by the seeded cluster
    bootstrap over whole sessions, and over epochs where a session has several, documented in
    docs.md (`bootstrap_method`, `paired_bootstrap`), with the draws of int_bootstrap_draws and
    int_bootstrap_epoch_draws. A single EX figure's interval is the Wilson interval of
    ex_ci_lo / ex_ci_hi instead (`interval_method`).

    `per_session`: a relation, CTE or parenthesised query with the `group_cols`, session_id, epoch,
    side ('x' and 'y': the two sides of the difference), n and c (turns and correct turns of the
    session in that epoch and side). Only the sessions both sides have take part: EX_x - EX_y over
    the same drawn sessions, each side's epochs drawn from its own.
    Returns group_cols, se_pp, ci_lo_pp, ci_hi_pp (percentage points). -#}
{% macro session_bootstrap(per_session, group_cols) -%}
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
        having count(distinct side) = 2
    ),

    epochs as (
        select
            {% for c in group_cols %}l.{{ c }}, {% endfor %}l.session_pos, l.n_sessions, r.side, r.n, r.c,
            row_number() over (
                partition by {% for c in group_cols %}l.{{ c }}, {% endfor %}l.session_pos, r.side order by r.epoch
            ) - 1 as epoch_pos,
            count(*) over (partition by {% for c in group_cols %}l.{{ c }}, {% endfor %}l.session_pos, r.side)
                as n_epochs
        from positioned as l
        inner join cells as r on {{ match_cols }} and r.session_id = l.session_id
    ),

    -- A figure whose sessions have one epoch each: per replicate, its drawn sessions' counts are
    -- list elements at the replicate's draw positions (list_select), shared by every figure of S
    -- sessions. The same numbers as the general path below, without a row per draw. A session's four
    -- counts (c and n of either side) travel in one 128-bit integer, 32 bits each, so that a
    -- replicate takes one list_select and one list_sum instead of four of each.
    session_counts as (
        select
            {{ cols }},
            session_pos,
            max(n_sessions) as n_sessions,
            max(n_epochs) as n_epochs,
            sum((cast(c as hugeint) | (cast(n as hugeint) << 32)) << (case when side = 'x' then 0 else 64 end))
                as counts
        from epochs
        group by {{ cols }}, session_pos
    ),

    lists as (
        select {{ cols }}, max(n_sessions) as n_sessions, list(counts order by session_pos) as counts
        from session_counts
        group by {{ cols }}
        having max(n_epochs) = 1
    ),

    draw_lists as (
        select s.n_sessions, d.replicate, list(cast(floor(d.u * s.n_sessions) as integer) + 1 order by d.draw_index) as at
        from (select distinct n_sessions from lists) as s
        inner join {{ ref('int_bootstrap_draws') }} as d on d.draw_index < s.n_sessions
        group by s.n_sessions, d.replicate
    ),

    one_epoch as (
        select
            {{ cols }},
            replicate,
            {{ pct("drawn & 4294967295", "(drawn >> 32) & 4294967295") }}
            - {{ pct("(drawn >> 64) & 4294967295", "drawn >> 96") }} as stat
        from (
            select {% for c in group_cols %}l.{{ c }}, {% endfor %}d.replicate, list_sum(list_select(l.counts, d.at)) as drawn
            from lists as l
            inner join draw_lists as d on d.n_sessions = l.n_sessions
        )
    ),

    -- Figures with several epochs for some session: a row per draw, each bringing its drawn epochs.
    figures as (
        select {{ cols }}, max(n_sessions) as n_sessions from epochs
        group by {{ cols }}
        having max(n_epochs) > 1
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

    several_epochs as (
        select
            {{ cols }},
            replicate,
            {{ pct("sum(c) filter (where side = 'x')", "sum(n) filter (where side = 'x')") }}
            - {{ pct("sum(c) filter (where side = 'y')", "sum(n) filter (where side = 'y')") }} as stat
        from chosen
        group by {{ cols }}, replicate
    ),

    replicates as (
        select {{ cols }}, replicate, stat from one_epoch
        union all
        select {{ cols }}, replicate, stat from several_epochs
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
    source = 'ALL' (grouping sets), over the turns of `turns` (the mart's import of
    fct_turn_evaluations) that `where` selects: the clusters the paired session bootstrap resamples,
    as side 'x'. -#}
{% macro session_ex_counts(turns, where='true') -%}
    select
        benchmark,
        model,
        condition,
        coalesce(source, '{{ var("all_sources") }}') as source,
        session_id,
        epoch,
        'x' as side,
        count(*) as n,
        count(*) filter (where ex_strict) as c
    from {{ turns }}
    where {{ where }}
    group by grouping sets (
        (benchmark, model, condition, source, session_id, epoch), (benchmark, model, condition, session_id, epoch)
    )
{%- endmacro %}
