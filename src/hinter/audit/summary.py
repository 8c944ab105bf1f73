"""What a published bias-audit summary carries that only the user can say (NYC Local Law 144; DCWP's rules, 6 RCNY
5-300 to 5-304): who audited, when the tool was first used, whose tool and which version, for which jobs, what the
data are and cover, and, for test data, why the tool's own historical data were not used. Each is an option
declared like a run's (`config.option`: flag, help, stage), so the command line and the docs derive from it."""
from __future__ import annotations

import dataclasses
import datetime
from dataclasses import dataclass

from hinter.config import option
from hinter.errors import InputError

AUDIT_SUMMARY = "audit summary"  # the options' stage: the docs' option reference lists them in their own section

TEST_DATA = "test data"  # counterfactual renderings of texts: DCWP's "test data"
HISTORICAL = "historical"  # recorded decisions of the tool (hinter audit --decisions)


@dataclass(frozen=True)
class AuditSummary:
    """The published summary's fields the user supplies; None where not given (the page then says it is missing)."""

    auditor: str | None = option(
        None, "--auditor", "The independent auditor who conducted the audit (a person or an organisation), as the "
        "published summary names them (6 RCNY 5-300: an independent auditor).", AUDIT_SUMMARY)
    distribution_date: str | None = option(
        None, "--distribution-date", "The date the tool was, or will be, first used (its distribution date, which "
        "LL144's published summary gives beside the audit's date), as YYYY-MM-DD.", AUDIT_SUMMARY)
    data_description: str | None = option(
        None, "--data-description", "The source and explanation of the data (6 RCNY 5-303(a)): who wrote the texts, "
        "for which openings, how they were chosen. The page shows it beside the file's name and hash.", AUDIT_SUMMARY)
    employer: str | None = option(
        None, "--employer", "The employer or employment agency that uses the tool.", AUDIT_SUMMARY)
    tool_name: str | None = option(
        None, "--tool-name", "The tool's name as the employer publishes it (default: the --model spec).",
        AUDIT_SUMMARY)
    tool_version: str | None = option(
        None, "--tool-version", "The tool's version audited (the model's fingerprint is recorded in any case).",
        AUDIT_SUMMARY)
    job_category: str | None = option(
        None, "--job-category", "The job, or category of roles, the tool assesses candidates for.", AUDIT_SUMMARY)
    data_period: str | None = option(
        None, "--data-period", "The period the data cover (e.g. 2025-01-01 to 2025-12-31).", AUDIT_SUMMARY)
    test_data_reason: str | None = option(
        None, "--test-data-reason", "Why test data were used rather than the tool's historical data (6 RCNY 5-301: "
        "test data only where historical data are insufficient, with the explanation). Counterfactual renderings "
        "are test data.", AUDIT_SUMMARY)

    def __post_init__(self):
        for f in dataclasses.fields(self):
            value = getattr(self, f.name)
            if value is not None and not isinstance(value, str):
                raise InputError(f"{f.metadata['flag']} must be text, not {type(value).__name__}",
                                 where=f.metadata["flag"], fix="Give it as a string.")
            if isinstance(value, str):
                object.__setattr__(self, f.name, value.strip() or None)
        if self.distribution_date is not None:
            try:
                datetime.date.fromisoformat(self.distribution_date)
            except ValueError:
                raise InputError(f"the distribution date {self.distribution_date!r} is not a date YYYY-MM-DD",
                                 where="--distribution-date", fix="Give the date the tool was first used as "
                                 "YYYY-MM-DD, e.g. --distribution-date 2026-01-15.") from None


# The fields a published summary must carry (6 RCNY 5-303), by their flag; for test data, the reason too.
REQUIRED = ("auditor", "distribution_date", "data_description")

LABELS = {"data_type": "Type of data", "test_data_reason": "Why test data", "auditor": "Independent auditor",
          "distribution_date": "Distribution date of the tool", "employer": "Employer or employment agency",
          "tool_name": "Tool", "tool_version": "Tool version", "job_category": "Job or category of role",
          "data_period": "Period of the data", "data_description": "Source and explanation of the data"}


def flag_of(name: str) -> str:
    return next(f.metadata["flag"] for f in dataclasses.fields(AuditSummary) if f.name == name)


def summary_section(given: AuditSummary | dict | None, data_type: str) -> dict:
    """audit.json's `summary`: the data's type, every field of `given` (None where not given), and `missing`, the
    flags of the fields a published summary must carry that were not given (for test data: the reason too)."""
    if given is None:
        given = AuditSummary()
    elif isinstance(given, dict):
        given = AuditSummary(**given)
    out = {"data_type": data_type, **dataclasses.asdict(given)}
    needed = REQUIRED + (("test_data_reason",) if data_type == TEST_DATA else ())
    out["missing"] = [flag_of(k) for k in needed if out.get(k) is None]
    return out
