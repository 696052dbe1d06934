{#- One end of the 95 % normal interval of avg(expr) in an aggregate, with the number of sessions as
    n (as the Wilson intervals of EX): sign '-' the lower end, '+' the upper; null for one turn. -#}
{% macro mean_ci(expr, sign) -%}
    avg({{ expr }}) {{ sign }} 1.96 * stddev_samp({{ expr }}) / sqrt(count(distinct session_id))
{%- endmacro %}
