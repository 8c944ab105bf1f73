"""A run folder's recorded settings, read one way: the config a run was made with, and the settings as they are
compared on reopening (resume, `hinter compare`). Runs recorded before RunConfig kept their CLI options under
"cli"; runs made from Python without a dataset spec recorded only the flat settings: both are read here, once."""
from __future__ import annotations

from hinter.config import RunConfig

# The flat settings a run records beside its config (engine.run_settings), by the config field they repeat.
FLAT = ("attributes", "order", "pairs_per_attribute", "max_pairs_per_text", "seed", "include_occupational",
        "query_discarded", "window", "repeats", "person_only", "repair", "validity", "exclude_evaluative", "packs")


def config_of(settings: dict) -> RunConfig | None:
    """The config recorded with the run (None: a folder with no run)."""
    if not settings:
        return None
    if settings.get("config") is not None:  # options added since the run was recorded take their defaults
        return RunConfig.from_recorded(settings["config"])
    if settings.get("cli") is not None:
        return RunConfig.from_legacy_cli(settings["cli"])
    flat = {k: settings[k] for k in FLAT if k in settings}
    dictionary = settings.get("dictionary")
    return RunConfig.from_recorded({**flat, "dictionary": None if dictionary in (None, "built-in") else dictionary})


def comparable(settings: dict) -> dict:
    """Recorded settings as they are compared on reopening: the config's entries flattened beside the derived
    ones (a run recorded before RunConfig kept its CLI options under "cli": read as a config)."""
    # analysis options (alpha, the label of interest) change no stored result: never a reason to refuse; an
    # adaptive run's plan is derived from options compared as such (--adaptive, --min-effect), and --batch-texts
    # is checked on its own (engine.adaptive_plan)
    flat = {k: v for k, v in settings.items()
            if k not in ("config", "cli", "adaptive_plan") and not k.startswith(("analysis.", "checks."))}
    has_config = settings.get("config") is not None or settings.get("cli") is not None
    config = config_of(settings).recorded() if has_config else None
    if config is not None and config.get("model"):
        from hinter.models.registry import canonical_spec
        config["model"] = canonical_spec(config["model"])  # gguf:default?threads=2 is gguf:default
    # the derived entries that repeat a config entry under its own name are compared once, as config entries;
    # but "model" is the loaded model's fingerprint, not its spec: a model changed behind the same spec (an hf:
    # folder trained again, an edited python: module) must not have its old answers reused
    return {**{k: v for k, v in flat.items() if config is None or k not in config or k == "model"},
            **{f"config.{k}": v for k, v in (config or {}).items()}}
