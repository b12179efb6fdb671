""""Open as notebook": a Jupyter notebook that reproduces the lab's view of a
scenario (the same TOML, hence the same seed and the same numbers): the closed
forms, the fluid model's answer, the packet engine's run and its plots."""

from __future__ import annotations

import json


import itertools

_ids = itertools.count()


def _code(src: str) -> dict:
    return {"cell_type": "code", "id": f"lab-{next(_ids)}", "metadata": {}, "execution_count": None,
            "outputs": [], "source": src}


def _md(src: str) -> dict:
    return {"cell_type": "markdown", "id": f"lab-{next(_ids)}", "metadata": {}, "source": src}


def notebook(toml_text: str, name: str) -> dict:
    """The notebook (nbformat 4) for a scenario's TOML text."""
    cells = [
        _md(f"# {name}: the tcplab lab's view\n\nWritten by `tcplab lab` (\"open as notebook\"). "
            "Run every cell: the scenario below is the lab's, seed included, so the numbers are the lab's."),
        _code("SCENARIO = " + json.dumps(toml_text, ensure_ascii=False)),
        _code("import tomllib\n\nimport tcplab\nfrom tcplab.lab.answers import quick\nfrom tcplab.scenario import load_scenario\n\n"
              "doc = tomllib.loads(SCENARIO)\nresolved = load_scenario(doc)\n"
              "answers = quick(resolved)  # closed forms (tcplab predict's models) and the hybrid AIMD model\n"
              "answers[\"rows\"]"),
        _code("res = tcplab.run(doc, trace=[\"cwnd\", \"queue\", \"seq\", \"drops\"])  # the packet engine\n"
              "{k: res.metrics[k] for k in (\"tcp_goodput_bps\", \"bottleneck_utilization\", \"bottleneck_loss_rate\", "
              "\"tcp_timeouts\", \"jain_index\") if k in res.metrics}"),
        _code("fig = res.plot(\"cwnd\")\nax = fig.axes[0]\nfor line in answers[\"overlay\"]:  # the model's prediction\n"
              "    ax.axhline(line[\"y\"], ls=\"--\", color=\"k\", lw=0.8)\n"
              "    ax.annotate(line[\"label\"], (0, line[\"y\"]), xycoords=(\"axes fraction\", \"data\"), fontsize=8)\nfig"),
        _code("res.plot(\"queue\")"),
        _code("res.plot(\"rate\")"),
        _code("res.plot(\"seq\")"),
    ]
    return {"cells": cells, "metadata": {"kernelspec": {"display_name": "Python 3", "language": "python",
                                                        "name": "python3"},
                                         "language_info": {"name": "python"}},
            "nbformat": 4, "nbformat_minor": 5}


def notebook_json(toml_text: str, name: str) -> str:
    return json.dumps(notebook(toml_text, name), indent=1, ensure_ascii=False)
