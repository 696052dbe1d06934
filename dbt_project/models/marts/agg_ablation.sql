-- Three-way memory ablation per model x source (and source = 'ALL'), in percentage points of EX:
-- Win = B_wm5 - B, Ep = C - B_wm5, Sem = D - C, Net = D - B, Traj = E - B_wm5.
-- A difference is null when either of its conditions has no result for the model.
with ex as (
    select * from {{ ref('agg_ex_by_source') }}
),

pivoted as (
    select
        model,
        source,
        max(ex_pct) filter (where condition = 'B') as ex_b_pct,
        max(ex_pct) filter (where condition = 'B_wm5') as ex_b_wm5_pct,
        max(ex_pct) filter (where condition = 'C') as ex_c_pct,
        max(ex_pct) filter (where condition = 'D') as ex_d_pct,
        max(ex_pct) filter (where condition = 'E') as ex_e_pct
    from ex
    where condition <> 'A'  -- no term uses the stateless baseline: a model with only A has no row
    group by model, source
)

select
    model,
    source,
    ex_b_pct,
    ex_b_wm5_pct,
    ex_c_pct,
    ex_d_pct,
    ex_e_pct,
    ex_b_wm5_pct - ex_b_pct as win_pp,
    ex_c_pct - ex_b_wm5_pct as ep_pp,
    ex_d_pct - ex_c_pct as sem_pp,
    ex_d_pct - ex_b_pct as net_pp,
    ex_e_pct - ex_b_wm5_pct as traj_pp
from pivoted
