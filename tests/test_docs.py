"""The documentation site builds with `mkdocs build --strict` (a broken link, a page left out of the nav or a
failing hook fails it), and its generated option reference lists every option that RunConfig declares."""
import html
import subprocess
import sys
from pathlib import Path

import pytest

from hinter.config import option_fields

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("site")
    done = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-d", str(out)], cwd=ROOT,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, f"mkdocs build --strict failed:\n{done.stdout}\n{done.stderr}"
    return out


def test_the_site_builds_strictly_with_every_page(site):
    for page in ("index.html", "getting-started/index.html", "options/index.html", "summary-schema/index.html",
                 "gpu/index.html", "findings/index.html", "method/index.html"):
        assert (site / page).is_file(), page
    # the home page is the README, its links into docs/ made relative to the site
    home = (site / "index.html").read_text(encoding="utf-8")
    assert "make demo" in home and "make test" in home
    assert 'href="docs/' not in home


def test_the_option_reference_lists_every_flag_with_its_help(site):
    page = html.unescape((site / "options" / "index.html").read_text(encoding="utf-8"))
    fields = option_fields()
    assert fields
    for f in fields:
        assert f"<code>{f.metadata['flag']}</code>" in page, f.metadata["flag"]
        if f.metadata.get("short"):
            assert f"<code>{f.metadata['short']}</code>" in page, f.metadata["short"]
        assert f"RunConfig field <code>{f.name}</code>" in page, f.name
    # grouped by stage, in the pipeline's order
    stages = [page.index(f">{title}<") for title in ("Dataset", "Mutation", "Validity", "Model")]
    assert stages == sorted(stages)


def test_the_command_reference_lists_every_command_and_its_options(site):
    import typer.main

    from hinter.cli import app, commands  # noqa: F401  (registers the commands)
    page = html.unescape((site / "commands" / "index.html").read_text(encoding="utf-8"))
    root = typer.main.get_command(app)
    for name, command in root.commands.items():
        assert f">hinter {name}<" in page, name
        for p in getattr(command, "params", []):
            for opt in p.opts:
                if opt.startswith("--"):
                    assert f"<code>{opt}</code>" in page, (name, opt)


def test_the_readme_example_pair_is_one_the_built_in_dictionary_makes():
    from hinter.mutation.dictionary import load_dictionary
    from hinter.mutation.mutants import generate

    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    original, mutant = "The black man in the lead is brilliant.", "The white woman in the lead is brilliant."
    assert f'"{original}" gives "{mutant}"' in " ".join(readme.split())  # the pair the README shows
    dictionary = load_dictionary()

    def mutants(text):
        return {m.text for m in generate(0, text, dictionary, ("gender", "race"), 2).mutants if m.order == 2}

    assert mutant in mutants(original)
    # the reverse the README says it does not make: race has black -> white, no white -> black
    assert "The black woman in the lead is brilliant." not in mutants("The white man in the lead is brilliant.")


def test_the_option_reference_lists_the_audit_summary_options(site):
    """The audit's published-summary options are declared like RunConfig's (option()) and generated alike."""
    import dataclasses

    from hinter.audit.summary import AuditSummary
    page = html.unescape((site / "options" / "index.html").read_text(encoding="utf-8"))
    for f in dataclasses.fields(AuditSummary):
        assert f"<code>{f.metadata['flag']}</code>" in page, f.name
        assert f"AuditSummary field <code>{f.name}</code>" in page, f.name
