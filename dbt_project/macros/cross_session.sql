{#- Whether a turn is tagged cross-session (extended benchmark; vocabulary.py CROSS_SESSION_TAGS, the
    `cross_session_tags` var): it needs what an earlier session of its analyst established. The paper
    benchmark's turns carry no tag: false. -#}
{% macro is_cross_session() -%}
coalesce(tag in ({{ "'" ~ var('cross_session_tags') | join("', '") ~ "'" }}), false)
{%- endmacro %}
