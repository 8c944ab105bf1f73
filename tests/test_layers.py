"""The package's structure, checked: the layers declared in pyproject.toml ([tool.importlinter]: records at the
bottom, the stages above, the pipeline, the run, then cli/serve/report), no import cycle between modules, and no
module importing another module's private (underscore) names."""
import ast
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src" / "hinter"


def test_the_layers_hold():
    lint = Path(sys.executable).parent / "lint-imports"
    if not lint.exists():
        pytest.skip("import-linter is not installed (pip install -e '.[test]')")
    r = subprocess.run([str(lint), "--config", str(ROOT / "pyproject.toml")], capture_output=True, text=True,
                       cwd=ROOT, timeout=300)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-2000:]


def test_no_import_cycle_between_modules():
    grimp = pytest.importorskip("grimp")
    graph = grimp.build_graph("hinter")
    # Tarjan's strongly connected components over module -> imported module (lazy imports included)
    index, low, stack, on_stack, cycles, counter = {}, {}, [], set(), [], [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on_stack.add(v)
        for w in graph.find_modules_directly_imported_by(v):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                cycles.append(sorted(component))

    sys.setrecursionlimit(max(sys.getrecursionlimit(), 5000))
    for m in sorted(graph.modules):
        if m not in index:
            visit(m)
    assert cycles == []


def test_no_private_name_imported_across_modules():
    offenders = []
    for path in sorted(SRC.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.ImportFrom) and node.module != "__future__":
                private = [a.name for a in node.names if a.name.startswith("_") and not a.name.startswith("__")]
                if private:
                    offenders.append(f"{path.relative_to(ROOT)}:{node.lineno} imports {', '.join(private)}")
    assert offenders == []


def test_every_module_is_in_a_layer():
    """Each module of hinter lies in a layer of the contract (or below one), so that the contract checks its
    imports. The exceptions are facades: `hinter` itself (the Python API) and `hinter.generative` (the free-text
    API re-exporting the judge), which no module of hinter imports, so that nothing reaches past the layers
    through it, and the stage folders (mutation, analysis, pipeline), whose `__init__` holds a docstring alone."""
    grimp = pytest.importorskip("grimp")
    tomllib = pytest.importorskip("tomllib")
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]["contracts"]
    layered = {name.strip() for c in config if c["type"] == "layers" for layer in c["layers"]
               for name in layer.split("|")}
    graph = grimp.build_graph("hinter")
    outside = sorted(m for m in graph.modules if m != "hinter"
                     and not any(m == x or m.startswith(x + ".") for x in layered))
    folders = {"hinter.mutation", "hinter.analysis", "hinter.pipeline"}
    for folder in folders:
        body = ast.parse((SRC / folder.split(".")[1] / "__init__.py").read_text()).body
        assert len(body) == 1 and isinstance(body[0], ast.Expr), f"{folder}/__init__.py holds more than a docstring"
    assert sorted(set(outside) - folders) == ["hinter.generative"]
    assert graph.find_modules_that_directly_import("hinter.generative") == set()


def test_no_language_named_outside_its_folder():
    """A language is one folder (issue 40): no module outside hinter/languages/ names a language by its code (a
    `"fr"` string literal); they learn about it through its `Language` record (hinter.languages.get_language)."""
    languages = SRC / "languages"
    offenders = []
    for path in sorted(SRC.rglob("*.py")):
        if languages in path.parents:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Constant) and node.value == "fr":
                offenders.append(f"{path.relative_to(SRC)}:{node.lineno}")
    assert offenders == []


def test_the_package_root_holds_the_public_face_and_little_else():
    """The stages are folders (mutation/, validity/, models/, analysis/, pipeline/, store/, report/...); the root
    keeps the public face (the API, the campaign, the settings) and what every stage shares, at most 15 modules."""
    root = sorted(p.name for p in SRC.glob("*.py"))
    assert len(root) <= 15, root
