{#- A numeric column within [min_value, max_value] (dbt_utils' accepted_range, without the package:
    packages would need the network). Nulls pass. Fails with one row per value outside the range. -#}
{% test accepted_range(model, column_name, min_value, max_value) %}
select {{ column_name }}
from {{ model }}
where {{ column_name }} < {{ min_value }} or {{ column_name }} > {{ max_value }}
{% endtest %}
