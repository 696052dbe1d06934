{#- The result-file columns dbt uses, with their DuckDB types (memsql_assets/lib/harness/results.py
    RESULT_SCHEMA). One list serves both the "files exist" and the "no file yet" branches of
    stg_turn_results, so the two cannot drift apart. `epoch` is not in it: files of schema 2 lack
    it, and stg_turn_results reads them as epoch 1. Files before schema 4 lack reasoning_tokens,
    retries and stale_state: stg_turn_results reads any column no file has as null. -#}
{% macro result_columns() -%}
{{ return([
    ('session_id', 'varchar'),
    ('source', 'varchar'),
    ('tier', 'integer'),
    ('turn_index', 'integer'),
    ('memory_critical', 'boolean'),
    ('raw_output', 'varchar'),
    ('extracted_sql', 'varchar'),
    ('ex_strict', 'boolean'),
    ('ex_bag', 'boolean'),
    ('ex_set', 'boolean'),
    ('error_class', 'varchar'),
    ('error_message', 'varchar'),
    ('contaminated', 'boolean'),
    ('contamination_source', 'varchar'),
    ('fallback_match', 'boolean'),
    ('stale_state', 'boolean'),
    ('gt_error', 'varchar'),
    ('model_error_type', 'varchar'),
    ('prompt_tokens', 'bigint'),
    ('completion_tokens', 'bigint'),
    ('reasoning_tokens', 'bigint'),
    ('latency_s', 'double'),
    ('cost_usd', 'double'),
    ('cache_hit', 'boolean'),
    ('attempts', 'integer'),
    ('retries', 'integer'),
    ('prompt_hash', 'varchar'),
    ('request_key', 'varchar'),
    ('resolved_keys', 'varchar'),
    ('missing_keys', 'varchar'),
    ('retrieved_sessions', 'varchar'),
    ('supplying_sessions', 'varchar'),
    ('retrieval_ms', 'double'),
    ('benchmark_version', 'varchar'),
    ('schema_version', 'integer'),
]) }}
{%- endmacro %}

{#- 100 * numerator / denominator as a double; null when the denominator is 0 (no turn to score). -#}
{% macro pct(numerator, denominator) -%}
(100.0 * ({{ numerator }}) / nullif({{ denominator }}, 0))
{%- endmacro %}
