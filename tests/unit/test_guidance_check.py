"""Output requirements against the source guidance: the Northwind line on one customer's total sales in one year."""

from __future__ import annotations

from memsql_assets.lib.benchmark.guidance_check import guidance_problems
from memsql_assets.lib.sql.execute import QueryResult

SALES = "ROUND(SUM(od.UnitPrice * od.Quantity * (1 - od.Discount)), 2)"
WHERE = "FROM Orders o JOIN [Order Details] od ON od.OrderID = o.OrderID WHERE o.CustomerID = 'ALFKI'"
YEAR = "strftime('%Y', o.OrderDate)"


def _turn(sql: str) -> dict:
    return {"source": "NW", "gt_sql": sql, "output_requirements": "two columns: order_year and total_sales"}


def test_a_two_column_answer_to_one_customers_total_in_one_year_contradicts_the_guidance():
    sql = f"SELECT {YEAR} AS order_year, {SALES} AS total_sales {WHERE} AND {YEAR} = '2017' GROUP BY 1"
    problems = guidance_problems(_turn(sql), QueryResult([("2017", 10.0)], ["order_year", "total_sales"]))
    assert len(problems) == 1 and "one numeric aggregate column only" in problems[0]
    assert "returns 2 columns" in problems[0] and "two columns: order_year" in problems[0]


def test_the_one_column_total_and_an_asked_for_breakdown_agree_with_it():
    total = f"SELECT {SALES} AS total_sales {WHERE} AND {YEAR} = '2017'"
    assert guidance_problems(_turn(total), QueryResult([(10.0,)], ["total_sales"])) == []
    by_category = (
        f"SELECT cat.CategoryName, {SALES} AS total_sales {WHERE} AND {YEAR} = '2017' GROUP BY cat.CategoryName"
    )
    two = QueryResult([("Beverages", 1.0), ("Seafood", 2.0)], ["CategoryName", "total_sales"])
    assert guidance_problems(_turn(by_category), two) == []
    assert guidance_problems({**_turn(total), "source": "SEC"}, two) == []  # a Northwind line
