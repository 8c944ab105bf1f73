"""Judging and analysis: the metamorphic oracle, the statistics, the findings that hold up, the paper's measures, adaptive testing, the run's health, triage, and summary.json's declaration."""
