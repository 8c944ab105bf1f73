"""`hinter dictionary ...`: commands about word-pair dictionaries (a Typer sub-app; each subcommand registers on
`dictionary_app`)."""
from __future__ import annotations

import json as _json
from pathlib import Path
from typing import Optional

import typer
from rich.table import Table

from hinter.mutation import extract
from hinter.mutation import lint
from hinter.config import parse_attributes
from hinter.datasets import read_dataset
from hinter.mutation.dictionary import load_dictionary, with_packs
from hinter.errors import InputError
from hinter.files import write_atomic
from hinter.cli.app import app, out_console

dictionary_app = typer.Typer(no_args_is_help=True, rich_markup_mode=None,
                             help="Check, build and inspect word-pair dictionaries.")
app.add_typer(dictionary_app, name="dictionary")


@dictionary_app.command("lint")
def lint_cmd(
    dictionary: Optional[Path] = typer.Argument(None, help="A dictionary folder or CSV/JSON file (default: the "
                                                "built-in one)."),
    dataset: Optional[str] = typer.Option(None, "--dataset", "-d", help="Texts to check the words on (a file or a "
                                          "bundled sample such as imdb): adds inside-word, never-matches and "
                                          "not-a-person (a spaCy parse of the sentences holding a word)."),
    text_field: str = typer.Option("text", "--text-field", help="The dataset column holding the text."),
    limit: Optional[int] = typer.Option(None, "--limit", "-n", help="Read only the first N texts."),
    attributes: Optional[str] = typer.Option(None, "--attributes", "-a", help="Check only these attributes "
                                             "(comma-separated; default: all)."),
    packs: Optional[str] = typer.Option(None, "--packs", help="Identity packs to add, as `hinter run --packs` "
                                        "does (comma-separated, e.g. names,religion): their pairs are checked "
                                        "with the dictionary's."),
    fmt: str = typer.Option("text", "--format", help="text (a table) or json (a list of objects with kind, "
                            "attribute, file, line, word, replacement, detail)."),
    show: int = typer.Option(20, "--show", help="Text format: how many findings of each kind to list (0: all)."),
) -> None:
    """Find pairs a bias test cannot trust: bad-line (every line `hinter run` cannot read), self-pair, duplicate,
    capitalised (a replacement writing a common word with a capital: "Husband;Wife" gives "her Wife"),
    asymmetric (X -> Y without Y -> X although the reverse file exists), evaluative (the replacement adds or
    removes a word with sentiment in VADER's lexicon: "man" -> "ugly man"); with --dataset also inside-word
    (matches inside hyphenated words: "Co-writer"), never-matches, and not-a-person (most occurrences neither are
    a person noun nor modify one: "black coat"). Exits 1 when `hinter run` would refuse the dictionary (a bad
    line, a self-pair). Example:

    hinter dictionary lint --dataset imdb --format json > lint.json
    """


    if fmt not in ("text", "json"):
        raise InputError(f"unknown format {fmt!r}", where="--format", fix="Use --format text or --format json.")
    problems: list = []
    d = load_dictionary(dictionary, strict=False, problems=problems)
    if packs:
        d = with_packs(d, [p.strip() for p in packs.split(",") if p.strip()])
    if attributes is not None:
        d = d.restrict(parse_attributes(attributes))
    texts = parse = None
    if dataset is not None:
        texts = [r.text for r in read_dataset(dataset, text_field=text_field, limit=limit).records]
        parse = lint.spacy_parse()
    findings = lint.lint(d.pairs, texts, parse, problems=problems)
    refused = [f for f in findings if f.kind in lint.REFUSED_KINDS]
    if fmt == "json":
        typer.echo(_json.dumps([f.to_json() for f in findings], indent=1, ensure_ascii=False))
        raise typer.Exit(1 if refused else 0)
    checked = "static kinds" + (f", and {len(texts)} texts of {dataset}" if texts is not None else
                                " (add --dataset for inside-word, never-matches, not-a-person)")
    out_console.print(f"{d.source} dictionary: {len(d.pairs)} pairs; checked: {checked}.", highlight=False,
                      soft_wrap=True)
    if not findings:
        out_console.print("No findings.")
        return
    by_kind: dict[str, list] = {}
    for f in findings:
        by_kind.setdefault(f.kind, []).append(f)
    for kind, fs in by_kind.items():
        out_console.print(f"\n[bold]{kind}[/]: {len(fs)}", highlight=False)
        for f in fs[:show or None]:
            pair = f"{f.attribute}: {f.word} -> {f.replacement}  " if f.kind != "bad-line" else ""
            out_console.print(f"  {_where(f.file)}:{f.line}  {pair}{f.detail}", highlight=False, markup=False,
                              soft_wrap=True)
        if show and len(fs) > show:
            out_console.print(f"  ... and {len(fs) - show} more (--show 0 lists all, --format json gives all)",
                              highlight=False)
    out_console.print("\nIn all: " + lint.summary_line(findings) + ".", highlight=False, soft_wrap=True)
    if refused:
        out_console.print(f"`hinter run` refuses this dictionary: {lint.summary_line(refused)}; fix them first.",
                          highlight=False, soft_wrap=True)
        raise typer.Exit(1)


