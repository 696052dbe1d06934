-- Every scored turn of every usable partition. A plain table, rebuilt by each `dbt build`: at the
-- full grid (30 partitions x 1,400 turns) the incremental model it replaced saved ~0.3 s of a
-- ~12 s run (bench/dbt_fact_table.py), and every aggregate downstream is a full rebuild anyway.
with turn_evaluations as (
    select * from {{ ref('int_turn_evaluations') }}
)

select * from turn_evaluations
