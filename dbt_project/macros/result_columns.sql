{#- The result-file columns stg_turn_results casts, with their DuckDB types, in file order: the
    `result_columns` var, which memsql_assets/lib/harness/turn_result.py derives from the row's one
    definition (TurnResult), so a column added there reaches the staging model with no edit here.
    One list serves both the "files exist" and the "no file yet" branches of stg_turn_results, so the
    two cannot drift apart. Left out: the partition's keys model and condition (read from the folder
    names too) and `epoch` (files of schema 2 lack it; stg_turn_results reads them as epoch 1), which
    stg_turn_results reads on its own. A column no file has yet is read as null. -#}
{% macro result_columns() -%}
{%- set columns = [] -%}
{%- for name, type in var('result_columns') if name not in ['model', 'condition', 'epoch'] -%}
    {%- do columns.append((name, type)) -%}
{%- endfor -%}
{{ return(columns) }}
{%- endmacro %}

{#- 100 * numerator / denominator as a double; null when the denominator is 0 (no turn to score). -#}
{% macro pct(numerator, denominator) -%}
(100.0 * ({{ numerator }}) / nullif({{ denominator }}, 0))
{%- endmacro %}
