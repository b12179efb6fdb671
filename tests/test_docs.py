"""Generated docs cannot drift: the committed files equal the generator's output,
and nothing in the repository points at files a user does not have."""

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tcplab import citations
from tcplab.docs import FILES

ROOT = Path(__file__).resolve().parents[1]


def test_generated_docs_are_up_to_date():
    for name, make in FILES.items():
        committed = (ROOT / "docs" / name).read_text()
        assert committed == make(), f"docs/{name} is stale: run python -m tcplab.docs"


def test_every_optional_key_of_the_schema_is_in_the_reference():
    # An optional key (serde skips it when unset) resolves to nothing in a minimal
    # scenario, so the reference shows it only if an example scenario or one of
    # tcplab.docs' probes sets it: a key added to the schema without either is caught here.
    schema = (ROOT / "crates/engine/src/scenario/schema.rs").read_text()
    optional = []
    for m in re.finditer(r'skip_serializing_if = "Option::is_none"\)\]\s*(?:///[^\n]*\s*)*pub (\w+):', schema):
        doc = schema[:m.start()].rsplit(",\n", 1)[-1]  # this field's doc comment
        if "Kept only to say so" not in doc:  # a moved key, refused with its new spelling
            optional.append(m.group(1))
    assert len(optional) > 20, "the schema's optional fields were not found: has schema.rs moved?"
    keys = {seg for line in (ROOT / "docs/scenario-reference.md").read_text().splitlines()
            if line.startswith("| `") for seg in line.split("`")[1].split(".")}
    if "LINK" in keys:  # the reference writes LINK for each of the dumbbell's links
        keys |= {"bottleneck", "access", "sink_access"}
    # a piecewise rate's `file` is read by tcplab's loader into `points` (docs/scenarios.md
    # documents it): the resolved scenario never holds it.
    keys.add("file")
    missing = sorted(set(optional) - keys)
    assert not missing, f"optional schema keys missing from docs/scenario-reference.md: {missing}"


def test_every_paper_is_cited_in_the_readme_and_the_claims_page():
    from tcplab.reproduce import PAPERS

    readme = (ROOT / "README.md").read_text()
    claims = (ROOT / "docs" / "claims.md").read_text()
    assert set(citations.CITATIONS) == set(PAPERS)
    for slug, c in citations.CITATIONS.items():
        assert citations.markdown(slug) in claims
        assert c.title in readme, slug
        if c.doi:
            assert c.doi in readme


def test_no_reference_to_files_outside_the_repository():
    files = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True).stdout.split()
    bad = re.compile(r"\.\./shared|NS2-NOTES|PAPERS\.md|/work/|/home/\w+/")
    hits = []
    for f in files:
        p = ROOT / f
        if p.suffix not in (".py", ".md", ".rs", ".toml", ".sh", ".cff", ".ipynb") or not p.is_file():
            continue
        if f == "tests/test_docs.py":
            continue
        for n, line in enumerate(p.read_text(errors="replace").splitlines(), 1):
            if bad.search(line):
                hits.append(f"{f}:{n}: {line.strip()[:80]}")
    assert not hits, "\n".join(hits)


def test_the_documentation_site_builds_with_warnings_as_errors(tmp_path):
    mkdocs = shutil.which("mkdocs", path=str(Path(sys.executable).parent))
    if mkdocs is None:
        pytest.skip("mkdocs is not installed (pip install 'mkdocs-material>=9'; .ci/run does)")
    out = subprocess.run([mkdocs, "build", "--strict", "-q", "-d", str(tmp_path / "site")], cwd=ROOT,
                         capture_output=True, text=True, env={**os.environ, "NO_MKDOCS_2_WARNING": "1"})
    assert out.returncode == 0, out.stderr[-3000:]
    index = (tmp_path / "site" / "index.html").read_text()
    assert "fonts.googleapis" not in index  # nothing loaded from the network
    # pages are NAME.html, so that links work when the site is opened from disk (file://)
    assert (tmp_path / "site" / "scenario-reference.html").is_file()