def _where(file: str) -> str:
    """A built-in dictionary file as data/dictionary/..., others as given."""
    marker = "/hinter/data/"
    return "hinter/data/" + file.split(marker, 1)[1] if marker in file else file


@dictionary_app.command("extract")
def extract_cmd(
    sbic: list[Path] = typer.Option(..., "--sbic", help="An SBIC-style annotation CSV (repeat for several): a "
                                    "column targetMinority (or sanitized_target / target) naming the targeted "
                                    "groups, and optionally targetCategory."),
    out: Path = typer.Option(..., "--out", "-o", help="The dictionary folder to write (ATTRIBUTE/SOURCE_TARGET.csv; "
                             "use it with hinter run --dictionary OUT)."),
    min_count: int = typer.Option(3, "--min-count", help="Keep groups named by at least this many annotations."),
    json_out: Optional[Path] = typer.Option(None, "--json", help="Also write the overlap with the built-in "
                                            "dictionary as JSON to this file."),
) -> None:
    """Build a dictionary from annotations the way HInter built its own from SBIC: the groups each post targets,
    per category -> a word list per group -> pairs between the groups of a category; then report its overlap with
    the built-in dictionary per attribute. Example:

    hinter dictionary extract --sbic SBIC.v2.agg.trn.csv --out my-dictionary
    """



    if min_count < 1:
        raise InputError(f"--min-count must be at least 1, got {min_count}", where="--min-count")
    annotations = [a for path in sbic for a in extract.read_annotations(path)]
    groups = extract.build_groups(annotations, min_count)
    pairs = extract.pairs_between(groups)
    if not pairs:
        raise InputError("no two groups of one category: no pair to write", where=", ".join(map(str, sbic)),
                         fix="Give more annotations, or lower --min-count.")
    extract.write_dictionary(groups, pairs, out, ", ".join(map(str, sbic)))
    load_dictionary(out)  # what was written loads as a dictionary
    o = extract.overlap(pairs, load_dictionary().pairs)
    out_console.print(f"{len(annotations)} annotations -> {sum(map(len, groups.values()))} groups, {len(pairs)} "
                      f"pairs, written to {out}.", highlight=False)
    table = Table(title="Overlap with the built-in dictionary", title_justify="left")
    for col in ("attribute", "groups", "pairs both", "only extracted", "only built-in", "words both",
                "only extracted", "only built-in"):
        table.add_column(col, justify="left" if col == "attribute" else "right")
    for a, m in o.items():
        table.add_row(a, str(len(groups.get(a, []))), *(str(m[k][x]) for k in ("pairs", "words")
                                                         for x in ("both", "only_extracted", "only_builtin")))
    out_console.print(table)
    if json_out is not None:
        write_atomic(json_out, _json.dumps({"groups": {a: [{"name": g.name, "descriptor": g.descriptor,
                                                          "words": g.words(), "annotations": g.count} for g in gs]
                                                     for a, gs in groups.items()},
                                          "pairs": len(pairs), "overlap": o}, indent=1))
