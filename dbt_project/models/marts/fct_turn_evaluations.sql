-- Every scored turn of every usable partition. A plain table, rebuilt by each `dbt build`: at the
-- full grid (30 partitions x 1,400 turns) it takes well under a second next to dbt's start-up,
-- and every aggregate downstream is a full rebuild anyway (dbt_project/README.md).
select * from {{ ref('int_turn_evaluations') }}
