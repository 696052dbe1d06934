"""The results report: figures and tables drawn from the dbt marts, as static HTML and Dagster metadata."""

from memsql_assets.lib.report.build import ReportPaths, build_report
from memsql_assets.lib.report.marts import MARTS, Marts, ReportError, load_marts

__all__ = ["MARTS", "Marts", "ReportError", "ReportPaths", "build_report", "load_marts"]
