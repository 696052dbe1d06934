{#-
  Incremental by partition. A run inserts only the model x condition partitions whose file
  fingerprint (path, size, mtime, benchmark version; int_partitions) is not already in the table,
  after deleting that partition's old rows (delete+insert on model, condition). The changed
  partitions are found before the insert and written into the query as literal model/condition
  filters, so DuckDB's Hive partition pruning skips the unchanged files entirely. The post-hook
  drops partitions whose file disappeared or went stale (older benchmark). `dbt build --full-refresh`
  rebuilds from scratch.
-#}
{{
  config(
    materialized='incremental',
    incremental_strategy='delete+insert',
    unique_key=['model', 'condition'],
    on_schema_change='fail',
    post_hook="
      delete from {{ this }} as t
      where not exists (
        select 1 from {{ ref('int_partitions') }} as p
        where p.is_current_benchmark
          and p.model = t.model and p.condition = t.condition
          and p.partition_fingerprint = t.partition_fingerprint
      )"
  )
}}
-- depends_on: {{ ref('int_partitions') }}

select * from {{ ref('int_turn_evaluations') }}
{% if is_incremental() %}
  {%- set changed_sql %}
    select p.model, p.condition
    from {{ ref('int_partitions') }} as p
    where p.is_current_benchmark
      and not exists (
        select 1 from {{ this }} as t
        where t.model = p.model and t.condition = p.condition
          and t.partition_fingerprint = p.partition_fingerprint
      )
    order by 1, 2
  {%- endset %}
  {%- set changed = run_query(changed_sql).rows if execute else [] %}
where
  {%- if changed | length == 0 %}
    false  -- every partition is unchanged
  {%- else %}
    {%- for row in changed %}
    {{ 'or ' if not loop.first }}(model = '{{ row[0] | replace("'", "''") }}' and condition = '{{ row[1] | replace("'", "''") }}')
    {%- endfor %}
  {%- endif %}
{% endif %}
