"""Stage 7: what a run gives people and tools.

`outputs`: summary.json, biases.csv, instances.csv/.parquet; `instances`: each bias with its original,
components and attribution; `html`: the self-contained report.html; `gate`: --fail-on conditions and JUnit;
`diff`: biases new, fixed and kept between two runs; `compare`: several runs of the same mutants side by side.
"""
from hinter.report.outputs import write_exports, write_outputs, write_report

__all__ = ["write_exports", "write_outputs", "write_report"]
