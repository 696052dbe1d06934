{#- Compound-key uniqueness without dbt_utils (packages would need the network).
    Fails with one row per duplicated key combination, and its count. -#}
{% test unique_combination_of_columns(model, combination_of_columns) %}
select
    {{ combination_of_columns | join(', ') }},
    count(*) as n_rows
from {{ model }}
group by {{ combination_of_columns | join(', ') }}
having count(*) > 1
{% endtest %}
