-- Under A the prompt has no memory block and the memory keeps nothing: every A row adds 0 tokens to
-- itself and holds an empty store (a partition that recorded its store size). A row returned fails.
select benchmark, model, condition, mean_memory_prompt_tokens, memory_store_entries
from {{ ref('agg_memory_cost') }}
where condition = '{{ var("floor_condition") }}'
    and (mean_memory_prompt_tokens <> 0 or coalesce(memory_store_entries, 0) <> 0)
