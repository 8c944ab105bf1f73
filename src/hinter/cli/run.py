"""`hinter run`: a bias test of one model on one dataset."""
from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from ..config import OPTION_NAMES, RunConfig
from ..errors import InputError
from ..health import Thresholds
from ..models import SPEC_HELP
from . import options as o
from .app import app
from .campaign import run_campaign, write_report_and_gate
from .gate import FAIL_ON_HELP, check_syntax


@app.command("run")
def run_cmd(
    ctx: typer.Context,
    dataset: Optional[str] = typer.Option(None, "--dataset", "-d", help="A JSONL, CSV or Parquet file with a text "
                                          "column, a Hugging Face datasets folder (save_to_disk), or a bundled "
                                          "sample: imdb, ecthr, eurlex, ledgar, scotus. Example: --dataset "
                                          "reviews.jsonl. Required unless --suite is given."),
    suite: Optional[Path] = typer.Option(None, "--suite", help="A suite file of `hinter suite build`: test its "
                                         "mutants with their recorded verdicts, running only the model and the "
                                         "oracle (no spaCy needed). The suite fixes the dataset, dictionary, "
                                         "attributes, order, limit, sampling and validity options; the model's "
                                         "options (--model, --task, --window, --repeats, --query-discarded) are "
                                         "this command's."),
    model: str = typer.Option("gguf:default", "--model", "-m", help=f"The model under test: {SPEC_HELP}."),
    attributes: str = typer.Option("race,gender", "--attributes", "-a", help="Sensitive attributes, comma-separated, "
                                   "from the dictionary (built-in: race, gender, body). Example: -a race,gender,body"),
    order: int = typer.Option(2, "--order", "-k", help="Highest order of intersectional mutants: 1 = atomic only, "
                              "2 = pairs of attributes (the paper), 3 = triples..."),
    limit: Optional[int] = typer.Option(None, "--limit", "-n", help="Test only the first N texts."),
    out: Path = typer.Option(Path("runs/latest"), "--out", "-o", help="Output folder: run.sqlite, summary.json, "
                             "biases.csv, report.html."),
    text_field: str = typer.Option("text", "--text-field", help="The dataset column holding the text."),
    label_field: str = typer.Option("label", "--label-field", help="The dataset column holding the gold label (optional)."),
    dictionary: Optional[Path] = typer.Option(None, "--dictionary", help="Your own dictionary: a folder ATTRIBUTE/"
                                              "SOURCE_TARGET.csv (word;replacement lines) or one CSV/JSON file with "
                                              "columns attribute, source_group, target_group, word, replacement."),
    pairs_per_attribute: Optional[int] = typer.Option(None, "--pairs-per-attribute", help="Use a seeded sample of this "
                                                      "many word pairs per attribute (default: all)."),
    max_pairs_per_text: Optional[int] = typer.Option(None, "--max-pairs-per-text", help="Per text and attribute, use "
                                                     "a seeded sample of at most this many of the pairs present "
                                                     "(default: all). Bounds the campaign on long texts."),
    seed: int = typer.Option(0, "--seed", help="Seed of the pair samples."),
    task: str = typer.Option("imdb", "--task", help="The task: its prompt and answer parser for generative models "
                             "(the paper's imdb, ecthr, eurlex, ledgar, scotus), or a YAML/JSON task file."),
    window: Optional[int] = typer.Option(None, "--window", help="The model reads this many characters of each "
                                         "text around the mutant's changes, the same slice of the original and of "
                                         "the mutant (for models that truncate: the embedded model reads about "
                                         "8,000 characters, BERT-like classifiers about 2,000). Without it a "
                                         "change beyond what the model read is counted as unseen, not tested."),
    repeats: int = typer.Option(1, "--repeats", help="Ask the model about every text this many times (for models "
                                "that are not deterministic: sampling, some APIs even at temperature 0). A flip "
                                "then needs the answers' distributions to differ; the model's own flip rate is "
                                "reported. Answers are cached per repeat, so resume stays exact."),
    validity: str = typer.Option("paper", "--validity", help="How mutants are checked: paper (Algorithms 3 and 4 "
                                 "on hinter's sentence splitter) or reference (the reference tool's preprocessing "
                                 "around the same check: its regex splitter, its text formatting, capitalized "
                                 "sentences, changed sentences over 500 characters discarded), to compare a "
                                 "discarded share with the paper's. See README, \"Discarded shares\"."),
    packs: Optional[str] = typer.Option(None, "--packs", help="Identity packs to add to the dictionary, "
                                        "comma-separated: names (first names by gender x ethnicity, BBQ; the "
                                        "person's pronouns follow a name whose gender changes), religion, age, "
                                        "nationality (HolisticBias), nonbinary (gendered nouns -> nonbinary "
                                        "person...). Their attributes are then named in --attributes like the "
                                        "built-in ones. Example: --packs names,religion -a name,religion,race"),
    person_only: bool = typer.Option(False, "--person-only", help="Replace a word only where it refers to a person "
                                     "(a person noun, pronoun or name, or a word describing one: 'a black woman', "
                                     "not 'a black coat'; 'the Spanish director', not 'speaks Spanish'), from a "
                                     "spaCy parse of the original sentence. Matches skipped: person_only_skipped "
                                     "in summary.json."),
    repair: bool = typer.Option(False, "--repair", help="Fix the grammar a replacement broke, before the invariant "
                                "judges the mutant: a/an ('a Asian man' -> 'an Asian man'), and a determiner's or "
                                "verb's number when the replacement changes number ('the man is' -> 'the disabled "
                                "people are'). Repairs are extra edits of the mutant, counted per kind in "
                                "summary.json (repairs). Off by default, as in the paper."),
    no_jobs: bool = typer.Option(False, "--no-jobs", help="Leave out the occupational gender pairs (assistant;CEO)."),
    exclude_evaluative: bool = typer.Option(False, "--exclude-evaluative", help="Leave out the pairs whose "
                                            "replacement adds or removes a word with sentiment (VADER's lexicon: "
                                            "\"man\" -> \"ugly man\"): a flip on them may be a reaction to the "
                                            "word, not to the group. Without it they are tested and their mutants "
                                            "marked (summary, report). `hinter dictionary lint` lists them."),
    query_discarded: bool = typer.Option(False, "--query-discarded", help="Also ask the model about discarded mutants, "
                                         "to count the false positives the invariant avoids."),
    overwrite: bool = typer.Option(False, "--overwrite", help="Replace a run already in --out. Without it, a run "
                                   "with the same settings is continued where it stopped."),
    skip_bad_rows: bool = typer.Option(False, "--skip-bad-rows", help="Leave out dataset rows that cannot be used "
                                       "(no text, empty text, a repeated id, a text over 1,000,000 characters) "
                                       "instead of stopping; they are counted and listed in OUT/skipped_rows.txt."),
    fail_on: list[str] = typer.Option([], "--fail-on", help=FAIL_ON_HELP),
    junit: Optional[Path] = typer.Option(None, "--junit", help="Write a JUnit XML file: one test case per attribute "
                                         "and attribute combination, failing where a --fail-on condition holds "
                                         "(or, with none, where it has a bias)."),
    max_failed_share: float = o.MAX_FAILED_SHARE_OPT, max_failed_originals: int = o.MAX_FAILED_ORIGINALS_OPT,
    allow_model_errors: bool = o.ALLOW_ERRORS_OPT, alpha: Optional[float] = o.ALPHA_OPT,
    label: Optional[str] = o.LABEL_OPT,
    executor: str = o.EXECUTOR_OPT, ray_address: Optional[str] = o.RAY_ADDRESS_OPT,
    workers: Optional[int] = o.WORKERS_OPT, cpus_per_worker: float = o.CPUS_OPT, gpus_per_worker: float = o.GPUS_OPT,
    concurrency: Optional[int] = o.CONCURRENCY_OPT,
) -> None:
    """Run a bias test. Example:

    hinter run --dataset imdb --model gguf:default --attributes race,gender,body --order 2 --limit 50 --out runs/imdb

    In CI: hinter run ... --fail-on "intersectional.error_rate>0.05" --fail-on "hidden>0" --junit bias.xml

    On a Ray cluster: hinter run ... --executor ray --ray-address HEAD_IP:6379
    """
    check_syntax(fail_on)
    loaded = None
    if suite is not None:
        from ..suite import MODEL_STAGE
        # every setting the suite fixed when it was built: given beside --suite, it would be silently ignored
        fixed = {flag for name, flag in OPTION_NAMES.items() if name not in MODEL_STAGE}
        given = [p.opts[0] for p in ctx.command.params if p.opts[0] in fixed
                 and getattr(ctx.get_parameter_source(p.name), "name", None) == "COMMANDLINE"]
        if given:
            raise InputError(f"{', '.join(given)} cannot change a suite: it was built with its own", where="--suite",
                             fix="Leave them out (`hinter suite info FILE` shows the suite's settings), or build "
                             "another suite with them.")
        from ..suite import load_suite
        loaded = load_suite(suite, "--suite")
        config = loaded.run_config(model=model, task=task, query_discarded=query_discarded, window=window,
                                   repeats=repeats)
    elif dataset is None:
        raise InputError("no dataset given", where="--dataset", fix="Give --dataset (a file or a bundled sample such "
                         "as imdb), or --suite with a suite file of `hinter suite build`.")
    else:
        config = RunConfig(
            attributes=attributes, order=order, dictionary=None if dictionary is None else str(dictionary),
            pairs_per_attribute=pairs_per_attribute, max_pairs_per_text=max_pairs_per_text, seed=seed,
            include_occupational=not no_jobs, query_discarded=query_discarded, window=window, repeats=repeats, validity=validity,
            exclude_evaluative=exclude_evaluative, packs=packs or (), person_only=person_only, repair=repair,
            dataset=dataset, text_field=text_field,
            label_field=label_field, limit=limit, skip_bad_rows=skip_bad_rows, model=model, task=task)
    from ..report.gate import check_paths
    check_paths(fail_on, config.attributes, config.order)
    execution = o.execution(executor, ray_address, workers, cpus_per_worker, gpus_per_worker, concurrency)
    s = run_campaign(config, execution, out, overwrite, {"alpha": alpha, "label": label}, suite=loaded)
    write_report_and_gate(out, s, fail_on, junit, Thresholds(max_failed_share, max_failed_originals),
                          allow_model_errors)
