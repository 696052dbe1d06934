-- Share of each of the six exclusive error classes per model x condition (zero-filled: every class
-- has a row for every partition), in % of the partition's turns. Shares of a partition sum to 100.
with turns as (
    select * from {{ paper_only(ref('fct_turn_evaluations')) }}
),

partitions as (
    select model, condition, count(*) as n_partition_turns
    from turns
    group by model, condition
),

classes as (
    select unnest({{ var('error_classes') }}) as error_class
),

counts as (
    select model, condition, error_class, count(*) as n_turns
    from turns
    group by model, condition, error_class
)

select
    p.model,
    p.condition,
    c.error_class,
    coalesce(n.n_turns, 0) as n_turns,
    p.n_partition_turns,
    {{ pct('coalesce(n.n_turns, 0)', 'p.n_partition_turns') }} as share_pct
from partitions as p
cross join classes as c
left join counts as n
    on n.model = p.model
    and n.condition = p.condition
    and n.error_class = c.error_class
