"""tcplab as an installed package: data inside it, a fast CLI, and (slow) a wheel
that works from an empty directory outside the repository."""

import glob
import os
import shutil
import subprocess
import sys
import venv
from pathlib import Path

import pytest

from tcplab import resources
from tcplab.cli import COMMANDS, build_parser

ROOT = Path(__file__).resolve().parents[1]


def test_the_cli_help_table_matches_what_each_command_registers():
    parser = build_parser(load="all")
    sub = next(a for a in parser._actions if a.__class__.__name__ == "_SubParsersAction")
    registered = {c.dest: c.help for c in sub._choices_actions}
    assert registered == COMMANDS


def test_tcplab_help_imports_neither_pandas_nor_matplotlib_nor_pyarrow():
    code = ("import sys; from tcplab.cli import main\n"
            "try:\n    main(['--help'])\nexcept SystemExit:\n    pass\n"
            "print(sorted(m for m in ('pandas', 'matplotlib', 'pyarrow', 'numpy', 'rich') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip().splitlines()[-1] == "[]"
    assert "reproduce" in out.stdout and "export-ns2" in out.stdout


def test_a_subcommand_still_parses_its_own_options(capsys):
    from tcplab.cli import main

    with pytest.raises(SystemExit):
        main(["run", "--help"])
    assert "--trace-interval" in capsys.readouterr().out
    with pytest.raises(SystemExit) as exc:
        main(["nope"])
    assert exc.value.code == 2


def test_scenarios_and_sweeps_ship_inside_the_package():
    names = {p.name for p in resources.scenario_files()}
    assert {"c-parallel-sack.toml", "d-tahoe-satellite.toml", "a-sine-background.toml"} <= names
    assert {p.name for p in resources.sweep_files()} >= {"c-n-buffer.toml"}
    assert (resources.data_dir() / "scenarios" / "traces" / "a-background.csv").is_file()
    # the repository's paths are links to the packaged files (the README's commands work as written)
    assert (ROOT / "scenarios").resolve() == (resources.data_dir() / "scenarios").resolve()
    assert (ROOT / "sweeps").resolve() == (resources.data_dir() / "sweeps").resolve()


def test_a_packaged_path_is_found_from_any_directory(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    p = resources.locate("scenarios/c-parallel-sack.toml")
    assert p.is_file() and p.parent == resources.data_dir() / "scenarios"
    assert resources.locate("sweeps/c-n-buffer.toml").is_file()
    # a user's own file of the same name wins
    (tmp_path / "scenarios").mkdir()
    (tmp_path / "scenarios" / "c-parallel-sack.toml").write_text("duration = '1s'\n")
    assert resources.locate("scenarios/c-parallel-sack.toml") == Path("scenarios/c-parallel-sack.toml")
    # a name that is nowhere stays as given, so the error names what the user typed
    assert resources.locate("scenarios/missing.toml") == Path("scenarios/missing.toml")


def test_license_and_citation_are_there():
    assert "MIT License" in (ROOT / "LICENSE").read_text()
    text = (ROOT / "CITATION.cff").read_text()
    assert "cff-version" in text and "10.1109/ISCC.2002.1021692" in text


def test_the_sdist_holds_every_crate_and_the_package_data(tmp_path):
    """A source distribution must build the whole of tcplab: the engine and its bindings,
    and tcplab-emu (crates/linuxemu) that the linux engine runs."""
    maturin = shutil.which("maturin") or str(Path(sys.executable).parent / "maturin")
    if not Path(maturin).exists():
        pytest.skip("needs maturin")
    subprocess.run([maturin, "sdist", "-o", str(tmp_path)], cwd=ROOT, check=True, capture_output=True)
    import tarfile

    (sdist,) = tmp_path.glob("tcplab-*.tar.gz")
    with tarfile.open(sdist) as tar:
        names = {n.split("/", 1)[1] for n in tar.getnames() if "/" in n}
    for crate in ("engine", "py", "aimd", "rng", "linuxemu"):
        assert f"crates/{crate}/Cargo.toml" in names, crate
    assert "crates/linuxemu/src/main.rs" in names
    assert any(n.startswith("python/tcplab/data/scenarios/") and n.endswith(".toml") for n in names)
    assert "LICENSE" in names and "Cargo.lock" in names


@pytest.mark.slow
def test_a_wheel_installed_outside_the_repository_reproduces_and_runs(tmp_path):
    """Build the wheel, install it into a fresh venv, run from an empty directory."""
    if not shutil.which("cargo"):
        pytest.skip("needs cargo")
    dist = tmp_path / "dist"
    env = dict(os.environ)
    maturin = shutil.which("maturin", path=str(Path(sys.executable).parent)) or shutil.which("maturin")
    if maturin is None:
        pytest.skip("needs maturin")
    import importlib.util

    # the portable tag where zig can link for it, else this machine's
    tag = ["manylinux_2_28"] if importlib.util.find_spec("ziglang") else []
    subprocess.run(["bash", "scripts/build-wheel.sh", *tag], cwd=ROOT,
                   env=dict(env, MATURIN=maturin, PYTHON=sys.executable), check=True, capture_output=True,
                   timeout=2400)
    wheels = sorted(glob.glob(str(ROOT / "dist" / "tcplab-*.whl")), key=os.path.getmtime)
    assert wheels, "no wheel built"
    wheel = Path(wheels[-1])
    assert "manylinux" in wheel.name and "abi3" in wheel.name
    if tag:
        assert tag[0] in wheel.name
    dist.mkdir()
    shutil.copy(wheel, dist)
    vdir = tmp_path / "venv"
    venv.EnvBuilder(with_pip=True, system_site_packages=False).create(vdir)
    py = vdir / "bin" / "python"
    # the dependencies come from this environment's wheel cache / index, the package from the wheel
    subprocess.run([str(py), "-m", "pip", "install", "-q", str(dist / wheel.name)], check=True, timeout=1800)
    empty = tmp_path / "empty"
    empty.mkdir()
    tcplab = vdir / "bin" / "tcplab"
    out = subprocess.run([str(tcplab), "reproduce", "triple-slowstart", "--quick", "--out", "reports"], cwd=empty,
                         capture_output=True, text=True, timeout=1800)
    assert out.returncode == 0, out.stderr[-2000:]
    assert (empty / "reports" / "triple-slowstart" / "claims.json").is_file()
    run = subprocess.run([str(tcplab), "run", "scenarios/c-parallel-sack.toml", "--set", "duration=5s",
                          "--set", "warmup=1s", "--out", "r"], cwd=empty, capture_output=True, text=True,
                         timeout=600)
    assert run.returncode == 0, run.stderr[-2000:]
    assert (empty / "r" / "summary.json").is_file()
    # the packaged tcplab-emu is what the linux engine would start
    emu = subprocess.run([str(py), "-c", "from tcplab.backends.linux import emulator_binary; print(emulator_binary())"],
                         cwd=empty, capture_output=True, text=True, check=True).stdout.strip()
    assert emu.startswith(str(vdir)) and emu.endswith("tcplab/bin/tcplab-emu")
