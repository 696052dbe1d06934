{#- A mart's relation restricted to the paper benchmark's rows: the marts that reproduce or compare with
    the paper (ablation, MBS, claims, cost and taxonomy tables) read only that benchmark, never a mix. -#}
{% macro paper_only(relation) -%}
(select * from {{ relation }} where benchmark = '{{ var("paper_benchmark") }}')
{%- endmacro %}
