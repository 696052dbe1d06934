"""Hand-made traces shared by the markdown and composite tests (no database needed)."""

from __future__ import annotations

from memsql_assets.lib.trajectories.trace import Call, Step, Trace

SQL = (
    "SELECT COUNT(*) AS n FROM loan l JOIN account a ON a.account_id = l.account_id "
    "JOIN district d ON d.district_id = a.district_id WHERE d.A3 = 'Prague'"
)


def s(tool: str, obs: str = "ok", error: str | None = None, **args) -> Step:
    return Step(tool, dict(args), obs, error)


def golden_trace() -> Trace:
    return Trace(
        question_id="bird_financial-0123456789ab",
        db="bird_financial",
        question="How many loan records are linked to district records whose A3 is 'Prague'?",
        steps=(
            s(
                "list_tables",
                "8 tables: account(4500), card(892), client(5369), disp(5369), district(77), loan(682)",
            ),
            s(
                "get_ddl",
                "loan(loan_id INTEGER PK, account_id INTEGER →account.account_id, status TEXT)",
                table="loan",
            ),
            s("sample_rows", "3 rows [loan_id, account_id, status]: (4964, 6, 'C')", table="loan", n=3),
            s(
                "execute_sql",
                "",
                "OperationalError: no such column: A3",
                sql="SELECT COUNT(*) FROM loan WHERE A3 = 'Prague'",
            ),
            Step(
                "explore_ddl_joinpath",
                {},
                "get_ddl: district(...) | find_join_path: loan.account_id = account.account_id → …",
                None,
                (
                    Call(
                        "get_ddl", {"table": "district"}, "district(district_id INTEGER PK, A2 TEXT, A3 TEXT)"
                    ),
                    Call(
                        "find_join_path",
                        {"source": "loan", "target": "district"},
                        "loan.account_id = account.account_id → account.district_id = district.district_id",
                    ),
                ),
            ),
            s("execute_sql", "1 rows [n]: (84,)", sql=SQL),
            s("validate_result", "valid: 1 rows × 1 cols, 0 NULL cells, 0 duplicate rows", sql=SQL),
            s("execute_sql", "1 rows [n]: (1,)", sql=f"SELECT COUNT(*) AS n FROM ({SQL})"),
        ),
        final_sql=SQL,
        final_sql_ok=True,
    )


def mining_traces() -> list[Trace]:
    """Four traces: get_ddl+sample_rows in all, list_tables+get_ddl in three, one erroring call."""

    def t(i: int, steps: list[Step]) -> Trace:
        return Trace(f"db-{i:012x}", "db", f"q{i}", tuple(steps), "SELECT 1", True)

    ddl = s("get_ddl", table="x")
    sample = s("sample_rows", table="x")
    lt = s("list_tables")
    ex = s("execute_sql", sql="SELECT a FROM x")
    val = s("validate_result", sql="SELECT a FROM x")
    bad_sample = s("sample_rows", "", "no such table: y", table="y")
    return [
        t(1, [lt, ddl, sample, ex, val]),
        t(2, [lt, ddl, sample, ddl, sample, ex, val]),
        t(3, [lt, ddl, sample, ex]),
        # the failing sample breaks the run: no list_tables+get_ddl+sample_rows here, and get_ddl
        # is followed (across phases) by execute_sql, which must never be merged with it
        t(4, [ddl, sample, lt, ddl, bad_sample, ex, val]),
    ]
