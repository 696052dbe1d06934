"""The paper's per-source guidance, verbatim (Appendix A.2-A.4): what every prompt says about a source's
schema. The prompts (lib/agent/prompts.py) print it; the synthetic-question grammar
(lib/trajectories/guidance.py) reads its facts.

The extracted paper text lost the spaces around code-formatted words ("inCustomers.CompanyName");
they are restored here and nothing else is changed.

Each source's last line speaks of the annotated Resolved block ("If resolved context contains …"). In
observed context mode no such block appears and the line would be the only place an annotation key
name reaches the prompt, so observed prompts leave it out (`guidance_lines`); annotated ones keep it
verbatim.
"""

from __future__ import annotations

SOURCE_GUIDANCE: dict[str, tuple[str, ...]] = {
    "NW": (
        "Customer names are stored in Customers.CompanyName.",
        "Orders.CustomerID joins to Customers.CustomerID.",
        "Sales totals come from [Order Details] using UnitPrice * Quantity * (1 - Discount).",
        "For yearly sales questions, use Orders.OrderDate, not Orders.ShippedDate.",
        "If the question asks for total sales for one customer and one year, return one row with one numeric "
        "aggregate column only.",
        "For those total-sales questions, do not return CompanyName, OrderID, or per-order subtotals.",
        "Do not GROUP BY unless the user explicitly asks for a breakdown.",
        "Do not confuse customer company names with product names or category names.",
        "If resolved context contains customer_id, use that exact CustomerID.",
    ),
    "SEC": (
        "annual_financials joins to companies by ticker.",
        "Company names live in companies.company_name.",
        "value_billions is the normalized metric used in benchmark queries.",
        "Metric values must use exact lowercase stored values: revenue, net_income, cash, total_assets, "
        "total_liabilities.",
        "If resolved context contains ticker, metric, or years, use them exactly.",
    ),
    "BIRD": (
        "Region names are in district.A3.",
        "loan joins to account, then disp where type=’OWNER’, then client, then district.",
        "Loan status values are raw codes A, B, C, D.",
        "If resolved context contains region or loan_status, use them exactly.",
    ),
}

RESOLVED_CONTEXT_LINE = "If resolved context contains"  # the start of each source's line about the Resolved block


def guidance_lines(source: str, observed: bool) -> tuple[str, ...]:
    """The source's guidance for a prompt: verbatim, less the Resolved-block line when `observed`."""
    lines = SOURCE_GUIDANCE[source]
    return tuple(line for line in lines if not line.startswith(RESOLVED_CONTEXT_LINE)) if observed else lines
