"""Runs too big for the machine are refused before they start, naming the input
and the limit; --force lets them through."""

import pytest

from tcplab.cli import main
from tcplab.errors import UserError
from tcplab.fluid import check_size, fluid
from tcplab.limits import memory_budget_bytes


def test_fluid_refuses_more_memory_than_the_machine_has():
    budget = memory_budget_bytes()
    n = budget // 300 + 1  # the per-connection bytes alone exceed the budget
    with pytest.raises(UserError, match=r"n \(--n\).*batches \(--batches\)"):
        check_size(n, 1, 32, 0, 0)
    with pytest.raises(UserError, match=r"bins \(--bins\)"):
        check_size(2, 1000, 32, budget // 200, 0)
    with pytest.raises(UserError, match=r"--trace-events"):
        check_size(2, 1000, 32, 0, budget // 50)
    check_size(1000, 100_000, 32, 50, 200)  # an ordinary run passes


def test_fluid_refuses_hours_of_work_and_force_skips_the_check():
    with pytest.raises(UserError, match="connection updates"):
        fluid(n=1_000_000, events=1_000_000)
    # force: the estimate is not consulted (a small run, to keep the test fast)
    assert fluid(n=2, events=1000, force=True).metrics["events"] == 1000


def test_predict_refuses_a_huge_grid_unless_forced(capsys):
    args = ["predict", "aimd-one", "--n", "1..2000", "--beta", "0.0001..0.9:0.0001"]
    assert main(args) == 2
    err = capsys.readouterr().err
    assert "--beta" in err and "1000000" in err and "--force" in err


@pytest.mark.parametrize("value", ["1e999", ",", "1..1e999", "nan", "inf"])
def test_predict_refuses_numbers_that_are_not(value, capsys):
    assert main(["predict", "aimd-one", "--n", value]) == 2
    assert "--n" in capsys.readouterr().err
