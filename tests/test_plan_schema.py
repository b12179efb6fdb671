"""docs/plan.schema.json documents the Plan: every scenarios/*.toml's Plan (and
a few variations that reach the parts those files do not) validates against
it, and a field the schema does not document fails (additionalProperties
false everywhere), so a field added to crates/engine/src/plan.rs must be
documented here too."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import jsonschema
import pytest

from tcplab import cli
from tcplab.plan import plan
from tcplab.scenario import load_scenario

ROOT = Path(__file__).resolve().parent.parent
SCHEMA = json.loads((ROOT / "docs" / "plan.schema.json").read_text())
SCENARIOS = sorted((ROOT / "scenarios").glob("*.toml"))
#: Variations that reach Plan parts no scenario file uses as it stands.
VARIATIONS = {
    "b-dumbbell.toml": [
        ["topology.bottleneck.errors.model=\"gilbert-elliott\"", "topology.bottleneck.errors.p_gb=0.01",
         "topology.bottleneck.errors.p_bg=0.1"],
        ["topology.bottleneck.errors.model=\"list\"", "topology.bottleneck.errors.packets=[3, 9]"],
        ["linux.sack=true", "linux.min_rto=\"1s\"", "trace.series=[\"cwnd\", \"drops\"]"],
    ],
}


def _validator():
    cls = jsonschema.validators.validator_for(SCHEMA)
    cls.check_schema(SCHEMA)
    return cls(SCHEMA)


def _plans():
    for path in SCENARIOS:
        yield path.name, []
        for overrides in VARIATIONS.get(path.name, []):
            yield path.name, overrides


@pytest.mark.parametrize("name, overrides", list(_plans()),
                         ids=lambda x: x if isinstance(x, str) else ",".join(x) or "as-is")
def test_every_scenarios_plan_validates_against_the_schema(name, overrides):
    p = plan(load_scenario(ROOT / "scenarios" / name, overrides)).engine
    errors = sorted(_validator().iter_errors(p), key=lambda e: list(e.path))
    assert not errors, "\n".join(f"{'/'.join(map(str, e.path))}: {e.message}" for e in errors[:5])


@pytest.mark.parametrize("where", ["plan", "link", "flow", "tcp", "queue", "linux", "bottleneck"])
def test_an_undocumented_field_fails(where):
    p = copy.deepcopy(plan(load_scenario(ROOT / "scenarios" / "b-dumbbell.toml")).engine)
    part = {"plan": p, "link": p["links"][0], "flow": p["flows"][0], "tcp": p["flows"][0]["tcp"],
            "queue": p["links"][0]["queue"], "linux": p["linux"], "bottleneck": p["flows"][0]["bottleneck"]}[where]
    part["new_field_ns"] = 1
    assert not _validator().is_valid(p)


def test_tcplab_plan_json_prints_the_whole_plan(capsys):
    assert cli.main(["plan", str(ROOT / "scenarios" / "parking-lot.toml"), "--json"]) == 0
    p = json.loads(capsys.readouterr().out)
    _validator().validate(p)
    assert p == plan(load_scenario(ROOT / "scenarios" / "parking-lot.toml")).engine
