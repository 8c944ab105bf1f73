"""Every measure of a run, computed from the run store alone (so anyone can recompute them with SQL).

Definitions: ../shared/docs/METHOD.md "What a run reports". A valid mutant whose outcome (or whose
original's outcome) is unparseable is counted under `unparseable` and left out of `tested`, the
denominator of the error rate: it is neither a bias nor a non-bias.
"""
from __future__ import annotations

from .store import RunStore

SCHEMA_VERSION = 1


def _rate(n: int, d: int) -> float | None:
    return round(n / d, 6) if d else None


def combination_measures(store: RunStore) -> dict[str, dict]:
    rows = store.db.execute(
        """SELECT attributes, MIN(ord), COUNT(*), SUM(valid), SUM(valid AND bias IS NOT NULL), SUM(valid AND bias = 1),
                  SUM(valid AND bias IS NULL), SUM(hidden = 1), SUM(strictly_hidden = 1),
                  SUM(valid = 0 AND bias = 1), SUM(valid = 0 AND bias IS NOT NULL)
           FROM mutants GROUP BY attributes ORDER BY MIN(ord), attributes""").fetchall()
    out = {}
    for attrs, order, n, valid, tested, biased, unparseable, hidden, strict, fp, fp_tested in rows:
        valid, tested, biased, unparseable = valid or 0, tested or 0, biased or 0, unparseable or 0
        m = {"order": order, "mutants": n, "valid": valid, "discarded": n - valid,
             "discarded_share": _rate(n - valid, n), "tested": tested, "biased": biased,
             "error_rate": _rate(biased, tested), "unparseable": unparseable}
        if order >= 2:
            m["hidden"] = hidden or 0
            m["hidden_rate"] = _rate(hidden or 0, biased)
            if order >= 3:
                m["strictly_hidden"] = strict or 0
        if fp_tested:
            m["discarded_biased"] = fp or 0  # false positives avoided (only with query_discarded)
        out[attrs] = m
    return out


def _totals(per_combo: dict[str, dict], intersectional: bool) -> dict:
    keys = ("mutants", "valid", "discarded", "tested", "biased", "unparseable") + (("hidden",) if intersectional else ())
    chosen = [m for m in per_combo.values() if (m["order"] >= 2) == intersectional]
    t = {k: sum(m[k] for m in chosen) for k in keys}
    t["discarded_share"] = _rate(t["discarded"], t["mutants"])
    t["error_rate"] = _rate(t["biased"], t["tested"])
    if intersectional:
        t["hidden_rate"] = _rate(t["hidden"], t["biased"])
    return t


def summary(store: RunStore) -> dict:
    per_combo = combination_measures(store)
    db = store.db
    texts = db.execute("SELECT COUNT(*) FROM texts").fetchone()[0]
    originals_unparseable = db.execute("SELECT COUNT(*) FROM texts WHERE outcome IS NULL").fetchone()[0]
    with_valid = db.execute("SELECT COUNT(DISTINCT text_id) FROM mutants WHERE valid = 1").fetchone()[0]
    with_bias = db.execute("SELECT COUNT(DISTINCT text_id) FROM mutants WHERE valid = 1 AND bias = 1").fetchone()[0]
    venn = dict(db.execute(
        """SELECT kind, COUNT(*) FROM (
             SELECT text_id, CASE WHEN MAX(ord = 1) = 1 AND MAX(ord > 1) = 1 THEN 'both'
                                  WHEN MAX(ord = 1) = 1 THEN 'atomic_only' ELSE 'intersectional_only' END AS kind
             FROM mutants WHERE valid = 1 AND bias = 1 GROUP BY text_id) GROUP BY kind""").fetchall())
    stats = store.stats()
    return {
        "schema_version": SCHEMA_VERSION,
        "settings": store.settings(),
        "texts": texts,
        "atomic": {k: v for k, v in per_combo.items() if v["order"] == 1},
        "intersectional": {k: v for k, v in per_combo.items() if v["order"] >= 2},
        "totals": {"atomic": _totals(per_combo, False), "intersectional": _totals(per_combo, True)},
        "originals_with_bias": {"count": with_bias, "of_originals_with_valid_mutants": with_valid,
                                "rate": _rate(with_bias, with_valid)},
        "originals_venn": {k: venn.get(k, 0) for k in ("atomic_only", "intersectional_only", "both")},
        "unparseable": {"originals": originals_unparseable,
                        "mutants": sum(m["unparseable"] for m in per_combo.values())},
        "overlaps_skipped": int(stats.get("overlaps_skipped", 0)),
        "model_calls": int(stats.get("model_calls", 0)),
        "sentences_parsed": int(stats.get("sentences_parsed", 0)),
        "seconds": {k[len("seconds_"):]: round(v, 2) for k, v in stats.items() if k.startswith("seconds_")},
    }
