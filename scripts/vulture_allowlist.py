# Names vulture (scripts/test.sh, the lint step) reports as unused, which stay: each is called or read
# by something vulture cannot see. Not imported by anything; vulture only parses it. A name that is
# really unused is deleted instead of added here.
# ruff: noqa

# click commands: the CLI group calls them by their command name.
list_models  # memsql_assets/cli/models.py: `memsql models list`
list_sources  # memsql_assets/cli/sources.py: `memsql sources list`
coverage  # memsql_assets/cli/trajectory.py: `memsql trajectory coverage`
sensitivity  # memsql_assets/cli/trajectory.py: `memsql trajectory sensitivity`

# dagster-dbt calls the translator's hooks, with this parameter name.
_.get_group_name  # memsql_assets/defs/metrics/assets.py
_.get_automation_condition  # memsql_assets/defs/metrics/assets.py
dbt_resource_props  # memsql_assets/defs/metrics/assets.py: the overridden hooks' signature

# pydantic: validators it calls, and the model configuration it reads.
_._answerable  # memsql_assets/lib/conditions.py: a model validator
_._fields_match_type  # memsql_assets/lib/models/registry.py: a model validator
_._consistent  # memsql_assets/lib/models/registry.py: a model validator
model_config  # every BaseModel's configuration (frozen, extra="forbid", attribute docstrings)

# Fields written to files that dbt, the report, the viewer or a person reads (turns.parquet,
# turn_results, summary.json, run_summary.json), never by Python attribute access.
explicit_marker  # memsql_assets/lib/benchmark/extended/build.py: extended turns' column
paraphrase_sql  # memsql_assets/lib/benchmark/generate.py: turns' column
requires_prior_context  # memsql_assets/lib/benchmark/generate.py: turns' column
guess_values  # memsql_assets/lib/benchmark/generate.py: turns' column
ex_by_tier  # memsql_assets/lib/harness/summary.py: summary.json, dbt's stg_partition_summaries
gt_errors  # memsql_assets/lib/harness/summary.py: summary.json, agg_condition_summary
model_errors  # memsql_assets/lib/harness/summary.py: summary.json
model_fingerprint  # memsql_assets/lib/harness/summary.py: summary.json
damaged_records  # memsql_assets/lib/harness/summary.py: summary.json
memory_implementation  # memsql_assets/lib/harness/summary.py: summary.json
memory_store_entries  # memsql_assets/lib/harness/summary.py: summary.json, agg_memory_cost
memory_store_bytes  # memsql_assets/lib/harness/summary.py: summary.json, agg_memory_cost
model_error_type  # memsql_assets/lib/harness/turn_result.py: turn_results' column
resolved_keys  # memsql_assets/lib/harness/turn_result.py: turn_results' column
missing_keys  # memsql_assets/lib/harness/turn_result.py: turn_results' column
retrieval_ms  # memsql_assets/lib/harness/turn_result.py: turn_results' column
explore_share  # memsql_assets/lib/harness/turn_result.py: turn_results' column
execute_share  # memsql_assets/lib/harness/turn_result.py: turn_results' column
validate_share  # memsql_assets/lib/harness/turn_result.py: turn_results' column
composite_uses  # memsql_assets/lib/harness/turn_result.py: turn_results' column
trajectory_tables_used  # memsql_assets/lib/harness/turn_result.py: turn_results' column
agent_trace  # memsql_assets/lib/harness/turn_result.py: turn_results' column (the viewer's trace)
schema_version  # memsql_assets/lib/harness/turn_result.py: turn_results' column
sessions_by_source_tier  # memsql_assets/orchestration/run_summary.py: run_summary.json
turns_by_source_tier  # memsql_assets/orchestration/run_summary.py: run_summary.json
beyond_five_turns  # memsql_assets/orchestration/run_summary.py: run_summary.json
sessions_by_source  # memsql_assets/orchestration/run_summary.py: run_summary.json
turns_by_tag  # memsql_assets/orchestration/run_summary.py: run_summary.json
main_job_why  # memsql_assets/orchestration/run_summary.py: `memsql run --json`, Dagster's cause per asset
# memsql_assets/lib/report/marts.py: `load` fills Marts by mart name, one field per benchmark split.
extended_ex_by_turn_depth
extended_ex_by_source
extended_contamination

# Memory implementations loaded by their "module:Class" path (lib/memory/plugins.py BUILTIN_MEMORIES,
# conditions.yaml's `import:`).
Stateless  # memsql_assets/lib/memory/builtin.py
Episodic  # memsql_assets/lib/memory/builtin.py
Trajectory  # memsql_assets/lib/memory/builtin.py
PeekKeys  # tests/integration/plugins/peeking_memory.py: a test condition's memory
RaiseOnTurns  # tests/integration/plugins/raising_memory.py: a test condition's memory

# Called by name: the GX check's frame (defs/benchmark/checks.py getattr), the agent's tools (by the
# tool name the model calls, DbTools.call).
extended_turns_frame  # memsql_assets/lib/quality/frames.py
_.list_tables  # memsql_assets/lib/trajectories/tools.py
_.get_ddl  # memsql_assets/lib/trajectories/tools.py
_.sample_rows  # memsql_assets/lib/trajectories/tools.py
_.distinct_values  # memsql_assets/lib/trajectories/tools.py
_.column_stats  # memsql_assets/lib/trajectories/tools.py
_.find_join_path  # memsql_assets/lib/trajectories/tools.py
_.execute_sql  # memsql_assets/lib/trajectories/tools.py
_.validate_result  # memsql_assets/lib/trajectories/tools.py

# Third-party protocols that call or read these.
Plugin  # memsql_assets/lib/evaluation/duckdb_plugin.py: dbt-duckdb loads the module's Plugin
_.configure_connection  # memsql_assets/lib/evaluation/duckdb_plugin.py: dbt-duckdb's plugin hook
_.device  # memsql_assets/lib/memory/embeddings.py: ChromaDB's embedding-function config
_.normalize_embeddings  # memsql_assets/lib/memory/embeddings.py: ChromaDB's embedding-function config
_.build_from_config  # memsql_assets/lib/memory/embeddings.py: ChromaDB rebuilds the function from config
memory_action  # memsql_assets/lib/memory/mem0_memory.py: mem0's embedder signature
_.suppress_debug_info  # memsql_assets/lib/models/gateway.py: read by litellm
_.progress_bars  # memsql_assets/lib/quality/gx_suites.py: read by Great Expectations
no_results  # memsql_assets/lib/viewer/app.py: FastAPI exception handler
turn_list  # memsql_assets/lib/viewer/app.py: FastAPI route
_.autocommit  # tests/scale_out/deployment.py: read by psycopg

# http.server and html.parser call these; socketserver reads the class attributes.
_.do_GET
_.do_POST
_.log_message
_.close_connection
daemon_threads
request_queue_size
protocol_version
_.handle_starttag
_.handle_endtag
_.handle_data

# pytest: hooks, module marks and autouse fixtures it applies by itself.
pytest_collection_modifyitems  # tests/conftest.py
shared_embeddings  # tests/conftest.py: autouse
_no_configured_services  # tests/hardening/conftest.py, tests/memory/conftest.py: autouse
pytestmark  # the module-level marks of test files
