-- The agent baseline (T) against AgentSM (E) per benchmark x model x source (and 'ALL'): EX % of each
-- with its Wilson interval, median and mean steps of each, the steps the retrieved trajectory saved
-- (median T - median E, and in % of T's), the exploration share of each, and on the paper benchmark
-- Traj = E - T with its paired session-bootstrap interval (agg_ablation). Only models evaluated under
-- both conditions have a row. The two conditions come from the vocabulary.
{%- set t, e = var('agent_baseline_condition'), var('agentsm_condition') %}
with steps as (
    select * from {{ ref('agg_agent_steps') }}
),

ablation as (
    select * from {{ ref('agg_ablation') }}
),

baseline as (
    select * from steps where condition = '{{ t }}'
),

agentsm as (
    select * from steps where condition = '{{ e }}'
),

compared as (
    select
        b.benchmark,
        b.model,
        b.source,
        b.n_sessions as n_sessions_t,
        a.n_sessions as n_sessions_e,
        b.n_turns as n_turns_t,
        a.n_turns as n_turns_e,
        b.ex_pct as ex_t_pct,
        b.ex_ci_lo_pct as ex_t_ci_lo_pct,
        b.ex_ci_hi_pct as ex_t_ci_hi_pct,
        a.ex_pct as ex_e_pct,
        a.ex_ci_lo_pct as ex_e_ci_lo_pct,
        a.ex_ci_hi_pct as ex_e_ci_hi_pct,
        b.median_steps as median_steps_t,
        a.median_steps as median_steps_e,
        b.mean_steps as mean_steps_t,
        a.mean_steps as mean_steps_e,
        b.median_steps - a.median_steps as steps_saved,
        {{ pct('b.median_steps - a.median_steps', 'b.median_steps') }} as steps_saved_pct,
        b.explore_share as explore_share_t,
        a.explore_share as explore_share_e,
        a.trajectory_tables_used_rate as trajectory_tables_used_rate_e
    from baseline as b
    inner join agentsm as a
        on a.benchmark = b.benchmark
        and a.model = b.model
        and a.source = b.source
),

final as (
    select
        c.*,
        x.traj_pp,
        x.traj_ci_lo_pp,
        x.traj_ci_hi_pp
    from compared as c
    left join ablation as x
        on c.benchmark = '{{ var("paper_benchmark") }}'
        and x.model = c.model
        and x.source = c.source
)

select * from final
