{#- Whether a file source (a read_blob over a path or glob) has at least one file: the extended
    benchmark's files exist only where the sources file chooses that benchmark, and reading a
    missing Parquet file is an error. False at parse time (nothing is read then). -#}
{% macro has_files(file_source) -%}
{%- if execute -%}
{{ return(run_query('select count(*) from ' ~ file_source).columns[0].values()[0] > 0) }}
{%- else -%}
{{ return(false) }}
{%- endif -%}
{%- endmacro %}

{#- A staging model's `source` CTEs where it reads several sources: one per name, named after it
    (`select * from` the source), each followed by a comma. -#}
{% macro source_ctes(names) -%}
{%- for name in names %}
{{ name }} as (
    select * from {{ source('memsql', name) }}
),
{% endfor %}
{%- endmacro %}
