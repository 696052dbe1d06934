-- Three-way memory ablation per model x source (and source = 'ALL'), in percentage points of EX:
-- Win = B_wm5 - B, Ep = C - B_wm5, Sem = D - C, Net = D - B; and trajectory reuse, Traj = E - T
-- (AgentSM against the same agent without the trajectory) and Traj_prompt = E_prompt - B_wm5 (the
-- trajectory pasted into a single-shot prompt). The three trajectory conditions come from the vocabulary.
-- A difference is null when either of its conditions has no result for the model. Each carries a
-- standard error and 95 % interval by the session bootstrap, paired: both conditions are resampled
-- with the same sessions, so each turn is compared with itself, each side's epochs resampled from
-- its own (docs: bootstrap_method). With several epochs, a condition's EX is their mean.
{%- set e, t, e_prompt = var('agentsm_condition'), var('agent_baseline_condition'), var('prompt_trajectory_condition') %}
{%- set terms = [('win', 'B_wm5', 'B'), ('ep', 'C', 'B_wm5'), ('sem', 'D', 'C'), ('net', 'D', 'B'), ('traj', e, t), ('traj_prompt', e_prompt, 'B_wm5')] %}
{#- (column suffix, condition) of every condition a term reads #}
{%- set sides = [('b', 'B'), ('b_wm5', 'B_wm5'), ('c', 'C'), ('d', 'D'), ('e', e), ('t', t), ('e_prompt', e_prompt)] %}
with ex as (
    select * from {{ paper_only(ref('agg_ex_by_source')) }}
),

turns as (
    select * from {{ ref('fct_turn_evaluations') }}
),

pivoted as (
    select
        model,
        source,
        {%- for suffix, cond in sides %}
        max(ex_pct) filter (where condition = '{{ cond }}') as ex_{{ suffix }}_pct,
        {%- endfor %}
        {%- for suffix, cond in sides %}
        max(n_turns) filter (where condition = '{{ cond }}') as n_turns_{{ suffix }}{{ ',' if not loop.last }}
        {%- endfor %}
    from ex
    where condition <> 'A'  -- no term uses the stateless baseline: a model with only A has no row
    group by model, source
),

per_session as (
    {{ session_ex_counts('turns', "benchmark = '" ~ var('paper_benchmark') ~ "'") }}
),

terms as (
    select * from (values
        {%- for name, x, y in terms %}
        ('{{ name }}', '{{ x }}', '{{ y }}'){{ ',' if not loop.last }}
        {%- endfor %}
    ) as t(term, condition_x, condition_y)
),

paired as (
    select s.model, s.source, t.term, s.session_id, s.epoch, 'x' as side, s.n, s.c
    from terms as t
    inner join per_session as s on s.condition = t.condition_x
    union all
    select s.model, s.source, t.term, s.session_id, s.epoch, 'y' as side, s.n, s.c
    from terms as t
    inner join per_session as s on s.condition = t.condition_y
),

intervals as (
    select
        model,
        source,
        {%- for name, x, y in terms %}
        max(se_pp) filter (where term = '{{ name }}') as {{ name }}_se_pp,
        max(ci_lo_pp) filter (where term = '{{ name }}') as {{ name }}_ci_lo_pp,
        max(ci_hi_pp) filter (where term = '{{ name }}') as {{ name }}_ci_hi_pp{{ ',' if not loop.last }}
        {%- endfor %}
    from {{ session_bootstrap('paired', ['model', 'source', 'term']) }}
    group by model, source
)

select
    p.model,
    p.source,
    {%- for suffix, cond in sides %}
    p.ex_{{ suffix }}_pct,
    {%- endfor %}
    {%- for suffix, cond in sides %}
    p.n_turns_{{ suffix }},
    {%- endfor %}
    p.ex_b_wm5_pct - p.ex_b_pct as win_pp,
    p.ex_c_pct - p.ex_b_wm5_pct as ep_pp,
    p.ex_d_pct - p.ex_c_pct as sem_pp,
    p.ex_d_pct - p.ex_b_pct as net_pp,
    p.ex_e_pct - p.ex_t_pct as traj_pp,
    p.ex_e_prompt_pct - p.ex_b_wm5_pct as traj_prompt_pp,
    {%- for name, x, y in terms %}
    i.{{ name }}_se_pp,
    i.{{ name }}_ci_lo_pp,
    i.{{ name }}_ci_hi_pp{{ ',' if not loop.last }}
    {%- endfor %}
from pivoted as p
left join intervals as i
    on i.model = p.model
    and i.source = p.source
