"""The Python API as a notebook user meets it: overrides as a dict or a list,
errors that name what is wrong, a rich display, figures that show themselves."""

from pathlib import Path

import pytest

import tcplab
from tcplab.errors import UserError

SCENARIO = Path(__file__).resolve().parents[1] / "scenarios" / "c-parallel-sack.toml"
SHORT = {"duration": "4s", "warmup": "1s"}


def test_dir_and_all_list_run():
    for name in ("run", "load_scenario", "fluid", "Result", "UserError"):
        assert name in tcplab.__all__ and name in dir(tcplab)
        assert getattr(tcplab, name) is not None


def test_overrides_as_a_dict_and_as_a_list_give_the_same_run():
    a = tcplab.run(SCENARIO, overrides=dict(SHORT, **{"flows.sack.count": 2}))
    b = tcplab.run(SCENARIO, overrides=["duration=4s", "warmup=1s", "flows.sack.count=2"])
    assert a.scenario == b.scenario and a.metrics == b.metrics
    assert len(a.flows) == 2


def test_a_plain_string_is_a_type_error_not_iterated_per_character():
    with pytest.raises(TypeError, match=r"write \['flows.sack.count=2'\]"):
        tcplab.run(SCENARIO, overrides="flows.sack.count=2")


@pytest.mark.parametrize("bad, exc, words", [
    ({3: 1}, TypeError, "got 3 (int)"),
    (["flows.sack.count"], ValueError, "'flows.sack.count' is not 'key.path=value'"),
    ([("x")], ValueError, "'x' is not"),
    ([5], TypeError, "got 5 (int)"),
    (42, TypeError, "got int"),
    ({"flows..count": 1}, ValueError, "empty part"),
])
def test_a_malformed_override_names_itself(bad, exc, words):
    with pytest.raises(exc) as info:
        tcplab.run(SCENARIO, overrides=bad)
    assert words in str(info.value)


def test_an_unknown_key_in_a_dict_is_a_value_error_naming_the_path():
    with pytest.raises(ValueError, match="flows.sack.cont") as info:
        tcplab.run(SCENARIO, overrides=dict(SHORT, **{"flows.sack.cont": 2}))
    assert isinstance(info.value, UserError)


def test_result_displays_as_html_tables_with_units():
    res = tcplab.run(SCENARIO, overrides=dict(SHORT, **{"flows.sack.count": 2}), trace=["cwnd"])
    html = res._repr_html_()
    assert html.count("<table") == 3  # metrics, flows, links
    assert "normalized_throughput" in html and "bit/s" in html and "goodput_bps" in html
    assert "bottleneck" in html  # the links table


def test_plots_show_themselves_as_png_without_pyplot():
    res = tcplab.run(SCENARIO, overrides=dict(SHORT, **{"flows.sack.count": 2}), trace=["cwnd"])
    fig = res.plot("cwnd")
    png = fig._repr_png_()
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 5000
