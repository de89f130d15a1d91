"""Seeing what happened: live progress, the HTML report and chart, the graph diagram."""
