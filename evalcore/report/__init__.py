"""Reports built from stored runs: files to download (CSV) and, later, frames and figures."""
from evalcore.report.export import ExportInputError, csv_bytes, header, safe_cell, write_stability_csv

__all__ = ["ExportInputError", "csv_bytes", "header", "safe_cell", "write_stability_csv"]
