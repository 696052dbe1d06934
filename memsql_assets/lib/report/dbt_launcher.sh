#!/bin/sh
# The dbt executable dagster-dbt runs. dagster-dbt asks it `--version` before every command, and dbt
# answers that by requesting pypi.org's latest release: a network call at run time (memsql is offline
# by construction) and a second dbt start-up. The installed version is known: answer with it, and
# hand every other command to dbt. dbt_cli.dbt_env() sets both variables.
if [ "$#" -eq 1 ] && [ "$1" = "--version" ]; then
  printf 'Core:\n  - installed: %s\n' "${MEMSQL_DBT_CORE_VERSION:?dbt_env() sets it}"
  exit 0
fi
exec "${MEMSQL_DBT:?dbt_env() sets it}" "$@"
