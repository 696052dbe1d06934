-- Every unordered pair of models (model_a < model_b) compared on EX per source (and 'ALL') and
-- condition: gap_pp = EX(model_a) - EX(model_b); flagged when |gap_pp| >= var pair_gap_flag_pp (10).
-- Finds the paper's "EDGAR regression" kind of result (one model far below another on one source).
with ex as (
    select model, condition, source, n_turns, ex_pct
    from {{ ref('agg_ex_by_source') }}
)

select
    a.model as model_a,
    b.model as model_b,
    a.condition,
    a.source,
    a.ex_pct as ex_a_pct,
    b.ex_pct as ex_b_pct,
    a.ex_pct - b.ex_pct as gap_pp,
    abs(a.ex_pct - b.ex_pct) as abs_gap_pp,
    case
        when a.ex_pct < b.ex_pct then a.model
        when b.ex_pct < a.ex_pct then b.model
    end as lower_model,
    abs(a.ex_pct - b.ex_pct) >= {{ var('pair_gap_flag_pp') }} as is_flagged,
    (a.model in {{ "('" ~ var('reference_models') | join("', '") ~ "')" }}
        or b.model in {{ "('" ~ var('reference_models') | join("', '") ~ "')" }}) as involves_reference_model
from ex as a
inner join ex as b
    on a.condition = b.condition
    and a.source = b.source
    and a.model < b.model
