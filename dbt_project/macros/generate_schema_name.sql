{#- Layers get plain schema names (staging, intermediate); marts stay in the target schema (main),
    so readers such as the report query `main.agg_*` without knowing dbt's prefixing rule. -#}
{% macro generate_schema_name(custom_schema_name, node) -%}
    {%- if custom_schema_name is none -%}{{ target.schema }}{%- else -%}{{ custom_schema_name | trim }}{%- endif -%}
{%- endmacro %}
